#include "worker/runtime/connector_config.h"

#include <algorithm>

#include "common/strings.h"
#include "worker/connectors/config_def.h"
#include "worker/plugins/registry.h"

namespace kc::runtime {

namespace {

using connectors::ConfigMap;

/// The value of `key`, or "" when absent.
std::string value_of(const ConfigMap& config, const std::string& key) {
  auto it = config.find(key);
  return it == config.end() ? std::string() : it->second;
}

/// The connector's `role` converter, or the worker's when it sets none.
ConverterSpec converter_of(const ConfigMap& config, const std::string& role, const ConverterSpec& worker) {
  auto it = config.find(role);
  if (it == config.end()) return worker;
  return {it->second, with_prefix(config, role + ".")};
}

/// The keys of `config` under `prefix` (prefix kept).
void copy_prefixed(const ConfigMap& config, const std::string& prefix, ConfigMap& out) {
  for (auto it = config.lower_bound(prefix); it != config.end() && it->first.starts_with(prefix); ++it)
    out.insert(*it);
}

/// The values of `config`'s keys that `secret` or `also` names, of at
/// least secrets::kMinScrubLength bytes (shorter ones would scrub words).
void add_secret_values(const ConfigMap& config, const secrets::SecretKeyPredicate& secret,
                       const std::set<std::string>& also, std::vector<std::string>& out) {
  for (const auto& [k, v] : config)
    if ((secret(k) || also.count(k) > 0) && v.size() >= secrets::kMinScrubLength) out.push_back(v);
}

void longest_first(std::vector<std::string>& values) {
  std::sort(values.begin(), values.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
}

}  // namespace

ConnectorConfig ConnectorConfig::parse(const std::string& name, const ConfigMap& raw, const ConfigMap& resolved,
                                       const std::set<std::string>& resolved_keys,
                                       const connectors::PluginRegistry& registry,
                                       const ConnectorConfigInputs& inputs) {
  ConnectorConfig c;
  c.raw = raw;
  c.values = resolved;
  c.resolved_keys = resolved_keys;
  c.name = name;
  c.connector_class = value_of(resolved, "connector.class");
  if (!c.connector_class.empty())
    if (auto desc = registry.find(c.connector_class)) c.type = desc->type;
  const bool sink = c.type == connectors::ConnectorType::Sink;

  if (auto tasks = connectors::parse_tasks_max(resolved, inputs.tasks_max_limit)) c.tasks = *tasks;
  else c.tasks_error = tasks.error();

  c.key_converter = converter_of(resolved, "key.converter", inputs.key_converter);
  c.value_converter = converter_of(resolved, "value.converter", inputs.value_converter);
  c.header_converter = converter_of(resolved, "header.converter", inputs.header_converter);

  if (!kc::trim(value_of(resolved, "transforms")).empty()) {
    c.transform_chain.emplace("transforms", resolved.at("transforms"));
    copy_prefixed(resolved, "transforms.", c.transform_chain);
    if (auto p = resolved.find("predicates"); p != resolved.end()) c.transform_chain.insert(*p);
    copy_prefixed(resolved, "predicates.", c.transform_chain);
  }

  if (auto errors = ErrorHandlingConfig::parse(resolved, sink)) c.errors = std::move(errors).value();
  else c.errors_error = errors.error();

  c.producer_overrides = connector_client_overrides(resolved, kProducerOverridePrefix);
  c.consumer_overrides = connector_client_overrides(resolved, kConsumerOverridePrefix);
  c.admin_overrides = connector_client_overrides(resolved, kAdminOverridePrefix);
  c.override_violations = runtime::override_violations(inputs.client_override_policy, resolved);

  if (sink) {
    c.sink_group_id = sink_consumer_group_id(c.name, resolved, inputs.worker_consumer);
    if (auto it = resolved.find("topics"); it != resolved.end() && !it->second.empty())
      c.sink_topics = kc::split_comma_list(it->second);
    else if (auto rx = resolved.find("topics.regex"); rx != resolved.end()) {
      c.sink_topics = {rx->second.rfind('^', 0) == 0 ? rx->second : "^" + rx->second};
      c.sink_topics_regex = true;
    }
  } else {
    c.transaction_boundary = kc::trim(value_of(resolved, "transaction.boundary"));
    c.transaction_boundary_interval_ms = kc::trim(value_of(resolved, "transaction.boundary.interval.ms"));
    c.offsets_topic = connector_offsets_topic(resolved, inputs.exactly_once_source, inputs.worker_offsets_topic);
  }

  // The definitions are looked up from the config as written: its
  // connector.class and transforms name them the same way resolved.
  c.is_secret = registry.secret_predicate(raw);
  add_secret_values(resolved, c.is_secret, resolved_keys, c.secret_values);
  longest_first(c.secret_values);
  return c;
}

std::vector<std::string> ConnectorConfig::task_secret_values(const ConfigMap& task_config,
                                                             const std::set<std::string>& task_resolved_keys) const {
  std::vector<std::string> out = secret_values;
  add_secret_values(task_config, is_secret, task_resolved_keys, out);
  longest_first(out);
  return out;
}

}  // namespace kc::runtime
