#include "worker/connectors/config_def.h"

#include "common/labels.h"

#include "common/strings.h"
#include "worker/converters/converters.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace kc::connectors {

const char* to_string(ConfigType t) {
  switch (t) {
    case ConfigType::Boolean: return "BOOLEAN";
    case ConfigType::String: return "STRING";
    case ConfigType::Int: return "INT";
    case ConfigType::Long: return "LONG";
    case ConfigType::Double: return "DOUBLE";
    case ConfigType::List: return "LIST";
    case ConfigType::Class: return "CLASS";
    case ConfigType::Password: return "PASSWORD";
  }
  return "STRING";
}

const char* to_string(ConfigImportance i) {
  switch (i) {
    case ConfigImportance::High: return "HIGH";
    case ConfigImportance::Medium: return "MEDIUM";
    case ConfigImportance::Low: return "LOW";
  }
  return "MEDIUM";
}

const char* to_string(ConfigWidth w) {
  switch (w) {
    case ConfigWidth::None: return "NONE";
    case ConfigWidth::Short: return "SHORT";
    case ConfigWidth::Medium: return "MEDIUM";
    case ConfigWidth::Long: return "LONG";
  }
  return "NONE";
}

namespace {

template <typename Int>
std::optional<double> parse_int(const std::string& s) {
  Int v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return static_cast<double>(v);
}

std::optional<double> parse_double(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end != s.c_str() + s.size() || std::isnan(v)) return std::nullopt;
  return v;
}

// "1" rather than "1.000000" in "Value must be at least 1".
std::string number_text(double v) {
  if (v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return std::to_string(v);
}

/// The reason `raw` is not a valid value of `def`, or nullopt (ConfigDef's
/// parse + validator messages).
std::optional<std::string> value_error(const ConfigKeyDef& def, const std::string& raw) {
  const std::string v = trim(raw);
  std::optional<double> number;
  switch (def.type) {
    case ConfigType::Int:
      if (!(number = parse_int<int32_t>(v))) return "Not a number of type INT";
      break;
    case ConfigType::Long:
      if (!(number = parse_int<int64_t>(v))) return "Not a number of type LONG";
      break;
    case ConfigType::Double:
      if (!(number = parse_double(v))) return "Not a number of type DOUBLE";
      break;
    case ConfigType::Boolean: {
      std::string low = v;
      std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
      if (low != "true" && low != "false") return "Expected value to be either true or false";
      break;
    }
    case ConfigType::String:
    case ConfigType::List:
    case ConfigType::Class:
    case ConfigType::Password:
      break;
  }
  if (number && def.at_least && *number < *def.at_least) return "Value must be at least " + number_text(*def.at_least);
  if (def.check) return def.check(raw);
  return std::nullopt;
}

}  // namespace

namespace {

/// Connect's CaseInsensitiveValidString: "String must be one of (case
/// insensitive): a, b".
std::function<std::optional<std::string>(const std::string&)> one_of_case_insensitive(
    std::vector<std::string> allowed) {
  return [allowed = std::move(allowed)](const std::string& value) -> std::optional<std::string> {
    std::string low = trim(value);
    std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
    if (std::find(allowed.begin(), allowed.end(), low) != allowed.end()) return std::nullopt;
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    return "String must be one of (case insensitive): " + list;
  };
}

}  // namespace

