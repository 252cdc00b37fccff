#include "worker/storage/records.h"

#include <charconv>

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

Result<nlohmann::json> parse(std::string_view text, const char* what) {
  auto j = nlohmann::json::parse(text.begin(), text.end(), nullptr, false);
  if (j.is_discarded()) return Error{what, "malformed JSON"};
  return j;
}

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

std::string connector_config_key(std::string_view c) { return std::string(kConnectorPrefix) + std::string(c); }
std::string task_config_key(const connect::ConnectorTaskId& id) {
  return std::string(kTaskPrefix) + id.connector + "-" + std::to_string(id.task);
}
std::string commit_key(std::string_view c) { return std::string(kCommitPrefix) + std::string(c); }
std::string target_state_key(std::string_view c) { return std::string(kTargetStatePrefix) + std::string(c); }
std::string restart_key(std::string_view c) { return std::string(kRestartPrefix) + std::string(c); }

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
  auto n = (*j)[field].get<int64_t>();
  if (n < 0 || n > INT32_MAX) return Error{field, "task count out of range"};
  return static_cast<int32_t>(n);
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
  if (ts == j->end() || !(ts->is_number_integer() || ts->is_number_unsigned()))
    return Error{"session-key", "'creation-timestamp' must be an integer (epoch ms)"};
  r.creation_timestamp_ms = ts->get<int64_t>();
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
  auto j = OrderedJson::parse(key.begin(), key.end(), nullptr, false);
  if (j.is_discarded()) return Error{"offset key", "malformed JSON"};
  if (!j.is_array() || j.size() != 2 || !j[0].is_string() || !j[1].is_object())
    return Error{"offset key", "expected [\"<connector>\", {partition}]"};
  return OffsetKey{j[0].get<std::string>(), j[1]};
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

std::string encode_status(const StatusValue& v) {
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
  if (!st) return Error{"state", "unknown state " + (*j)["state"].get<std::string>()};
  StatusValue v;
  v.state = *st;
  if (j->contains("trace") && (*j)["trace"].is_string()) v.trace = (*j)["trace"].get<std::string>();
  if (j->contains("worker_id") && (*j)["worker_id"].is_string()) v.worker_id = (*j)["worker_id"].get<std::string>();
  if (j->contains("generation") && (*j)["generation"].is_number_integer())
    v.generation = static_cast<int32_t>((*j)["generation"].get<int64_t>());
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
  if (t.contains("task") && t["task"].is_number_integer()) out.task = static_cast<int32_t>(t["task"].get<int64_t>());
  if (t.contains("discoverTimestamp") && t["discoverTimestamp"].is_number_integer())
    out.discover_timestamp_ms = t["discoverTimestamp"].get<int64_t>();
  return out;
}

}  // namespace kc::storage
