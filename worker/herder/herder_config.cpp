#include "worker/herder/herder_config.h"

#include "config/jaas.h"
#include "protocol/connect/types.h"
#include "worker/storage/kafka_security.h"

namespace kc::herder {
namespace {

// Resolves the sasl.* values of one client property map through the worker's
// config providers (Kafka resolves ${...} in worker and client configs
// before a client reads them), then hands librdkafka what it understands:
// sasl.jaas.config becomes sasl.username / sasl.password. Returns the
// credentials when the map selects a SASL security.protocol. `what` names the
// map in errors ("worker", "producer.", ...). Throws config::ConfigError.
std::optional<config::SaslClientCredentials> prepare_sasl(storage::ClientProps& props,
                                                          const providers::ConfigTransformer& transformer,
                                                          const std::string& prefix) {
  storage::ClientProps sasl;
  for (const auto& [k, v] : props)
    if (k.starts_with("sasl.")) sasl[k] = v;
  if (sasl.empty() && !props.count("security.protocol")) return std::nullopt;
  if (providers::ConfigTransformer::has_placeholders(sasl)) {
    auto resolved = transformer.transform(sasl);
    if (!resolved) throw config::ConfigError(prefix + resolved.error().to_string());
    for (auto& [k, v] : resolved->config) props[k] = v;
  }
  auto creds = config::sasl_credentials(props);
  if (!creds) {
    const auto& e = creds.error();
    throw config::ConfigError(e.field.empty() ? e.message : prefix + e.to_string());
  }
  if (props.count("sasl.jaas.config")) {
    props.erase("sasl.jaas.config");
    if (*creds) {
      props["sasl.username"] = (*creds)->username;
      props["sasl.password"] = (*creds)->password;
    }
  }
  return *creds;
}

}  // namespace

HerderConfig herder_config_from(const config::WorkerConfig& wc, const std::string& default_host) {
  HerderConfig h;
  h.group_id = wc.group_id();
  std::string bs;
  for (const auto& s : wc.bootstrap_servers()) bs += (bs.empty() ? "" : ",") + s;
  h.bootstrap_servers = bs;
  h.client_props = wc.common_client_config();
  h.client_props.erase("bootstrap.servers");
  // Kafka's ssl.* names become librdkafka's in every client's overrides too.
  h.producer_overrides = config::librdkafka_ssl_config(wc.originals_with_prefix("producer."));
  h.producer_overrides.erase("shared");  // producer.shared is a worker option, not a librdkafka one
  h.consumer_overrides = config::librdkafka_ssl_config(wc.originals_with_prefix("consumer."));
  for (auto& [k, v] : config::librdkafka_ssl_config(wc.originals_with_prefix("admin.")))
    if (k != "listeners" && !k.starts_with("listeners.")) h.admin_overrides[k] = v;
  const auto policy_text = wc.get_string("connector.client.config.override.policy");
  auto policy = runtime::parse_client_override_policy(policy_text);
  if (!policy)
    throw config::ConfigError("connector.client.config.override.policy: unknown policy '" + policy_text +
                              "' (expected All, None or Principal)");
  h.client_override_policy = *policy;
  h.client_id = wc.group_client_id(default_host);
  h.group_tls = storage::connection_tls_options(wc.tls_settings());
  auto proto = connect::protocol_from_config(wc.connect_protocol());
  if (!proto) throw config::ConfigError("connect.protocol: unknown value '" + wc.connect_protocol() + "'");
  h.protocol = *proto;
  h.session_timeout_ms = wc.session_timeout_ms();
  h.group_instance_id = wc.group_instance_id();
  h.worker_labels = wc.worker_labels();
  h.static_assignment_file = wc.static_membership_assignment_file();
  h.leave_group_on_shutdown = !h.group_instance_id || wc.static_membership_leave_on_shutdown();
  h.heartbeat_interval_ms = wc.heartbeat_interval_ms();
  h.rebalance_timeout_ms = wc.rebalance_timeout_ms();
  h.request_timeout_ms = wc.request_timeout_ms();
  h.retry_backoff_ms = static_cast<int>(wc.retry_backoff_ms());
  h.worker_sync_timeout_ms = wc.worker_sync_timeout_ms();
  h.worker_unsync_backoff_ms = wc.worker_unsync_backoff_ms();
  h.scheduled_rebalance_max_delay_ms = wc.scheduled_rebalance_max_delay_ms();
  h.config_topic = wc.config_storage_topic();
  h.config_replication_factor = wc.config_storage_replication_factor();
  h.offset_topic = wc.offset_storage_topic();
  h.offset_partitions = wc.offset_storage_partitions();
  h.offset_replication_factor = wc.offset_storage_replication_factor();
  h.status_topic = wc.status_storage_topic();
  h.status_partitions = wc.status_storage_partitions();
  h.status_replication_factor = wc.status_storage_replication_factor();
  h.offset_flush_interval_ms = wc.offset_flush_interval_ms();
  h.offset_flush_timeout_ms = static_cast<int>(wc.offset_flush_timeout_ms());
  h.task_shutdown_graceful_timeout_ms = static_cast<int>(wc.task_shutdown_graceful_timeout_ms());
  h.connector_call_timeout_ms = wc.connector_call_timeout_ms();
  h.key_converter = wc.key_converter();
  h.value_converter = wc.value_converter();
  h.key_converter_config = wc.originals_with_prefix("key.converter.");
  h.value_converter_config = wc.originals_with_prefix("value.converter.");
  h.header_converter = wc.get_string("header.converter");
  h.header_converter_config = wc.originals_with_prefix("header.converter.");
  auto transformer = providers::ConfigTransformer::from_worker_config(wc.originals());
  if (!transformer) throw config::ConfigError(transformer.error().to_string());
  h.config_transformer = std::move(transformer).value();
  // SASL for the group client and the librdkafka clients: one set of
  // credentials from the worker keys; producer./consumer./admin. overrides
  // that carry their own JAAS text are translated the same way.
  h.group_sasl = prepare_sasl(h.client_props, *h.config_transformer, "");
  for (auto* overrides : {&h.producer_overrides, &h.consumer_overrides, &h.admin_overrides}) {
    if (!overrides->count("sasl.jaas.config")) continue;
    storage::ClientProps merged = h.client_props;
    for (const auto& [k, v] : *overrides) merged[k] = v;
    (void)prepare_sasl(merged, *h.config_transformer, "");
    overrides->erase("sasl.jaas.config");
    for (const char* key : {"sasl.username", "sasl.password"})
      if (merged.count(key)) (*overrides)[key] = merged[key];
  }
  h.topic_tracking_enable = wc.topic_tracking_enable();
  h.hand_over_moves = wc.rebalance_hand_over_enable();
  h.return_lost_to_owner = wc.scheduled_rebalance_return_to_owner_enable();
  h.no_delay_for_expired_static = wc.scheduled_rebalance_static_expiry_immediate();
  h.topic_tracking_allow_reset = wc.topic_tracking_allow_reset();
  h.producer_shared = wc.producer_shared();
  h.exactly_once_source = wc.get_string("exactly.once.source.support") == "enabled";
  h.tasks_max_limit = wc.tasks_max_limit();
  h.transactional_leader = wc.get_string("exactly.once.source.support") != "disabled";
  h.key_generation_algorithm = wc.get_string("inter.worker.key.generation.algorithm");
  if (!wc.is_null("inter.worker.key.size")) h.key_size_bits = wc.get_int("inter.worker.key.size");
  h.key_ttl_ms = wc.get_int("inter.worker.key.ttl.ms");
  h.signature_algorithm = wc.get_string("inter.worker.signature.algorithm");
  h.verification_algorithms = wc.get_list("inter.worker.verification.algorithms");
  if (auto st = validate_signing_config(h.key_generation_algorithm, h.key_size_bits, h.signature_algorithm,
                                        h.verification_algorithms);
      !st)
    throw config::ConfigError(st.error().to_string());
  h.advertised_url = wc.advertised_url(default_host);
  h.worker_id = wc.worker_id(default_host);
  return h;
}

}  // namespace kc::herder