const ConfigDefs& source_connector_config_defs() {
  static const ConfigDefs defs = [] {
    ConfigDefs d;
    const std::string group = "Exactly Once Support";
    auto eos = config_key("exactly.once.support", ConfigType::String, false, std::string("requested"),
                          ConfigImportance::Medium,
                          "Permitted values are requested, required. If set to \"required\", forces a preflight check "
                          "for the connector to ensure that it can provide exactly-once semantics with the given "
                          "configuration. If set to \"required\" but the worker that performs preflight validation does "
                          "not have exactly-once support enabled for source connectors, requests to create or validate "
                          "the connector will fail.",
                          "Exactly once support");
    eos.check = one_of_case_insensitive({"requested", "required"});
    auto boundary = config_key("transaction.boundary", ConfigType::String, false, std::string("poll"),
                               ConfigImportance::Medium,
                               "Permitted values are: poll, interval, connector. If set to 'poll', a new producer "
                               "transaction is started and committed for every batch of records that each task of this "
                               "connector provides. If set to 'connector', relies on connector-defined transaction "
                               "boundaries. If set to 'interval', commits transactions only after a user-defined time "
                               "interval has passed.",
                               "Transaction Boundary");
    boundary.check = one_of_case_insensitive({"poll", "interval", "connector"});
    auto interval = config_key("transaction.boundary.interval.ms", ConfigType::Long, false, std::nullopt,
                               ConfigImportance::Low,
                               "If 'transaction.boundary' is set to 'interval', determines the interval for producer "
                               "transaction commits by connector tasks. If unset, defaults to the value of the "
                               "worker-level 'offset.flush.interval.ms' property. It has no effect if a different "
                               "transaction.boundary is specified.",
                               "Transaction boundary interval");
    interval.at_least = 0;
    auto offsets = config_key("offsets.storage.topic", ConfigType::String, false, std::nullopt, ConfigImportance::Low,
                              "The name of a separate offsets topic to use for this connector. If empty or not "
                              "specified, the worker's global offsets topic name will be used.",
                              "Offsets topic");
    offsets.check = non_empty_string;
    int order = 1;  // Connect's topic.creation.groups is first in this ConfigDef
    for (auto* k : {&eos, &boundary, &interval}) {
      k->group = group;
      k->order_in_group = ++order;
      k->width = ConfigWidth::Short;
    }
    offsets.group = "offsets.topic";
    offsets.order_in_group = 1;
    offsets.width = ConfigWidth::Long;
    d = {eos, boundary, interval, offsets};
    return d;
  }();
  return defs;
}

std::optional<std::string> non_empty_string(const std::string& value) {
  if (trim(value).empty()) return std::string("String must be non-empty");
  return std::nullopt;
}

std::string ConfigValidation::invalid_message() const {
  std::string out = "Connector configuration is invalid and contains the following " + std::to_string(error_count) +
                    " error(s):\n";
  for (const auto& c : configs) {
    for (const auto& e : c.value.errors) out += e + "\n";
  }
  return out + "You can also find the above list of errors at the endpoint "
               "`/connector-plugins/{connectorType}/config/validate`";
}

