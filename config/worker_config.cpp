// WorkerConfig: the option table and the validation derived from it.
#include "config/worker_config.h"
#include "common/secrets.h"
#include "common/strings.h"
#include "common/worker_defaults.h"
#include "config/jaas.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <climits>
#include <set>

namespace kc::config {
namespace {

constexpr int64_t kIntMax = INT32_MAX;
constexpr int64_t kLongMax = INT64_MAX;

constexpr OptionDef opt_int(const char* n, const char* d, int64_t lo, int64_t hi, const char* unit, const char* doc) {
  return OptionDef{n, OptionType::Int, d, false, false, lo, hi, false, nullptr, unit, doc};
}
constexpr OptionDef opt_long(const char* n, const char* d, int64_t lo, int64_t hi, const char* unit, const char* doc) {
  return OptionDef{n, OptionType::Long, d, false, false, lo, hi, false, nullptr, unit, doc};
}
constexpr OptionDef opt_string(const char* n, const char* d, const char* doc) {
  return OptionDef{n, OptionType::String, d, false, false, 0, 0, false, nullptr, "", doc};
}
constexpr OptionDef opt_required(const char* n, const char* doc) {
  return OptionDef{n, OptionType::String, nullptr, true, true, 0, 0, false, nullptr, "", doc};
}
constexpr OptionDef opt_enum(const char* n, const char* d, const char* choices, const char* doc) {
  return OptionDef{n, OptionType::String, d, false, false, 0, 0, false, choices, "", doc};
}
constexpr OptionDef opt_list(const char* n, const char* d, const char* doc) {
  return OptionDef{n, OptionType::List, d, false, false, 0, 0, false, nullptr, "", doc};
}
constexpr OptionDef opt_bool(const char* n, const char* d, const char* doc) {
  return OptionDef{n, OptionType::Boolean, d, false, false, 0, 0, false, nullptr, "", doc};
}
constexpr OptionDef opt_password(const char* n, const char* doc) {
  return OptionDef{n, OptionType::Password, nullptr, false, false, 0, 0, false, nullptr, "", doc};
}
/// Replication factor: -1 (broker default) or 1..32767.
constexpr OptionDef opt_replication(const char* n, const char* doc) {
  return OptionDef{n, OptionType::Short, "3", false, false, -1, INT16_MAX, true, nullptr, "", doc};
}
/// Partition count: -1 (broker default) or 1..2147483647.
constexpr OptionDef opt_partitions(const char* n, const char* d, const char* doc) {
  return OptionDef{n, OptionType::Int, d, false, false, -1, kIntMax, true, nullptr, "", doc};
}

// The declaration. Defaults from Kafka Connect (reference section 7).
const std::array kOptions = {
    // Group membership and rebalancing.
    opt_list("bootstrap.servers", "localhost:9092", "Kafka brokers to bootstrap from, host:port[,host:port...]."),
    opt_required("group.id", "The Connect cluster id: workers with the same group.id form one group."),
    opt_int("session.timeout.ms", decimal_text<kSessionTimeoutMsDefault>, 1, kIntMax, "ms",
            "Group session timeout; the broker accepts 6000..1800000 by default."),
    opt_int("heartbeat.interval.ms", decimal_text<kHeartbeatIntervalMsDefault>, 1, kIntMax, "ms", "Heartbeat period; must be lower than session.timeout.ms."),
    opt_int("rebalance.timeout.ms", decimal_text<kRebalanceTimeoutMsDefault>, 1, kIntMax, "ms", "JoinGroup rebalance timeout and worker poll timeout."),
    opt_enum("connect.protocol", "sessioned", "eager|compatible|sessioned",
             "Rebalance protocol: eager (V0), compatible (V1, KIP-415) or sessioned (V2, KIP-507)."),
    opt_int("scheduled.rebalance.max.delay.ms", decimal_text<kScheduledRebalanceMaxDelayMsDefault>, 0, kIntMax, "ms",
            "How long lost connectors/tasks wait for their worker to return; 0 disables the delay."),
    opt_bool("scheduled.rebalance.return.to.owner.enable", "true",
             "Cooperative protocols: when a worker whose connectors and tasks were lost rejoins while "
             "scheduled.rebalance.max.delay.ms runs (same group.instance.id, or for a dynamic worker the same "
             "advertised URL), the leader gives it back exactly that lost work in the same rebalance instead of at the "
             "end of the delay; lost work of workers that do not return still waits the delay. false = Connect's "
             "behaviour (ours)."),
    opt_bool("scheduled.rebalance.static.expiry.immediate", "true",
             "Cooperative protocols, members with group.instance.id only: when the broker expires a static worker "
             "after session.timeout.ms, the leader places that worker's lost connectors and tasks in the same "
             "rebalance like new work instead of holding them for scheduled.rebalance.max.delay.ms (the session "
             "timeout already was its grace period); lost work of dynamic workers still waits the delay. false = "
             "Connect's behaviour (ours)."),
    opt_string("group.instance.id", nullptr,
               "Static membership (KIP-345, ours for workers): this worker's stable identity in the group, e.g. the "
               "pod name of a StatefulSet. A worker restarted with the same id within session.timeout.ms gets its "
               "member identity and assignment back without a rebalance. Unset = dynamic membership. ASCII letters, "
               "digits, '.', '_' and '-', at most 249 characters."),
    opt_string("worker.labels", "",
               "Placement labels of this worker, key=value pairs separated by commas, e.g. host=a,zone=z1,disk=ssd "
               "(keys [A-Za-z0-9._/-], at most 63 bytes; values also ':', at most 255 bytes; at most 64 labels). "
               "Sent in the group metadata (cooperative protocols); a connector with placement.labels runs only on "
               "workers that carry all of its labels. Empty = no labels: such a worker, like one of an older build, "
               "runs no connector with placement.labels (ours)."),
    opt_bool("static.membership.leave.on.shutdown", "false",
             "With group.instance.id: send LeaveGroup on SIGTERM, so the work moves at once instead of waiting "
             "for the worker to return (as `kconnectd run --leave-on-shutdown`) (ours)."),
    opt_string("static.membership.assignment.file", "",
               "File where the worker keeps its last assignment; empty = not kept. With group.instance.id, a "
               "restart without a rebalance resumes exactly the connectors and tasks it ran (without the file "
               "the returning worker rejoins once to report what it runs). Without group.instance.id, a worker "
               "restarted after a crash resumes, before it rejoins, the kept work that nobody else has taken: "
               "the file is younger than session.timeout.ms - heartbeat.interval.ms + "
               "scheduled.rebalance.max.delay.ms / 2, and the status topic shows no other owner (ours)."),
    opt_int("worker.sync.timeout.ms", decimal_text<kWorkerSyncTimeoutMsDefault>, 1, kIntMax, "ms",
            "Time allowed to read the config topic to the end before leaving the group."),
    opt_int("worker.unsync.backoff.ms", decimal_text<kWorkerUnsyncBackoffMsDefault>, 0, kIntMax, "ms",
            "Backoff after failing to catch up with the config topic (eager protocol only)."),
    // Internal topics.
    opt_required("config.storage.topic", "Topic holding connector and task configs (1 partition, compacted)."),
    opt_replication("config.storage.replication.factor", "Replication factor of the config topic; -1 = broker default."),
    opt_required("offset.storage.topic", "Topic holding source connector offsets (compacted)."),
    opt_partitions("offset.storage.partitions", "25", "Partitions of the offsets topic; -1 = broker default."),
    opt_replication("offset.storage.replication.factor", "Replication factor of the offsets topic; -1 = broker default."),
    opt_required("status.storage.topic", "Topic holding connector and task status (compacted)."),
    opt_string("offset.storage.file.filename", "",
               "Standalone mode (`kconnectd standalone`, required there): the file holding source connector offsets, "
               "rewritten atomically every offset.flush.interval.ms (`<file>.bak` keeps the copy before). Unused in "
               "distributed mode."),
    opt_partitions("status.storage.partitions", "5", "Partitions of the status topic; -1 = broker default."),
    opt_replication("status.storage.replication.factor", "Replication factor of the status topic; -1 = broker default."),
    opt_bool("topic.creation.enable", "true", "Allow source connectors to create topics (topic.creation.* settings)."),
    opt_bool("topic.tracking.enable", "true",
             "Track the topics each connector uses (/connectors/{name}/topics); false answers 403 there."),
    opt_bool("topic.tracking.allow.reset", "true",
             "Allow PUT /connectors/{name}/topics/reset; false answers 403 there."),
    // Tasks and offsets.
    opt_long("offset.flush.interval.ms", decimal_text<kOffsetFlushIntervalMsDefault>, 0, kLongMax, "ms", "How often source task offsets are committed."),
    opt_long("offset.flush.timeout.ms", decimal_text<kOffsetFlushTimeoutMsDefault>, 0, kLongMax, "ms", "Time allowed for one offset flush."),
    opt_long("task.shutdown.graceful.timeout.ms", decimal_text<kTaskShutdownGracefulTimeoutMsDefault>, 0, kLongMax, "ms",
             "Time allowed for one connector or task to stop during a revocation or shutdown."),
    opt_int("connector.call.timeout.ms", decimal_text<kConnectorCallTimeoutMsDefault>, 100, kIntMax, "ms",
            "Time allowed for a connector's start() or taskConfigs(), or a task's poll() or put(); a plugin call "
            "past it marks the connector or task FAILED naming the call, and its thread is abandoned (ours; "
            "stop() is bounded by task.shutdown.graceful.timeout.ms). A connector's validate() has the same "
            "deadline (the request answers 500). While an abandoned call of a connector or plugin still runs, no "
            "new call of it starts, and at most 16 abandoned calls per worker (worker/runtime/README.md)."),
    opt_int("tasks.max.limit", decimal_text<kTasksMaxLimitDefault>, 1, kIntMax, "",
            "Highest tasks.max a connector may set on this cluster; a create or update above it is refused with 400, "
            "and a stored config above it fails its connector instead of generating task configs (ours)."),
    opt_bool("rebalance.hand.over.enable", "true",
             "Cooperative protocols: a task the leader revokes to balance the load is given to its new owner in the "
             "same round, which starts it once the old owner's stop shows in the status topic, instead of one "
             "rebalance later (ours)."),
    opt_bool("shutdown.drain.enable", "true",
             "On SIGTERM/SIGINT, hand this worker's connectors and tasks to the other workers before leaving the "
             "group, as POST /admin/drain does, so they wait no scheduled.rebalance.max.delay.ms. A static member "
             "(group.instance.id) drains only when it also leaves (static.membership.leave.on.shutdown); "
             "false: a plain stop and LeaveGroup, as Connect (ours)."),
    opt_int("shutdown.drain.timeout.ms", "15000", 0, kIntMax, "ms",
            "Longest a drain on SIGTERM or POST /admin/drain waits for the hand-over before the worker stops "
            "anyway. With task.shutdown.graceful.timeout.ms, worker.sync.timeout.ms and 5 s it bounds a stop: "
            "the defaults (28 s) fit systemd's TimeoutStopSec=30s and compose's stop_grace_period: 30s (ours)."),
    opt_bool("producer.shared", "false",
             "One producer for all of this worker's at-least-once source tasks instead of one per task "
             "(fewer threads and connections; producer.* settings apply to it) (ours)."),
    opt_string("key.converter", "org.apache.kafka.connect.json.JsonConverter",
               "Converter class for record keys (Kafka requires it; we default to JsonConverter). "
               "key.converter.* settings go to the converter."),
    opt_string("value.converter", "org.apache.kafka.connect.json.JsonConverter",
               "Converter class for record values; value.converter.* settings go to the converter."),
    opt_string("header.converter", "org.apache.kafka.connect.storage.SimpleHeaderConverter",
               "Converter class for record headers."),
    opt_list("plugin.path", nullptr, "Comma-separated directories of connector plugins: every *.so in each, and in its immediate subdirectories, is loaded at start (include/kconnectd/README.md); a refused file is logged and skipped."),
    opt_enum("exactly.once.source.support", "disabled", "disabled|preparing|enabled",
             "Exactly-once support for source connectors (KIP-618). `preparing`: the leader writes the config topic transactionally (`connect-cluster-<group.id>`), tasks stay at-least-once; `enabled`: also exactly-once source tasks and a `read_committed` config topic reader."),
    opt_string("connector.client.config.override.policy", "All",
               "Which producer/consumer/admin overrides connectors may set (KIP-458): All, None or Principal."),
    opt_list("config.providers", "", "Names of ConfigProviders (config.providers.<name>.* settings)."),
    // REST.
    opt_list("listeners", "http://:8083", "REST listeners, SCHEME://[HOST]:PORT (http or https); empty host = all."),
    opt_string("rest.advertised.host.name", nullptr, "Host name other workers use to reach this worker's REST API."),
    opt_int("rest.advertised.port", nullptr, 0, 65535, "", "Port other workers use to reach this worker's REST API."),
    opt_enum("rest.advertised.listener", nullptr, "http|https", "Scheme of the advertised REST URL."),
    opt_list("admin.listeners", nullptr, "Listeners for the admin REST endpoints; unset = listeners, empty = off."),
    opt_list("rest.extension.classes", "",
             "REST extension classes; org.apache.kafka.connect.rest.basic.auth.extension.BasicAuthSecurityRestExtension "
             "turns on basic authentication with the JAAS file java.security.auth.login.config; others are ignored."),
    opt_string("java.security.auth.login.config", nullptr,
               "JAAS file whose KafkaConnect entry names the basic auth credentials file (PropertyFileLoginModule "
               "file=...); Connect reads it as a JVM property, so -Djava.security.auth.login.config=... in KAFKA_OPTS "
               "works too."),
    opt_string("rest.basic.auth.credentials.file", nullptr,
               "Basic authentication for the REST API from this credentials file of `user: password[,role...]` lines, "
               "without JAAS (ours)."),
    opt_bool("rest.health.auth", "true",
             "false lets GET /health through without credentials when basic authentication is on, for probes (ours)."),
    opt_bool("rest.ui.enable", "true",
             "Serve the web console at GET /ui (workers, assignment, rebalance timeline, connector actions) on the "
             "REST listeners, under the same authentication; false answers 404 there (ours)."),
    opt_string("access.control.allow.origin", "", "CORS Access-Control-Allow-Origin value; empty = CORS off."),
    opt_string("access.control.allow.methods", "", "CORS Access-Control-Allow-Methods value."),
    opt_string("response.http.headers.config", "", "Extra HTTP response headers."),
    // Inter-worker request signing (KIP-507).
    opt_string("inter.worker.key.generation.algorithm", "HmacSHA256", "Algorithm of the session key."),
    opt_int("inter.worker.key.size", nullptr, 0, kIntMax, "bits", "Session key size; unset = algorithm default."),
    opt_int("inter.worker.key.ttl.ms", decimal_text<kInterWorkerKeyTtlMsDefault>, 0, kIntMax, "ms", "How long a session key lives before rotation."),
    opt_string("inter.worker.signature.algorithm", "HmacSHA256", "Algorithm used to sign internal requests."),
    opt_list("inter.worker.verification.algorithms", "HmacSHA256",
             "Algorithms accepted when verifying internal requests; must include the signature algorithm."),
    // Kafka client settings (also used for the group member).
    opt_string("client.id", "", "Client id; empty = connect-<workerId> for the group member."),
    opt_enum("security.protocol", "PLAINTEXT", "PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL",
             "Protocol used to talk to brokers; passed to every Kafka client."),
    opt_string("sasl.mechanism", "GSSAPI",
               "SASL mechanism with SASL_PLAINTEXT/SASL_SSL: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (Kafka's "
               "default GSSAPI is not supported); passed to every Kafka client."),
    opt_password("sasl.jaas.config",
                 "JAAS entry of the PlainLoginModule or ScramLoginModule with username and password; "
                 "${provider:path:key} references allowed. Librdkafka clients get sasl.username/sasl.password "
                 "from it."),
    opt_string("sasl.username", nullptr, "SASL username when sasl.jaas.config is unset (librdkafka's key)."),
    opt_password("sasl.password", "SASL password when sasl.jaas.config is unset (librdkafka's key)."),
    opt_int("request.timeout.ms", "40000", 0, kIntMax, "ms", "Kafka request timeout."),
    opt_long("metadata.max.age.ms", "300000", 0, kLongMax, "ms", "Metadata refresh period."),
    opt_long("retry.backoff.ms", "100", 0, kLongMax, "ms", "Backoff before retrying a failed request."),
    opt_long("retry.backoff.max.ms", "1000", 0, kLongMax, "ms", "Upper bound of the exponential retry backoff."),
    opt_long("reconnect.backoff.ms", "50", 0, kLongMax, "ms", "Backoff before reconnecting to a broker."),
    opt_long("reconnect.backoff.max.ms", "1000", 0, kLongMax, "ms", "Upper bound of the reconnect backoff."),
    opt_long("connections.max.idle.ms", "540000", -1, kLongMax, "ms", "Close idle broker connections after this."),
    opt_int("send.buffer.bytes", "131072", -1, kIntMax, "bytes", "Socket send buffer; -1 = OS default."),
    opt_int("receive.buffer.bytes", "32768", -1, kIntMax, "bytes", "Socket receive buffer; -1 = OS default."),
    opt_long("socket.connection.setup.timeout.ms", "10000", 0, kLongMax, "ms", "Connection setup timeout."),
    opt_long("socket.connection.setup.timeout.max.ms", "30000", 0, kLongMax, "ms",
             "Upper bound of the connection setup timeout."),
    // Metrics and logs.
    opt_long("metrics.sample.window.ms", "30000", 1, kLongMax, "ms", "Metrics sample window."),
    opt_int("metrics.num.samples", "2", 1, kIntMax, "", "Number of metrics samples kept."),
    opt_enum("metrics.recording.level", "INFO", "INFO|DEBUG|TRACE", "Highest metrics recording level."),
    opt_list("metric.reporters", "", "Metrics reporter classes (accepted, not used)."),
    opt_enum("log.level", "info", "trace|debug|info|warn|error|critical|off", "kconnectd log level (ours)."),
    opt_enum("log.format", "text", "text|json", "kconnectd log line format (ours)."),
    opt_string("log.file", "",
               "kconnectd log file (ours); empty = stderr. Appended to; SIGHUP reopens it (logrotate)."),
};

/// Key prefixes that belong to someone else: never "unknown".
constexpr std::array kPassThroughPrefixes = {
    "producer.",        "consumer.",          "admin.",           "ssl.",
    "sasl.",            "key.converter.",     "value.converter.", "header.converter.",
    "listeners.https.", "config.providers.",  "topic.creation.",  "metric.reporters.",
    "rest.extension.",  "listener.name.",
};

const char* type_name(OptionType t) {
  switch (t) {
    case OptionType::Boolean: return "boolean";
    case OptionType::Short: return "short";
    case OptionType::Int: return "int";
    case OptionType::Long: return "long";
    case OptionType::String: return "string";
    case OptionType::List: return "list";
    case OptionType::Password: return "password";
  }
  return "?";
}


std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> split_choices(const char* choices) {
  std::vector<std::string> out;
  std::string_view s(choices);
  for (std::size_t pos = 0;;) {
    auto bar = s.find('|', pos);
    out.emplace_back(s.substr(pos, bar - pos));
    if (bar == std::string_view::npos) break;
    pos = bar + 1;
  }
  return out;
}

/// Java ConfigDef list parsing: trim, empty -> [], split on commas, trim each.
std::vector<std::string> split_list(std::string_view raw) {
  std::vector<std::string> out;
  std::string t = trim(raw);
  if (t.empty()) return out;
  std::size_t pos = 0;
  for (;;) {
    auto comma = t.find(',', pos);
    out.push_back(trim(std::string_view(t).substr(pos, comma - pos)));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  return out;
}

/// Markdown table cells cannot hold a bare '|'.
std::string escape_pipes(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

[[noreturn]] void bad_value(const OptionDef& def, const std::string& raw, const std::string& problem) {
  throw ConfigError(std::string(def.name) + ": '" + secrets::redact(def.name, raw, &is_secret_option) + "' " +
                    problem + " (expected " + describe_expectation(def) + ")");
}

std::optional<Listener> parse_listener(const std::string& s) {
  auto sep = s.find("://");
  if (sep == std::string::npos) return std::nullopt;
  Listener l;
  l.scheme = lower(s.substr(0, sep));
  if (l.scheme != "http" && l.scheme != "https") return std::nullopt;
  std::string rest = s.substr(sep + 3);
  if (!rest.empty() && rest.back() == '/') rest.pop_back();
  auto colon = rest.rfind(':');
  if (colon == std::string::npos) return std::nullopt;
  l.host = rest.substr(0, colon);
  if (l.host.size() >= 2 && l.host.front() == '[' && l.host.back() == ']') l.host = l.host.substr(1, l.host.size() - 2);
  std::string port = rest.substr(colon + 1);
  int32_t p = -1;
  auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
  if (port.empty() || ec != std::errc() || ptr != port.data() + port.size() || p < 0 || p > 65535) return std::nullopt;
  l.port = p;
  return l;
}

/// Parses and checks one value against its declaration.
WorkerConfig::Value parse_value(const OptionDef& def, const std::string& raw) {
  switch (def.type) {
    case OptionType::Boolean: {
      std::string t = lower(trim(raw));
      if (t == "true") return true;
      if (t == "false") return false;
      bad_value(def, raw, "is not a boolean");
    }
    case OptionType::Short:
    case OptionType::Int:
    case OptionType::Long: {
      std::string t = trim(raw);
      if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.erase(0, 1);  // Java's parseInt accepts a leading '+'
      int64_t v = 0;
      auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      const char* what = def.type == OptionType::Long ? "a long" : def.type == OptionType::Int ? "an integer" : "a short";
      if (t.empty() || ptr != t.data() + t.size() || (ec != std::errc() && ec != std::errc::result_out_of_range)) {
        bad_value(def, raw, std::string("is not ") + what);
      }
      if (ec == std::errc::result_out_of_range || v < def.min || v > def.max || (def.nonzero && v == 0)) {
        bad_value(def, raw, "is out of range");
      }
      return v;
    }
    case OptionType::String:
    case OptionType::Password: {
      std::string t = trim(raw);
      if (def.nonempty && t.empty()) bad_value(def, raw, "is empty");
      if (def.choices) {
        for (const auto& c : split_choices(def.choices)) {
          if (lower(c) == lower(t)) return c;  // canonical spelling from the table
        }
        bad_value(def, raw, "is not a valid value");
      }
      return t;
    }
    case OptionType::List: return split_list(raw);
  }
  bad_value(def, raw, "has an unknown type");
}

}  // namespace

std::span<const OptionDef> worker_options() { return kOptions; }

const OptionDef* find_option(std::string_view name) {
  for (const auto& o : kOptions) {
    if (name == o.name) return &o;
  }
  return nullptr;
}

std::string describe_expectation(const OptionDef& def) {
  std::string s = type_name(def.type);
  if (*def.unit) s += std::string(", ") + def.unit;
  switch (def.type) {
    case OptionType::Short:
    case OptionType::Int:
    case OptionType::Long:
      if (def.nonzero && def.min == -1) {
        s += ", -1 or 1.." + std::to_string(def.max);
      } else {
        s += ", " + std::to_string(def.min) + ".." + std::to_string(def.max);
      }
      break;
    case OptionType::String:
      if (def.choices) s += std::string(", one of ") + def.choices;
      if (def.nonempty) s += ", non-empty";
      break;
    case OptionType::Boolean: s += ", true|false"; break;
    case OptionType::List:
      if (std::string_view(def.name) == "listeners") s += " of SCHEME://[HOST]:PORT, scheme http or https";
      break;
    case OptionType::Password: break;
  }
  return s;
}

std::string options_markdown() {
  std::string md = "| option | type | default | valid values | description |\n|---|---|---|---|---|\n";
  for (const auto& o : kOptions) {
    std::string dflt = o.required ? "**required**" : o.default_value == nullptr ? "null"
                                                 : *o.default_value ? "`" + std::string(o.default_value) + "`"
                                                                    : "`\"\"`";
    std::string valid = describe_expectation(o);
    // Drop the leading type name: it has its own column.
    auto comma = valid.find(", ");
    valid = comma == std::string::npos ? "" : valid.substr(comma + 2);
    valid = escape_pipes(valid);
    md += "| `" + std::string(o.name) + "` | " + type_name(o.type) + " | " + dflt + " | " + valid + " | " + escape_pipes(o.doc) +
          " |\n";
  }
  return md;
}

bool is_secret_option(std::string_view key) {
  const OptionDef* def = find_option(key);
  return (def && def->type == OptionType::Password) || secrets::is_secret_key(key);
}

std::optional<std::string> group_instance_id_problem(std::string_view id) {
  if (id.empty()) return "is empty (expected ASCII letters, digits, '.', '_' or '-')";
  if (id == "." || id == "..") return "cannot be '.' or '..'";
  if (id.size() > 249) return "is longer than 249 characters (" + std::to_string(id.size()) + ")";
  for (char c : id) {
    const bool legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                       c == '_' || c == '-';
    if (!legal) return "contains characters other than ASCII letters, digits, '.', '_' and '-'";
  }
  return std::nullopt;
}

std::string local_hostname() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0 || buf[0] == '\0') return "localhost";
  return buf;
}

WorkerConfig WorkerConfig::from_file(const std::string& path) { return from_properties(load_properties_file(path)); }

WorkerConfig WorkerConfig::from_properties(const Properties& props) {
  auto report = validate(props);
  if (!report.errors.empty()) {
    std::string all;
    for (const auto& e : report.errors) all += (all.empty() ? "" : "\n") + e;
    throw ConfigError(all);
  }
  return std::move(*report.config);
}

namespace {

/// Levenshtein distance, capped: returns `cap + 1` as soon as it is larger.
size_t edit_distance(std::string_view a, std::string_view b, size_t cap) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) > cap) return cap + 1;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    size_t best = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
      best = std::min(best, row[j]);
    }
    if (best > cap) return cap + 1;
  }
  return row[b.size()];
}

