#pragma once
// Connector-level Kafka client overrides (KIP-458): `producer.override.*`,
// `consumer.override.*` and `admin.override.*` in a connector's config, on
// top of the worker's `producer.*` / `consumer.*` / `admin.*`, allowed or
// refused by the worker's `connector.client.config.override.policy`
// (All | None | Principal, Connect's default All). Also the one rule for a
// sink connector's consumer group id and the one rule for a source
// connector's own offsets topic, shared by the runtime and the offsets API
// (KIP-875). Pure, header-only functions: no I/O, callable
// from any thread.

#include <array>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/strings.h"

namespace kc::runtime {

/// Connector config prefix of producer overrides (Connect's
/// ConnectorConfig.CONNECTOR_CLIENT_PRODUCER_OVERRIDES_PREFIX).
inline constexpr std::string_view kProducerOverridePrefix = "producer.override.";
/// Connector config prefix of consumer overrides (sink task consumers).
inline constexpr std::string_view kConsumerOverridePrefix = "consumer.override.";
/// Connector config prefix of admin client overrides.
inline constexpr std::string_view kAdminOverridePrefix = "admin.override.";

/// connector.client.config.override.policy (KIP-458).
enum class ClientOverridePolicy {
  All,        ///< every override allowed (Connect's default)
  None,       ///< no override allowed
  Principal,  ///< only sasl.jaas.config, sasl.mechanism and security.protocol
};

/// Parses the policy as Connect accepts it: the alias ("All", "None",
/// "Principal"), the simple class name ("AllConnectorClientConfigOverridePolicy")
/// or the full class name (org.apache.kafka.connect.connector.policy.*).
/// nullopt for anything else.
std::optional<ClientOverridePolicy> parse_client_override_policy(std::string_view value);

/// The policy's alias as Connect names it in messages ("All", "None", "Principal").
const char* to_string(ClientOverridePolicy policy);

/// One override the policy refuses: the full connector key (with its
/// prefix, e.g. "consumer.override.group.id") and Connect's message "The
/// 'None' policy does not allow 'group.id' to be overridden in the connector
/// configuration." (AbstractConnectorClientConfigOverridePolicy wording).
struct OverrideViolation {
  std::string key;
  std::string message;
};

/// Every `*.override.*` key of `connector_config` that `policy` refuses, in
/// key order. Empty when all are allowed.
std::vector<OverrideViolation> override_violations(ClientOverridePolicy policy,
                                                   const std::map<std::string, std::string>& connector_config);

/// The connector's overrides under `prefix`, prefix stripped (Connect's
/// originalsWithPrefix). The caller checks the policy first
/// (override_violations); this function does not filter.
std::map<std::string, std::string> connector_client_overrides(
    const std::map<std::string, std::string>& connector_config, std::string_view prefix);

/// The consumer group of sink connector `connector` (KIP-875, Connect's
/// Worker.baseConsumerConfigs): `consumer.override.group.id` of its config
/// if set, else the worker's `consumer.group.id` (`worker_consumer`, the
/// worker's `consumer.*` with the prefix stripped) if set, else
/// "connect-<connector>" (SinkUtils.consumerGroupId). The sink task consumer
/// and GET/PATCH/DELETE /connectors/{c}/offsets both use this one function.
std::string sink_consumer_group_id(const std::string& connector,
                                   const std::map<std::string, std::string>& connector_config,
                                   const std::map<std::string, std::string>& worker_consumer);

/// The connector-specific offsets topic of source connector config
/// `connector_config` (KIP-618 `offsets.storage.topic`, trimmed), or nullopt
/// when its offsets live in the worker's topic only: the key is unset or
/// blank, names `worker_offsets_topic`, or the worker runs without
/// exactly-once source support (only exactly-once tasks honour the key
/// here; Connect's regular tasks would too). The exactly-once task runtime
/// and GET/PATCH/DELETE /connectors/{c}/offsets both use this one function.
std::optional<std::string> connector_offsets_topic(const std::map<std::string, std::string>& connector_config,
                                                   bool exactly_once_source,
                                                   const std::string& worker_offsets_topic);

// ---- definitions (header-only: the REST tests validate configs without the runtime library)


namespace detail {

constexpr std::string_view kPolicyPackage = "org.apache.kafka.connect.connector.policy.";
constexpr std::string_view kPolicySuffix = "ConnectorClientConfigOverridePolicy";

inline bool principal_allows(const std::string& key) {
  return key == "sasl.jaas.config" || key == "sasl.mechanism" || key == "security.protocol";
}

}  // namespace detail

inline std::optional<ClientOverridePolicy> parse_client_override_policy(std::string_view value) {
  if (value.starts_with(detail::kPolicyPackage)) value.remove_prefix(detail::kPolicyPackage.size());
  if (value.ends_with(detail::kPolicySuffix)) value.remove_suffix(detail::kPolicySuffix.size());
  if (value == "All") return ClientOverridePolicy::All;
  if (value == "None") return ClientOverridePolicy::None;
  if (value == "Principal") return ClientOverridePolicy::Principal;
  return std::nullopt;
}

inline const char* to_string(ClientOverridePolicy policy) {
  switch (policy) {
    case ClientOverridePolicy::All: return "All";
    case ClientOverridePolicy::None: return "None";
    case ClientOverridePolicy::Principal: return "Principal";
  }
  return "All";
}

inline std::vector<OverrideViolation> override_violations(ClientOverridePolicy policy,
                                                   const std::map<std::string, std::string>& connector_config) {
  std::vector<OverrideViolation> out;
  if (policy == ClientOverridePolicy::All) return out;
  static constexpr std::array kPrefixes{kProducerOverridePrefix, kConsumerOverridePrefix, kAdminOverridePrefix};
  for (const auto& [key, _] : connector_config) {
    for (auto prefix : kPrefixes) {
      if (!key.starts_with(prefix)) continue;
      const std::string client_key = key.substr(prefix.size());
      const bool allowed = policy == ClientOverridePolicy::Principal && detail::principal_allows(client_key);
      if (!allowed)
        out.push_back({key, std::string("The '") + to_string(policy) + "' policy does not allow '" + client_key +
                                "' to be overridden in the connector configuration."});
    }
  }
  return out;
}

inline std::map<std::string, std::string> connector_client_overrides(
    const std::map<std::string, std::string>& connector_config, std::string_view prefix) {
  std::map<std::string, std::string> out;
  for (auto it = connector_config.lower_bound(std::string(prefix));
       it != connector_config.end() && it->first.starts_with(prefix); ++it)
    out[it->first.substr(prefix.size())] = it->second;
  return out;
}

inline std::string sink_consumer_group_id(const std::string& connector,
                                   const std::map<std::string, std::string>& connector_config,
                                   const std::map<std::string, std::string>& worker_consumer) {
  // Connect's order: the default, then the worker's consumer.*, then the
  // connector's consumer.override.* (last one wins).
  if (auto it = connector_config.find(std::string(kConsumerOverridePrefix) + "group.id"); it != connector_config.end())
    return it->second;
  if (auto it = worker_consumer.find("group.id"); it != worker_consumer.end()) return it->second;
  return "connect-" + connector;
}

inline std::optional<std::string> connector_offsets_topic(const std::map<std::string, std::string>& connector_config,
                                                          bool exactly_once_source,
                                                          const std::string& worker_offsets_topic) {
  if (!exactly_once_source) return std::nullopt;
  auto it = connector_config.find("offsets.storage.topic");
  if (it == connector_config.end()) return std::nullopt;
  std::string topic = trim(it->second);
  if (topic.empty()) return std::nullopt;
  // Same topic as the worker's: one store, no fallback (Connect's sameOffsetTopicAsWorker).
  if (topic == worker_offsets_topic) return std::nullopt;
  return topic;
}

}  // namespace kc::runtime
