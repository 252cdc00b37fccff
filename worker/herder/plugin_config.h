#pragma once
// Connector config definitions and validations (worker/connectors) in the
// REST layer's value types (worker/api/herder_api.h): what the herder answers
// for GET /connector-plugins/{p}/config, .../config/validate, and what it
// rejects on create/update. Header-only so REST tests can serve the real
// validator from a fake herder.

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/secrets.h"
#include "worker/plugins/registry.h"
#include "worker/connectors/transform_config.h"
#include "worker/providers/config_provider.h"
#include "worker/api/herder_api.h"
#include "worker/runtime/client_overrides.h"

namespace kc::herder {

/// A ConfigKeyDef as Connect's ConfigKeyInfo (empty group → null).
inline rest::ConfigKeyInfo to_rest(const connectors::ConfigKeyDef& d) {
  rest::ConfigKeyInfo k;
  k.name = d.name;
  k.type = connectors::to_string(d.type);
  k.required = d.required;
  k.default_value = d.default_value;
  k.importance = connectors::to_string(d.importance);
  k.documentation = d.documentation;
  if (!d.group.empty()) k.group = d.group;
  k.order = d.order_in_group;
  k.width = connectors::to_string(d.width);
  k.display_name = d.display_name;
  k.dependents = d.dependents;
  return k;
}

/// A ConfigValidation as Connect's ConfigInfos.
inline rest::ConfigInfos to_rest(const connectors::ConfigValidation& v) {
  rest::ConfigInfos out{v.name, v.error_count, v.groups, {}};
  for (const auto& e : v.configs) {
    out.configs.push_back(rest::ConfigInfo{
        to_rest(e.definition),
        rest::ConfigValueInfo{e.value.name, e.value.value, e.value.recommended_values, e.value.errors, e.value.visible}});
  }
  return out;
}

/// GET /connector-plugins/{plugin}/config: the connector's, transformation's
/// or predicate's own keys (KIP-769), or 404
/// "Unknown plugin <plugin>." (Connect's wording). A source connector's list
/// ends with the exactly-once keys every source has (KIP-618,
/// connectors::source_connector_config_defs; ours: Connect lists them in
/// validate only), so clients find them where they look for a plugin's keys.
inline rest::Reply<std::vector<rest::ConfigKeyInfo>> plugin_config(const connectors::PluginRegistry& registry,
                                                                   const std::string& plugin) {
  std::vector<rest::ConfigKeyInfo> out;
  if (auto desc = registry.find(plugin)) {
    for (const auto& d : desc->config_defs) out.push_back(to_rest(d));
    if (desc->type == connectors::ConnectorType::Source)
      for (const auto& d : connectors::source_connector_config_defs()) out.push_back(to_rest(d));
    return out;
  }
  if (auto defs = connectors::transformation_plugin_config_defs(plugin)) {
    for (const auto& d : *defs) out.push_back(to_rest(d));
    return out;
  }
  return rest::RestError::not_found("Unknown plugin " + plugin + ".");
}

/// Validates `config` as its connector will see it: placeholders resolved
/// through `transformer` (may be null), while the values shown stay as
/// written, so a resolved secret never appears (KIP-297): neither as a
/// value nor inside an error message ("Invalid value [hidden] for
/// configuration batch.size: ..."). A provider failure is an error on the
/// key holding the placeholder.
/// `vctx` carries the worker settings the checks depend on (exactly-once).
inline connectors::ConfigValidation validate_resolved(const connectors::PluginRegistry& registry,
                                                      const providers::ConfigTransformer* transformer,
                                                      const rest::ConnectorConfig& config,
                                                      const connectors::ValidateContext& vctx = {}) {
  if (!transformer) return registry.validate(config, vctx);
  auto resolved = transformer->transform(config);
  if (!resolved) {
    auto v = registry.validate(config, vctx);
    auto add = [&](const Error& e) {
      auto it = std::find_if(v.configs.begin(), v.configs.end(),
                             [&](const connectors::ConfigEntry& c) { return c.definition.name == e.field; });
      if (it == v.configs.end()) {
        connectors::ConfigKeyDef def;
        def.name = e.field;
        it = v.configs.insert(v.configs.end(),
                              connectors::ConfigEntry{def, {e.field, secrets::redact(e.field, config.at(e.field)), {}, {}, true}});
      }
      it->value.errors.push_back(e.message);
      ++v.error_count;
    };
    // Every provider that fails, not only the first transform() met.
    const int before = v.error_count;
    for (const auto& u : transformer->unresolved(config))
      if (u.kind == providers::ConfigTransformer::Unresolved::Kind::Failed) add(u.error);
    if (v.error_count == before) add(resolved.error());  // a failure that did not repeat
    return v;
  }
  auto v = registry.validate(resolved->config, vctx);
  std::map<std::string, std::string> provided;  // the resolved values: all secrets
  for (const auto& k : resolved->resolved_keys) provided[k] = resolved->config.at(k);
  const auto hidden = secrets::secret_values(provided, [](std::string_view) { return true; });
  for (auto& c : v.configs) {
    if (resolved->resolved_keys.count(c.definition.name) && c.value.value != secrets::kHidden)
      c.value.value = config.at(c.definition.name);
    for (auto& e : c.value.errors) e = secrets::scrub(e, hidden);
  }
  return v;
}

/// Adds an error for every `*.override.*` key `policy` refuses (KIP-458):
/// Connect's "The 'None' policy does not allow 'group.id' to be overridden
/// in the connector configuration." on the full key, which is added to the
/// result when the connector does not define it.
inline void apply_override_policy(connectors::ConfigValidation& v, runtime::ClientOverridePolicy policy,
                                  const rest::ConnectorConfig& config) {
  for (auto& bad : runtime::override_violations(policy, config)) {
    auto it = std::find_if(v.configs.begin(), v.configs.end(),
                           [&](const connectors::ConfigEntry& c) { return c.definition.name == bad.key; });
    if (it == v.configs.end()) {
      connectors::ConfigKeyDef def;
      def.name = bad.key;
      // Not in the connector's ConfigDef: hidden by name (e.g. *.sasl.jaas.config).
      it = v.configs.insert(v.configs.end(),
                            connectors::ConfigEntry{def, {bad.key, secrets::redact(bad.key, config.at(bad.key)), {}, {}, true}});
    }
    it->value.errors.push_back(std::move(bad.message));
    ++v.error_count;
  }
}

/// The create/update check: nullopt when `config` is valid, else 400 with
/// Connect's "Connector configuration is invalid and contains the following
/// N error(s): ..." message.
/// `policy` is the worker's connector.client.config.override.policy.
inline std::optional<rest::RestError> reject_invalid_config(
    const connectors::PluginRegistry& registry, const providers::ConfigTransformer* transformer,
    const rest::ConnectorConfig& config,
    runtime::ClientOverridePolicy policy = runtime::ClientOverridePolicy::All,
    const connectors::ValidateContext& vctx = {}) {
  auto v = validate_resolved(registry, transformer, config, vctx);
  apply_override_policy(v, policy, config);
  if (v.error_count == 0) return std::nullopt;
  return rest::RestError::bad_request(v.invalid_message());
}

}  // namespace kc::herder
