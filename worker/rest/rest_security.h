#pragma once
// Everything the REST layer needs for security, built once at startup from
// the worker config (issue 13 part 3): the https listener contexts, the TLS
// client for forwarding to https workers, basic authentication, the admin
// listeners and rest.health.auth. Errors are for the operator and name the
// key (and file) at fault; cmd `run` prints them and exits 1.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "config/worker_config.h"

namespace kc::rest {

class TlsContext;
class BasicAuthenticator;
struct RestServerOptions;

/// The worker's REST security settings, ready to hand to RestServerOptions
/// (apply_to) and HerderConfig (client_tls).
struct RestSecurity {
  std::shared_ptr<TlsContext> https_tls;        ///< for https `listeners`; null when none is https
  std::shared_ptr<TlsContext> admin_https_tls;  ///< for https `admin.listeners`; null when none is https
  /// Client for https peers: built from the same settings as the https
  /// listener (listeners.https.ssl.* else ssl.*), as Connect's RestClient.
  /// Always built (peers may be https even when this worker is not), unless
  /// its settings are unusable, in which case https peers are unreachable
  /// and `warnings` says why.
  std::shared_ptr<TlsContext> client_tls;
  std::shared_ptr<const BasicAuthenticator> basic_auth;  ///< null = no authentication
  std::optional<std::vector<std::string>> admin_listeners;  ///< admin.listeners (null = unset)
  bool health_auth = true;                                  ///< rest.health.auth
  std::vector<std::string> warnings;  ///< for the log: ignored extension classes, open credentials file ...

  /// Copies the settings into `opts`.
  void apply_to(RestServerOptions& opts) const;
};

/// Builds RestSecurity from `wc`:
/// - https listeners: TLS settings under `listeners.https.` (else `ssl.*`),
///   admin https listeners under `admin.listeners.https.` (else `ssl.*`);
/// - basic auth when rest.basic.auth.credentials.file is set (ours), or when
///   rest.extension.classes lists Connect's BasicAuthSecurityRestExtension:
///   then the JAAS file is java.security.auth.login.config (worker key), or
///   the -Djava.security.auth.login.config=... in `kafka_opts` (the
///   KAFKA_OPTS environment variable, as Connect's start scripts pass it);
/// - admin.listeners, rest.health.auth.
/// Errors: bad or missing PEM (key and file named), bad ssl.client.auth,
/// JAAS file missing or without a usable KafkaConnect entry, unreadable
/// credentials file, basic auth extension without any JAAS file.
Result<RestSecurity> rest_security_from(const config::WorkerConfig& wc, const std::string& kafka_opts = "");

}  // namespace kc::rest
