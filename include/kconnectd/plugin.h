/*
 * kconnectd connector plugin ABI (plain C99; also compiles as C++).
 *
 * A plugin is a shared object (a `.so` in a `plugin.path` directory, or one
 * level below it, as Kafka Connect's plugin directories) that exports:
 *
 *   - `kc_plugin_abi_version`: a `const uint32_t`, KC_PLUGIN_ABI_VERSION as
 *     the plugin was built (KC_PLUGIN_DECLARE_ABI() defines it);
 *   - `kc_plugin_register`: a kc_plugin_register_fn that declares the
 *     plugin's connector classes with host->register_connector().
 *
 * Versioning: the worker refuses a plugin whose MAJOR differs from its own.
 * A MINOR bump only appends members at the END of kc_host_api and of the
 * class tables (each table starts with its size, so either side can tell
 * which members the other knows).
 *
 * Records and data cross the boundary as OPAQUE HANDLES to the runtime's own
 * objects (Connect's data model: Schema, Struct, values, headers); the
 * plugin reads and builds them with the kc_host_api functions. Nothing is
 * serialized. A handle passed to a plugin function is valid only during
 * that call unless said otherwise.
 *
 * Errors: every plugin function returns a kc_status. Before returning
 * KC_ERROR (or KC_RETRIABLE) it may attach a message with host->set_error();
 * the worker fails the task or connector (status FAILED, the message as
 * trace). Host functions that can fail return a kc_status and set the same
 * message, so a plugin may just pass their status on. C++ exceptions must
 * never cross this boundary (plugin.hpp catches them).
 *
 * Threading: a connector's functions run on its connector thread, a task's
 * on its task thread; never two calls on one instance at the same time.
 * See include/kconnectd/README.md for the author's guide.
 */
#ifndef KCONNECTD_PLUGIN_H
#define KCONNECTD_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ABI version of this header: MAJOR changes break plugins, MINOR ones add. */
#define KC_PLUGIN_ABI_VERSION_MAJOR 1
#define KC_PLUGIN_ABI_VERSION_MINOR 3
/* Packed as (MAJOR << 16) | MINOR. */
#define KC_PLUGIN_ABI_VERSION \
  ((uint32_t)(((uint32_t)KC_PLUGIN_ABI_VERSION_MAJOR << 16) | (uint32_t)KC_PLUGIN_ABI_VERSION_MINOR))

/* Names of the two symbols the loader looks up with dlsym. */
#define KC_PLUGIN_ABI_SYMBOL "kc_plugin_abi_version"
#define KC_PLUGIN_ENTRY_POINT "kc_plugin_register"

#if defined(__GNUC__)
#define KC_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define KC_PLUGIN_EXPORT
#endif

#ifdef __cplusplus
#define KC_PLUGIN_EXTERN_C extern "C"
#else
#define KC_PLUGIN_EXTERN_C
#endif

/* Defines the exported ABI version symbol; use once per plugin. */
#define KC_PLUGIN_DECLARE_ABI() \
  KC_PLUGIN_EXTERN_C KC_PLUGIN_EXPORT const uint32_t kc_plugin_abi_version = KC_PLUGIN_ABI_VERSION

/* Result of every plugin and fallible host function. KC_RETRIABLE from a
 * sink task's put() means "give me the same records again after a backoff"
 * (Connect's RetriableException); elsewhere it counts as KC_ERROR. */
typedef enum kc_status { KC_OK = 0, KC_ERROR = 1, KC_RETRIABLE = 2 } kc_status;

/* Source or sink. */
typedef enum kc_connector_type { KC_SOURCE = 0, KC_SINK = 1 } kc_connector_type;

/* ConfigDef.Type, ConfigDef.Importance. */
typedef enum kc_config_type {
  KC_CONFIG_BOOLEAN = 0,
  KC_CONFIG_STRING,
  KC_CONFIG_INT,
  KC_CONFIG_LONG,
  KC_CONFIG_DOUBLE,
  KC_CONFIG_LIST,
  KC_CONFIG_CLASS,
  KC_CONFIG_PASSWORD
} kc_config_type;
typedef enum kc_importance { KC_IMPORTANCE_HIGH = 0, KC_IMPORTANCE_MEDIUM, KC_IMPORTANCE_LOW } kc_importance;

