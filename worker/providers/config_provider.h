#pragma once
// Config providers (KIP-297) and the placeholder resolution Connect applies
// to connector and task configs when they start (KIP-421's
// ConfigTransformer): a value such as `${file:/etc/kc/db.properties:password}`
// is replaced by the key `password` of that file.
//
// Providers are named in the worker properties, as in Kafka:
//   config.providers=file,dir,env
//   config.providers.file.class=org.apache.kafka.common.config.provider.FileConfigProvider
//   config.providers.dir.class=org.apache.kafka.common.config.provider.DirectoryConfigProvider
//   config.providers.env.class=org.apache.kafka.common.config.provider.EnvVarConfigProvider
//   config.providers.<name>.param.<key>=...   (allowed.paths, allowlist.pattern)
//
// Resolution reads local files: it runs where a connector config enters a
// worker (the herder's pool), where connectors and tasks start (the apply
// strand) and in the leader's task-config job, never on the coordinator's
// io_context thread.

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kc::providers {

using ConfigMap = std::map<std::string, std::string>;

inline constexpr const char* kFileConfigProviderClass = "org.apache.kafka.common.config.provider.FileConfigProvider";
inline constexpr const char* kDirectoryConfigProviderClass =
    "org.apache.kafka.common.config.provider.DirectoryConfigProvider";
inline constexpr const char* kEnvVarConfigProviderClass = "org.apache.kafka.common.config.provider.EnvVarConfigProvider";

/// Kafka's ConfigProvider: configure() once, then get() from any thread
/// (implementations keep no mutable state after configure).
class ConfigProvider {
 public:
  virtual ~ConfigProvider() = default;
  /// configure(params): the `config.providers.<name>.param.*` keys without
  /// their prefix. Errors carry Kafka's ConfigException text.
  virtual Status configure(const ConfigMap& params) = 0;
  /// get(path, keys): the values of `keys` found at `path` (keys that do
  /// not exist are absent from the result; an empty `keys` asks for all).
  /// Errors: the path cannot be read or is not allowed.
  virtual Result<ConfigMap> get(const std::string& path, const std::set<std::string>& keys) const = 0;
};

/// A provider by Kafka class name or simple name ("FileConfigProvider");
/// nullptr when unknown.
std::unique_ptr<ConfigProvider> make_config_provider(const std::string& class_name);

/// The result of resolving one config: the resolved values, and the keys
/// whose values held at least one placeholder that was replaced (they hold
/// secrets: never log them).
struct ResolvedConfig {
  ConfigMap config;
  std::set<std::string> resolved_keys;
};

/// KIP-421's ConfigTransformer over the worker's configured providers.
/// Immutable after from_worker_config(); share it between threads.
class ConfigTransformer {
 public:
  /// Reads `config.providers` and each provider's `.class` and `.param.*`
  /// from the worker properties, and configures the providers. An empty
  /// transformer (no providers) when `config.providers` is unset. Errors
  /// name the key: "config.providers.file.class: unknown config provider
  /// class X" or a provider's configure() error.
  static Result<std::shared_ptr<const ConfigTransformer>> from_worker_config(const ConfigMap& worker_props);

  /// A transformer over `providers` (name, configured provider), in order:
  /// for providers built outside the worker properties (tests count the
  /// resolutions through one of their own).
  static std::shared_ptr<const ConfigTransformer> from_providers(
      std::vector<std::pair<std::string, std::unique_ptr<ConfigProvider>>> providers);

  /// Replaces every `${provider:[path:]key}` whose provider is configured
  /// and whose key exists; others stay as written (as Kafka does). Errors:
  /// a provider failed (unreadable file, path not allowed), naming the
  /// config key and the provider: "Failed to resolve `${file:...}` in
  /// 'db.password': Could not read properties from file /x".
  Result<ResolvedConfig> transform(const ConfigMap& config) const;

  /// Why one placeholder does not resolve.
  struct Unresolved {
    enum class Kind {
      NotConfigured,  ///< its provider is not in config.providers (left as written)
      Failed,         ///< the provider's get() failed: unreadable, not allowed (an error for transform())
      MissingKey,     ///< the provider has no such key at that path (left as written)
    };
    Kind kind;
    Error error;  ///< field = the config key holding the placeholder
  };

  /// Every placeholder of `config` that does not resolve, one entry each,
  /// in key order: a provider that is not configured ("${vault:db:pw}:
  /// config provider vault is not configured (config.providers: file,
  /// dir)"), a provider whose get() fails (the provider, path and its
  /// reason: unreadable file, path not allowed; worded as transform()'s
  /// "Failed to resolve config provider file path /x in 'db.password':
  /// ..."), or a key absent at that path. Empty when every placeholder
  /// resolves. transform() leaves the
  /// first and last kinds as written, as Kafka does, and stops at the first
  /// failure; `kconnectd validate --resolve` reports them all, and connector
  /// validation every failure. Values are never quoted, so no secret
  /// appears in an Error.
  std::vector<Unresolved> unresolved(const ConfigMap& config) const;

  /// True when any value holds a `${...:...}` placeholder.
  static bool has_placeholders(const ConfigMap& config);

  /// The configured provider names, in order.
  const std::vector<std::string>& provider_names() const { return names_; }

 private:
  std::vector<std::string> names_;
  std::map<std::string, std::unique_ptr<ConfigProvider>> providers_;
};

/// Connect's reverse transform of generated task configs (Worker
/// .connectorTaskConfigs): where a task config copies a connector value
/// that came from a placeholder, the placeholder is put back, so the config
/// topic and REST never hold the secret. `raw` is the connector config as
/// written, `resolved` its resolution.
void restore_placeholders(const ConfigMap& raw, const ResolvedConfig& resolved, std::vector<ConfigMap>& task_configs);

}  // namespace kc::providers
