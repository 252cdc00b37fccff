#pragma once
// The `transforms=` / `predicates=` part of a connector config as Connect's
// ConnectorConfig.enrich() shows it to validation: one group per alias
// ("Transforms: <alias>", "Predicates: <alias>") with the alias's type,
// predicate and negate keys and the plugin's own keys under the alias'
// prefix; and the rule that builds the chain to find every invalid key.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/connectors/config_def.h"

namespace kc::connectors {

/// The enriched definitions for the aliases `config` names (empty when it
/// names none). Unknown plugin classes contribute their type key only.
ConfigDefs transformation_config_defs(const std::map<std::string, std::string>& config);

/// The own keys of the transformation or predicate `name` (class name or
/// alias), without a prefix, as GET /connector-plugins/{name}/config lists
/// them (KIP-769); nullopt when no such plugin exists.
std::optional<ConfigDefs> transformation_plugin_config_defs(const std::string& name);

/// Every built-in transformation and predicate: its class name and whether
/// it is a predicate, in the registry's order (for GET /connector-plugins).
std::vector<std::pair<std::string, bool>> transformation_plugin_classes();

/// Builds the chain (KIP-66 transforms with KIP-585 predicates) and adds
/// each error under its full key, skipping messages the key already has.
/// An error on a key outside `transformation_config_defs` is reported on
/// its alias's type key so that it is not lost.
void transformation_rule(const std::map<std::string, std::string>& config, ConfigErrors& errors);

}  // namespace kc::connectors