/* What a source connector declares for one config (ABI 1.1; KIP-618's
 * SourceConnector.exactlyOnceSupport). UNKNOWN is Connect's null: the
 * connector does not say, so `exactly.once.support=required` is refused. */
typedef enum kc_exactly_once_support {
  KC_EXACTLY_ONCE_UNKNOWN = 0,
  KC_EXACTLY_ONCE_SUPPORTED = 1,
  KC_EXACTLY_ONCE_UNSUPPORTED = 2
} kc_exactly_once_support;

/* Connect's Schema.Type. */
typedef enum kc_schema_type {
  KC_INT8 = 0,
  KC_INT16,
  KC_INT32,
  KC_INT64,
  KC_FLOAT32,
  KC_FLOAT64,
  KC_BOOLEAN,
  KC_STRING,
  KC_BYTES,
  KC_ARRAY,
  KC_MAP,
  KC_STRUCT
} kc_schema_type;

/* The Java class a value holds (what kc_host_api.value_kind returns). The
 * logical types hold DECIMAL (java.math.BigDecimal) and DATE (java.util.Date,
 * for Date, Time and Timestamp). */
typedef enum kc_value_kind {
  KC_VALUE_NULL = 0,
  KC_VALUE_INT8,
  KC_VALUE_INT16,
  KC_VALUE_INT32,
  KC_VALUE_INT64,
  KC_VALUE_FLOAT32,
  KC_VALUE_FLOAT64,
  KC_VALUE_BOOLEAN,
  KC_VALUE_STRING,
  KC_VALUE_BYTES,
  KC_VALUE_ARRAY,
  KC_VALUE_MAP,
  KC_VALUE_STRUCT,
  KC_VALUE_DECIMAL,
  KC_VALUE_DATE
} kc_value_kind;

/* Opaque handles to runtime objects. */
typedef struct kc_registrar kc_registrar;           /* collects one plugin's classes */
typedef struct kc_config kc_config;                 /* a string -> string config map */
typedef struct kc_task_configs kc_task_configs;     /* task configs being built */
typedef struct kc_config_errors kc_config_errors;   /* validation errors being built */
typedef struct kc_connector_context kc_connector_context;
typedef struct kc_source_task_context kc_source_task_context;
typedef struct kc_sink_task_context kc_sink_task_context; /* ABI 1.3 */
typedef struct kc_schema kc_schema;                 /* a Connect schema (immutable) */
typedef struct kc_schema_builder kc_schema_builder; /* Connect's SchemaBuilder */
typedef struct kc_value kc_value;                   /* a Connect value (Java object or null) */
typedef struct kc_headers kc_headers;               /* Connect's Headers */
typedef struct kc_json kc_json;                     /* a source partition or offset (a JSON object) */
typedef struct kc_source_record kc_source_record;
typedef struct kc_source_records kc_source_records; /* the output of one poll() */
typedef struct kc_sink_record kc_sink_record;
typedef struct kc_sink_records kc_sink_records;     /* the input of one put() */
typedef struct kc_offsets kc_offsets;               /* topic-partition -> next offset to consume */
typedef struct kc_partitions kc_partitions;         /* a list of topic-partitions */

/* One config key (ConfigDef.ConfigKey) with its validators. Zero-fill what
 * you do not use. `default_value` NULL and `required` 0 = default null. */
typedef struct kc_config_key {
  const char* name;
  kc_config_type type;
  int required;              /* 1: no default; missing = "Missing required configuration" */
  const char* default_value; /* string form */
  kc_importance importance;
  const char* documentation;
  const char* group;         /* NULL = none */
  const char* display_name;  /* NULL = name */
  /* Validators (Connect's Range, ValidString, NonEmptyString). */
  int has_min;
  double min; /* "Value must be at least <min>" */
  int has_max;
  double max; /* "Value must be no more than <max>" */
  const char* const* one_of; /* NULL-terminated; "String must be one of: a, b" */
  int non_empty;             /* "String must be non-empty" */
} kc_config_key;

