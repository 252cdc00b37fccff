#pragma once
// WorkerConfig: the distributed worker's settings, declared once in a table
// (worker_options()) from which parsing, validation, defaults and the
// README's option table all derive. Names and defaults follow Kafka Connect's
// DistributedConfig / WorkerConfig / RestServerConfig / CommonClientConfigs
// (../shared/reference/connect-reference.md section 7).
//
// Built once at startup (any thread) and read-only afterwards, so it is safe
// to share between threads. Construction throws ConfigError.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "common/labels.h"
#include "config/properties.h"
#include "config/security_config.h"

namespace kc::config {

/// Value types an option can have (Kafka ConfigDef.Type names in lower case).
enum class OptionType {
  Boolean,   ///< "true"/"false", case-insensitive
  Short,     ///< int16
  Int,       ///< int32
  Long,      ///< int64
  String,    ///< trimmed text
  List,      ///< comma-separated, each element trimmed
  Password,  ///< like String, never printed
};

/// One declared option. Numeric options are range-checked against
/// [min, max]; `nonzero` additionally rejects 0 (e.g. replication factors,
/// where -1 means "broker default"). `choices` ("a|b|c") restricts String
/// values; they are matched case-insensitively and stored lower-case.
struct OptionDef {
  const char* name;
  OptionType type;
  const char* default_value;  ///< nullptr: no default (null, or required when `required`)
  bool required = false;      ///< missing (or empty, when `nonempty`) is an error
  bool nonempty = false;      ///< an empty value is an error
  int64_t min = 0;
  int64_t max = 0;
  bool nonzero = false;
  const char* choices = nullptr;
  const char* unit = "";      ///< "ms", "bytes", "bits" or ""
  const char* doc = "";
};

/// The declaration table, in documentation order. Single source of truth.
std::span<const OptionDef> worker_options();

/// Finds an option by exact name; nullptr if undeclared.
const OptionDef* find_option(std::string_view name);

/// "int, ms, 1..2147483647" / "string, one of eager|compatible|sessioned":
/// the expectation shown in error messages and in the README.
std::string describe_expectation(const OptionDef& def);

/// The README's option table (Markdown) generated from worker_options().
std::string options_markdown();

/// True when worker property `key` holds a secret, shown only as
/// "[hidden]" (Kafka's Password type): a declared option of type Password,
/// or secret by name (secrets::is_secret_key): Kafka's PASSWORD client keys
/// ssl.key.password, ssl.keystore.password, ssl.truststore.password,
/// sasl.jaas.config, librdkafka's sasl.password, under any prefix
/// (producer., consumer., admin., listeners.https., ...), and any
/// *.password / *.secret key.
bool is_secret_option(std::string_view key);

/// Why `id` cannot be a `group.instance.id`, or nullopt when it can. Kafka's
/// rule for group instance ids (JoinGroupRequest validates them as it does
/// topic names): non-empty, not "." or "..", at most 249 characters, only
/// ASCII letters, digits, '.', '_' and '-'. The text completes
/// "group.instance.id: '<id>' ...".
std::optional<std::string> group_instance_id_problem(std::string_view id);

/// The declared option, or the pass-through key with a corrected prefix
/// ("consumr.max.poll.records" -> "consumer.max.poll.records"), closest to
/// the unknown `key` by edit distance (Levenshtein), when it is within a
/// misspelling's reach: at most max(2, length / 6) edits. nullopt otherwise.
std::optional<std::string> suggest_option(std::string_view key);

/// True when `key` belongs to a client or plugin that reads it itself
/// (`producer.`, `consumer.`, `admin.`, `ssl.`, `sasl.`, the converters',
/// `config.providers.`, `listeners.https.`, ...), so it is never "unknown".
bool is_pass_through_key(std::string_view key);

/// One entry of `listeners`: "http://:8083" -> {"http", "", 8083}.
struct Listener {
  std::string scheme;  ///< lower-case "http" or "https"
  std::string host;    ///< empty = all interfaces
  int32_t port = 0;    ///< 0..65535
};

/// This host's name (gethostname), used when neither rest.advertised.host.name
/// nor the listener gives a host. Falls back to "localhost".
std::string local_hostname();

struct WorkerConfigReport;

/// Which kind of worker a configuration is for. Connect has one config
/// class per mode: DistributedConfig needs group.id and the three storage
/// topics; StandaloneConfig needs none of them but
/// offset.storage.file.filename.
enum class WorkerMode {
  Distributed,  ///< `kconnectd run`: group.id, config/offset/status.storage.topic required
  Standalone,   ///< `kconnectd standalone`: offset.storage.file.filename required, no group or topics
};

/// Options only a distributed worker needs; a standalone worker ignores
/// them (and does not require them).
bool is_distributed_only_option(std::string_view name);

/// Validated worker configuration. Build with from_properties()/from_file().
class WorkerConfig {
 public:
  /// A resolved value: null, boolean, integer (all widths), text or list.
  using Value = std::variant<std::monostate, bool, int64_t, std::string, std::vector<std::string>>;