const ConfigDefs& common_connector_config_defs() {
  static const ConfigDefs defs = [] {
    ConfigDefs d;
    ConfigKeyDef name{"name", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                      "Globally unique name to use for this connector.", "Common", 1, ConfigWidth::Medium,
                      "Connector name", {}, std::nullopt, &non_empty_string};
    ConfigKeyDef cls{"connector.class", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                     "Name or alias of the connector class, e.g. FileStreamSource.", "Common", 2, ConfigWidth::Long,
                     "Connector class", {}, std::nullopt, {}};
    ConfigKeyDef tasks{"tasks.max", ConfigType::Int, false, "1", ConfigImportance::High,
                       "Maximum number of tasks to use for this connector.", "Common", 3, ConfigWidth::Short,
                       "Tasks max", {}, 1.0, {}};
    ConfigKeyDef key{"key.converter", ConfigType::Class, false, std::nullopt, ConfigImportance::Low,
                     "Converter for record keys; unset = the worker's key.converter.", "Common", 4,
                     ConfigWidth::Short, "Key converter class", {}, std::nullopt, {}};
    ConfigKeyDef value{"value.converter", ConfigType::Class, false, std::nullopt, ConfigImportance::Low,
                       "Converter for record values; unset = the worker's value.converter.", "Common", 5,
                       ConfigWidth::Short, "Value converter class", {}, std::nullopt, {}};
    ConfigKeyDef header{"header.converter", ConfigType::Class, false, std::nullopt, ConfigImportance::Low,
                        "HeaderConverter for record headers; unset = the worker's header.converter.", "Common", 6,
                        ConfigWidth::Short, "Header converter class", {}, std::nullopt, {}};
    ConfigKeyDef transforms{"transforms", ConfigType::List, false, "", ConfigImportance::Low,
                            "Aliases for the transformations to be applied to records.", "Transforms", 0,
                            ConfigWidth::Long, "Transforms", {}, std::nullopt, {}};
    ConfigKeyDef predicates{"predicates", ConfigType::List, false, "", ConfigImportance::Low,
                            "Aliases for the predicates used by transformations.", "Predicates", 0,
                            ConfigWidth::Long, "Predicates", {}, std::nullopt, {}};
    // Placement labels (kconnectd, not in Connect; issue 29).
    ConfigKeyDef placement_labels{
        "placement.labels", ConfigType::String, false, "", ConfigImportance::Medium,
        "Run this connector and its tasks only on workers whose worker.labels carry all of these labels, e.g. "
        "host=a or zone=z1,disk=ssd (key=value pairs separated by commas). Empty = any worker. No matching worker: "
        "the connector stays UNASSIGNED, with a trace naming the constraint and the workers' labels (ours).",
        "Placement", 1, ConfigWidth::Long, "Placement labels", {}, std::nullopt,
        [](const std::string& v) -> std::optional<std::string> {
          auto l = kc::parse_labels(v);
          if (l) return std::nullopt;
          return "Invalid value '" + v + "' for configuration placement.labels: " + l.error().message;
        }};
    ConfigKeyDef placement_tasks{
        "placement.tasks", ConfigType::String, false, "spread", ConfigImportance::Low,
        "How this connector's tasks are laid out over the workers placement.labels allows: spread = balanced over "
        "them like any connector's; pack = all on the worker that runs the connector (ours).",
        "Placement", 2, ConfigWidth::Short, "Placement of tasks", {}, std::nullopt,
        [](const std::string& v) -> std::optional<std::string> {
          const std::string t = trim(v);
          if (t == "spread" || t == "pack") return std::nullopt;
          return "Invalid value '" + v + "' for configuration placement.tasks: String must be one of: spread, pack";
        }};
    d = {name, cls, tasks, key, value, header, transforms, predicates, placement_labels, placement_tasks};
    return d;
  }();
  return defs;
}

