#include "worker/runtime/client_overrides.h"

#include <array>

namespace kc::runtime {

namespace {

constexpr std::string_view kPolicyPackage = "org.apache.kafka.connect.connector.policy.";
constexpr std::string_view kPolicySuffix = "ConnectorClientConfigOverridePolicy";

bool principal_allows(const std::string& key) {
  return key == "sasl.jaas.config" || key == "sasl.mechanism" || key == "security.protocol";
}

}  // namespace

std::optional<ClientOverridePolicy> parse_client_override_policy(std::string_view value) {
  if (value.starts_with(kPolicyPackage)) value.remove_prefix(kPolicyPackage.size());
  if (value.ends_with(kPolicySuffix)) value.remove_suffix(kPolicySuffix.size());
  if (value == "All") return ClientOverridePolicy::All;
  if (value == "None") return ClientOverridePolicy::None;
  if (value == "Principal") return ClientOverridePolicy::Principal;
  return std::nullopt;
}

const char* to_string(ClientOverridePolicy policy) {
  switch (policy) {
    case ClientOverridePolicy::All: return "All";
    case ClientOverridePolicy::None: return "None";
    case ClientOverridePolicy::Principal: return "Principal";
  }
  return "All";
}

std::vector<OverrideViolation> override_violations(ClientOverridePolicy policy,
                                                   const std::map<std::string, std::string>& connector_config) {
  std::vector<OverrideViolation> out;
  if (policy == ClientOverridePolicy::All) return out;
  static constexpr std::array kPrefixes{kProducerOverridePrefix, kConsumerOverridePrefix, kAdminOverridePrefix};
  for (const auto& [key, _] : connector_config) {
    for (auto prefix : kPrefixes) {
      if (!key.starts_with(prefix)) continue;
      const std::string client_key = key.substr(prefix.size());
      const bool allowed = policy == ClientOverridePolicy::Principal && principal_allows(client_key);
      if (!allowed)
        out.push_back({key, std::string("The '") + to_string(policy) + "' policy does not allow '" + client_key +
                                "' to be overridden in the connector configuration."});
    }
  }
  return out;
}

std::map<std::string, std::string> connector_client_overrides(
    const std::map<std::string, std::string>& connector_config, std::string_view prefix) {
  std::map<std::string, std::string> out;
  for (auto it = connector_config.lower_bound(std::string(prefix));
       it != connector_config.end() && it->first.starts_with(prefix); ++it)
    out[it->first.substr(prefix.size())] = it->second;
  return out;
}

std::string sink_consumer_group_id(const std::string& connector,
                                   const std::map<std::string, std::string>& connector_config,
                                   const std::map<std::string, std::string>& worker_consumer) {
  // Connect's order: the default, then the worker's consumer.*, then the
  // connector's consumer.override.* (last one wins).
  if (auto it = connector_config.find(std::string(kConsumerOverridePrefix) + "group.id"); it != connector_config.end())
    return it->second;
  if (auto it = worker_consumer.find("group.id"); it != worker_consumer.end()) return it->second;
  return "connect-" + connector;
}

}  // namespace kc::runtime
