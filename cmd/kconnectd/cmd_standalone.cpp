// `kconnectd standalone WORKER.properties [CONNECTOR.properties|CONNECTOR.json ...]`:
// one worker with no group (Kafka Connect's `connect-standalone`).
//
// Startup: load_worker() in standalone mode (worker_setup.h: the same
// properties file, CONNECT_* overrides and checks as `run`, except that
// group.id and the storage topics are not needed and
// offset.storage.file.filename is), the same logging, plugin.path loading
// and broker check as `run`; then every connector file is read
// (connector_files.h; a bad file exits 1 naming it, before anything
// starts), the StandaloneHerder opens the offset file (a corrupt or
// truncated file, or a read-only directory, exits 1 naming the file and the
// cause), the REST server starts, and each connector is created as POST
// /connectors would (Connect's ConnectStandalone: a connector that cannot
// be created stops the worker, exit 1 naming its file).
//
// Shutdown: SIGTERM/SIGINT stops admitting REST writes, stops connectors
// and tasks within task.shutdown.graceful.timeout.ms (source offsets
// written to the file), stops the REST server and exits 0; a second signal
// exits at once with 128 + signal. SIGHUP reopens log.file.
#include <csignal>
#include <cstdlib>
#include <future>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "cmd/kconnectd/commands.h"
#include "cmd/kconnectd/connector_files.h"
#include "cmd/kconnectd/worker_setup.h"
#include "worker/herder/standalone_herder.h"
#include "worker/metrics/log_context.h"
#include "worker/plugins/plugin_host.h"

extern char** environ;

namespace kc::cmd {

namespace {

constexpr const char* kCmd = "kconnectd standalone";

int run_standalone(const std::string& worker_path, const std::vector<std::string>& connector_paths) {
  (void)metrics::configure_logging("info", "text");
  // 1. Configuration: the worker file (standalone mode), then every connector file.
  const char* kafka_opts = std::getenv("KAFKA_OPTS");
  LoadOptions lo;
  lo.mode = config::WorkerMode::Standalone;
  auto loaded = load_worker(worker_path, environ, kafka_opts ? kafka_opts : "", lo);
  if (!loaded.ok()) {
    for (const auto& e : loaded.errors) std::cerr << kCmd << ": invalid configuration: " << e << "\n";
    for (const auto& w : loaded.warnings) std::cerr << kCmd << ": warning: " << w << "\n";
    return 1;
  }
  std::vector<rest::PutConnectorRequest> connectors;
  for (const auto& p : connector_paths) {
    auto r = load_connector_file(p);
    if (!r) {
      std::cerr << kCmd << ": invalid connector file: " << r.error().message << "\n";
      return 1;
    }
    connectors.push_back(std::move(r).value());
  }
  const config::WorkerConfig& wc = *loaded.config;
  herder::StandaloneConfig sc;
  sc.herder = std::move(loaded.herder);
  sc.offset_file = wc.offset_storage_file_filename();
  std::shared_ptr<ReopenableFileSink> log_file;
  if (!start_logging(kCmd, wc, loaded.from_env, loaded.security, log_file)) return 1;
  connectors::load_plugins(wc.plugin_path(), connectors::PluginRegistry::builtin());

  // The same broker check as `run`: name the cause before any task uses it.
  if (!check_brokers_or_report(kCmd, sc.herder, {}, "")) return 1;

  // 2. Herder (offset file, runtime), REST, then the connectors of the files.
  sc.herder.metrics = std::make_shared<metrics::WorkerMetrics>();
  auto metrics = sc.herder.metrics;
  auto herder = std::make_unique<herder::StandaloneHerder>(std::move(sc));
  if (auto st = herder->start(); !st) {
    std::cerr << kCmd << ": cannot start the worker: " << st.error().to_string() << "\n";
    return 1;
  }
  auto server = make_rest_server(wc, loaded.security, *herder, metrics);
  if (auto st = server->start(); !st) {
    std::cerr << kCmd << ": cannot start the REST server: " << st.error().to_string() << "\n";
    herder->stop();
    return 1;
  }
  const auto& hc = herder->config().herder;
  for (size_t i = 0; i < connectors.size(); ++i) {
    std::promise<rest::Reply<rest::PutConnectorResult>> p;
    auto f = p.get_future();
    herder->put_connector_config(connectors[i], [&p](rest::Reply<rest::PutConnectorResult> r) { p.set_value(std::move(r)); });
    auto r = f.get();
    if (!r) {
      std::cerr << kCmd << ": failed to create connector for " << connector_paths[i] << ": " << r.error().message
                << "\n";
      server->stop();
      herder->stop();
      return 1;
    }
    spdlog::info("created connector {} from {}", connectors[i].name, connector_paths[i]);
  }
  spdlog::info("[{}] standalone worker running; REST on {} (advertised {})", hc.worker_id, server->url(),
               hc.advertised_url);

  // 3. Signals.
  boost::asio::io_context sig_io;
  boost::asio::signal_set signals(sig_io, SIGINT, SIGTERM);
  boost::asio::signal_set hup(sig_io, SIGHUP);
  watch_sighup(hup, log_file, kCmd);
  std::thread stopper;
  bool stopping = false;
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                              int signo) {
    if (ec) return;
    if (stopping) {
      spdlog::warn("second signal {}: exiting now", signo);
      std::_Exit(128 + signo);
    }
    stopping = true;
    herder->stop_admitting_writes();
    spdlog::info("signal {}: shutting down (send again to force)", signo);
    signals.async_wait(on_signal);
    stopper = std::thread([&] {
      herder->stop();  // stops tasks, writes their offsets to the file
      server->stop();
      if (const size_t stuck = herder->stuck_plugin_threads(); stuck > 0) {
        spdlog::warn("{} thread(s) still stuck in plugin code; exiting without joining them", stuck);
        spdlog::default_logger()->flush();
        std::_Exit(0);
      }
      server.reset();
      herder.reset();
      boost::asio::post(sig_io, [&] {
        signals.cancel();
        hup.cancel();
        sig_io.stop();
      });
    });
  };
  signals.async_wait(on_signal);
  sig_io.run();
  if (stopper.joinable()) stopper.join();
  spdlog::info("standalone worker stopped");
  return 0;
}

}  // namespace

void register_standalone(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "standalone", "Run one worker without a group (Connect's standalone mode)");
  auto worker = std::make_shared<std::string>();
  auto files = std::make_shared<std::vector<std::string>>();
  sub->add_option("WORKER", *worker, "worker properties file (CONNECT_* environment variables override it)")
      ->required();
  sub->add_option("CONNECTOR", *files, "connector config files: Java properties or JSON (created at startup)");
  sub->callback([&exit_code, worker, files] { exit_code = run_standalone(*worker, *files); });
}

}  // namespace kc::cmd