/// How many edits still count as a misspelling of a name this long.
size_t typo_budget(std::string_view name) { return std::max<size_t>(2, name.size() / 6); }

}  // namespace

std::optional<std::string> suggest_option(std::string_view key) {
  std::optional<std::string> best;
  size_t best_d = typo_budget(key) + 1;
  auto consider = [&](std::string candidate, size_t d) {
    if (d < best_d) {
      best_d = d;
      best = std::move(candidate);
    }
  };
  for (const auto& o : kOptions) consider(o.name, edit_distance(key, o.name, best_d - 1));
  // A misspelled pass-through prefix ("consumr.max.poll.records"): compare
  // each leading run of dot-separated words with each prefix.
  for (size_t dot = key.find('.'); dot != std::string_view::npos; dot = key.find('.', dot + 1)) {
    const std::string_view head = key.substr(0, dot + 1);
    for (const char* p : kPassThroughPrefixes) {
      if (head == p) continue;
      const size_t d = edit_distance(head, p, std::min<size_t>(2, best_d - 1));
      if (d <= 2) consider(std::string(p) + std::string(key.substr(dot + 1)), d);
    }
  }
  return best;
}

bool is_pass_through_key(std::string_view key) {
  return std::any_of(kPassThroughPrefixes.begin(), kPassThroughPrefixes.end(),
                     [&](const char* p) { return key.starts_with(p); });
}

