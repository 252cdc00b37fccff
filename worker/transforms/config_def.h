#pragma once
// Reading a plugin's config the way Kafka's ConfigDef does: types, defaults,
// validators and ConfigDef's error messages ("Missing required configuration
// \"spec\" which has no default value.", "Invalid value X for configuration
// K: ..."). Errors carry the key in Error::field.

#include <string>
#include <vector>

#include "worker/transforms/transformation.h"

namespace kc::transforms {

/// "Invalid value VALUE for configuration KEY: WHY" (ConfigException(name, value, message)).
Error invalid_value(const std::string& key, const std::string& value, const std::string& why);
/// ConfigDef's missing-key error for a key with no default.
Error missing_required(const std::string& key);

/// Typed access to a Config under a list of ConfigKeyDefs. Each getter
/// applies the key's default when absent; a required key (no default)
/// gives missing_required.
class ConfigReader {
 public:
  /// `config` must outlive the reader; `defs` is kept (a plugin's defs() is a temporary).
  ConfigReader(const Config& config, std::vector<ConfigKeyDef> defs) : config_(config), defs_(std::move(defs)) {}
  /// STRING: the raw text (ConfigDef trims only non-string types); nullopt
  /// when absent with a null default.
  Result<std::optional<std::string>> string(const std::string& key) const;
  /// STRING that must be present and non-null.
  Result<std::string> required_string(const std::string& key) const;
  /// INT: trimmed decimal ("Not a number of type INT"); nullopt for a null default.
  Result<std::optional<int32_t>> int32(const std::string& key) const;
  /// BOOLEAN: true/false, any case, trimmed ("Expected value to be either true or false").
  Result<bool> boolean(const std::string& key) const;
  /// LIST: comma-separated, trimmed items; "" is the empty list.
  Result<std::vector<std::string>> list(const std::string& key) const;

 private:
  /// The raw value (config or default); nullopt = null; error when required and absent.
  Result<std::optional<std::string>> raw(const std::string& key) const;
  const Config& config_;
  std::vector<ConfigKeyDef> defs_;
};

/// Java's List.toString(): "[a, b]".
std::string java_list_string(const std::vector<std::string>& items);
/// ValidString.in's message: "String must be one of: a, b".
std::string one_of_message(const std::vector<std::string>& allowed);

}  // namespace kc::transforms
