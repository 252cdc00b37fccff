#include "worker/rest/json_codec.h"
#include "common/json_bounds.h"
#include "common/names.h"
#include "common/strings.h"

#include <algorithm>
#include <cctype>

namespace kc::rest {

using nlohmann::json;

const char* to_string(ConnectorType t) {
  switch (t) {
    case ConnectorType::Source: return "source";
    case ConnectorType::Sink: return "sink";
    case ConnectorType::Unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(ConnectState s) {
  switch (s) {
    case ConnectState::Unassigned: return "UNASSIGNED";
    case ConnectState::Running: return "RUNNING";
    case ConnectState::Paused: return "PAUSED";
    case ConnectState::Stopped: return "STOPPED";
    case ConnectState::Failed: return "FAILED";
    case ConnectState::Restarting: return "RESTARTING";
    case ConnectState::Destroyed: return "DESTROYED";
  }
  return "UNASSIGNED";
}

const char* to_string(TargetState s) {
  switch (s) {
    case TargetState::Started: return "STARTED";
    case TargetState::Paused: return "PAUSED";
    case TargetState::Stopped: return "STOPPED";
  }
  return "STARTED";
}

const char* to_string(PluginType t) {
  switch (t) {
    case PluginType::Source: return "source";
    case PluginType::Sink: return "sink";
    case PluginType::Transformation: return "transformation";
    case PluginType::Predicate: return "predicate";
    case PluginType::Converter: return "converter";
    case PluginType::HeaderConverter: return "header_converter";
  }
  return "source";
}

const char* to_string(HealthStatus s) {
  switch (s) {
    case HealthStatus::Healthy: return "healthy";
    case HealthStatus::Starting: return "starting";
    case HealthStatus::Rebalancing: return "rebalancing";
    case HealthStatus::Unavailable: return "unavailable";
    case HealthStatus::Unhealthy: return "unhealthy";
  }
  return "unhealthy";
}

std::optional<TargetState> parse_initial_state(std::string_view s) {
  std::string up(s);
  for (auto& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (up == "RUNNING") return TargetState::Started;
  if (up == "PAUSED") return TargetState::Paused;
  if (up == "STOPPED") return TargetState::Stopped;
  return std::nullopt;
}

std::string error_body(int code, std::string_view message) {
  return dump_json(json{{"error_code", code}, {"message", std::string(message)}});
}

json to_json(const TaskId& id) { return json{{"connector", id.connector}, {"task", id.task}}; }

json to_json(const ConnectorInfo& info) {
  json tasks = json::array();
  for (const auto& t : info.tasks) tasks.push_back(to_json(t));
  return json{{"name", info.name}, {"config", info.config}, {"tasks", tasks}, {"type", to_string(info.type)}};
}

json to_json(const TaskStatus& s) {
  json j{{"id", s.id}, {"state", to_string(s.state)}, {"worker_id", s.worker_id}};
  if (!s.trace.empty()) j["trace"] = s.trace;
  return j;
}

json to_json(const ConnectorStateInfo& s) {
  json connector{{"state", to_string(s.connector.state)}, {"worker_id", s.connector.worker_id}};
  if (!s.connector.trace.empty()) connector["trace"] = s.connector.trace;
  std::vector<TaskStatus> sorted = s.tasks;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  json tasks = json::array();
  for (const auto& t : sorted) tasks.push_back(to_json(t));
  return json{{"name", s.name}, {"connector", connector}, {"tasks", tasks}, {"type", to_string(s.type)}};
}

json to_json(const TaskInfo& t) { return json{{"id", to_json(t.id)}, {"config", t.config}}; }

json to_json(const PluginInfo& p) {
  json j{{"class", p.class_name}, {"type", to_string(p.type)}};
  if (!p.version.empty()) j["version"] = p.version;
  return j;
}

json to_json(const Health& h) {
  json j{{"status", to_string(h.status)}, {"message", h.message}};
  if (!h.worker_state.empty()) j["worker_state"] = h.worker_state;
  return j;
}

namespace {

json nullable(const std::optional<std::string>& v) { return v ? json(*v) : json(nullptr); }

}  // namespace

json to_json(const ConfigKeyInfo& k) {
  return json{{"name", k.name},
              {"type", k.type},
              {"required", k.required},
              {"default_value", nullable(k.default_value)},
              {"importance", k.importance},
              {"documentation", k.documentation},
              {"group", nullable(k.group)},
              {"order", k.order},
              {"width", k.width},
              {"display_name", k.display_name},
              {"dependents", k.dependents}};
}

json to_json(const ConfigInfos& c) {
  json configs = json::array();
  for (const auto& ci : c.configs) {
    configs.push_back(json{{"definition", to_json(ci.definition)},
                           {"value", json{{"name", ci.value.name},
                                          {"value", nullable(ci.value.value)},
                                          {"recommended_values", ci.value.recommended_values},
                                          {"errors", ci.value.errors},
                                          {"visible", ci.value.visible}}}});
  }
  return json{{"name", c.name}, {"error_count", c.error_count}, {"groups", c.groups}, {"configs", configs}};
}

namespace {

template <typename Json>
Reply<Json> parse_body(std::string_view body) {
  if (body.find_first_not_of(" \t\r\n") == std::string_view::npos) {
    return RestError::bad_request("Invalid JSON in request body: the body is empty");
  }
  auto parsed = kc::parse_json_bounded<Json>(body);
  if (!parsed) {
    // The bounded parser's message never quotes the text; a body names itself.
    const auto& e = *parsed.error;
    return RestError::bad_request(std::string("Invalid JSON in request body: ") +
                                  (e.kind == kc::JsonParseError::Kind::TooDeep ? "the body " : "") + e.message);
  }
  return std::move(parsed.value);
}

}  // namespace

Reply<json> parse_json_body(std::string_view body) { return parse_body<json>(body); }

Reply<nlohmann::ordered_json> parse_ordered_json_body(std::string_view body) {
  return parse_body<nlohmann::ordered_json>(body);
}

std::string dump_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string dump_json(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

nlohmann::ordered_json to_json(const std::vector<ConnectorOffset>& offsets) {
  using ojson = nlohmann::ordered_json;
  ojson list = ojson::array();
  for (const auto& o : offsets) {
    list.push_back(ojson{{"partition", o.partition}, {"offset", o.offset ? *o.offset : ojson(nullptr)}});
  }
  return ojson{{"offsets", list}};
}

Reply<std::vector<ConnectorOffset>> parse_offsets_request(std::string_view body) {
  auto parsed = parse_ordered_json_body(body);
  if (!parsed) return parsed.error();
  const auto& j = parsed.value();
  if (!j.is_object() || !j.contains("offsets") || !(j["offsets"].is_array() || j["offsets"].is_null())) {
    return RestError::bad_request("Request body must be a JSON object with an \"offsets\" array");
  }
  if (j["offsets"].is_null() || j["offsets"].empty()) {
    return RestError::bad_request("Partitions / offsets need to be provided for an alter offsets request");
  }
  std::vector<ConnectorOffset> out;
  for (const auto& e : j["offsets"]) {
    if (!e.is_object()) return RestError::bad_request("Each entry of \"offsets\" must be a JSON object");
    auto p = e.find("partition");
    if (p == e.end() || p->is_null()) return RestError::bad_request("Partitions may not be null");
    if (!p->is_object()) return RestError::bad_request("Partitions must be JSON objects");
    auto o = e.find("offset");
    ConnectorOffset co{*p, std::nullopt};
    if (o != e.end() && !o->is_null()) {
      if (!o->is_object()) return RestError::bad_request("Offsets must be JSON objects or null");
      co.offset = *o;
    }
    out.push_back(std::move(co));
  }
  return out;
}

namespace {

// One config value as Connect's Jackson reads it into a String: strings as
// they are, numbers and booleans as their JSON text; null (nullopt) only
// where the caller allows it (PATCH: null removes the key).
Reply<std::optional<std::string>> config_value(const std::string& key, const json& value, bool allow_null) {
  if (value.is_string()) return std::optional<std::string>(value.get<std::string>());
  if (value.is_number() || value.is_boolean()) return std::optional<std::string>(value.dump());
  if (allow_null && value.is_null()) return std::optional<std::string>();
  return RestError::bad_request("Connector configuration value for '" + key + "' must be a string, number or boolean" +
                                (allow_null ? " or null" : "") + ", not " + value.type_name());
}

}  // namespace

Reply<ConnectorConfig> config_from_json(const json& j) {
  if (!j.is_object()) return RestError::bad_request("Connector configuration must be a JSON object of string values");
  ConnectorConfig out;
  for (const auto& [key, value] : j.items()) {
    auto v = config_value(key, value, false);
    if (!v) return v.error();
    out[key] = std::move(*v.value());
  }
  return out;
}

namespace {

// Connect's rule: config.name, when present, must equal the connector name;
// when absent it is filled in.
std::optional<RestError> check_and_put_name(const std::string& name, ConnectorConfig& config) {
  auto it = config.find("name");
  if (it != config.end() && it->second != name) {
    return RestError::bad_request("Connector name configuration (" + it->second +
                                  ") doesn't match connector name in the URL (" + name + ")");
  }
  config["name"] = name;
  return std::nullopt;
}

}  // namespace

Reply<PutConnectorRequest> parse_create_request(std::string_view body) {
  auto parsed = parse_json_body(body);
  if (!parsed) return parsed.error();
  const json& j = parsed.value();
  if (!j.is_object()) return RestError::bad_request("Request body must be a JSON object with \"name\" and \"config\"");
  PutConnectorRequest req;
  req.allow_replace = false;
  auto name_it = j.find("name");
  if (name_it == j.end() || name_it->is_null()) return RestError::bad_request(*kc::connector_name_error(""));
  if (!name_it->is_string()) return RestError::bad_request("Connector name must be a string");
  req.name = trim(name_it->get<std::string>());
  if (auto err = kc::connector_name_error(req.name)) return RestError::bad_request(*err);
  auto config_it = j.find("config");
  if (config_it == j.end() || config_it->is_null()) {
    return RestError::bad_request("Connector config must be provided as a JSON object");
  }
  auto config = config_from_json(*config_it);
  if (!config) return config.error();
  req.config = std::move(config.value());
  if (auto err = check_and_put_name(req.name, req.config)) return *err;
  auto state_it = j.find("initial_state");
  if (state_it != j.end() && !state_it->is_null()) {
    if (!state_it->is_string()) return RestError::bad_request("initial_state must be a string");
    auto state = parse_initial_state(state_it->get<std::string>());
    if (!state) {
      return RestError::bad_request("Invalid initial_state '" + state_it->get<std::string>() +
                                    "': expected RUNNING, PAUSED or STOPPED");
    }
    req.initial_state = *state;
  }
  return req;
}

Reply<PutConnectorRequest> parse_put_config_request(const std::string& name, std::string_view body) {
  auto parsed = parse_json_body(body);
  if (!parsed) return parsed.error();
  auto config = config_from_json(parsed.value());
  if (!config) return config.error();
  PutConnectorRequest req;
  req.name = name;
  req.config = std::move(config.value());
  req.allow_replace = true;
  if (auto err = check_and_put_name(req.name, req.config)) return *err;
  return req;
}

Reply<ConfigPatch> parse_config_patch(const std::string& name, std::string_view body) {
  auto parsed = parse_json_body(body);
  if (!parsed) return parsed.error();
  const json& j = parsed.value();
  if (!j.is_object()) return RestError::bad_request("Connector configuration patch must be a JSON object");
  ConfigPatch patch;
  for (const auto& [key, value] : j.items()) {
    auto v = config_value(key, value, true);
    if (!v) return v.error();
    patch[key] = std::move(v.value());
  }
  // A patch may restate the name but not change or remove it.
  auto it = patch.find("name");
  if (it != patch.end() && it->second != name) {
    return RestError::bad_request("Connector name configuration (" + it->second.value_or("null") +
                                  ") doesn't match connector name in the URL (" + name + ")");
  }
  return patch;
}

PutConnectorRequest apply_config_patch(const std::string& name, ConnectorConfig current, const ConfigPatch& patch) {
  for (const auto& [key, value] : patch) {
    if (value) current[key] = *value;
    else current.erase(key);
  }
  PutConnectorRequest req;
  req.name = name;
  req.config = std::move(current);
  req.config["name"] = name;
  req.allow_replace = true;
  return req;
}

namespace {

std::string without_connector_suffix(const std::string& s) {
  static const std::string kSuffix = "Connector";
  if (s.size() >= kSuffix.size() && s.compare(s.size() - kSuffix.size(), kSuffix.size(), kSuffix) == 0)
    return s.substr(0, s.size() - kSuffix.size());
  return s;
}

}  // namespace

Reply<ConnectorConfig> parse_validate_request(const std::string& plugin, std::string_view body) {
  auto parsed = parse_json_body(body);
  if (!parsed) return parsed.error();
  auto config = config_from_json(parsed.value());
  if (!config) return config.error();
  auto it = config.value().find("connector.class");
  if (it == config.value().end()) {
    // Connect does not take the class from the path: its herder refuses a
    // config without one.
    return RestError::no_connector_type(config.value());
  } else {
    const std::string included = without_connector_suffix(it->second);
    const std::string requested = without_connector_suffix(plugin);
    if (included.size() < requested.size() ||
        included.compare(included.size() - requested.size(), requested.size(), requested) != 0) {
      return RestError::bad_request("Included connector type " + it->second + " does not match request type " +
                                    plugin);
    }
  }
  return config;
}

}  // namespace kc::rest