bool is_distributed_only_option(std::string_view name) {
  return name == "group.id" || name == "config.storage.topic" || name == "offset.storage.topic" ||
         name == "status.storage.topic";
}

WorkerConfigReport WorkerConfig::validate(const Properties& props, WorkerMode mode) {
  const bool standalone = mode == WorkerMode::Standalone;
  WorkerConfigReport report;
  auto& errors = report.errors;
  WorkerConfig cfg;
  cfg.originals_ = props;
  std::set<std::string, std::less<>> bad;  // options whose value failed: cross-checks skip them
  auto fails = [&](std::initializer_list<std::string_view> keys) {
    return std::any_of(keys.begin(), keys.end(), [&](std::string_view k) { return bad.count(k) > 0; });
  };
  // Every option on its own: missing, wrong type, out of range, not a choice.
  for (const auto& def : kOptions) {
    auto it = props.find(def.name);
    try {
      if (it == props.end()) {
        if (def.required && standalone && is_distributed_only_option(def.name)) {
          cfg.values_[def.name] = std::string();  // StandaloneConfig has no such option
          continue;
        }
        if (def.required) {
          errors.push_back(std::string(def.name) + ": missing required option (expected " +
                           describe_expectation(def) + ")");
          bad.insert(def.name);
          cfg.values_[def.name] = Value{};
          continue;
        }
        cfg.values_[def.name] = def.default_value ? parse_value(def, def.default_value) : Value{};
      } else {
        cfg.values_[def.name] = parse_value(def, it->second);
      }
    } catch (const ConfigError& e) {
      errors.push_back(e.what());
      bad.insert(def.name);
      cfg.values_[def.name] = def.default_value ? parse_value(def, def.default_value) : Value{};
    }
  }
  // Unknown keys: Connect logs and ignores them, so they stay warnings; a
  // near miss of a declared name (or of a pass-through prefix) is named.
  for (const auto& [key, val] : props) {
    if (find_option(key) || is_pass_through_key(key)) continue;
    std::string w = "unknown option '" + key + "' is ignored";
    if (auto s = suggest_option(key)) w += " (did you mean '" + *s + "'?)";
    cfg.warnings_.push_back(std::move(w));
  }

  // Cross-checks, each only over options that parsed.
  if (!fails({"listeners"})) {
    const auto& listeners = cfg.get_list("listeners");
    if (listeners.empty())
      errors.push_back("listeners: '' is empty (expected " + describe_expectation(*find_option("listeners")) + ")");
    for (const auto& l : listeners) {
      if (auto parsed = parse_listener(l)) {
        cfg.listeners_.push_back(*parsed);
      } else {
        errors.push_back("listeners: '" + l + "' is not a listener (expected " +
                         describe_expectation(*find_option("listeners")) + ")");
      }
    }
  }
  if (!fails({"heartbeat.interval.ms", "session.timeout.ms"}) &&
      cfg.heartbeat_interval_ms() >= cfg.session_timeout_ms()) {
    errors.push_back("heartbeat.interval.ms: '" + std::to_string(cfg.heartbeat_interval_ms()) +
                     "' must be lower than session.timeout.ms (" + std::to_string(cfg.session_timeout_ms()) + ")");
  }
  if (standalone) {
    if (!fails({"offset.storage.file.filename"}) && trim(cfg.offset_storage_file_filename()).empty())
      errors.push_back(
          "offset.storage.file.filename: missing required option in standalone mode (expected the path of the file "
          "that keeps source connector offsets, e.g. /var/lib/kconnectd/connect.offsets)");
    if (!fails({"exactly.once.source.support"}) && cfg.get_string("exactly.once.source.support") != "disabled")
      errors.push_back("exactly.once.source.support: '" + cfg.get_string("exactly.once.source.support") +
                       "' is not supported in standalone mode (expected disabled; Kafka Connect's standalone worker "
                       "has no exactly-once source support)");
  } else if (!fails({"config.storage.topic", "offset.storage.topic", "status.storage.topic"})) {
    const std::string& c = cfg.config_storage_topic();
    const std::string& o = cfg.offset_storage_topic();
    const std::string& s = cfg.status_storage_topic();
    if (c == o || c == s || o == s) {
      errors.push_back("config.storage.topic, offset.storage.topic and status.storage.topic must be three different "
                       "topics (got '" + c + "', '" + o + "', '" + s + "')");
    }
  }
  if (!fails({"inter.worker.verification.algorithms", "inter.worker.signature.algorithm"})) {
    const auto& verify = cfg.get_list("inter.worker.verification.algorithms");
    const auto& sig = cfg.get_string("inter.worker.signature.algorithm");
    if (std::find(verify.begin(), verify.end(), sig) == verify.end()) {
      errors.push_back("inter.worker.signature.algorithm: '" + sig +
                       "' must be listed in inter.worker.verification.algorithms");
    }
  }
  // SASL: the mechanism and the credentials' shape are checked here; values
  // holding ${...} config-provider references are checked once resolved
  // (herder_config_from), since only then is the JAAS text final.
  if (!fails({"security.protocol"}) && is_sasl_protocol(cfg.get_string("security.protocol"))) {
    std::map<std::string, std::string> sasl{{"security.protocol", cfg.get_string("security.protocol")}};
    bool placeholders = false;
    for (const char* key : {"sasl.mechanism", "sasl.mechanisms", "sasl.jaas.config", "sasl.username", "sasl.password"}) {
      auto it = props.find(key);
      if (it == props.end()) continue;
      sasl[key] = it->second;
      placeholders = placeholders || it->second.find("${") != std::string::npos;
    }
    if (placeholders) {
      sasl.erase("sasl.jaas.config");
      sasl["sasl.username"] = sasl["sasl.password"] = "resolved later";
      for (const char* key : {"sasl.mechanism", "sasl.mechanisms"}) {
        if (sasl.count(key) && sasl[key].find("${") != std::string::npos) sasl[key] = "PLAIN";  // checked once resolved
      }
    }
    auto creds = sasl_credentials(sasl);
    if (!creds) errors.push_back(creds.error().to_string());
  }
  if (props.count("worker.labels") && !fails({"worker.labels"})) {
    auto labels = parse_labels(cfg.get_string("worker.labels"));
    if (!labels) errors.push_back("worker.labels: " + labels.error().message);
  }
  if (props.count("group.instance.id") && !fails({"group.instance.id"})) {
    const std::string& id = cfg.get_string("group.instance.id");
    if (auto problem = group_instance_id_problem(id)) errors.push_back("group.instance.id: '" + id + "' " + *problem);
  }
  if (!fails({"session.timeout.ms"}) && (cfg.session_timeout_ms() < 6000 || cfg.session_timeout_ms() > 1800000)) {
    cfg.warnings_.push_back("session.timeout.ms " + std::to_string(cfg.session_timeout_ms()) +
                            " is outside the broker's default group.min/max.session.timeout.ms (6000..1800000); "
                            "JoinGroup may be rejected");
  }
  if (!fails({"retry.backoff.ms", "retry.backoff.max.ms"}) &&
      cfg.get_long("retry.backoff.ms") > cfg.get_long("retry.backoff.max.ms")) {
    cfg.warnings_.push_back("retry.backoff.ms is larger than retry.backoff.max.ms");
  }
  if (auto adv = cfg.rest_advertised_listener(); adv && !cfg.listeners_.empty()) {
    bool found = std::any_of(cfg.listeners_.begin(), cfg.listeners_.end(),
                             [&](const Listener& l) { return l.scheme == *adv; });
    if (!found) cfg.warnings_.push_back("rest.advertised.listener '" + *adv + "' matches none of listeners");
  }
  try {
    (void)tls_settings_from(cfg.originals_);  // a bad TLS setting or a missing PEM file
  } catch (const ConfigError& e) {
    errors.push_back(e.what());
  }
  report.warnings = cfg.warnings_;
  if (errors.empty()) report.config = std::move(cfg);
  return report;
}