/* What the producer reported for a sent source record (RecordMetadata). */
typedef struct kc_record_metadata {
  const char* topic;
  int32_t partition;
  int64_t offset;    /* -1 when unknown */
  int64_t timestamp; /* epoch ms, -1 when unknown */
} kc_record_metadata;

/* A source task class (Connect's SourceTask). `self` is what create made.
 * Optional members may be NULL. */
typedef struct kc_source_task_class {
  size_t struct_size; /* sizeof(kc_source_task_class) */
  kc_status (*create)(void* class_data, void** self);
  /* Starts with the task config (from the connector's task_configs). `ctx`
   * stays valid until destroy (poll may use it, e.g. to wait). */
  kc_status (*start)(void* self, const kc_config* config, const kc_source_task_context* ctx);
  /* Appends the next records to `out` (host->source_records_add); none when
   * none are ready. Must return within about 1 s so a stop is noticed. */
  kc_status (*poll)(void* self, kc_source_records* out);
  /* Optional: the offsets of the records polled so far were committed. */
  kc_status (*commit)(void* self);
  /* Optional: `record` was acknowledged by Kafka. Called on the task thread;
   * leave NULL when not needed, so the runtime skips the per-record call. */
  kc_status (*commit_record)(void* self, const kc_source_record* record, const kc_record_metadata* metadata);
  kc_status (*stop)(void* self);
  void (*destroy)(void* self);
} kc_source_task_class;

/* A sink task class (Connect's SinkTask). Optional members may be NULL. */
typedef struct kc_sink_task_class {
  size_t struct_size; /* sizeof(kc_sink_task_class) */
  kc_status (*create)(void* class_data, void** self);
  kc_status (*start)(void* self, const kc_config* config);
  /* Writes (or buffers) records. KC_RETRIABLE: the same records again later. */
  kc_status (*put)(void* self, const kc_sink_records* records);
  /* Optional: makes everything put so far durable (SinkTask.flush). */
  kc_status (*flush)(void* self, const kc_offsets* offsets);
  /* Optional: the offsets to commit (SinkTask.preCommit). `out` starts as a
   * copy of `current`; edit it. NULL = flush, then commit `current`. */
  kc_status (*pre_commit)(void* self, const kc_offsets* current, kc_offsets* out);
  /* Optional: partitions assigned to / revoked from this task. */
  kc_status (*open)(void* self, const kc_partitions* partitions);
  kc_status (*close)(void* self, const kc_partitions* partitions);
  kc_status (*stop)(void* self);
  void (*destroy)(void* self);
  /* ABI 1.3, optional (SinkTask.initialize): called once, after create and
   * before start, with the task's context; `ctx` stays valid until destroy.
   * A 1.2 worker never calls it: check the host's struct_size (or just
   * that `ctx` was given) before using sink_task_wait_stopped. */
  kc_status (*initialize)(void* self, const kc_sink_task_context* ctx);
} kc_sink_task_class;

/* A connector class: its names, type, version, config definition, and the
 * functions of the connector and its tasks. Strings are copied at
 * registration; the tables and `class_data` must live while the plugin is
 * loaded (plugins are never unloaded once registered). */
