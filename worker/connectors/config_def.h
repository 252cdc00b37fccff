#pragma once
// Connector config definitions and their validation: the part of Kafka
// Connect's ConfigDef / ConfigValue that GET /connector-plugins/{p}/config,
// PUT .../config/validate and the create/update check share. One validator
// (validate_config) serves all three; the error texts are Connect's, since
// clients and UIs show them as they are.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <set>
#include <string_view>
#include <vector>

#include "common/worker_defaults.h"
#include "common/result.h"
#include "common/secrets.h"

namespace kc::connectors {

/// Config key types (ConfigDef.Type; REST spells them upper case).
enum class ConfigType { Boolean, String, Int, Long, Double, List, Class, Password };
/// ConfigDef.Importance.
enum class ConfigImportance { High, Medium, Low };
/// ConfigDef.Width (UI hint).
enum class ConfigWidth { None, Short, Medium, Long };

/// "BOOLEAN" | "STRING" | "INT" | "LONG" | "DOUBLE" | "LIST" | "CLASS" | "PASSWORD".
const char* to_string(ConfigType t);
/// "HIGH" | "MEDIUM" | "LOW".
const char* to_string(ConfigImportance i);
/// "NONE" | "SHORT" | "MEDIUM" | "LONG".
const char* to_string(ConfigWidth w);

/// One config key (ConfigDef.ConfigKey). A required key has no default;
/// an optional key may still default to null (default_value nullopt).
struct ConfigKeyDef {
  std::string name;
  ConfigType type = ConfigType::String;
  bool required = false;
  std::optional<std::string> default_value;  ///< as its string form; nullopt = null
  ConfigImportance importance = ConfigImportance::Medium;
  std::string documentation;
  std::string group;         ///< "" = no group (JSON null)
  int order_in_group = -1;   ///< -1 = none
  ConfigWidth width = ConfigWidth::None;
  std::string display_name;
  std::vector<std::string> dependents;
  std::optional<double> at_least;  ///< numeric types: "Value must be at least N"
  /// Extra check of a present, well-typed value: the reason it is invalid
  /// (e.g. "String must be non-empty"), or nullopt when it is fine.
  std::function<std::optional<std::string>(const std::string& value)> check;
};

/// A key with the fields every definition sets (ConfigDef.define's common
/// overload); group, order, width and checks are set on the result.
/// `display_name` "" = the key's name.
inline ConfigKeyDef config_key(std::string name, ConfigType type, bool required,
                               std::optional<std::string> default_value, ConfigImportance importance,
                               std::string documentation, std::string display_name = "") {
  ConfigKeyDef k;
  k.name = std::move(name);
  k.type = type;
  k.required = required;
  k.default_value = std::move(default_value);
  k.importance = importance;
  k.documentation = std::move(documentation);
  k.display_name = display_name.empty() ? k.name : std::move(display_name);
  return k;
}

/// The definitions of one plugin, in display order.
using ConfigDefs = std::vector<ConfigKeyDef>;

/// Errors of one validation, key → messages (in the order found).
using ConfigErrors = std::map<std::string, std::vector<std::string>>;

/// A cross-key rule of a plugin (e.g. a sink needs `topics` or
/// `topics.regex`); adds its messages to `errors`.
using ConfigRule = std::function<void(const std::map<std::string, std::string>& config, ConfigErrors& errors)>;

/// The validated state of one key (ConfigValue). `value` is the given
/// string, else the default, else nullopt (JSON null).
struct ConfigValueResult {
  std::string name;
  std::optional<std::string> value;
  std::vector<std::string> recommended_values;
  std::vector<std::string> errors;
  bool visible = true;
};

/// One key's definition and validated value (ConfigInfo).
struct ConfigEntry {
  ConfigKeyDef definition;
  ConfigValueResult value;
};

/// A whole validation (ConfigInfos): `name` is the connector class it was
/// validated against; `groups` lists the non-empty groups in first-seen order.
struct ConfigValidation {
  std::string name;
  int error_count = 0;
  std::vector<std::string> groups;
  std::vector<ConfigEntry> configs;