std::string WorkerConfig::describe() const {
  std::map<std::string, std::string> shown;
  for (const auto& [name, v] : values_) {
    std::string text;
    if (std::holds_alternative<std::monostate>(v)) text = "null";
    else if (auto* b = std::get_if<bool>(&v)) text = *b ? "true" : "false";
    else if (auto* n = std::get_if<int64_t>(&v)) text = std::to_string(*n);
    else if (auto* str = std::get_if<std::string>(&v)) text = *str;
    else
      for (const auto& item : std::get<std::vector<std::string>>(v)) text += (text.empty() ? "" : ",") + item;
    shown[name] = std::move(text);
  }
  for (const auto& [k, v] : originals_) shown.emplace(k, v);  // pass-through keys, as given
  return secrets::describe_config("kconnectd worker config values", shown, &is_secret_option);
}

const WorkerConfig::Value& WorkerConfig::value(std::string_view name) const {
  auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("undeclared worker option '" + std::string(name) + "'");
  return it->second;
}

bool WorkerConfig::is_null(std::string_view name) const {
  return std::holds_alternative<std::monostate>(value(name));
}
bool WorkerConfig::get_bool(std::string_view name) const { return std::get<bool>(value(name)); }
int64_t WorkerConfig::get_long(std::string_view name) const { return std::get<int64_t>(value(name)); }
const std::string& WorkerConfig::get_string(std::string_view name) const { return std::get<std::string>(value(name)); }
const std::vector<std::string>& WorkerConfig::get_list(std::string_view name) const {
  return std::get<std::vector<std::string>>(value(name));
}
std::optional<std::string> WorkerConfig::get_optional_string(std::string_view name) const {
  if (is_null(name)) return std::nullopt;
  return get_string(name);
}