const ConfigDefs& error_handling_config_defs(bool sink) {
  auto make = [](bool with_dlq) {
    const std::string g = "Error Handling";
    auto one_of = [](const std::string& v) -> std::optional<std::string> {
      std::string low = trim(v);
      std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
      if (low == "none" || low == "all") return std::nullopt;
      return "String must be one of: none, all";
    };
    ConfigDefs d{
        {"errors.retry.timeout", ConfigType::Long, false, "0", ConfigImportance::Medium,
         "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, "
         "which means no retries will be attempted. Use -1 for infinite retries.",
         g, 1, ConfigWidth::Medium, "Retry Timeout for Errors", {}, -1.0, {}},
        {"errors.retry.delay.max.ms", ConfigType::Long, false, "60000", ConfigImportance::Medium,
         "The maximum duration in milliseconds between consecutive retry attempts.", g, 2, ConfigWidth::Medium,
         "Maximum Delay Between Retries for Errors", {}, 1.0, {}},
        {"errors.tolerance", ConfigType::String, false, "none", ConfigImportance::Medium,
         "Behavior for tolerating errors during connector operation. 'none' fails the task on the first error; "
         "'all' skips problematic records.",
         g, 3, ConfigWidth::Short, "Error Tolerance", {}, std::nullopt, one_of},
        {"errors.log.enable", ConfigType::Boolean, false, "false", ConfigImportance::Medium,
         "If true, write each error and the details of the failed operation to the log.", g, 4, ConfigWidth::Short,
         "Log Errors", {}, std::nullopt, {}},
        {"errors.log.include.messages", ConfigType::Boolean, false, "false", ConfigImportance::Medium,
         "Whether to include the record that caused the failure in the log (topic, partition and offset).", g, 5,
         ConfigWidth::Short, "Log Error Details", {}, std::nullopt, {}},
    };
    if (with_dlq) {
      d.push_back({"errors.deadletterqueue.topic.name", ConfigType::String, false, "", ConfigImportance::Medium,
                   "The name of the topic to be used as the dead letter queue (DLQ) for records that fail in the "
                   "sink's pipeline. Empty = no DLQ.",
                   g, 6, ConfigWidth::Medium, "Dead Letter Queue Topic Name", {}, std::nullopt, {}});
      d.push_back({"errors.deadletterqueue.topic.replication.factor", ConfigType::Int, false, "3",
                   ConfigImportance::Medium, "Replication factor used to create the dead letter queue topic.", g, 7,
                   ConfigWidth::Medium, "Dead Letter Queue Topic Replication Factor", {}, -1.0, {}});
      d.push_back({"errors.deadletterqueue.context.headers.enable", ConfigType::Boolean, false, "false",
                   ConfigImportance::Medium,
                   "If true, add headers containing error context to the messages written to the dead letter queue "
                   "(all prefixed with __connect.errors.).",
                   g, 8, ConfigWidth::Medium, "Enable Error Context Headers", {}, std::nullopt, {}});
    }
    return d;
  };
  static const ConfigDefs source = make(false), sink_defs = make(true);
  return sink ? sink_defs : source;
}

void dlq_topic_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors) {
  auto dlq = config.find("errors.deadletterqueue.topic.name");
  auto topics = config.find("topics");
  if (dlq == config.end() || topics == config.end()) return;
  const std::string name = trim(dlq->second);
  if (name.empty()) return;
  auto list = kc::split_comma_list(topics->second);
  if (std::find(list.begin(), list.end(), name) != list.end())
    errors["errors.deadletterqueue.topic.name"].push_back("The DLQ topic '" + name +
                                                          "' may not be included in the list of topics ('topics=" +
                                                          topics->second + "') consumed by the connector");
}

void converter_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors) {
  for (const char* role : {"key.converter", "value.converter", "header.converter"}) {
    auto it = config.find(role);
    if (it == config.end() || !errors[role].empty()) continue;
    const converters::ConverterConfig sub = with_prefix(config, std::string(role) + ".");
    const std::string cls = trim(it->second);
    Status made = ok_status();
    if (std::string_view(role) == "header.converter") {
      auto h = converters::make_header_converter(cls, sub);
      if (!h) made = h.error();
    } else {
      auto c = converters::make_converter(cls, sub, std::string_view(role) == "key.converter");
      if (!c) made = c.error();
    }
    if (!made) {
      const std::string& why = made.error().message;
      errors[role].push_back(why.rfind("Invalid value", 0) == 0
                                 ? why
                                 : "Invalid value " + it->second + " for configuration " + role + ": " + why);
    }
  }
}

bool is_secret_connector_key(const ConfigDefs& defs, std::string_view key) {
  for (const auto& d : defs)
    if (d.type == ConfigType::Password && d.name == key) return true;
  return secrets::is_secret_key(key);
}

secrets::SecretKeyPredicate connector_secret_predicate(const ConfigDefs& defs, std::set<std::string> also_secret) {
  std::set<std::string, std::less<>> passwords;
  for (const auto& d : defs)
    if (d.type == ConfigType::Password) passwords.insert(d.name);
  return [passwords = std::move(passwords), also = std::move(also_secret)](std::string_view key) {
    return passwords.count(key) > 0 || also.count(std::string(key)) > 0 || secrets::is_secret_key(key);
  };
}