  /// Validates `props` against worker_options() and the cross-checks below,
  /// reporting every problem at once rather than the first:
  /// - each option: a missing required option ("<key>: missing required
  ///   option (expected ...)"), a value of the wrong type, out of range or
  ///   not one of its choices ("<key>: '<value>' <problem> (expected <type,
  ///   unit, range>)"; secret values read "[hidden]");
  /// - cross-checks, each skipped when an option it reads is already bad:
  ///   heartbeat.interval.ms < session.timeout.ms; the three storage topics
  ///   distinct; inter.worker.signature.algorithm listed in
  ///   inter.worker.verification.algorithms; every listener parseable; the
  ///   SASL mechanism and credentials; group.instance.id; with
  ///   security.protocol SSL/SASL_SSL, the TLS settings (tls_settings_from():
  ///   PEM store types only, every PEM file named exists and is readable).
  /// Unknown keys (not declared and not under a pass-through prefix such as
  /// `producer.`, `consumer.`, `admin.`, `ssl.`, `sasl.`, `key.converter.`)
  /// are warnings, as Connect only logs them, with a did-you-mean suggestion
  /// (suggest_option()). Never throws ConfigError.
  /// `mode` Standalone: group.id and the storage topics are not required
  /// (nor checked to differ); offset.storage.file.filename is ("offset.storage.file.filename:
  /// missing required option in standalone mode (...)"), and
  /// exactly.once.source.support must stay `disabled` (Connect's standalone
  /// worker has no exactly-once source support).
  static WorkerConfigReport validate(const Properties& props, WorkerMode mode = WorkerMode::Distributed);
  /// validate(); throws ConfigError whose what() is every error, one per
  /// line, when there is any.
  static WorkerConfig from_properties(const Properties& props);
  /// load_properties_file(path) + from_properties().
  static WorkerConfig from_file(const std::string& path);

  /// Non-fatal findings (unknown keys, suspicious combinations), in key order.
  [[nodiscard]] const std::vector<std::string>& warnings() const { return warnings_; }
  /// The properties as given (before defaults).
  [[nodiscard]] const Properties& originals() const { return originals_; }
  /// Kafka's "DistributedConfig values:" startup dump: every declared
  /// option's effective value (defaults included; null as "null", lists
  /// comma-joined) and every other given property, one "\tkey = value" line
  /// each in key order, secrets (is_secret_option) as "[hidden]".
  [[nodiscard]] std::string describe() const;

  // Generic typed access by declared name; throws std::out_of_range for an
  // undeclared name and std::bad_variant_access for a null or mistyped value.
  [[nodiscard]] bool is_null(std::string_view name) const;
  [[nodiscard]] bool get_bool(std::string_view name) const;
  [[nodiscard]] int64_t get_long(std::string_view name) const;
  [[nodiscard]] int32_t get_int(std::string_view name) const { return static_cast<int32_t>(get_long(name)); }
  [[nodiscard]] const std::string& get_string(std::string_view name) const;
  [[nodiscard]] const std::vector<std::string>& get_list(std::string_view name) const;
  [[nodiscard]] std::optional<std::string> get_optional_string(std::string_view name) const;