std::optional<int32_t> WorkerConfig::rest_advertised_port() const {
  if (is_null("rest.advertised.port")) return std::nullopt;
  return get_int("rest.advertised.port");
}

std::vector<std::string> WorkerConfig::plugin_path() const {
  if (is_null("plugin.path")) return {};
  return get_list("plugin.path");
}

const Listener& WorkerConfig::chosen_listener() const {
  if (auto adv = rest_advertised_listener()) {
    for (const auto& l : listeners_) {
      if (l.scheme == *adv) return l;
    }
  }
  return listeners_.front();
}

std::string WorkerConfig::advertised_host(const std::string& default_host) const {
  if (auto h = rest_advertised_host_name(); h && !h->empty()) return *h;
  const auto& l = chosen_listener();
  return l.host.empty() ? default_host : l.host;
}

int32_t WorkerConfig::advertised_port() const {
  if (auto p = rest_advertised_port()) return *p;
  return chosen_listener().port;
}

std::string WorkerConfig::advertised_url(const std::string& default_host) const {
  std::string scheme = rest_advertised_listener().value_or(listeners_.front().scheme);
  std::string host = advertised_host(default_host);
  if (host.find(':') != std::string::npos) host = "[" + host + "]";  // IPv6 literal
  return scheme + "://" + host + ":" + std::to_string(advertised_port()) + "/";
}