namespace {

const ConfigKeyDef& tasks_max_def() {
  static const ConfigKeyDef& def = *std::find_if(common_connector_config_defs().begin(),
                                                 common_connector_config_defs().end(),
                                                 [](const ConfigKeyDef& d) { return d.name == "tasks.max"; });
  return def;
}

}  // namespace

Result<int32_t> tasks_max_value(const std::string& raw, int32_t limit) {
  auto invalid = [](const std::string& shown, const std::string& why) {
    return Error{"tasks.max", "Invalid value " + shown + " for configuration tasks.max: " + why};
  };
  if (auto why = value_error(tasks_max_def(), raw)) return invalid(raw, *why);
  const std::string v = trim(raw);
  const auto n = static_cast<int32_t>(*parse_int<int32_t>(v));  // value_error has parsed it
  if (n > limit)
    return invalid(v, "Value must be no more than " + std::to_string(limit) + " (the worker's tasks.max.limit)");
  return n;
}

void tasks_max_rule(const std::map<std::string, std::string>& config, int32_t limit, ConfigErrors& errors) {
  auto it = config.find("tasks.max");
  if (it == config.end() || value_error(tasks_max_def(), it->second)) return;  // the definition reports it
  if (auto n = tasks_max_value(it->second, limit); !n) errors["tasks.max"].push_back(n.error().message);
}

ConfigValidation validate_config(const std::string& name, const ConfigDefs& defs, const ConfigRule& rule,
                                 const std::map<std::string, std::string>& config) {
  const auto secret = connector_secret_predicate(defs);
  ConfigErrors errors;
  for (const auto& def : defs) {
    auto it = config.find(def.name);
    if (it == config.end()) {
      if (def.required)
        errors[def.name].push_back("Missing required configuration \"" + def.name + "\" which has no default value.");
      continue;
    }
    if (auto why = value_error(def, it->second))
      errors[def.name].push_back("Invalid value " + secrets::redact(def.name, it->second, secret) +
                                 " for configuration " + def.name + ": " + *why);
  }
  if (rule) rule(config, errors);
  // A rule or a check may quote any value it looked at.
  const auto hidden_values = secrets::secret_values(config, secret);
  for (auto& [_, list] : errors)
    for (auto& e : list) e = secrets::scrub(e, hidden_values);

  ConfigValidation out;
  out.name = name;
  for (const auto& def : defs) {
    ConfigEntry e{def, {def.name, def.default_value, {}, {}, true}};
    if (auto it = config.find(def.name); it != config.end()) e.value.value = it->second;
    // Connect's Password.toString(): a password never leaves the worker.
    if (e.value.value && secret(def.name)) e.value.value = std::string(secrets::kHidden);
    if (auto it = errors.find(def.name); it != errors.end()) e.value.errors = it->second;
    out.error_count += static_cast<int>(e.value.errors.size());
    if (!def.group.empty() && std::find(out.groups.begin(), out.groups.end(), def.group) == out.groups.end())
      out.groups.push_back(def.group);
    out.configs.push_back(std::move(e));
  }
  // A rule may name a key no definition has (Connect then shows it with a
  // bare definition): it still counts, so no error goes unreported.
  for (const auto& [key, list] : errors) {
    const bool defined =
        std::any_of(defs.begin(), defs.end(), [&key = key](const ConfigKeyDef& d) { return d.name == key; });
    if (defined || list.empty()) continue;
    ConfigKeyDef def;
    def.name = key;
    std::optional<std::string> value;
    if (auto it = config.find(key); it != config.end()) value = secrets::redact(key, it->second, secret);
    out.configs.push_back(ConfigEntry{def, {key, value, {}, list, true}});
    out.error_count += static_cast<int>(list.size());
  }
  return out;
}

}  // namespace kc::connectors