typedef struct kc_connector_class {
  size_t struct_size;            /* sizeof(kc_connector_class) */
  const char* class_name;        /* e.g. "com.example.CounterSourceConnector" */
  const char* const* aliases;    /* NULL-terminated extra names, or NULL */
  kc_connector_type type;
  const char* version;           /* GET /connector-plugins "version" */
  const kc_config_key* config_keys;
  size_t config_key_count;
  void* class_data;              /* passed to every create */
  kc_status (*create)(void* class_data, const kc_connector_context* ctx, void** self);
  kc_status (*start)(void* self, const kc_config* config);
  /* Appends up to `max_tasks` configs with host->task_configs_add. */
  kc_status (*task_configs)(void* self, int32_t max_tasks, kc_task_configs* out);
  kc_status (*stop)(void* self);
  /* Optional (Connector.validate): adds errors beyond the per-key checks. */
  kc_status (*validate)(void* self, const kc_config* config, kc_config_errors* errors);
  void (*destroy)(void* self);
  const kc_source_task_class* source_task; /* sources */
  const kc_sink_task_class* sink_task;     /* sinks */
  /* ABI 1.1, optional, sources (SourceConnector.exactlyOnceSupport,
   * KIP-618): whether the connector's tasks deliver exactly once with
   * `config` when the worker runs them in transactions. Called on a
   * transient instance during validation. NULL = KC_EXACTLY_ONCE_UNKNOWN. */
  kc_status (*exactly_once_support)(void* self, const kc_config* config, kc_exactly_once_support* out);
  /* ABI 1.2, optional: ConfigDef's orderInGroup of each key (GET
   * /connector-plugins/{p}/config "order"), `config_key_count` entries in
   * the order of `config_keys`; -1 = none. NULL = none for every key. */
  const int32_t* config_key_orders;
} kc_connector_class;

/* The functions the worker offers a plugin. Only append (MINOR). String
 * outputs point into the runtime's objects: valid while that object is. */