  /// Connect's create/update rejection text: "Connector configuration is
  /// invalid and contains the following N error(s):\n<each error>\n...You
  /// can also find the above list of errors at the endpoint
  /// `/connector-plugins/{connectorType}/config/validate`".
  [[nodiscard]] std::string invalid_message() const;
};

/// ConfigKeyDef::check for keys that must not be blank (Connect's
/// NonEmptyString): "String must be non-empty".
std::optional<std::string> non_empty_string(const std::string& value);

/// Keys every connector has (ConnectorConfig, group "Common"): name,
/// connector.class, tasks.max, key.converter, value.converter, header.converter.
const ConfigDefs& common_connector_config_defs();

/// The error handling keys (KIP-298, ConnectorConfig group "Error Handling"):
/// errors.retry.timeout, errors.retry.delay.max.ms, errors.tolerance,
/// errors.log.enable, errors.log.include.messages; for a sink also
/// errors.deadletterqueue.topic.name, .topic.replication.factor and
/// .context.headers.enable (SinkConnectorConfig).
const ConfigDefs& error_handling_config_defs(bool sink);

/// The keys every source connector has for exactly-once delivery
/// (SourceConnectorConfig, KIP-618), in Connect's groups and order:
/// `exactly.once.support` (requested|required, case-insensitive, default
/// requested), `transaction.boundary` (poll|interval|connector, default
/// poll), `transaction.boundary.interval.ms` (LONG >= 0, default null =
/// the worker's offset.flush.interval.ms) in group "Exactly Once Support",
/// and `offsets.storage.topic` (non-empty STRING, default null = the
/// worker's offsets topic) in group "offsets.topic".
const ConfigDefs& source_connector_config_defs();

/// The worker settings a connector validation depends on.
struct ValidateContext {
  /// The worker runs `exactly.once.source.support=enabled` (KIP-618).
  bool exactly_once_source_enabled = false;
  /// The worker's `tasks.max.limit` (its default 1000 here): the highest
  /// `tasks.max` a connector may set (tasks_max_rule()).
  int32_t tasks_max_limit = kTasksMaxLimitDefault;
};

/// The one tasks.max rule (STYLE 14): `raw` read as the tasks.max definition
/// reads it (trimmed, an INT, at least 1) and at most `limit`, the worker's
/// tasks.max.limit. Create-time validation (tasks_max_rule) and the runtime
/// and herder (connector.h parse_tasks_max) both call it. Returns the value
/// or Error{"tasks.max", <Connect's wording>}: "Invalid value abc for
/// configuration tasks.max: Not a number of type INT", "Invalid value 0 for
/// configuration tasks.max: Value must be at least 1", "Invalid value 5000
/// for configuration tasks.max: Value must be no more than 1000 (the
/// worker's tasks.max.limit)" (Connect's Range wording).
Result<int32_t> tasks_max_value(const std::string& raw, int32_t limit);

/// Adds tasks_max_value's upper-bound error to `errors`. A missing value
/// adds nothing, nor does a non-integer or one below 1: the tasks.max
/// definition reports those itself, once.
void tasks_max_rule(const std::map<std::string, std::string>& config, int32_t limit, ConfigErrors& errors);

/// A sink's rule: the dead letter queue topic may not be one it consumes
/// ("The DLQ topic 'x' may not be included in the list of topics
/// ('topics=...') consumed by the connector").
void dlq_topic_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors);

/// The connector's own converters: `key.converter`, `value.converter` and
/// `header.converter`, when set, must name a known converter that accepts
/// its `<key>.*` sub-configs ("Invalid value X for configuration
/// value.converter: Class X could not be found.", or the converter's
/// configure() error).
void converter_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors);

/// True when `key` of a connector config holds a secret: typed PASSWORD in
/// `defs` (the connector's ConfigDef, e.g. the PostgreSQL sink's
/// connection.password), or secret by name (secrets::is_secret_key: client
/// overrides such as producer.override.sasl.jaas.config, converter
/// credentials, any *.password).
bool is_secret_connector_key(const ConfigDefs& defs, std::string_view key);

/// is_secret_connector_key() over `defs` as a predicate for the
/// secrets:: helpers; `also_secret` adds keys (e.g. those a config provider
/// resolved, KIP-297). The predicate owns copies: it may outlive its inputs.
secrets::SecretKeyPredicate connector_secret_predicate(const ConfigDefs& defs,
                                                       std::set<std::string> also_secret = {});

/// Validates `config` against `defs` in order (each key: required, type,
/// at_least, check), then applies `rule`. Keys of `config` that no def names
/// are ignored, as Connect does. `name` becomes ConfigValidation::name.
/// Secrets stay hidden (Connect's Password.toString()): the value of a
/// secret key (is_secret_connector_key) reads "[hidden]", in its entry and
/// in "Invalid value [hidden] for configuration ..." errors, and no error
/// message (a rule's included) quotes a secret value.
ConfigValidation validate_config(const std::string& name, const ConfigDefs& defs, const ConfigRule& rule,
                                 const std::map<std::string, std::string>& config);

}  // namespace kc::connectors
