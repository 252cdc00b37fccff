#include "worker/connectors/transform_config.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "worker/transforms/chain.h"

namespace kc::connectors {

namespace {

ConfigType type_of(const std::string& t) {
  if (t == "INT") return ConfigType::Int;
  if (t == "LONG") return ConfigType::Long;
  if (t == "DOUBLE") return ConfigType::Double;
  if (t == "BOOLEAN") return ConfigType::Boolean;
  if (t == "LIST") return ConfigType::List;
  if (t == "CLASS") return ConfigType::Class;
  if (t == "PASSWORD") return ConfigType::Password;
  return ConfigType::String;
}

ConfigImportance importance_of(const std::string& i) {
  if (i == "HIGH") return ConfigImportance::High;
  if (i == "LOW") return ConfigImportance::Low;
  return ConfigImportance::Medium;
}

std::vector<std::string> aliases_of(const std::map<std::string, std::string>& config, const std::string& key) {
  auto it = config.find(key);
  if (it == config.end()) return {};
  std::vector<std::string> out;
  for (auto& a : split_comma_list(it->second))
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  return out;
}

// A plugin's keys as ConfigKeyDefs (no group; required only when they
// have no default, as ConfigDef says).
ConfigDefs own_defs(const transforms::PluginInfo& plugin) {
  ConfigDefs out;
  for (const auto& k : plugin.config) {
    ConfigKeyDef d;
    d.name = k.name;
    d.type = type_of(k.type);
    d.default_value = k.default_null ? std::nullopt : k.default_value;
    d.required = !k.default_value && !k.default_null;
    d.importance = importance_of(k.importance);
    d.documentation = k.doc;
    d.display_name = k.name;
    out.push_back(std::move(d));
  }
  return out;
}

// One alias' group: its type key (and, for a transform, predicate and
// negate), then the plugin's own keys. Types and defaults only: the chain
// build (transformation_rule) reports required and semantic errors, once.
void add_alias_defs(const std::map<std::string, std::string>& config, const std::string& list_key,
                    const std::string& alias, bool transform, ConfigDefs& out) {
  const std::string prefix = list_key + "." + alias + ".";
  const std::string group = std::string(transform ? "Transforms: " : "Predicates: ") + alias;
  int order = 0;
  auto add = [&](std::string name, ConfigType type, std::optional<std::string> dflt, ConfigImportance imp,
                 std::string doc, std::string display) {
    ConfigKeyDef d;
    d.name = std::move(name);
    d.type = type;
    d.default_value = std::move(dflt);
    d.importance = imp;
    d.documentation = std::move(doc);
    d.group = group;
    d.order_in_group = order++;
    d.display_name = std::move(display);
    out.push_back(std::move(d));
  };
  add(prefix + "type", ConfigType::Class, std::nullopt, ConfigImportance::High,
      "Class for the '" + alias + "' " + (transform ? "transformation." : "predicate."),
      std::string(transform ? "Transformation" : "Predicate") + " type for " + alias);
  out.back().required = true;
  if (transform) {
    add(prefix + "predicate", ConfigType::String, std::nullopt, ConfigImportance::Medium,
        "The alias of a predicate used to determine whether to apply this transformation.", "Predicate");
    add(prefix + "negate", ConfigType::Boolean, "false", ConfigImportance::Medium,
        "Whether the configured predicate should be negated.", "Negate");
  }
  auto type = config.find(prefix + "type");
  const transforms::PluginInfo* plugin = type == config.end() ? nullptr : transforms::find_plugin(trim(type->second));
  if (!plugin || (plugin->kind == transforms::PluginKind::kTransformation) != transform) return;
  for (auto d : own_defs(*plugin)) {
    d.name = prefix + d.name;
    d.group = group;
    d.order_in_group = order++;
    out.push_back(std::move(d));
  }
}

}  // namespace

ConfigDefs transformation_config_defs(const std::map<std::string, std::string>& config) {
  ConfigDefs out;
  for (const auto& a : aliases_of(config, "transforms")) add_alias_defs(config, "transforms", a, true, out);
  for (const auto& a : aliases_of(config, "predicates")) add_alias_defs(config, "predicates", a, false, out);
  return out;
}

std::optional<ConfigDefs> transformation_plugin_config_defs(const std::string& name) {
  const transforms::PluginInfo* plugin = transforms::find_plugin(name);
  if (!plugin) return std::nullopt;
  return own_defs(*plugin);
}

std::vector<std::pair<std::string, bool>> transformation_plugin_classes() {
  std::vector<std::pair<std::string, bool>> out;
  for (const auto& p : transforms::plugins())
    out.emplace_back(p.class_name, p.kind == transforms::PluginKind::kPredicate);
  return out;
}

void transformation_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors) {
  std::vector<transforms::ConfigError> found;
  if (transforms::TransformChain::build(config, &found)) return;
  std::set<std::string> known{"transforms", "predicates"};
  for (const auto& d : transformation_config_defs(config)) known.insert(d.name);
  std::set<std::string> checked;  // keys with ConfigDef errors before this rule
  for (const auto& [k, list] : errors)
    if (!list.empty()) checked.insert(k);
  for (auto& e : found) {
    std::string key = e.key;
    // The plugin names its own key; validation shows the full one, as
    // Connect's enriched ConfigDef does.
    const auto alias_end = key.find('.', key.find('.') + 1);
    if (alias_end != std::string::npos) {
      const std::string local = key.substr(alias_end + 1);
      for (const auto& [from, to] : {std::pair{"configuration " + local + ":", "configuration " + key + ":"},
                                     std::pair{"\"" + local + "\"", "\"" + key + "\""}})
        if (auto at = e.message.find(from); at != std::string::npos) e.message.replace(at, from.size(), to);
    }
    if (!known.count(key)) {
      // "transforms.<alias>.<x>" -> "transforms.<alias>.type"
      auto second_dot = key.find('.', key.find('.') + 1);
      key = key.substr(0, second_dot) + ".type";
    }
    // A key ConfigDef already found wrong (missing, badly typed) keeps
    // that one message, as Connect gives.
    auto& list = errors[key];
    if (list.empty() || (std::find(list.begin(), list.end(), e.message) == list.end() && checked.count(key) == 0))
      list.push_back(std::move(e.message));
  }
}

}  // namespace kc::connectors
