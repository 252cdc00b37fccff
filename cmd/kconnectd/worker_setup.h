#pragma once
// The one path from a worker properties file to a checked worker
// configuration, shared by `kconnectd run` and `kconnectd validate`, so
// that validate accepts exactly what run would start with: the file, the
// CONNECT_* environment overrides, the declared options and their
// cross-checks (config::WorkerConfig::validate), the converter classes,
// the REST security files and the herder mapping.

#include <optional>
#include <string>
#include <vector>

#include "config/worker_config.h"
#include "worker/herder/herder_config.h"
#include "worker/rest/rest_security.h"

namespace kc::cmd {

/// What load_worker() checks beyond what `run` needs.
struct LoadOptions {
  /// Also resolve every `${provider:[path:]key}` placeholder of the worker
  /// config through its config providers, and report each one that does
  /// not resolve, naming the key and the provider (`validate --resolve`).
  bool resolve = false;
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

}  // namespace kc::cmd
