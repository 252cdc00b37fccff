#pragma once
// The one path from a worker properties file to a checked worker
// configuration, shared by `kconnectd run` and `kconnectd validate`, so
// that validate accepts exactly what run would start with: the file, the
// CONNECT_* environment overrides, the declared options and their
// cross-checks (config::WorkerConfig::validate), the converter classes,
// the REST security files and the herder mapping.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/signal_set.hpp>

#include "cmd/kconnectd/log_file.h"
#include "config/worker_config.h"
#include "worker/api/herder_api.h"
#include "worker/herder/herder_config.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/rest/rest_security.h"
#include "worker/rest/rest_server.h"

namespace kc::cmd {

/// What load_worker() checks beyond what `run` needs.
struct LoadOptions {
  /// Also resolve every `${provider:[path:]key}` placeholder of the worker
  /// config through its config providers, and report each one that does
  /// not resolve, naming the key and the provider (`validate --resolve`).
  bool resolve = false;
  /// Distributed (`run`) or standalone (`standalone`): which options are
  /// required (config::WorkerConfig::validate).
  config::WorkerMode mode = config::WorkerMode::Distributed;
};

/// A loaded worker configuration and everything found wrong with it.
struct LoadedWorker {
  /// Every problem, each a complete sentence naming the key (or the file):
  /// unreadable file or a directory, missing / wrong type / out of range /
  /// conflicting options, unknown converter classes, REST security files,
  /// and with LoadOptions::resolve the placeholders.
  std::vector<std::string> errors;
  /// Findings that do not stop a worker: unknown keys (with a did-you-mean
  /// suggestion), suspicious combinations, REST security notes.
  std::vector<std::string> warnings;
  /// Keys a CONNECT_* environment variable set, in application order
  /// (names only: values may be secrets).
  std::vector<std::string> from_env;
  /// Set when `errors` is empty.
  std::optional<config::WorkerConfig> config;
  herder::HerderConfig herder;  ///< valid when `config` is set; rest_client_tls filled in
  rest::RestSecurity security;  ///< valid when `config` is set

  [[nodiscard]] bool ok() const { return errors.empty(); }
};

/// Loads `path` (Java properties), applies the CONNECT_* overrides of
/// `envp` (config::apply_env_overrides; null = none), and checks it all,
/// collecting every error instead of stopping at the first. `kafka_opts`
/// is $KAFKA_OPTS (a -Djava.security.auth.login.config JAAS file for REST
/// basic auth). Reads local files (the properties, PEM, JAAS and
/// credentials files, and with `opts.resolve` the providers' files);
/// never throws for a bad configuration.
LoadedWorker load_worker(const std::string& path, char** envp, const std::string& kafka_opts,
                         const LoadOptions& opts = {});

/// The errors for the worker's `key.converter`, `value.converter` and
/// `header.converter` (given or default) that name no known converter, or
/// whose `<key>.*` settings the converter refuses:
/// "key.converter: 'NoSuchClass' is not a converter: Class NoSuchClass could
/// not be found. (expected one of ...)". Connect would fail at startup on
/// such a class; we say so before anything starts.
std::vector<std::string> converter_errors(const config::Properties& props);

/// The logging a worker runs with, from its loaded configuration (shared by
/// `run` and `standalone`): log.file (from here on lines go to the file),
/// log.level, log.format, /admin/loggers starting from log.level, then the
/// first lines: which keys the environment set, the config warnings, the
/// config dump (secrets hidden) and the REST security notes. Returns false
/// after printing "<cmd>: cannot open log.file <path>: <why>" to stderr.
/// `log_file` receives the file sink (null without log.file), for SIGHUP.
bool start_logging(const std::string& cmd, const config::WorkerConfig& wc, const std::vector<std::string>& from_env,
                   const rest::RestSecurity& security, std::shared_ptr<ReopenableFileSink>& log_file);

/// The REST server of a worker on `listeners` with its security settings
/// and every route both modes serve: Connect's API (RestServer), GET
/// /metrics and /rebalances, POST /connectors/{c}/tasks (internal),
/// /admin/loggers, the web console (GET /ui, /worker, /cluster; rest.ui.enable).
/// Not started yet. `herder` and `metrics` must outlive it.
std::unique_ptr<rest::RestServer> make_rest_server(const config::WorkerConfig& wc, const rest::RestSecurity& security,
                                                   rest::HerderApi& herder,
                                                   const std::shared_ptr<metrics::WorkerMetrics>& metrics);

/// The startup broker check (worker/storage/broker_check.h) with the
/// worker's client settings: transient causes are retried (one warning per
/// attempt, 8 s each, 1 s apart, for up to 60 s); a fatal cause, or one
/// that ran out of retries, prints "<cmd>: cannot use the Kafka cluster
/// (<cause>): <message>" to stderr and returns false. `topics` and
/// `group_id` are what the check asks the metadata of (none in standalone
/// mode). Blocking.
bool check_brokers_or_report(const std::string& cmd, const herder::HerderConfig& hc,
                             const std::vector<std::string>& topics, const std::string& group_id);

/// Arms `hup` (SIGHUP, logrotate) to reopen `log_file` on every signal, or
/// to log that there is none; never a shutdown. Runs on `hup`'s executor;
/// re-arms itself until `hup` is cancelled. `cmd` prefixes the stderr line
/// of a failed reopen.
void watch_sighup(boost::asio::signal_set& hup, std::shared_ptr<ReopenableFileSink> log_file, const std::string& cmd);

}  // namespace kc::cmd
