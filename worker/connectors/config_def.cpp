#include "worker/connectors/config_def.h"

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

std::string trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

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
    d = {name, cls, tasks, key, value};
    return d;
  }();
  return defs;
}

ConfigValidation validate_config(const std::string& name, const ConfigDefs& defs, const ConfigRule& rule,
                                 const std::map<std::string, std::string>& config) {
  ConfigErrors errors;
  for (const auto& def : defs) {
    auto it = config.find(def.name);
    if (it == config.end()) {
      if (def.required)
        errors[def.name].push_back("Missing required configuration \"" + def.name + "\" which has no default value.");
      continue;
    }
    if (auto why = value_error(def, it->second))
      errors[def.name].push_back("Invalid value " + it->second + " for configuration " + def.name + ": " + *why);
  }
  if (rule) rule(config, errors);

  ConfigValidation out;
  out.name = name;
  for (const auto& def : defs) {
    ConfigEntry e{def, {def.name, def.default_value, {}, {}, true}};
    if (auto it = config.find(def.name); it != config.end()) e.value.value = it->second;
    if (auto it = errors.find(def.name); it != errors.end()) e.value.errors = it->second;
    out.error_count += static_cast<int>(e.value.errors.size());
    if (!def.group.empty() && std::find(out.groups.begin(), out.groups.end(), def.group) == out.groups.end())
      out.groups.push_back(def.group);
    out.configs.push_back(std::move(e));
  }
  return out;
}

}  // namespace kc::connectors
