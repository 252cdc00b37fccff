// `kconnectd run FILE`: run one distributed worker.
//
// Startup: load_worker() (worker_setup.h, the path `kconnectd validate`
// checks): load the properties file, apply CONNECT_* environment overrides,
// validate into WorkerConfig, check the converter classes and build the
// REST security settings (https certificates, basic auth credentials); a bad
// config prints every problem, each naming its key or the file, and exits 1;
// then the broker check (worker/storage/broker_check.h), before anything
// else uses the broker: one librdkafka client with the worker's own client
// settings asks for metadata and the failure is classified. A fatal cause
// (TLS handshake, untrusted certificate, host name mismatch, plaintext
// against a TLS port or the reverse, SASL required, SASL mechanism not
// enabled, authentication failed, not authorized) exits 1 within 10 s
// with one line "kconnectd run: cannot use the Kafka cluster (<cause>):
// <message>"; a transient one (unreachable, no answer) is retried, one
// warning per attempt (an attempt lasts at most kBrokerCheckAttemptMs, a
// second apart), for at most kBrokerCheckRetryBoundMs (60 s), then exits 1
// the same way; then
// start the DistributedHerder (stores, runtime, group membership) and the
// REST server on `listeners`.
//
// Shutdown (STYLE 8): the first SIGTERM/SIGINT stops admitting REST writes,
// stops connectors and tasks within task.shutdown.graceful.timeout.ms
// (offsets committed), flushes statuses, sends LeaveGroup, stops the REST
// server and exits 0. A second signal while that runs exits at once with
// 128 + signal (130 for SIGINT, 143 for SIGTERM). A plugin stuck in a
// call cannot hold the exit: its thread is abandoned after the graceful
// timeout, and if the shutdown (drain excluded) has not ended within
// task.shutdown.graceful.timeout.ms + worker.sync.timeout.ms + 5 s (the
// status flush and LeaveGroup), the process exits with its normal code
// without joining the stuck threads (kShutdownMarginMs). By default
// (shutdown.drain.enable=true), and on POST /admin/drain, the worker first
// drains: its connectors and tasks move to the other workers (bounded by
// shutdown.drain.timeout.ms), then it shuts down as above. A lone worker,
// or one that owns nothing, finds nothing to hand over and stops at once.
//
// Static membership (group.instance.id, KIP-345): SIGTERM sends no
// LeaveGroup, as Kafka consumers do, so a restart within session.timeout.ms
// causes no rebalance; `--leave-on-shutdown` (or
// static.membership.leave.on.shutdown=true) sends it. A static member drains
// on a signal only when it leaves: one that keeps its identity comes back
// to its own work, and a drain would move that work twice. FENCED_INSTANCE_ID (another process
// took the same id) is a fatal group error: tasks stop, exit status 1.
#include <algorithm>
#include <atomic>
#include <cctype>
#include <csignal>
#include <cstdlib>
#include <chrono>
#include <functional>
#include <future>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

#include "cmd/kconnectd/commands.h"
#include "cmd/kconnectd/log_file.h"
#include "cmd/kconnectd/worker_setup.h"
#include "config/env_overrides.h"
#include "config/properties.h"
#include "config/worker_config.h"
#include "worker/plugins/plugin_host.h"
#include "worker/rest/admin_routes.h"
#include "worker/rest/console_routes.h"
#include "worker/rest/logger_routes.h"
#include "worker/metrics/log_levels.h"
#include "worker/herder/distributed_herder.h"
#include "worker/herder/herder_config.h"
#include "worker/rest/observability.h"
#include "worker/metrics/log_context.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/rest/rest_security.h"
#include "worker/rest/rest_server.h"
#include "worker/storage/broker_check.h"

extern char** environ;