typedef struct kc_host_api {
  size_t struct_size;
  uint32_t abi_version; /* the worker's KC_PLUGIN_ABI_VERSION */

  /* ---- registration and errors */
  /* Declares one class; errors on a bad table, a missing name or a name
   * declared twice by this plugin. */
  kc_status (*register_connector)(kc_registrar* registrar, const kc_connector_class* cls);
  /* Attaches `message` to the KC_ERROR the calling plugin function returns
   * (thread-local; the last one wins). */
  void (*set_error)(const char* message);
  /* The message of the last failed host call on this thread ("" if none). */
  const char* (*last_error)(void);
  /* Logs through the worker's log (level 0 debug, 1 info, 2 warn, 3 error). */
  void (*log)(int level, const char* message);

  /* ---- configs */
  const char* (*config_get)(const kc_config* config, const char* key); /* NULL when absent */
  size_t (*config_size)(const kc_config* config);
  /* Calls fn(key, value, user) for every entry in key order. */
  void (*config_foreach)(const kc_config* config, void (*fn)(const char* key, const char* value, void* user),
                         void* user);
  /* A new, empty task config; NULL once the host's cap is reached (the
     worker's tasks.max.limit configs, or 64 MiB of keys and values in all):
     stop adding then, the connector will be FAILED for it. */
  kc_config* (*task_configs_add)(kc_task_configs* out);
  /* Ignores a NULL config, and writes past the host's cap above. */
  void (*config_set)(kc_config* config, const char* key, const char* value);
  /* Adds `message` to `key`'s errors; a message already there is kept once. */
  void (*config_error_add)(kc_config_errors* errors, const char* key, const char* message);

  /* ---- contexts */
  const char* (*connector_name)(const kc_connector_context* ctx);
  /* ConnectorContext.requestTaskReconfiguration / raiseError. */
  void (*request_task_reconfiguration)(const kc_connector_context* ctx);
  void (*raise_error)(const kc_connector_context* ctx, const char* message);
  const char* (*task_connector_name)(const kc_source_task_context* ctx);
  int32_t (*task_number)(const kc_source_task_context* ctx);
  /* OffsetStorageReader.offset: 1 and the committed offset copied into
   * `out` (a kc_json from json_new), or 0 when none. */
  int (*source_offset)(const kc_source_task_context* ctx, const kc_json* partition, kc_json* out);

  /* ---- schemas. A kc_schema* from a record, field or predefined schema is
   * borrowed; one from schema_build is owned and freed with schema_release.
   * NULL means "no schema". */
  const kc_schema* (*schema_predefined)(kc_schema_type type, int optional); /* Schema.INT32_SCHEMA, ... */
  kc_schema_type (*schema_type)(const kc_schema* s);
  int (*schema_optional)(const kc_schema* s);
  const char* (*schema_name)(const kc_schema* s); /* NULL when unnamed */
  int (*schema_version)(const kc_schema* s, int32_t* out); /* 0 when unset */
  const char* (*schema_doc)(const kc_schema* s);
  const char* (*schema_parameter)(const kc_schema* s, const char* key);
  size_t (*schema_field_count)(const kc_schema* s);
  const char* (*schema_field_name)(const kc_schema* s, size_t index);
  const kc_schema* (*schema_field_schema)(const kc_schema* s, size_t index);
  int (*schema_field_index)(const kc_schema* s, const char* name); /* -1 when absent */
  const kc_schema* (*schema_key_schema)(const kc_schema* s);       /* MAP */
  const kc_schema* (*schema_value_schema)(const kc_schema* s);     /* ARRAY, MAP */
  /* SchemaBuilder: new for primitive/STRUCT types; array/map take element
   * schemas; decimal/date/time/timestamp are the logical types' builders. */
  kc_schema_builder* (*schema_builder_new)(kc_schema_type type);
  kc_schema_builder* (*schema_builder_array)(const kc_schema* value_schema);
  kc_schema_builder* (*schema_builder_map)(const kc_schema* key_schema, const kc_schema* value_schema);
  kc_schema_builder* (*schema_builder_logical)(const char* logical_name, int32_t decimal_scale);
  void (*schema_builder_optional)(kc_schema_builder* b);
  void (*schema_builder_name)(kc_schema_builder* b, const char* name);
  void (*schema_builder_version)(kc_schema_builder* b, int32_t version);
  void (*schema_builder_doc)(kc_schema_builder* b, const char* doc);
  void (*schema_builder_parameter)(kc_schema_builder* b, const char* key, const char* value);
  void (*schema_builder_field)(kc_schema_builder* b, const char* name, const kc_schema* schema);
  /* Builds and frees the builder: NULL and an error (last_error) on a bad
   * build, e.g. a duplicate field name. */
  const kc_schema* (*schema_build)(kc_schema_builder* b);
  void (*schema_builder_free)(kc_schema_builder* b);
  void (*schema_release)(const kc_schema* s);

  /* ---- values: readers work on any value; setters on a value the plugin
   * owns (value_new) or a slot it was handed as mutable. */
  kc_value* (*value_new)(void); /* a Java null, owned: value_free */
  void (*value_free)(kc_value* v);
  kc_value_kind (*value_kind)(const kc_value* v);
  int8_t (*value_int8)(const kc_value* v); /* 0 on another kind; check value_kind first */
  int16_t (*value_int16)(const kc_value* v);
  int32_t (*value_int32)(const kc_value* v);
  int64_t (*value_int64)(const kc_value* v);
  float (*value_float32)(const kc_value* v);
  double (*value_float64)(const kc_value* v);
  int (*value_boolean)(const kc_value* v);
  /* STRING and BYTES: pointer and length (not NUL-terminated for BYTES). */
  const char* (*value_string)(const kc_value* v, size_t* len);
  const char* (*value_bytes)(const kc_value* v, size_t* len);
  size_t (*value_array_size)(const kc_value* v);
  const kc_value* (*value_array_get)(const kc_value* v, size_t index);
  size_t (*value_map_size)(const kc_value* v);
  const kc_value* (*value_map_key)(const kc_value* v, size_t index);
  const kc_value* (*value_map_value)(const kc_value* v, size_t index);
  const kc_schema* (*value_struct_schema)(const kc_value* v);
  /* Struct.get (the field's default when null); NULL for an unknown field. */
  const kc_value* (*value_struct_get)(const kc_value* v, const char* field);
  const kc_value* (*value_struct_at)(const kc_value* v, size_t index); /* raw slot */
  /* BigDecimal: unscaled two's complement big-endian bytes and scale. */
  const char* (*value_decimal)(const kc_value* v, size_t* len, int32_t* scale);
  int64_t (*value_date)(const kc_value* v); /* java.util.Date epoch ms */
  char* (*value_to_string)(const kc_value* v); /* String.valueOf; free with string_free */
  void (*string_free)(char* s);

  void (*value_set_null)(kc_value* v);
  void (*value_set_int8)(kc_value* v, int8_t x);
  void (*value_set_int16)(kc_value* v, int16_t x);
  void (*value_set_int32)(kc_value* v, int32_t x);
  void (*value_set_int64)(kc_value* v, int64_t x);
  void (*value_set_float32)(kc_value* v, float x);
  void (*value_set_float64)(kc_value* v, double x);
  void (*value_set_boolean)(kc_value* v, int x);
  void (*value_set_string)(kc_value* v, const char* s, size_t len);
  void (*value_set_bytes)(kc_value* v, const char* b, size_t len);
  void (*value_set_decimal)(kc_value* v, const char* unscaled, size_t len, int32_t scale);
  void (*value_set_date)(kc_value* v, int64_t epoch_ms);
  void (*value_set_array)(kc_value* v); /* an empty list */
  void (*value_set_map)(kc_value* v);   /* an empty map */
  /* A struct of `schema` (a STRUCT schema) with every field null. */
  kc_status (*value_set_struct)(kc_value* v, const kc_schema* schema);
  /* Move `item` (left null) into a list / map; errors on another kind. */
  kc_status (*value_array_append)(kc_value* array, kc_value* item);
  kc_status (*value_map_put)(kc_value* map, kc_value* key, kc_value* item);
  /* Struct.put: validates against the field's schema ("a is not a valid
   * field name", Connect's validateValue messages); moves `item` in. */
  kc_status (*value_struct_put)(kc_value* s, const char* field, kc_value* item);
  void (*value_copy)(kc_value* dst, const kc_value* src); /* deep copy */

  /* ---- headers */
  size_t (*headers_size)(const kc_headers* h);
  const char* (*header_key)(const kc_headers* h, size_t index);
  const kc_schema* (*header_schema)(const kc_headers* h, size_t index);
  const kc_value* (*header_value)(const kc_headers* h, size_t index);
  /* Appends a header; `schema` is shared, `value` moved in. */
  void (*headers_add)(kc_headers* h, const char* key, const kc_schema* schema, kc_value* value);

  /* ---- source partitions and offsets (JSON objects of strings, numbers,
   * booleans; what Connect stores in the offsets topic) */
  kc_json* (*json_new)(void); /* an empty object, owned: json_free */
  void (*json_free)(kc_json* j);
  void (*json_set_string)(kc_json* j, const char* key, const char* value);
  void (*json_set_int64)(kc_json* j, const char* key, int64_t value);
  void (*json_set_double)(kc_json* j, const char* key, double value);
  void (*json_set_boolean)(kc_json* j, const char* key, int value);
  int (*json_has)(const kc_json* j, const char* key);
  /* 1 and the value when `key` holds that type, else 0. */
  int (*json_get_string)(const kc_json* j, const char* key, const char** value);
  int (*json_get_int64)(const kc_json* j, const char* key, int64_t* value);
  int (*json_get_double)(const kc_json* j, const char* key, double* value);
  int (*json_get_boolean)(const kc_json* j, const char* key, int* value);

  /* ---- source records: built in place in the runtime's batch */
  kc_source_record* (*source_records_add)(kc_source_records* out);
  void (*source_record_set_topic)(kc_source_record* r, const char* topic);
  void (*source_record_set_partition)(kc_source_record* r, int32_t partition); /* default: partitioner */
  void (*source_record_set_timestamp)(kc_source_record* r, int64_t epoch_ms);  /* default: producer's */
  /* Key and value: `schema` shared (NULL = schemaless), `value` moved in. */
  void (*source_record_set_key)(kc_source_record* r, const kc_schema* schema, kc_value* value);
  void (*source_record_set_value)(kc_source_record* r, const kc_schema* schema, kc_value* value);
  /* The source partition: records given the same kc_json share one copy
   * until it is changed. */
  void (*source_record_set_source_partition)(kc_source_record* r, const kc_json* partition);
  kc_json* (*source_record_source_offset)(kc_source_record* r); /* mutable, in place */
  kc_headers* (*source_record_headers)(kc_source_record* r);     /* mutable, in place */
  /* Readers (also for commit_record). */
  const char* (*source_record_topic)(const kc_source_record* r);
  const kc_schema* (*source_record_key_schema)(const kc_source_record* r);
  const kc_value* (*source_record_key)(const kc_source_record* r);
  const kc_schema* (*source_record_value_schema)(const kc_source_record* r);
  const kc_value* (*source_record_value)(const kc_source_record* r);
  const kc_json* (*source_record_get_source_offset)(const kc_source_record* r);

  /* ---- sink records */
  size_t (*sink_records_size)(const kc_sink_records* rs);
  const kc_sink_record* (*sink_records_at)(const kc_sink_records* rs, size_t index);
  const char* (*sink_record_topic)(const kc_sink_record* r);
  int32_t (*sink_record_partition)(const kc_sink_record* r);
  int64_t (*sink_record_offset)(const kc_sink_record* r);
  int64_t (*sink_record_timestamp)(const kc_sink_record* r); /* -1 when none */
  const kc_schema* (*sink_record_key_schema)(const kc_sink_record* r);
  const kc_value* (*sink_record_key)(const kc_sink_record* r);
  const kc_schema* (*sink_record_value_schema)(const kc_sink_record* r);
  const kc_value* (*sink_record_value)(const kc_sink_record* r);
  const kc_headers* (*sink_record_headers)(const kc_sink_record* r);

  /* ---- topic-partition offsets and partition lists */
  size_t (*offsets_size)(const kc_offsets* o);
  /* Entry `index` in (topic, partition) order. */
  void (*offsets_at)(const kc_offsets* o, size_t index, const char** topic, int32_t* partition, int64_t* offset);
  void (*offsets_set)(kc_offsets* o, const char* topic, int32_t partition, int64_t offset);
  void (*offsets_remove)(kc_offsets* o, const char* topic, int32_t partition);
  size_t (*partitions_size)(const kc_partitions* p);
  void (*partitions_at)(const kc_partitions* p, size_t index, const char** topic, int32_t* partition);

  /* ---- ABI 1.2 (check struct_size before use: a 1.1 worker lacks them) */
  /* Schema.defaultValue(): borrowed, valid while the schema is; NULL when
   * the schema has none. */
  const kc_value* (*schema_default_value)(const kc_schema* s);
  /* Schema.equals: 1 when both are NULL or equal by value (type, optional,
   * name, version, doc, parameters, fields, default), else 0. */
  int (*schema_equals)(const kc_schema* a, const kc_schema* b);

  /* ---- ABI 1.3 (check struct_size before use: a 1.2 worker lacks them) */
  /* A nap the task's stop ends: blocks the calling thread for up to
   * `timeout_ms` milliseconds and returns 1 as soon as the task's stop has
   * been requested (at once when it already was), 0 when the time passed
   * without one. Use it instead of sleep() for backoffs and idle waits in
   * poll() / put(): the worker asks a task to stop from another thread
   * (Connect's WorkerTask.stop) and then waits at most
   * task.shutdown.graceful.timeout.ms for the call to return, so a plain
   * sleep longer than that leaves the task abandoned with its thread still
   * asleep. After 1, return from the call promptly (a sink's put() may
   * return KC_RETRIABLE: records handed back at a stop are consumed again
   * by the next owner). timeout_ms < 0 counts as 0; a wait is at most one
   * day (86,400,000 ms), longer values wait that long and return 0. A NULL
   * `ctx` has no stop to see: a plain sleep, then 0. */
  int (*source_task_wait_stopped)(const kc_source_task_context* ctx, int64_t timeout_ms);
  int (*sink_task_wait_stopped)(const kc_sink_task_context* ctx, int64_t timeout_ms);
} kc_host_api;

/* The entry point every plugin exports as KC_PLUGIN_ENTRY_POINT. `host`
 * lives as long as the process. Return KC_ERROR (with set_error) to refuse
 * loading; the classes registered so far are then dropped. */
typedef kc_status (*kc_plugin_register_fn)(const kc_host_api* host, kc_registrar* registrar);

#ifdef __cplusplus
}
#endif

#endif /* KCONNECTD_PLUGIN_H */