std::string WorkerConfig::worker_id(const std::string& default_host) const {
  return advertised_host(default_host) + ":" + std::to_string(advertised_port());
}

std::string WorkerConfig::group_client_id(const std::string& default_host) const {
  return client_id().empty() ? "connect-" + worker_id(default_host) : client_id();
}

std::map<std::string, std::string> WorkerConfig::common_client_config() const {
  std::map<std::string, std::string> out;
  std::string servers;
  for (const auto& s : bootstrap_servers()) servers += (servers.empty() ? "" : ",") + s;
  out["bootstrap.servers"] = servers;
  out["security.protocol"] = get_string("security.protocol");
  std::map<std::string, std::string> ssl;
  for (const auto& [k, v] : originals_) {
    if (k.starts_with("sasl.")) out[k] = v;
    if (k.starts_with("ssl.")) ssl[k] = v;
  }
  for (auto& [k, v] : librdkafka_ssl_config(ssl)) out[k] = v;
  return out;
}

std::map<std::string, std::string> WorkerConfig::originals_with_prefix(std::string_view prefix) const {
  std::map<std::string, std::string> out;
  for (const auto& [k, v] : originals_) {
    if (k.size() > prefix.size() && k.starts_with(prefix)) out[k.substr(prefix.size())] = v;
  }
  return out;
}

std::map<std::string, std::string> WorkerConfig::producer_config() const {
  auto out = common_client_config();
  for (auto& [k, v] : librdkafka_ssl_config(originals_with_prefix("producer."))) out[k] = v;
  out.erase("shared");  // producer.shared is a worker option
  return out;
}

std::map<std::string, std::string> WorkerConfig::consumer_config() const {
  auto out = common_client_config();
  for (auto& [k, v] : librdkafka_ssl_config(originals_with_prefix("consumer."))) out[k] = v;
  return out;
}

std::map<std::string, std::string> WorkerConfig::admin_config() const {
  auto out = common_client_config();
  for (auto& [k, v] : librdkafka_ssl_config(originals_with_prefix("admin."))) {
    if (k == "listeners" || k.starts_with("listeners.")) continue;  // worker REST options
    out[k] = v;
  }
  return out;
}

}  // namespace kc::config
