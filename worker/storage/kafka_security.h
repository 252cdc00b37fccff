#pragma once
// TLS and SASL settings of kconnectd's own Kafka connections
// (protocol/kafka Connection: the group client and group_admin's ApiVersions
// probe) from the same settings the worker hands its librdkafka clients:
// security.protocol, ssl.* (Kafka's or librdkafka's names) and sasl.*.
// So every connection the worker opens to a broker speaks the same
// security protocol, as Kafka's clients of one worker do.
//
// Pure functions, any thread; files are only checked here (read later by
// make_tls_context).

#include <optional>

#include "common/result.h"
#include "config/jaas.h"
#include "config/security_config.h"
#include "protocol/kafka/sasl.h"
#include "protocol/kafka/tls_options.h"
#include "worker/storage/kafka_client.h"

namespace kc::storage {

/// The security of one Connection: TLS when security.protocol is SSL or
/// SASL_SSL, SASL when it is SASL_PLAINTEXT or SASL_SSL.
struct ConnectionSecurity {
  std::optional<kafka::TlsOptions> tls;     ///< nullopt = plaintext
  std::optional<kafka::SaslSettings> sasl;  ///< nullopt = no authentication
};

/// The Connection's TlsOptions for `tls` (config::tls_settings_from);
/// nullopt when TLS is off. PEM sources keep the config key as their label,
/// so TLS errors name the key and the file.
std::optional<kafka::TlsOptions> connection_tls_options(const config::TlsSettings& tls);

/// The Connection's SaslSettings for `creds` (config::sasl_credentials).
/// Error (field "sasl.mechanism") for a mechanism the Connection does not
/// speak: "<name> is not supported by kconnectd's group client; use PLAIN,
/// SCRAM-SHA-256 or SCRAM-SHA-512".
Result<kafka::SaslSettings> connection_sasl_settings(const config::SaslClientCredentials& creds);

/// Both, from client properties as handed to librdkafka (placeholders
/// already resolved; sasl.jaas.config or sasl.username/sasl.password).
/// Errors: what config::tls_settings_from throws (a non-PEM store type, a
/// missing or unreadable file, a certificate without its key ...) and what
/// config::sasl_credentials returns (unsupported mechanism, missing
/// credentials, bad JAAS text), each naming the key.
Result<ConnectionSecurity> connection_security(const ClientProps& props);

}  // namespace kc::storage
