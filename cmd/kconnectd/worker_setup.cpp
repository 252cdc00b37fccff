// load_worker(): the configuration path `run` and `validate` share.
#include "cmd/kconnectd/worker_setup.h"

#include <algorithm>
#include <cctype>
#include <iostream>

#include <spdlog/spdlog.h>

#include "common/strings.h"
#include "worker/metrics/log_context.h"
#include "worker/metrics/log_levels.h"
#include "worker/rest/admin_routes.h"
#include "worker/rest/console_routes.h"
#include "worker/rest/logger_routes.h"
#include "worker/rest/observability.h"
#include "worker/storage/broker_check.h"
#include "config/env_overrides.h"
#include "config/properties.h"
#include "worker/converters/converters.h"
#include "worker/providers/config_provider.h"

namespace kc::cmd {

std::vector<std::string> converter_errors(const config::Properties& props) {
  std::vector<std::string> out;
  for (const char* key : {"key.converter", "value.converter", "header.converter"}) {
    const std::string k(key);
    std::string known;  // SimpleHeaderConverter converts headers only
    for (auto name : converters::converter_class_names())
      if (k == "header.converter" || name != converters::kSimpleHeaderConverterClass)
        known += (known.empty() ? "" : ", ") + std::string(name);
    auto it = props.find(k);
    const std::string cls = it != props.end() ? trim(it->second) : config::find_option(k)->default_value;
    std::map<std::string, std::string> sub;
    for (const auto& [pk, pv] : props)
      if (pk.size() > k.size() + 1 && pk.starts_with(k + ".")) sub[pk.substr(k.size() + 1)] = pv;
    Error e;
    if (k == "header.converter") {
      auto made = converters::make_header_converter(cls, sub);
      if (made) continue;
      e = made.error();
    } else {
      auto made = converters::make_converter(cls, sub, k == "key.converter");
      if (made) continue;
      e = made.error();
    }
    if (!converters::resolve_converter_class(cls) || e.field.empty()) {
      out.push_back(k + ": '" + cls + "' is not a converter: " + e.message + " (expected one of " + known + ")");
    } else {
      out.push_back(k + "." + e.field + ": " + e.message);  // the converter refused one of its settings
    }
  }
  return out;
}

LoadedWorker load_worker(const std::string& path, char** envp, const std::string& kafka_opts,
                         const LoadOptions& opts) {
  LoadedWorker out;
  config::Properties props;
  try {
    props = config::load_properties_file(path);
  } catch (const config::ConfigError& e) {
    out.errors.emplace_back(e.what());  // directory, missing, unreadable, syntax: nothing else to check
    return out;
  }
  out.from_env = config::apply_env_overrides(props, envp);

  auto report = config::WorkerConfig::validate(props, opts.mode);
  out.errors = std::move(report.errors);
  out.warnings = std::move(report.warnings);
  for (auto& e : converter_errors(props)) out.errors.push_back(std::move(e));

  if (opts.resolve) {
    auto transformer = providers::ConfigTransformer::from_worker_config(props);
    if (!transformer) {
      out.errors.push_back(transformer.error().to_string());
    } else {
      for (const auto& u : transformer.value()->unresolved(props)) out.errors.push_back(u.error.to_string());
    }
  }

  if (!report.config) return out;
  // What `run` derives next; its failures are configuration errors too.
  auto sec = rest::rest_security_from(*report.config, kafka_opts);
  if (!sec) {
    out.errors.push_back(sec.error().to_string());
  } else {
    out.security = std::move(sec).value();
    for (const auto& w : out.security.warnings) out.warnings.push_back(w);
  }
  try {
    out.herder = herder::herder_config_from(*report.config);
    out.herder.rest_client_tls = out.security.client_tls;
  } catch (const config::ConfigError& e) {
    out.errors.emplace_back(e.what());
  } catch (const std::exception& e) {
    out.errors.push_back(std::string("cannot map the worker config: ") + e.what());
  }
  if (out.errors.empty()) out.config = std::move(report.config);
  return out;
}

bool start_logging(const std::string& cmd, const config::WorkerConfig& wc, const std::vector<std::string>& from_env,
                   const rest::RestSecurity& security, std::shared_ptr<ReopenableFileSink>& log_file) {
  if (const auto& lf = wc.get_string("log.file"); !lf.empty()) {
    try {
      log_file = log_to_file(lf);
    } catch (const std::exception& e) {
      std::cerr << cmd << ": cannot open log.file " << lf << ": " << e.what() << "\n";
      return false;
    }
  }
  std::string level = wc.log_level();
  std::transform(level.begin(), level.end(), level.begin(), [](unsigned char c) { return std::tolower(c); });
  if (level == "warning") level = "warn";
  if (auto lvl = spdlog::level::from_str(level); lvl != spdlog::level::off || level == "off") spdlog::set_level(lvl);
  // log.format: text | json; every line carries the worker id and generation.
  (void)metrics::configure_logging(level, wc.log_format());
  // /admin/loggers starts from log.level (root); librdkafka's lines at most INFO.
  metrics::LoggerLevels::instance().reset(spdlog::get_level());
  for (const auto& key : from_env) spdlog::info("worker property {} set from the environment", key);
  for (const auto& w : wc.warnings()) spdlog::warn("config: {}", w);
  // Connect logs its config values at startup; secrets read "[hidden]".
  spdlog::info("{}", wc.describe());
  for (const auto& w : security.warnings) spdlog::warn("rest: {}", w);
  return true;
}

std::unique_ptr<rest::RestServer> make_rest_server(const config::WorkerConfig& wc, const rest::RestSecurity& security,
                                                   rest::HerderApi& herder,
                                                   const std::shared_ptr<metrics::WorkerMetrics>& metrics) {
  rest::RestServerOptions ro;
  ro.listeners = wc.listeners();
  security.apply_to(ro);
#ifdef KC_VERSION
  ro.version = KC_VERSION;
#endif
#ifdef KC_GIT_COMMIT
  ro.commit = KC_GIT_COMMIT;
#endif
  auto server = std::make_unique<rest::RestServer>(ro, herder);
  rest::add_observability_routes(*server, herder, metrics);  // GET /metrics, GET /rebalances
  rest::add_task_reconfiguration_route(*server, herder);  // POST /connectors/{c}/tasks (internal)
  rest::add_logger_routes(*server, herder);  // /admin/loggers (KIP-495, KIP-976)
  rest::ConsoleOptions console;
  console.ui_enabled = wc.get_bool("rest.ui.enable");
  rest::add_console_routes(*server, herder, metrics, console);  // GET /ui, /worker, /cluster
  return server;
}

bool check_brokers_or_report(const std::string& cmd, const herder::HerderConfig& hc,
                             const std::vector<std::string>& topics, const std::string& group_id) {
  constexpr int kBrokerCheckAttemptMs = 8000;
  constexpr int kBrokerCheckRetryBoundMs = 60000;
  storage::ClientProps props = hc.client_props;
  props["bootstrap.servers"] = hc.bootstrap_servers;
  storage::BrokerCheckOptions bo;
  bo.attempt_timeout_ms = kBrokerCheckAttemptMs;
  bo.retry_bound_ms = kBrokerCheckRetryBoundMs;
  bo.retry_backoff_ms = 1000;
  auto verdict = storage::wait_for_brokers(
      props, topics, group_id, bo, [&bo](int attempt, const storage::BrokerCheckVerdict& v, int attempt_ms) {
        // The attempt's own time counts too: attempts start attempt_ms +
        // retry_backoff_ms apart, not retry_backoff_ms.
        spdlog::warn("broker check attempt {} ({}) took {} ms: {}; next attempt in {} ms, {} ms after this one "
                     "began (for up to {} s in all)",
                     attempt, storage::broker_check_cause_name(v.cause), attempt_ms, v.message, bo.retry_backoff_ms,
                     attempt_ms + bo.retry_backoff_ms, bo.retry_bound_ms / 1000);
      });
  if (!verdict.ok()) {
    const auto cause = storage::broker_check_cause_name(verdict.cause);
    spdlog::error("cannot use the Kafka cluster ({}): {}", cause, verdict.message);
    spdlog::default_logger()->flush();
    std::cerr << cmd << ": cannot use the Kafka cluster (" << cause << "): " << verdict.message << std::endl;
    return false;
  }
  spdlog::info("broker check: {} answered with metadata", hc.bootstrap_servers);
  return true;
}

void watch_sighup(boost::asio::signal_set& hup, std::shared_ptr<ReopenableFileSink> log_file, const std::string& cmd) {
  hup.async_wait([&hup, log_file, cmd](const boost::system::error_code& ec, int) {
    if (ec) return;
    if (log_file) {
      try {
        log_file->reopen();
        spdlog::info("SIGHUP: reopened log file {}", log_file->path());
      } catch (const std::exception& e) {
        std::cerr << cmd << ": SIGHUP: cannot reopen " << log_file->path() << ": " << e.what() << "\n";
      }
    } else {
      spdlog::info("SIGHUP ignored (no log.file to reopen)");
    }
    watch_sighup(hup, log_file, cmd);
  });
}

}  // namespace kc::cmd
