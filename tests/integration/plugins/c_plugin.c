/* A connector plugin in plain C99 (compiled with -std=c99 -pedantic
 * -Werror: plugin.h must stay C). test.ErrorSourceConnector: its task's
 * first poll emits one record whose value is a Struct {n: 7} built through
 * the host API; its second poll fails with "c plugin poll failed: disk on
 * fire". Built with KC_TEST_BAD_MAJOR it claims the next major ABI version
 * (the worker must refuse it). */
#include <stdlib.h>
#include <string.h>

#include <kconnectd/plugin.h>

#ifdef KC_TEST_BAD_MAJOR
KC_PLUGIN_EXPORT const uint32_t kc_plugin_abi_version = (uint32_t)(KC_PLUGIN_ABI_VERSION_MAJOR + 1) << 16;
#else
KC_PLUGIN_DECLARE_ABI();
#endif

static const kc_host_api* host;

typedef struct connector {
  char topic[256];
} connector;

typedef struct task {
  char topic[256];
  int polls;
} task;

static kc_status conn_create(void* class_data, const kc_connector_context* ctx, void** self) {
  (void)class_data;
  (void)ctx;
  *self = calloc(1, sizeof(connector));
  return *self ? KC_OK : KC_ERROR;
}

static kc_status conn_start(void* self, const kc_config* config) {
  const char* topic = host->config_get(config, "topic");
  if (!topic || strlen(topic) >= sizeof(((connector*)self)->topic)) {
    host->set_error("ErrorSource needs a 'topic' of under 256 bytes");
    return KC_ERROR;
  }
  strcpy(((connector*)self)->topic, topic);
  return KC_OK;
}

static kc_status conn_task_configs(void* self, int32_t max_tasks, kc_task_configs* out) {
  int32_t i;
  for (i = 0; i < max_tasks; ++i) host->config_set(host->task_configs_add(out), "topic", ((connector*)self)->topic);
  return KC_OK;
}

static kc_status conn_stop(void* self) {
  (void)self;
  return KC_OK;
}

static void conn_destroy(void* self) { free(self); }

static kc_status task_create(void* class_data, void** self) {
  (void)class_data;
  *self = calloc(1, sizeof(task));
  return *self ? KC_OK : KC_ERROR;
}

static kc_status task_start(void* self, const kc_config* config, const kc_source_task_context* ctx) {
  const char* topic = host->config_get(config, "topic");
  (void)ctx;
  if (!topic || strlen(topic) >= sizeof(((task*)self)->topic)) return KC_ERROR;
  strcpy(((task*)self)->topic, topic);
  return KC_OK;
}

static kc_status task_poll(void* self, kc_source_records* out) {
  task* t = (task*)self;
  kc_schema_builder* b;
  const kc_schema* schema;
  kc_value *v, *n;
  kc_source_record* r;
  kc_json* part;
  kc_status st;
  if (t->polls++ > 0) {
    host->set_error("c plugin poll failed: disk on fire");
    return KC_ERROR;
  }
  b = host->schema_builder_new(KC_STRUCT);
  host->schema_builder_name(b, "test.N");
  host->schema_builder_field(b, "n", host->schema_predefined(KC_INT32, 0));
  schema = host->schema_build(b);
  if (!schema) return KC_ERROR; /* last_error is already set */
  v = host->value_new();
  n = host->value_new();
  host->value_set_int32(n, 7);
  st = host->value_set_struct(v, schema);
  if (st == KC_OK) st = host->value_struct_put(v, "n", n);
  if (st == KC_OK) {
    r = host->source_records_add(out);
    host->source_record_set_topic(r, t->topic);
    host->source_record_set_value(r, schema, v);
    part = host->json_new();
    host->json_set_string(part, "source", "c");
    host->source_record_set_source_partition(r, part);
    host->json_free(part);
    host->json_set_int64(host->source_record_source_offset(r), "polls", 1);
  }
  host->value_free(n);
  host->value_free(v);
  host->schema_release(schema);
  return st;
}

static kc_status task_stop(void* self) {
  (void)self;
  return KC_OK;
}

static void task_destroy(void* self) { free(self); }

static const kc_source_task_class task_class = {sizeof(kc_source_task_class), task_create, task_start, task_poll,
                                                NULL, NULL, task_stop, task_destroy};

static const kc_config_key keys[] = {
    {"topic", KC_CONFIG_STRING, 1, NULL, KC_IMPORTANCE_HIGH, "Where the record goes.", NULL, NULL, 0, 0, 0, 0, NULL,
     1},
};

KC_PLUGIN_EXPORT kc_status kc_plugin_register(const kc_host_api* h, kc_registrar* registrar) {
  kc_connector_class c;
  memset(&c, 0, sizeof c);
  host = h;
  c.struct_size = sizeof c;
  c.class_name = "test.ErrorSourceConnector";
  c.type = KC_SOURCE;
  c.version = "0.0.1-c";
  c.config_keys = keys;
  c.config_key_count = sizeof keys / sizeof keys[0];
  c.create = conn_create;
  c.start = conn_start;
  c.task_configs = conn_task_configs;
  c.stop = conn_stop;
  c.destroy = conn_destroy;
  c.source_task = &task_class;
  return h->register_connector(registrar, &c);
}
