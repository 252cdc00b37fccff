#pragma once
// Connector plugins by class name (Connect's Plugins / DelegatingClassLoader
// aliases): a plugin is found by its full class name, its simple name, or its
// simple name without the "Connector" suffix.

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "worker/connectors/config_def.h"
#include "worker/connectors/connector.h"
#include "worker/connectors/plugin_desc.h"

namespace kc::connectors {

/// Plugin registry. Thread-safe.
class PluginRegistry {
 public:
  /// The registry with the built-in connectors (FileStreamSource,
  /// FileStreamSink, SequenceSource) already added.
  static PluginRegistry& builtin();

  /// Adds a plugin; its aliases (simple name, simple name minus
  /// "Connector") are derived from class_name. A later add wins on a clash.
  void add(PluginDesc desc);

  /// Finds a plugin by class name or alias; nullopt if unknown.
  std::optional<PluginDesc> find(const std::string& name) const;

  /// Creates a connector. Error "Failed to find any class that implements
  /// Connector and which name matches X, available connectors are: ..." for
  /// an unknown name (Connect's wording).
  Result<std::unique_ptr<Connector>> create(const std::string& name) const;

  /// Validates a connector config (Connect's validateConnectorConfig): the
  /// common keys, then the keys and rule of the plugin `connector.class`
  /// names. A missing or unknown class is an error on connector.class
  /// ("Class X could not be found."), and only the common keys are checked.
  /// Used by create/update (reject when error_count > 0) and by
  /// PUT /connector-plugins/{p}/config/validate.
  /// A source connector also gets source_connector_config_defs() and
  /// Connect's exactly-once checks (DistributedHerder's
  /// validateSourceConnectorConfig, KIP-618): `exactly.once.support=required`
  /// needs `ctx.exactly_once_source_enabled` ("This worker does not have
  /// exactly-once source support enabled.") and a connector that declares
  /// Supported for `config` (else Connect's null / UNSUPPORTED messages);
  /// `transaction.boundary=connector` needs a connector that can define its
  /// boundaries. Its `exactly.once.support` entry reports the connector's
  /// declaration as recommended values: ["requested","required"] when it
  /// declares Supported for `config`, else ["requested"].
  ConfigValidation validate(const ConfigMap& config, const ValidateContext& ctx = {}) const;

  /// Every definition validate() checks `config` against: the common
  /// connector keys, the transforms/predicates `config` names, the error
  /// handling keys and the plugin's own (only the common keys when its
  /// connector.class is unknown).
  ConfigDefs config_defs_for(const ConfigMap& config) const;

  /// Which keys of `config` hold secrets (connectors::connector_secret_predicate
  /// over config_defs_for(config)): its PASSWORD keys, `also_secret`, and
  /// secret-looking names. For every log line and error text that shows a
  /// connector or task config.
  secrets::SecretKeyPredicate secret_predicate(const ConfigMap& config, std::set<std::string> also_secret = {}) const;

  /// All plugins, sorted by class name.
  std::vector<PluginDesc> list() const;

 private:
  mutable std::mutex mu_;
  std::map<std::string, PluginDesc> by_class_;
  std::map<std::string, std::string> alias_to_class_;
};

/// Registers the built-ins into `r` (done for builtin()).
void register_builtin_connectors(PluginRegistry& r);

}  // namespace kc::connectors
