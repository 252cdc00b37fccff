#pragma once
// JSON shapes of Connect's REST entities (reference section 6.1) and the
// REST layer's request-body validation. Pure functions; any thread.
// Internal to worker/rest (other folders talk to the REST layer through
// herder_api.h and rest_server.h).

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/api/herder_api.h"

namespace kc::rest {

/// "source" | "sink" | "unknown".
const char* to_string(ConnectorType t);
/// "UNASSIGNED" | "RUNNING" | "PAUSED" | "STOPPED" | "FAILED" | "RESTARTING" | "DESTROYED".
const char* to_string(ConnectState s);
/// "STARTED" | "PAUSED" | "STOPPED" (config-topic spelling).
const char* to_string(TargetState s);
/// "source" | "sink" | "transformation" | "predicate" | "converter" | "header_converter".
const char* to_string(PluginType t);
/// "healthy" | "starting" | "unhealthy".
const char* to_string(HealthStatus s);

/// Parses POST /connectors `initial_state`: RUNNING | PAUSED | STOPPED,
/// case-insensitive (RUNNING → Started). nullopt for anything else.
std::optional<TargetState> parse_initial_state(std::string_view s);

/// Connect's error body: {"error_code":code,"message":message}.
std::string error_body(int code, std::string_view message);

/// {"connector":"c1","task":0}
nlohmann::json to_json(const TaskId& id);
/// {"name","config","tasks":[TaskId...],"type"}
nlohmann::json to_json(const ConnectorInfo& info);
/// {"id","state","worker_id"[,"trace"]}
nlohmann::json to_json(const TaskStatus& s);
/// {"name","connector":{"state","worker_id"[,"trace"]},"tasks":[...sorted by id],"type"}
nlohmann::json to_json(const ConnectorStateInfo& s);
/// {"id":TaskId,"config":{...}}
nlohmann::json to_json(const TaskInfo& t);
/// {"class","type"[,"version"]}
nlohmann::json to_json(const PluginInfo& p);
/// {"status","message"}
nlohmann::json to_json(const Health& h);
/// {"name","type","required","default_value","importance","documentation",
/// "group","order","width","display_name","dependents"} (nulls for unset).
nlohmann::json to_json(const ConfigKeyInfo& k);
/// {"name","error_count","groups","configs":[{"definition","value"}]}.
nlohmann::json to_json(const ConfigInfos& c);

/// Validates the body of PUT /connector-plugins/{plugin}/config/validate: a
/// config object (as config_from_json). A connector.class that does not name
/// `plugin` → 400 "Included connector type X does not match request type Y"
/// (Connect's check: both without a trailing "Connector", the included one
/// must end with the requested one); an absent one → 400 "Connector config
/// {...} contains no connector type" (RestError::no_connector_type), as
/// Connect's herder answers: the path does not supply the class.
Reply<ConnectorConfig> parse_validate_request(const std::string& plugin, std::string_view body);

/// Parses a request body as JSON with kc::parse_json_bounded, refusing
/// nesting past kc::kMaxJsonDepth (64) while parsing, so no deeper tree is
/// ever built. 400 "Invalid JSON in
/// request body: ..." on a syntax error, an empty body, too deep a nesting,
/// or a number out of range (1e999; the message names the innermost key).
/// Messages never quote the token being read (it may be a secret).
/// Every REST body goes through this (or parse_ordered_json_body).
Reply<nlohmann::json> parse_json_body(std::string_view body);

/// parse_json_body keeping member order (offsets partitions and offsets).
Reply<nlohmann::ordered_json> parse_ordered_json_body(std::string_view body);

/// Serialises a reply. Invalid UTF-8 in any string (a name or message that
/// came from outside) becomes U+FFFD instead of a type_error.
std::string dump_json(const nlohmann::json& j);
/// dump_json for ordered_json.
std::string dump_json(const nlohmann::ordered_json& j);

/// {"offsets":[{"partition":{...},"offset":{...}|null}]}, member order of
/// each partition and offset kept.
nlohmann::ordered_json to_json(const std::vector<ConnectorOffset>& offsets);

/// Validates PATCH /connectors/{c}/offsets {"offsets":[{"partition":{..},
/// "offset":{..}|null}]} (member order kept). 400 on bad JSON, a missing
/// "offsets" array, "Partitions / offsets need to be provided for an alter
/// offsets request" for an empty list (Connect's text), a null or non-object
/// partition, or an offset that is neither an object nor null.
Reply<std::vector<ConnectorOffset>> parse_offsets_request(std::string_view body);

/// A config map from a JSON object. Values must be strings; numbers and
/// booleans are accepted and kept as their JSON text (Connect's Jackson
/// coerces scalars to String). null, objects and arrays → 400.
Reply<ConnectorConfig> config_from_json(const nlohmann::json& j);

/// Validates POST /connectors {"name":..,"config":{..},"initial_state":..}.
/// The name is trimmed and must pass kc::connector_name_error (not empty,
/// not "." or "..", valid UTF-8, no control characters, at most 1024 bytes;
/// 400 with the rule's message); a non-object config, a config.name that
/// differs from name, or a bad initial_state → 400.
/// config["name"] is filled in. allow_replace = false.
Reply<PutConnectorRequest> parse_create_request(std::string_view body);

/// Validates PUT /connectors/{name}/config: the body is the config object;
/// the name rule is the caller's (it applies only when PUT creates);
/// config.name (if present) must equal `name` (else 400), and is filled in.
/// allow_replace = true.
Reply<PutConnectorRequest> parse_put_config_request(const std::string& name, std::string_view body);

/// The body of PATCH /connectors/{name}/config: key → new value, nullopt
/// (JSON null) = remove the key.
using ConfigPatch = std::map<std::string, std::optional<std::string>>;

/// Validates a PATCH /connectors/{name}/config body: a JSON object whose
/// values are strings (numbers/booleans kept as JSON text) or null (the name
/// rule is not applied: only an existing connector can be patched). 400 on
/// bad JSON, a non-object, another value type, or a "name" entry that is
/// null or differs from `name` (same message as PUT).
Reply<ConfigPatch> parse_config_patch(const std::string& name, std::string_view body);

/// Applies `patch` to the stored config `current` (Connect's
/// ConnectUtils.patchConfig: null removes, anything else sets) and returns
/// the PUT request that stores the result (allow_replace = true, "name" kept).
PutConnectorRequest apply_config_patch(const std::string& name, ConnectorConfig current, const ConfigPatch& patch);

}  // namespace kc::rest
