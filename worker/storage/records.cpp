#include "worker/storage/records.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "common/json_bounds.h"
#include "common/names.h"
#include "worker/metrics/log_levels.h"

namespace kc::storage {
namespace {

constexpr std::string_view kTargetStatePrefix = "target-state-";
constexpr std::string_view kConnectorPrefix = "connector-";
constexpr std::string_view kTaskPrefix = "task-";
constexpr std::string_view kCommitPrefix = "commit-";
constexpr std::string_view kRestartPrefix = "restart-connector-";
constexpr std::string_view kFencingPrefix = "tasks-fencing-";
constexpr std::string_view kLoggerPrefix = "logger-cluster-";
constexpr std::string_view kStatusConnectorPrefix = "status-connector-";
constexpr std::string_view kStatusTopicPrefix = "status-topic-";
constexpr std::string_view kTopicConnectorSeparator = ":connector-";
constexpr std::string_view kStatusTaskPrefix = "status-task-";

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

std::optional<int32_t> parse_int32(std::string_view s) {
  int32_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

/// Splits "<name>-<n>" on the last dash.
std::optional<connect::ConnectorTaskId> parse_task_suffix(std::string_view rest) {
  auto dash = rest.rfind('-');
  if (dash == std::string_view::npos || dash == 0) return std::nullopt;
  auto n = parse_int32(rest.substr(dash + 1));
  if (!n) return std::nullopt;
  return connect::ConnectorTaskId{std::string(rest.substr(0, dash)), *n};
}

/// Parses outside JSON with kc::parse_json_bounded: the nesting bound is
/// checked while parsing, so no tree deeper than kc::kMaxJsonDepth ever
/// exists. Invalid UTF-8 and numbers out of double range are malformed
/// JSON here. Errors never quote the text.
template <typename Json>
Result<Json> parse_bounded(std::string_view text, const char* what) {
  auto parsed = kc::parse_json_bounded<Json>(text);
  if (!parsed) {
    if (parsed.error->kind == kc::JsonParseError::Kind::TooDeep)
      return Error{what, "JSON nests deeper than " + std::to_string(kc::kMaxJsonDepth) + " levels"};
    return Error{what, "malformed JSON (or not valid UTF-8)"};
  }
  return std::move(parsed.value);
}

Result<nlohmann::json> parse(std::string_view text, const char* what) {
  return parse_bounded<nlohmann::json>(text, what);
}

/// The value of an integral JSON number when it fits in [lo, hi].
std::optional<int64_t> integer_in(const nlohmann::json& v, int64_t lo, int64_t hi) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (!v.is_number_integer()) return std::nullopt;
  const auto n = v.get<int64_t>();
  if (n < lo || n > hi) return std::nullopt;
  return n;
}

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();

}  // namespace

const char* target_state_name(TargetState s) {
  switch (s) {
    case TargetState::Started: return "STARTED";
    case TargetState::Paused: return "PAUSED";
    case TargetState::Stopped: return "STOPPED";
  }
  return "STARTED";
}

std::optional<TargetState> target_state_from_name(std::string_view s) {
  if (s == "STARTED") return TargetState::Started;
  if (s == "PAUSED") return TargetState::Paused;
  if (s == "STOPPED") return TargetState::Stopped;
  return std::nullopt;
}

ConfigKey parse_config_key(std::string_view key) {
  ConfigKey k;
  if (starts_with(key, kTargetStatePrefix)) {
    k.kind = ConfigKeyKind::TargetState;
    k.name = key.substr(kTargetStatePrefix.size());
  } else if (starts_with(key, kConnectorPrefix)) {
    k.kind = ConfigKeyKind::Connector;
    k.name = key.substr(kConnectorPrefix.size());
  } else if (starts_with(key, kTaskPrefix)) {
    auto id = parse_task_suffix(key.substr(kTaskPrefix.size()));
    if (id) {
      k.kind = ConfigKeyKind::Task;
      k.name = id->connector;
      k.task = id->task;
    }
  } else if (starts_with(key, kCommitPrefix)) {
    k.kind = ConfigKeyKind::Commit;
    k.name = key.substr(kCommitPrefix.size());
  } else if (starts_with(key, kRestartPrefix)) {
    k.kind = ConfigKeyKind::RestartConnector;
    k.name = key.substr(kRestartPrefix.size());
  } else if (starts_with(key, kFencingPrefix)) {
    k.kind = ConfigKeyKind::TasksFencing;
    k.name = key.substr(kFencingPrefix.size());
  } else if (key == "session-key") {
    k.kind = ConfigKeyKind::SessionKey;
  } else if (starts_with(key, kLoggerPrefix)) {
    k.kind = ConfigKeyKind::LoggerCluster;
    k.name = key.substr(kLoggerPrefix.size());
  }
  return k;
}

bool addressable_connector_name(std::string_view name) { return !name.empty() && name != "." && name != ".."; }

std::optional<std::string> stored_connector_name_error(std::string_view name) {
  if (!kc::is_valid_utf8(name)) return std::string("connector name is not valid UTF-8");
  if (!addressable_connector_name(name))
    return std::string("connector name cannot be addressed over REST (empty, '.' or '..')");
  return std::nullopt;
}

std::string connector_config_key(std::string_view c) { return std::string(kConnectorPrefix) + std::string(c); }
std::string task_config_key(const connect::ConnectorTaskId& id) {
  return std::string(kTaskPrefix) + id.connector + "-" + std::to_string(id.task);
}
std::string commit_key(std::string_view c) { return std::string(kCommitPrefix) + std::string(c); }
std::string target_state_key(std::string_view c) { return std::string(kTargetStatePrefix) + std::string(c); }
std::string restart_key(std::string_view c) { return std::string(kRestartPrefix) + std::string(c); }

std::optional<std::string> config_map_error(const ConfigMap& config) {
  for (const auto& [k, v] : config) {
    if (!kc::is_valid_utf8(k)) return "config key '" + printable_key(k) + "' is not valid UTF-8";
    if (!kc::is_valid_utf8(v)) return "the value of config key '" + k + "' is not valid UTF-8";
  }
  return std::nullopt;
}

std::string encode_properties(const ConfigMap& props) {
  OrderedJson p = OrderedJson::object();
  for (const auto& [k, v] : props) p[k] = v;
  OrderedJson root = OrderedJson::object();
  root["properties"] = std::move(p);
  return to_compact_json(root);
}

Result<ConfigMap> decode_properties(std::string_view value) {
  auto j = parse(value, "properties");
  if (!j) return j.error();
  if (!j->is_object() || !j->contains("properties") || !(*j)["properties"].is_object())
    return Error{"properties", "expected {\"properties\":{...}}"};
  ConfigMap out;
  for (auto& [k, v] : (*j)["properties"].items()) {
    if (v.is_string()) out[k] = v.get<std::string>();
    else if (v.is_null()) continue;  // Connect keeps null values; a string map cannot
    else out[k] = to_compact_json(v);
  }
  return out;
}

std::string encode_commit(int32_t n) { return "{\"tasks\":" + std::to_string(n) + "}"; }

namespace {
/// Reads `{"<field>":<n>}` with 0 <= n <= INT32_MAX (commit and task-count
/// values); any integral JSON number is accepted.
Result<int32_t> decode_count(std::string_view value, const std::string& field) {
  auto j = parse(value, field.c_str());
  if (!j) return j.error();
  if (!j->is_object() || !j->contains(field) || !(*j)[field].is_number_integer())
    return Error{field, "expected {\"" + field + "\":<integer>}"};
  auto n = integer_in((*j)[field], 0, kInt32Max);
  if (!n) return Error{field, "task count out of range (0 to 2147483647)"};
  return static_cast<int32_t>(*n);
}
}  // namespace

Result<int32_t> decode_commit(std::string_view value) { return decode_count(value, "tasks"); }

std::string task_count_key(std::string_view c) { return std::string(kFencingPrefix) + std::string(c); }
std::string encode_task_count(int32_t n) { return "{\"task-count\":" + std::to_string(n) + "}"; }
Result<int32_t> decode_task_count(std::string_view value) { return decode_count(value, "task-count"); }

std::string encode_restart(const RestartFlags& f) {
  return std::string("{\"include-tasks\":") + (f.include_tasks ? "true" : "false") +
         ",\"only-failed\":" + (f.only_failed ? "true" : "false") + "}";
}

Result<RestartFlags> decode_restart(std::string_view value) {
  auto j = parse(value, "restart");
  if (!j) return j.error();
  if (!j->is_object()) return Error{"restart", "expected an object"};
  RestartFlags f;
  for (auto [field, out] : {std::pair{"include-tasks", &f.include_tasks}, std::pair{"only-failed", &f.only_failed}}) {
    if (!j->contains(field)) continue;
    if (!(*j)[field].is_boolean()) return Error{"restart", std::string(field) + " must be a boolean"};
    *out = (*j)[field].get<bool>();
  }
  return f;
}

std::string logger_cluster_key(std::string_view logger_namespace) {
  return std::string(kLoggerPrefix) + std::string(logger_namespace);
}

std::string encode_logger_level(std::string_view level) {
  return nlohmann::json{{"level", std::string(level)}}.dump();
}

Result<std::string> decode_logger_level(std::string_view value) {
  auto j = parse(value, "level");
  if (!j) return j.error();
  if (!j->is_object()) return Error{"level", "expected an object"};
  auto it = j->find("level");
  if (it == j->end() || !it->is_string()) return Error{"level", "must be a string"};
  const auto text = it->get<std::string>();
  auto level = metrics::parse_log4j_level(text);
  if (!level) return Error{"level", "unknown log level (expected TRACE, DEBUG, INFO, WARN, ERROR, FATAL or OFF)"};
  return std::string(metrics::log4j_level_name(*level));
}

std::string encode_session_key(const SessionKeyRecord& record) {
  // nlohmann sorts object keys, so the fields are written in Connect's order by hand.
  return "{\"key\":" + nlohmann::json(record.key_base64).dump() + ",\"algorithm\":" +
         nlohmann::json(record.algorithm).dump() +
         ",\"creation-timestamp\":" + std::to_string(record.creation_timestamp_ms) + "}";
}

Result<SessionKeyRecord> decode_session_key(std::string_view value) {
  auto j = parse(value, "session-key");
  if (!j) return j.error();
  if (!j->is_object()) return Error{"session-key", "expected an object"};
  SessionKeyRecord r;
  auto key = j->find("key");
  if (key == j->end() || !key->is_string()) return Error{"session-key", "'key' must be a string"};
  r.key_base64 = key->get<std::string>();
  auto alg = j->find("algorithm");
  if (alg == j->end() || !alg->is_string()) return Error{"session-key", "'algorithm' must be a string"};
  r.algorithm = alg->get<std::string>();
  auto ts = j->find("creation-timestamp");
  auto ms = ts == j->end() ? std::nullopt : integer_in(*ts, 0, std::numeric_limits<int64_t>::max());
  if (!ms) return Error{"session-key", "'creation-timestamp' must be an integer (epoch ms)"};
  r.creation_timestamp_ms = *ms;
  return r;
}

std::string encode_target_state(TargetState s) {
  const char* v1 = s == TargetState::Stopped ? "PAUSED" : target_state_name(s);
  return std::string("{\"state\":\"") + v1 + "\",\"state.v2\":\"" + target_state_name(s) + "\"}";
}

Result<TargetState> decode_target_state(std::string_view value) {
  auto j = parse(value, "state");
  if (!j) return j.error();
  if (!j->is_object()) return Error{"state", "expected an object"};
  for (const char* field : {"state.v2", "state"}) {
    if (j->contains(field) && (*j)[field].is_string()) {
      auto s = target_state_from_name((*j)[field].get<std::string>());
      if (s) return *s;
    }
  }
  return Error{"state", "no valid target state"};
}

std::string encode_offset_key(std::string_view connector, const OrderedJson& partition) {
  OrderedJson key = OrderedJson::array();
  key.push_back(std::string(connector));
  key.push_back(partition);
  return to_compact_json(key);
}

Result<OffsetKey> decode_offset_key(std::string_view key) {
  auto parsed = parse_bounded<OrderedJson>(key, "offset key");
  if (!parsed) return parsed.error();
  auto& j = *parsed;
  if (!j.is_array() || j.size() != 2 || !j[0].is_string() || !j[1].is_object())
    return Error{"offset key", "expected [\"<connector>\", {partition}]"};
  return OffsetKey{j[0].get<std::string>(), std::move(j[1])};
}

Result<OrderedJson> decode_offset_value(std::string_view value) { return parse_bounded<OrderedJson>(value, "offset"); }

namespace {

/// True when `j` holds a floating-point NaN or infinity anywhere. Recursive:
/// call it only on a tree that passed the kc::kMaxJsonDepth bound.
bool holds_non_finite_number(const OrderedJson& j) {
  if (j.is_number_float()) return !std::isfinite(j.get<double>());
  if (j.is_structured())
    for (const auto& e : j)
      if (holds_non_finite_number(e)) return true;
  return false;
}

}  // namespace

Result<OffsetRecord> encode_offset_record(std::string_view connector, const OrderedJson& partition,
                                          const std::optional<OrderedJson>& offset) {
  auto refuse = [](std::string why) { return Error{kUnreadableRecordField, "offset not written: " + std::move(why)}; };
  if (auto why = stored_connector_name_error(connector)) return refuse(*why);
  if (!partition.is_object()) return refuse("the source partition must be a JSON object");
  OffsetRecord out;
  try {
    out.key = encode_offset_key(connector, partition);
    if (offset) out.value = to_compact_json(*offset);
  } catch (const kc::JsonTooDeep&) {
    return refuse("the source partition or offset nests deeper than " + std::to_string(kc::kMaxJsonDepth) +
                  " levels");
  }
  // JSON has no NaN or infinity: nlohmann writes them as null, so the key
  // read back would name another partition (found by fuzz_plugin_host).
  // Both trees passed the depth bound above, so the walk is bounded too.
  if (holds_non_finite_number(partition)) return refuse("the source partition holds a NaN or infinite number");
  if (offset && holds_non_finite_number(*offset)) return refuse("the source offset holds a NaN or infinite number");
  // Escapes are ASCII, so the text is valid UTF-8 exactly when every string is.
  if (!kc::is_valid_utf8(out.key)) return refuse("the source partition holds a string that is not valid UTF-8");
  if (out.value && !kc::is_valid_utf8(*out.value))
    return refuse("the source offset holds a string that is not valid UTF-8");
  if (out.key.size() > kMaxOffsetKeyBytes)
    return refuse("the source partition is " + std::to_string(out.key.size()) + " bytes as JSON; the limit is " +
                  std::to_string(kMaxOffsetKeyBytes));
  if (out.value && out.value->size() > kMaxOffsetValueBytes)
    return refuse("the source offset is " + std::to_string(out.value->size()) + " bytes as JSON; the limit is " +
                  std::to_string(kMaxOffsetValueBytes));
  return out;
}

const char* status_state_name(StatusState s) {
  switch (s) {
    case StatusState::Unassigned: return "UNASSIGNED";
    case StatusState::Running: return "RUNNING";
    case StatusState::Paused: return "PAUSED";
    case StatusState::Failed: return "FAILED";
    case StatusState::Restarting: return "RESTARTING";
    case StatusState::Stopped: return "STOPPED";
    case StatusState::Destroyed: return "DESTROYED";
  }
  return "UNASSIGNED";
}

std::optional<StatusState> status_state_from_name(std::string_view s) {
  for (auto st : {StatusState::Unassigned, StatusState::Running, StatusState::Paused, StatusState::Failed,
                  StatusState::Restarting, StatusState::Stopped, StatusState::Destroyed}) {
    if (s == status_state_name(st)) return st;
  }
  return std::nullopt;
}

std::string connector_status_key(std::string_view c) { return std::string(kStatusConnectorPrefix) + std::string(c); }
std::string task_status_key(const connect::ConnectorTaskId& id) {
  return std::string(kStatusTaskPrefix) + id.connector + "-" + std::to_string(id.task);
}

std::optional<StatusKey> parse_status_key(std::string_view key) {
  if (starts_with(key, kStatusConnectorPrefix)) {
    StatusKey k;
    k.connector = std::string(key.substr(kStatusConnectorPrefix.size()));
    return k;
  }
  if (starts_with(key, kStatusTaskPrefix)) {
    auto id = parse_task_suffix(key.substr(kStatusTaskPrefix.size()));
    if (!id) return std::nullopt;
    StatusKey k;
    k.task = *id;
    return k;
  }
  return std::nullopt;
}

std::string to_valid_utf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = kc::utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

StatusValue storable_status(StatusValue v) {
  if (!kc::is_valid_utf8(v.worker_id)) v.worker_id = to_valid_utf8(v.worker_id);
  if (v.trace) {
    std::string& t = *v.trace;
    if (!kc::is_valid_utf8(t)) t = to_valid_utf8(t);
    if (t.size() > kMaxStatusTraceBytes) {
      const std::size_t full = t.size();
      // The note fits inside the bound, so a stored trace is stored again unchanged.
      const std::string note = "\n... [trace cut: " + std::to_string(full) + " bytes in all]";
      std::size_t cut = kMaxStatusTraceBytes - note.size();
      // Back to the start of a character: continuation bytes are 10xxxxxx.
      while (cut > 0 && (static_cast<unsigned char>(t[cut]) & 0xC0) == 0x80) --cut;
      t.resize(cut);
      t += note;
    }
  }
  return v;
}

std::string encode_status(const StatusValue& status) {
  const StatusValue v = storable_status(status);
  OrderedJson j = OrderedJson::object();
  j["state"] = status_state_name(v.state);
  j["trace"] = v.trace ? OrderedJson(*v.trace) : OrderedJson(nullptr);
  j["worker_id"] = v.worker_id;
  j["generation"] = v.generation;
  return to_compact_json(j);
}

Result<StatusValue> decode_status(std::string_view value) {
  auto j = parse(value, "status");
  if (!j) return j.error();
  if (!j->is_object() || !j->contains("state") || !(*j)["state"].is_string())
    return Error{"state", "missing state"};
  auto st = status_state_from_name((*j)["state"].get<std::string>());
  if (!st) return Error{"state", "unknown state"};
  StatusValue v;
  v.state = *st;
  if (j->contains("trace") && (*j)["trace"].is_string()) v.trace = (*j)["trace"].get<std::string>();
  if (j->contains("worker_id") && (*j)["worker_id"].is_string()) v.worker_id = (*j)["worker_id"].get<std::string>();
  if (j->contains("generation") && (*j)["generation"].is_number()) {
    auto g = integer_in((*j)["generation"], kInt32Min, kInt32Max);
    if (!g) return Error{"generation", "not an integer from -2147483648 to 2147483647"};
    v.generation = static_cast<int32_t>(*g);
  }
  return v;
}

std::string topic_status_key(std::string_view topic, std::string_view connector) {
  return std::string(kStatusTopicPrefix) + std::string(topic) + std::string(kTopicConnectorSeparator) +
         std::string(connector);
}

std::optional<std::pair<std::string, std::string>> parse_topic_status_key(std::string_view key) {
  if (!starts_with(key, kStatusTopicPrefix)) return std::nullopt;
  key.remove_prefix(kStatusTopicPrefix.size());
  auto sep = key.find(kTopicConnectorSeparator);
  if (sep == std::string_view::npos || sep == 0) return std::nullopt;
  return std::pair{std::string(key.substr(0, sep)), std::string(key.substr(sep + kTopicConnectorSeparator.size()))};
}

std::string encode_topic_status(const TopicStatus& t) {
  OrderedJson inner = OrderedJson::object();
  inner["name"] = t.topic;
  inner["connector"] = t.connector;
  inner["task"] = t.task;
  inner["discoverTimestamp"] = t.discover_timestamp_ms;
  OrderedJson j = OrderedJson::object();
  j["topic"] = inner;
  return to_compact_json(j);
}

Result<TopicStatus> decode_topic_status(std::string_view value) {
  auto j = parse(value, "topic status");
  if (!j) return j.error();
  if (!j->is_object() || !j->contains("topic") || !(*j)["topic"].is_object()) return Error{"topic", "missing topic"};
  const auto& t = (*j)["topic"];
  if (!t.contains("name") || !t["name"].is_string() || !t.contains("connector") || !t["connector"].is_string())
    return Error{"topic", "missing name or connector"};
  TopicStatus out;
  out.topic = t["name"].get<std::string>();
  out.connector = t["connector"].get<std::string>();
  if (t.contains("task") && t["task"].is_number()) {
    auto n = integer_in(t["task"], 0, kInt32Max);
    if (!n) return Error{"task", "not a task number from 0 to 2147483647"};
    out.task = static_cast<int32_t>(*n);
  }
  if (t.contains("discoverTimestamp") && t["discoverTimestamp"].is_number_integer())
    out.discover_timestamp_ms = t["discoverTimestamp"].get<int64_t>();
  return out;
}

Result<StatusRecord> decode_status_record(std::string_view key, const std::optional<std::string>& value) {
  StatusRecord out;
  std::string_view connector;
  if ((out.topic = parse_topic_status_key(key))) {
    if (!kc::is_valid_utf8(out.topic->first)) return Error{"key", "topic name is not valid UTF-8"};
    connector = out.topic->second;
  } else if (auto k = parse_status_key(key)) {
    out.connector = std::move(k->connector);
    out.task = std::move(k->task);
    connector = out.connector ? std::string_view(*out.connector) : std::string_view(out.task->connector);
  } else {
    return Error{"key", "unknown key"};
  }
  if (auto why = stored_connector_name_error(connector)) return Error{"key", *why};
  if (!value) return out;
  if (out.topic) {
    auto d = decode_topic_status(*value);
    if (!d) return d.error();
    out.topic_status = std::move(d).value();
  } else {
    auto d = decode_status(*value);
    if (!d) return d.error();
    out.status = std::move(d).value();
  }
  return out;
}

std::optional<std::string> config_record_error(std::string_view key, const std::optional<std::string>& value) {
  const ConfigKey k = parse_config_key(key);
  auto check = [](const auto& decoded) -> std::optional<std::string> {
    if (!decoded) return decoded.error().to_string();
    return std::nullopt;
  };
  switch (k.kind) {
    case ConfigKeyKind::Unknown:
      return std::string("unknown key");
    case ConfigKeyKind::SessionKey:
      if (!value) return std::string("session key is null");
      return check(decode_session_key(*value));
    case ConfigKeyKind::LoggerCluster:
      if (k.name.empty()) return std::string("empty logger namespace");
      if (!value) return std::string("logger level is null");
      return check(decode_logger_level(*value));
    case ConfigKeyKind::Connector:
    case ConfigKeyKind::Task:
    case ConfigKeyKind::Commit:
    case ConfigKeyKind::TargetState:
    case ConfigKeyKind::RestartConnector:
    case ConfigKeyKind::TasksFencing:
      break;
  }
  if (auto why = stored_connector_name_error(k.name)) return why;
  if (!value) return std::nullopt;
  switch (k.kind) {
    case ConfigKeyKind::Connector:
    case ConfigKeyKind::Task: return check(decode_properties(*value));
    case ConfigKeyKind::Commit: return check(decode_commit(*value));
    case ConfigKeyKind::TargetState: return check(decode_target_state(*value));
    case ConfigKeyKind::RestartConnector: return check(decode_restart(*value));
    case ConfigKeyKind::TasksFencing: return check(decode_task_count(*value));
    case ConfigKeyKind::SessionKey:
    case ConfigKeyKind::LoggerCluster:
    case ConfigKeyKind::Unknown: break;
  }
  return std::nullopt;
}

std::string printable_key(std::string_view key) {
  constexpr std::size_t kShown = 200;
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  const std::size_t shown = std::min(key.size(), kShown);
  for (std::size_t i = 0; i < shown;) {
    const auto c = static_cast<unsigned char>(key[i]);
    std::size_t n = kc::utf8_sequence_length(key, i);
    const bool control = c < 0x20 || c == 0x7F || (c == 0xC2 && n == 2 && static_cast<unsigned char>(key[i + 1]) < 0xA0);
    if (n == 0 || control || c == '\\') {
      n = n == 0 ? 1 : n;
      for (std::size_t k = 0; k < n; ++k) {
        const auto b = static_cast<unsigned char>(key[i + k]);
        out += "\\x";
        out.push_back(hex[b >> 4]);
        out.push_back(hex[b & 0xF]);
      }
    } else {
      out.append(key, i, n);
    }
    i += n;
  }
  if (key.size() > kShown) out += "... (" + std::to_string(key.size()) + " bytes)";
  return out;
}

}  // namespace kc::storage
