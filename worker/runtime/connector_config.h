#pragma once
// A connector's config, typed (STYLE 14; Connect's ConnectorConfig /
// SinkConnectorConfig): the string map is read once, where it enters the
// worker (the herder's ConnectorConfigCache, filled when the config record
// is read; Worker::read_connector_config), after its config provider
// placeholders are resolved; the connector, its tasks, the task loops and
// the record pipeline then read fields of this value and never look keys
// up in the map again.
//
// Parsing never fails as a whole: each part keeps its own error, because
// each entry point fails on different parts (a connector start fails on
// `tasks.max`, a task start on its converters, transforms and `errors.*`),
// with the texts users already see.
//
// Threading: an immutable value once parsed; copies go to the task thread.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/secrets.h"
#include "common/worker_defaults.h"
#include "worker/connectors/connector.h"
#include "worker/runtime/client_overrides.h"
#include "worker/runtime/error_handling.h"

namespace kc::connectors {
class PluginRegistry;
}

namespace kc::runtime {

/// One converter of a connector: `key.converter`, `value.converter` or
/// `header.converter` with its `<role>.` sub-configs, or the worker's
/// class and sub-configs when the connector does not set the role (a
/// connector's class replaces the worker's sub-configs too, as in Connect).
struct ConverterSpec {
  std::string class_name;          ///< as configured: an alias or a class name
  connectors::ConfigMap config;    ///< the role's sub-configs, prefix stripped
};

/// What the Worker contributes to a connector's typed config: its
/// converter defaults, tasks.max.limit and client settings.
struct ConnectorConfigInputs {
  int32_t tasks_max_limit = kTasksMaxLimitDefault;  ///< the worker's tasks.max.limit
  ConverterSpec key_converter, value_converter, header_converter;  ///< the worker's defaults
  ClientOverridePolicy client_override_policy = ClientOverridePolicy::All;
  /// The worker's `consumer.*` (prefix stripped): its group.id is the sink
  /// group's fallback (sink_consumer_group_id).
  std::map<std::string, std::string> worker_consumer;
  bool exactly_once_source = false;  ///< exactly.once.source.support=enabled
  std::string worker_offsets_topic;  ///< offset.storage.topic
};

/// See file comment. Fields are the parsed values; `*_error` fields hold
/// the part's error (Connect's text) when its keys are invalid.
struct ConnectorConfig {
  std::string name;             ///< the connector's name
  std::string connector_class;  ///< `connector.class`; empty when missing
  /// Sink or source, from the plugin registry (Source when the class is unknown).
  connectors::ConnectorType type = connectors::ConnectorType::Source;

  /// `tasks.max` and `tasks.max.enforce` (connectors::parse_tasks_max, the
  /// one reader of tasks.max); `tasks_error` when invalid.
  connectors::TasksMax tasks;
  std::optional<Error> tasks_error;

  /// The converters the tasks use (see ConverterSpec).
  ConverterSpec key_converter, value_converter, header_converter;

  /// The chain's keys (`transforms`, `transforms.*`, `predicates`,
  /// `predicates.*`); empty when `transforms` is absent or blank. Each task
  /// builds its own chain from them (transforms keep per-task caches).
  connectors::ConfigMap transform_chain;

  /// `errors.*` (and, for sinks, the dead letter queue); `errors_error` when invalid.
  ErrorHandlingConfig errors;
  std::optional<Error> errors_error;

  /// KIP-458 client overrides, prefix stripped, and the ones the worker's
  /// policy refuses (key order).
  std::map<std::string, std::string> producer_overrides, consumer_overrides, admin_overrides;
  std::vector<OverrideViolation> override_violations;

  /// Sinks: the consumer group (sink_consumer_group_id). Empty for sources.
  std::string sink_group_id;
  /// Sinks: the topics to subscribe to, from `topics` (a list) or
  /// `topics.regex` (one pattern, anchored with '^').
  std::vector<std::string> sink_topics;
  /// Sinks: sink_topics is the `topics.regex` pattern, not topic names
  /// (the offsets API looks up partitions of named topics only).
  bool sink_topics_regex = false;

  /// Exactly-once sources (KIP-618): `transaction.boundary` as written,
  /// trimmed (empty = poll), `transaction.boundary.interval.ms` (empty =
  /// unset) and the connector's own offsets topic (connector_offsets_topic).
  std::string transaction_boundary, transaction_boundary_interval_ms;
  std::optional<std::string> offsets_topic;

  /// Which keys hold secrets: PASSWORD keys of the plugin's definitions
  /// (transforms and error handling included) and secret-looking names.
  /// Built once per config (connectors::connector_secret_predicate).
  secrets::SecretKeyPredicate is_secret;
  /// Keys whose values came from a config provider (always secret).
  std::set<std::string> resolved_keys;
  /// The values never to quote in a failure text: the secret keys' and the
  /// provider-resolved keys' resolved values, longest first (secrets::scrub).
  std::vector<std::string> secret_values;

  connectors::ConfigMap raw;     ///< as written, placeholders unresolved (for logs)
  connectors::ConfigMap values;  ///< resolved: what the connector plugin receives

  /// Reads `resolved` (the config of connector `name` with placeholders
  /// resolved; `raw` as written) once. `registry` gives the plugin's type
  /// and definitions (for the secret keys). Never fails; see the `*_error`
  /// fields.
  static ConnectorConfig parse(const std::string& name, const connectors::ConfigMap& raw,
                               const connectors::ConfigMap& resolved,
                               const std::set<std::string>& resolved_keys, const connectors::PluginRegistry& registry,
                               const ConnectorConfigInputs& inputs);

  /// The resolved values of `task_config`'s secret keys (by is_secret) and
  /// of `task_resolved_keys`, merged with secret_values, longest first: what
  /// a task's failure text must not quote.
  std::vector<std::string> task_secret_values(const connectors::ConfigMap& task_config,
                                              const std::set<std::string>& task_resolved_keys) const;
};

/// A parsed connector config, shared read-only: the herder's cache
/// (worker/herder/connector_config_cache.h) hands one out to the connector
/// and every task it starts from the same config.
using ConnectorConfigPtr = std::shared_ptr<const ConnectorConfig>;

}  // namespace kc::runtime