  // Typed accessors (Kafka name in the comment when not obvious).
  [[nodiscard]] const std::vector<std::string>& bootstrap_servers() const { return get_list("bootstrap.servers"); }
  [[nodiscard]] const std::string& group_id() const { return get_string("group.id"); }
  [[nodiscard]] int32_t session_timeout_ms() const { return get_int("session.timeout.ms"); }
  [[nodiscard]] int32_t heartbeat_interval_ms() const { return get_int("heartbeat.interval.ms"); }
  [[nodiscard]] int32_t rebalance_timeout_ms() const { return get_int("rebalance.timeout.ms"); }
  /// "eager" | "compatible" | "sessioned" (lower-case; see
  /// kc::connect::protocol_from_config).
  [[nodiscard]] const std::string& connect_protocol() const { return get_string("connect.protocol"); }
  [[nodiscard]] int32_t scheduled_rebalance_max_delay_ms() const { return get_int("scheduled.rebalance.max.delay.ms"); }
  /// scheduled.rebalance.return.to.owner.enable (ours, default true): the
  /// leader gives lost work back to its worker (same group.instance.id, or
  /// same advertised URL for a dynamic one) in the round it rejoins within
  /// the scheduled delay (assignor::RoundContext::return_lost_to_owner).
  [[nodiscard]] bool scheduled_rebalance_return_to_owner_enable() const {
    return get_bool("scheduled.rebalance.return.to.owner.enable");
  }
  /// scheduled.rebalance.static.expiry.immediate (ours, default true):
  /// lost work of a static member (group.instance.id) the broker expired
  /// after session.timeout.ms is placed in that round, with no scheduled
  /// delay; dynamic members' lost work still waits it
  /// (assignor::RoundContext::no_delay_for_expired_static).
  [[nodiscard]] bool scheduled_rebalance_static_expiry_immediate() const {
    return get_bool("scheduled.rebalance.static.expiry.immediate");
  }
  [[nodiscard]] int32_t worker_sync_timeout_ms() const { return get_int("worker.sync.timeout.ms"); }
  [[nodiscard]] int32_t worker_unsync_backoff_ms() const { return get_int("worker.unsync.backoff.ms"); }
  [[nodiscard]] const std::string& config_storage_topic() const { return get_string("config.storage.topic"); }
  [[nodiscard]] const std::string& offset_storage_topic() const { return get_string("offset.storage.topic"); }
  [[nodiscard]] const std::string& status_storage_topic() const { return get_string("status.storage.topic"); }
  [[nodiscard]] int16_t config_storage_replication_factor() const {
    return static_cast<int16_t>(get_long("config.storage.replication.factor"));
  }
  [[nodiscard]] int32_t offset_storage_partitions() const { return get_int("offset.storage.partitions"); }
  [[nodiscard]] int16_t offset_storage_replication_factor() const {
    return static_cast<int16_t>(get_long("offset.storage.replication.factor"));
  }
  [[nodiscard]] int32_t status_storage_partitions() const { return get_int("status.storage.partitions"); }
  [[nodiscard]] int16_t status_storage_replication_factor() const {
    return static_cast<int16_t>(get_long("status.storage.replication.factor"));
  }
  [[nodiscard]] int64_t offset_flush_interval_ms() const { return get_long("offset.flush.interval.ms"); }
  [[nodiscard]] int64_t offset_flush_timeout_ms() const { return get_long("offset.flush.timeout.ms"); }
  [[nodiscard]] int64_t task_shutdown_graceful_timeout_ms() const {
    return get_long("task.shutdown.graceful.timeout.ms");
  }
  /// connector.call.timeout.ms: deadline of a connector's start() /
  /// taskConfigs() and a task's poll() / put() (ours; 100..2^31-1, default 60000).
  [[nodiscard]] int32_t connector_call_timeout_ms() const { return get_int("connector.call.timeout.ms"); }
  /// tasks.max.limit: the highest tasks.max a connector may set (ours; 1..2^31-1, default 1000).
  [[nodiscard]] int32_t tasks_max_limit() const { return get_int("tasks.max.limit"); }
  [[nodiscard]] const std::vector<std::string>& listeners() const { return get_list("listeners"); }
  [[nodiscard]] std::optional<std::string> rest_advertised_host_name() const {
    return get_optional_string("rest.advertised.host.name");
  }
  [[nodiscard]] std::optional<int32_t> rest_advertised_port() const;
  [[nodiscard]] std::optional<std::string> rest_advertised_listener() const {
    return get_optional_string("rest.advertised.listener");
  }
  [[nodiscard]] const std::string& key_converter() const { return get_string("key.converter"); }
  [[nodiscard]] const std::string& value_converter() const { return get_string("value.converter"); }
  [[nodiscard]] std::vector<std::string> plugin_path() const;
  [[nodiscard]] const std::string& client_id() const { return get_string("client.id"); }
  [[nodiscard]] int32_t request_timeout_ms() const { return get_int("request.timeout.ms"); }
  [[nodiscard]] int64_t retry_backoff_ms() const { return get_long("retry.backoff.ms"); }
  /// topic.tracking.enable (WorkerConfig.TOPIC_TRACKING_ENABLE_CONFIG,
  /// default true): record the topics each connector uses; when false, GET
  /// /connectors/{c}/topics and PUT .../topics/reset answer 403.
  [[nodiscard]] bool topic_tracking_enable() const { return get_bool("topic.tracking.enable"); }
  /// topic.tracking.allow.reset (WorkerConfig.TOPIC_TRACKING_ALLOW_RESET_CONFIG,
  /// default true): when false, PUT /connectors/{c}/topics/reset answers 403.
  [[nodiscard]] bool topic_tracking_allow_reset() const { return get_bool("topic.tracking.allow.reset"); }
  /// rebalance.hand.over.enable (ours, default true): under a cooperative
  /// protocol a task revoked for balance is placed in the same round and
  /// started once its old owner's stop is read (DistributedHerder).
  [[nodiscard]] bool rebalance_hand_over_enable() const { return get_bool("rebalance.hand.over.enable"); }
  /// shutdown.drain.enable (ours, default true): SIGTERM/SIGINT drain the
  /// worker (hand its work to the others) before it leaves the group; a
  /// static member that does not leave on shutdown keeps its work instead.
  [[nodiscard]] bool shutdown_drain_enable() const { return get_bool("shutdown.drain.enable"); }
  /// shutdown.drain.timeout.ms (ours, default 15000): bound of a drain, ms.
  [[nodiscard]] int32_t shutdown_drain_timeout_ms() const { return get_int("shutdown.drain.timeout.ms"); }
  /// producer.shared (ours, default false): the worker's at-least-once
  /// source tasks share one producer (issue 10, dense workers); the
  /// producer.* settings apply to it as to per-task producers.
  [[nodiscard]] bool producer_shared() const { return get_bool("producer.shared"); }
  /// group.instance.id (KIP-345 static membership, ours for workers):
  /// nullopt = dynamic membership. Validated by from_properties().
  [[nodiscard]] std::optional<std::string> group_instance_id() const {
    return get_optional_string("group.instance.id");
  }
  /// worker.labels (ours, issue 29): this worker's placement labels, parsed
  /// (validate() rejects bad syntax, naming the key); empty when unset.
  [[nodiscard]] Labels worker_labels() const {
    auto l = parse_labels(get_string("worker.labels"));
    return l ? *l : Labels{};
  }
  /// static.membership.leave.on.shutdown (ours, default false): a static
  /// member sends LeaveGroup on SIGTERM too.
  [[nodiscard]] bool static_membership_leave_on_shutdown() const {
    return get_bool("static.membership.leave.on.shutdown");
  }
  /// static.membership.assignment.file (ours, default ""): where the worker
  /// keeps its last assignment (a static member resumes it on a restart
  /// without rebalance; a dynamic one before rejoining after a crash);
  /// "" = not kept.
  [[nodiscard]] const std::string& static_membership_assignment_file() const {
    return get_string("static.membership.assignment.file");
  }
  [[nodiscard]] const std::string& log_level() const { return get_string("log.level"); }
  /// offset.storage.file.filename (standalone mode): the source offset file.
  [[nodiscard]] const std::string& offset_storage_file_filename() const {
    return get_string("offset.storage.file.filename");
  }
  [[nodiscard]] const std::string& log_format() const { return get_string("log.format"); }

