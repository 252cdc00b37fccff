// Free functions both herders share (herder_common.h).
#include "worker/herder/herder_common.h"

#include <spdlog/spdlog.h>

#include "worker/converters/converters.h"
#include "worker/herder/plugin_config.h"

namespace kc::herder {

runtime::WorkerOptions worker_options_from(const HerderConfig& cfg,
                                           std::function<void(const std::string&)> on_task_reconfiguration) {
  runtime::WorkerOptions wo;
  wo.worker_id = cfg.worker_id;
  wo.client = cfg.client_props;
  wo.client["bootstrap.servers"] = cfg.bootstrap_servers;
  wo.producer_overrides = cfg.producer_overrides;
  wo.consumer_overrides = cfg.consumer_overrides;
  wo.client_override_policy = cfg.client_override_policy;
  wo.offset_flush_interval_ms = cfg.offset_flush_interval_ms;
  wo.offset_flush_timeout_ms = cfg.offset_flush_timeout_ms;
  wo.task_shutdown_graceful_timeout_ms = cfg.task_shutdown_graceful_timeout_ms;
  wo.tasks_max_limit = cfg.tasks_max_limit;
  wo.connector_call_timeout_ms = cfg.connector_call_timeout_ms;
  wo.key_converter = cfg.key_converter;
  wo.value_converter = cfg.value_converter;
  wo.key_converter_config = cfg.key_converter_config;
  wo.value_converter_config = cfg.value_converter_config;
  wo.header_converter = cfg.header_converter;
  wo.header_converter_config = cfg.header_converter_config;
  wo.config_transformer = cfg.config_transformer;
  wo.metrics = cfg.metrics;
  wo.producer_shared = cfg.producer_shared;
  wo.exactly_once_source = cfg.exactly_once_source;
  wo.group_id = cfg.group_id;
  wo.offset_topic_partitions = cfg.offset_partitions;
  wo.offset_topic_replication_factor = cfg.offset_replication_factor;
  wo.on_task_reconfiguration = std::move(on_task_reconfiguration);
  return wo;
}

rest::ConnectorType connector_type_of(const connectors::PluginRegistry& registry, const storage::ConfigMap& conf) {
  auto cls = conf.find("connector.class");
  if (cls == conf.end()) return rest::ConnectorType::Unknown;
  auto d = registry.find(cls->second);
  if (!d) return rest::ConnectorType::Unknown;
  return d->type == connectors::ConnectorType::Source ? rest::ConnectorType::Source : rest::ConnectorType::Sink;
}

std::vector<rest::PluginInfo> plugin_infos(const connectors::PluginRegistry& registry, bool connectors_only) {
  std::vector<rest::PluginInfo> out;
  for (const auto& d : registry.list())
    out.push_back(rest::PluginInfo{d.class_name,
                                   d.type == connectors::ConnectorType::Source ? rest::PluginType::Source
                                                                               : rest::PluginType::Sink,
                                   d.version});
  if (!connectors_only) {
    // Connect lists every converter class under each interface it
    // implements: ours are all HeaderConverters too; SimpleHeaderConverter
    // is only one.
    const std::string version = connectors::kBuiltinPluginVersion;
    for (auto cls : converters::converter_class_names()) {
      if (cls != converters::kSimpleHeaderConverterClass)
        out.push_back(rest::PluginInfo{std::string(cls), rest::PluginType::Converter, version});
      out.push_back(rest::PluginInfo{std::string(cls), rest::PluginType::HeaderConverter, version});
    }
    for (auto& [cls, predicate] : connectors::transformation_plugin_classes())
      out.push_back(rest::PluginInfo{cls, predicate ? rest::PluginType::Predicate : rest::PluginType::Transformation,
                                     version});
  }
  return out;
}

Status start_connector_cached(runtime::Worker& worker, ConnectorConfigCache& cache, const std::string& c,
                              const storage::ConfigMap& conf, storage::TargetState target) {
  auto parsed = cache.get(c, conf);
  return parsed ? worker.start_connector(*parsed, target)
                : worker.refuse_start(runtime::Worker::StartKind::Connector, parsed.error());
}

Status start_task_cached(runtime::Worker& worker, ConnectorConfigCache& cache, const connect::ConnectorTaskId& t,
                         const storage::ConfigMap& connector_conf, const storage::ConfigMap& task_conf,
                         storage::TargetState target,
                         const std::function<runtime::ExactlyOnceTaskChecks(const runtime::ConnectorConfig&)>& eos) {
  auto parsed = cache.get(t.connector, connector_conf);
  if (!parsed) return worker.refuse_start(runtime::Worker::StartKind::Task, parsed.error());
  return worker.start_task(t, *parsed, task_conf, target, eos ? eos(**parsed) : runtime::ExactlyOnceTaskChecks{});
}

ActualState sync_actual_state(const runtime::Worker& worker, std::map<std::string, RunningConnector>& connectors,
                              std::map<connect::ConnectorTaskId, RunningTask>& tasks,
                              const std::set<std::string>& failed_c,
                              const std::set<connect::ConnectorTaskId>& failed_t,
                              std::map<std::string, storage::StatusValue> connector_statuses,
                              std::map<connect::ConnectorTaskId, storage::StatusValue> task_statuses) {
  const auto running_c = worker.connector_names();
  const auto running_t = worker.task_ids();
  std::erase_if(connectors, [&](const auto& e) { return !running_c.count(e.first) && !failed_c.count(e.first); });
  std::erase_if(tasks, [&](const auto& e) { return !running_t.count(e.first) && !failed_t.count(e.first); });
  for (const auto& c : running_c) connectors.try_emplace(c);
  for (const auto& t : running_t) tasks.try_emplace(t);
  return ActualState{connectors, tasks, std::move(connector_statuses), std::move(task_statuses)};
}

runtime::CallWatchdog& validate_watchdog() {
  static auto* dog = new runtime::CallWatchdog();
  return *dog;
}

void validate_bounded(const HerderConfig& cfg, const connectors::PluginRegistry& registry,
                      const std::shared_ptr<runtime::AbandonedCalls>& abandoned, rest::ConnectorConfig config,
                      std::function<void(rest::Reply<connectors::ConfigValidation>)> done) {
  auto cls = config.find("connector.class");
  const std::string plugin = cls == config.end() ? std::string() : cls->second;
  struct Out {
    connectors::ConfigValidation v;
    std::optional<std::string> failure;
  };
  auto out = std::make_shared<Out>();
  runtime::call_with_deadline(
      validate_watchdog(), abandoned, kValidateKey + plugin, "validate() of plugin " + plugin,
      cfg.connector_call_timeout_ms,
      [reg = &registry, transformer = cfg.config_transformer, policy = cfg.client_override_policy,
       vctx = connectors::ValidateContext{cfg.exactly_once_source, cfg.tasks_max_limit}, config, plugin, out] {
        try {
          out->v = validate_resolved(*reg, transformer.get(), config, vctx);
          apply_override_policy(out->v, policy, config);
        } catch (const std::exception& e) {
          out->failure = "validate() of plugin " + plugin + " failed: " + e.what();
        }
      },
      [out, done = std::move(done)](std::optional<std::string> why) {
        if (why) {
          spdlog::error("{}", *why);
          return done(rest::RestError::timeout(std::move(*why)));
        }
        if (out->failure) return done(rest::RestError::internal(*out->failure));
        done(std::move(out->v));
      });
}

SinkGroup sink_group_of(const HerderConfig& cfg, const runtime::ConnectorConfig& conf) {
  SinkGroup sink;
  sink.connector = conf.name;
  sink.group = conf.sink_group_id;
  storage::ClientProps p = cfg.client_props;
  p["bootstrap.servers"] = cfg.bootstrap_servers;
  for (const auto& [k, v] : cfg.admin_overrides) p[k] = v;
  if (conf.override_violations.empty())
    for (const auto& [k, v] : conf.admin_overrides) p[k] = v;
  p.emplace("client.id", "connector-worker-adminclient-" + conf.name);
  sink.admin_props = std::move(p);
  // Named topics only: a topics.regex pattern names no partitions to ask for.
  if (!conf.sink_topics_regex) sink.topics = conf.sink_topics;
  sink.timeout_ms = cfg.worker_sync_timeout_ms * 3;
  return sink;
}

}  // namespace kc::herder