namespace kc::cmd {

namespace {

int run_worker(const std::string& path, bool leave_on_shutdown) {
  // The worker's text format from the first line on (log.format and
  // log.level replace it once the properties are read), not spdlog's own.
  (void)metrics::configure_logging("info", "text");
  // 1. Configuration: the path `kconnectd validate` checks (worker_setup.h),
  // every error printed, not only the first.
  std::optional<config::WorkerConfig> wc;
  herder::HerderConfig hc;
  rest::RestSecurity security;
  // Logged once log.file, log.level and log.format are applied (below), so
  // that the first line has the same format and sink as every other.
  std::vector<std::string> from_env;
  {
    const char* kafka_opts = std::getenv("KAFKA_OPTS");
    auto loaded = load_worker(path, environ, kafka_opts ? kafka_opts : "");
    from_env = std::move(loaded.from_env);
    if (!loaded.ok()) {
      // The warnings too (a misspelled key's did-you-mean), as validate
      // prints them: the operator sees every mistake in one attempt.
      for (const auto& e : loaded.errors) std::cerr << "kconnectd run: invalid configuration: " << e << "\n";
      for (const auto& w : loaded.warnings) std::cerr << "kconnectd run: warning: " << w << "\n";
      return 1;
    }
    wc = std::move(loaded.config);
    hc = std::move(loaded.herder);
    security = std::move(loaded.security);
    if (leave_on_shutdown) hc.leave_group_on_shutdown = true;
  }
  // log.file (SIGHUP reopens it, below), log.level, log.format, first lines.
  std::shared_ptr<ReopenableFileSink> log_file;
  if (!start_logging("kconnectd run", *wc, from_env, security, log_file)) return 1;

  // Connector plugins of plugin.path join the built-ins; a refused file is
  // one log line and does not stop the worker.
  kc::connectors::load_plugins(wc->plugin_path(), kc::connectors::PluginRegistry::builtin());

  // Fail fast, and name the cause (issue 27): before the stores, the
  // runtime or the group client use the broker.
  if (!check_brokers_or_report("kconnectd run", hc, {hc.config_topic, hc.offset_topic, hc.status_topic}, hc.group_id))
    return 1;

  // Shutdown, from a signal, POST /admin/drain or a fatal group error; runs
  // on sig_io. Declared before the herder, whose io thread may post to it.
  boost::asio::io_context sig_io;
  std::function<void(bool drain)> begin_shutdown;
  int exit_code = 0;

  // 2. Herder, then REST. One metrics registry for herder, runtime and GET /metrics.
  hc.metrics = std::make_shared<metrics::WorkerMetrics>();
  // A fatal group error (TLS failure, authorization, no common version)
  // stops the worker with status 1 instead of leaving it outside the group.
  hc.on_fatal = [&sig_io, &begin_shutdown, &exit_code](const std::string& reason) {
    boost::asio::post(sig_io, [&begin_shutdown, &exit_code, reason] {
      std::cerr << "kconnectd run: group membership failed: " << reason << "\n";
      spdlog::error("group membership failed, stopping the worker: {}", reason);
      exit_code = 1;
      if (begin_shutdown) begin_shutdown(false);
    });
  };
  auto herder = std::make_unique<herder::DistributedHerder>(hc);
  if (auto st = herder->start(); !st) {
    std::cerr << "kconnectd run: cannot start the worker: " << st.error().to_string() << "\n";
    return 1;
  }
  auto server = make_rest_server(*wc, security, *herder, hc.metrics);
  kc::rest::add_drain_routes(*server, *herder, hc.worker_id, [&] {
    boost::asio::post(sig_io, [&] { begin_shutdown(true); });
  });
  if (auto st = server->start(); !st) {
    std::cerr << "kconnectd run: cannot start the REST server: " << st.error().to_string() << "\n";
    herder->stop();
    return 1;
  }
  spdlog::info("[{}] worker running; REST on {} (advertised {})", hc.worker_id, server->url(), hc.advertised_url);

  // 3. Signals.
  boost::asio::signal_set signals(sig_io, SIGINT, SIGTERM);
  // SIGHUP (logrotate): reopen log.file; never a shutdown.
  boost::asio::signal_set hup(sig_io, SIGHUP);
  watch_sighup(hup, log_file, "kconnectd run");
  std::thread stopper;
  bool stopping = false;
  const int drain_timeout_ms = wc->shutdown_drain_timeout_ms();
  // Bound of a shutdown after the drain: a stuck plugin thread is joined by
  // nobody past it (see the file comment).
  constexpr int64_t kShutdownMarginMs = 5000;
  const int64_t shutdown_bound_ms =
      static_cast<int64_t>(hc.task_shutdown_graceful_timeout_ms) + hc.worker_sync_timeout_ms + kShutdownMarginMs;
  boost::asio::steady_timer exit_timer(sig_io);
  std::atomic<bool> stop_done{false};
  auto arm_exit_timer = [&] {
    boost::asio::post(sig_io, [&] {
      exit_timer.expires_after(std::chrono::milliseconds(shutdown_bound_ms));
      exit_timer.async_wait([&](const boost::system::error_code& ec) {
        if (ec || stop_done.load()) return;
        spdlog::error("shutdown did not end within {} ms: threads are stuck in plugin code; exiting without "
                      "joining them",
                      shutdown_bound_ms);
        spdlog::default_logger()->flush();
        std::_Exit(exit_code);
      });
    });
  };
  begin_shutdown = [&](bool drain) {
    if (stopping) return;
    stopping = true;
    if (!drain) arm_exit_timer();
    stopper = std::thread([&, drain] {
      if (drain) {
        // Hand the work over first (bounded by shutdown.drain.timeout.ms;
        // the herder always answers, the wait bound is a safety net).
        auto over = std::make_shared<std::promise<void>>();
        herder->drain(drain_timeout_ms, [over](bool, const std::string&) { over->set_value(); });
        over->get_future().wait_for(std::chrono::milliseconds(drain_timeout_ms + 5000));
        arm_exit_timer();
      }
      herder->stop();  // stops admitting writes, stops tasks, commits offsets, LeaveGroup
      server->stop();
      if (const size_t stuck = herder->stuck_plugin_threads(); stuck > 0) {
        // Offsets are committed, statuses flushed, the group left: only
        // plugin code that may never return is left to wait for.
        spdlog::warn("{} thread(s) still stuck in plugin code; exiting without joining them", stuck);
        spdlog::default_logger()->flush();
        std::_Exit(exit_code);
      }
      // The destructors join the runtime's threads: under the exit timer too.
      server.reset();
      herder.reset();
      stop_done = true;
      boost::asio::post(sig_io, [&] {
        signals.cancel();
        hup.cancel();
        sig_io.stop();
      });
    });
  };
  std::function<void(const boost::system::error_code&, int)> on_signal =
      [&](const boost::system::error_code& ec, int signo) {
        if (ec) return;
        if (stopping) {
          spdlog::warn("second signal {}: exiting now", signo);
          std::_Exit(128 + signo);
        }
        const bool drain = wc->shutdown_drain_enable() && hc.leave_group_on_shutdown;
        // Before the log line operators and tests wait for: no write is
        // admitted once it shows (a drain still needs them while it runs).
        if (!drain) herder->stop_admitting_writes();
        spdlog::info("signal {}: shutting down{} (send again to force)", signo,
                     drain ? " after a drain (shutdown.drain.enable)" : "");
        signals.async_wait(on_signal);
        begin_shutdown(drain);
      };
  signals.async_wait(on_signal);
  sig_io.run();
  if (stopper.joinable()) stopper.join();
  spdlog::info("[{}] worker stopped", hc.worker_id);
  return exit_code;
}

}  // namespace

void register_run(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("run", "Run a distributed worker from a worker.properties file");
  auto file = std::make_shared<std::string>();
  sub->add_option("FILE", *file, "worker properties file (CONNECT_* environment variables override it)")
      ->required();
  auto leave = std::make_shared<bool>(false);
  sub->add_flag("--leave-on-shutdown", *leave,
                "with group.instance.id (static membership): send LeaveGroup on SIGTERM/SIGINT, so the work moves at "
                "once instead of waiting up to session.timeout.ms for this worker to return");
  sub->callback([&exit_code, file, leave] { exit_code = run_worker(*file, *leave); });
}

}  // namespace kc::cmd