  // Derived values (reference 4.1).
  /// `listeners` parsed, in order.
  [[nodiscard]] const std::vector<Listener>& parsed_listeners() const { return listeners_; }
  /// Advertised host: rest.advertised.host.name, else the chosen listener's
  /// host, else `default_host`.
  [[nodiscard]] std::string advertised_host(const std::string& default_host = local_hostname()) const;
  /// Advertised port: rest.advertised.port, else the chosen listener's port.
  [[nodiscard]] int32_t advertised_port() const;
  /// "<scheme>://<host>:<port>/", the `url` in JoinGroup metadata. Scheme:
  /// rest.advertised.listener, else the first listener's. The chosen listener
  /// is the first with that scheme (else the first).
  [[nodiscard]] std::string advertised_url(const std::string& default_host = local_hostname()) const;
  /// "<host>:<port>", Connect's workerId (status records' worker_id).
  [[nodiscard]] std::string worker_id(const std::string& default_host = local_hostname()) const;
  /// client.id, or "connect-<workerId>" when empty (the group member's id prefix).
  [[nodiscard]] std::string group_client_id(const std::string& default_host = local_hostname()) const;

  // Client pass-through (librdkafka property maps; config/ does not link it).
  /// Settings every client gets: bootstrap.servers (comma-joined),
  /// security.protocol, every sasl.* key verbatim, and the ssl.* keys
  /// translated to librdkafka's names (librdkafka_ssl_config()).
  [[nodiscard]] std::map<std::string, std::string> common_client_config() const;
  /// common_client_config() overlaid with `producer.*` (prefix stripped).
  [[nodiscard]] std::map<std::string, std::string> producer_config() const;
  /// common_client_config() overlaid with `consumer.*` (prefix stripped).
  [[nodiscard]] std::map<std::string, std::string> consumer_config() const;
  /// common_client_config() overlaid with `admin.*` (prefix stripped;
  /// admin.listeners and admin.listeners.* are worker options, not passed).
  [[nodiscard]] std::map<std::string, std::string> admin_config() const;
  /// The group client's TLS settings (tls_settings_from(originals())):
  /// enabled when security.protocol is SSL or SASL_SSL. Already validated by
  /// from_properties(), so this does not throw for a built WorkerConfig.
  [[nodiscard]] TlsSettings tls_settings() const { return tls_settings_from(originals_); }
  /// Every original key starting with `prefix`, prefix stripped (e.g.
  /// "key.converter." for the key converter's own settings).
  [[nodiscard]] std::map<std::string, std::string> originals_with_prefix(std::string_view prefix) const;

 private:
  Properties originals_;
  std::map<std::string, Value, std::less<>> values_;
  std::vector<std::string> warnings_;
  std::vector<Listener> listeners_;

  [[nodiscard]] const Value& value(std::string_view name) const;
  [[nodiscard]] const Listener& chosen_listener() const;
};

/// Everything one WorkerConfig::validate() found: every error (each a
/// complete sentence naming its key), every warning, and the config when
/// there is no error.
struct WorkerConfigReport {
  std::vector<std::string> errors;     ///< declaration order, then the cross-checks
  std::vector<std::string> warnings;   ///< as warnings() of the built config
  std::optional<WorkerConfig> config;  ///< set iff errors is empty
};

}  // namespace kc::config
