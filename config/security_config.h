#pragma once
// TLS settings of the worker's Kafka clients, read from the worker properties
// under Kafka's names (ssl.truststore.*, ssl.keystore.*, ssl.key.password,
// ssl.endpoint.identification.algorithm; KIP-651 PEM stores) and librdkafka's
// (ssl.ca.location, ssl.certificate.location, ssl.key.location, ssl.*.pem),
// and their translation to librdkafka's names for every librdkafka client.
//
// Only PEM is supported: JKS and PKCS12 store types are refused with a clear
// error. Unlike Kafka (default JKS), an unset store type means PEM.
// `security.protocol` is read as plain text here (SSL or SASL_SSL = TLS on);
// its validation lives with the SASL settings.
//
// Runs once at startup (any thread); the results are plain values.

#include <map>
#include <string>
#include <string_view>

#include "config/properties.h"

namespace kc::config {

/// One PEM input of TlsSettings: a file or inline text, and the key it came from.
struct PemSetting {
  std::string file;  ///< PEM file path; empty = not from a file
  std::string pem;   ///< inline PEM text; empty = not inline
  std::string key;   ///< the property that gave it, e.g. "ssl.truststore.location"

  /// True when neither a file nor inline text is given.
  [[nodiscard]] bool empty() const { return file.empty() && pem.empty(); }
};

/// The group client's TLS settings (Kafka's SslConfigs, PEM only).
struct TlsSettings {
  bool enabled = false;     ///< security.protocol is SSL or SASL_SSL
  PemSetting ca;            ///< trusted CAs; empty = the system trust store
  PemSetting certificate;   ///< client certificate chain; empty = none
  PemSetting key;           ///< its private key (set exactly when `certificate` is)
  std::string key_password;     ///< ssl.key.password; empty = key not encrypted
  bool verify_hostname = true;  ///< ssl.endpoint.identification.algorithm: https (default) vs ""
};

/// True when `security_protocol` (trimmed, any case) is SSL or SASL_SSL.
bool tls_enabled(std::string_view security_protocol);

/// Reads the TLS settings from worker properties `props` (unprefixed keys).
/// When security.protocol is not SSL/SASL_SSL returns {enabled = false}
/// without looking at ssl.* (Kafka ignores them then too). Otherwise:
///   - CA: ssl.truststore.location or ssl.truststore.certificates (with
///     ssl.truststore.type PEM or unset), or ssl.ca.location / ssl.ca.pem;
///   - client certificate and key: ssl.keystore.location (one PEM file with
///     the key and the certificate chain), or ssl.keystore.certificate.chain
///     + ssl.keystore.key (inline; ssl.keystore.type PEM or unset), or
///     ssl.certificate.location/.pem + ssl.key.location/.pem;
///   - ssl.key.password; ssl.endpoint.identification.algorithm https|""
///     (librdkafka's "none" also means off).
/// Throws ConfigError naming the key: a store type other than PEM ("only PEM
/// is supported"); two keys giving the same thing; a certificate without a
/// key or the reverse; a file that does not exist, is a directory or cannot
/// be read (names the key and the file); an unknown endpoint identification
/// algorithm.
TlsSettings tls_settings_from(const Properties& props);

/// `props` (a librdkafka client's properties, unprefixed) with Kafka's ssl.*
/// names translated to librdkafka's: ssl.truststore.location ->
/// ssl.ca.location, ssl.truststore.certificates -> ssl.ca.pem,
/// ssl.keystore.location -> ssl.certificate.location + ssl.key.location (the
/// same PEM file), ssl.keystore.certificate.chain -> ssl.certificate.pem,
/// ssl.keystore.key -> ssl.key.pem, ssl.endpoint.identification.algorithm ""
/// -> "none". Java-only keys librdkafka does not know (store types and
/// passwords, ssl.protocol, ssl.enabled.protocols, manager algorithms,
/// ssl.provider, ...) are dropped. librdkafka's own names and every other
/// key pass through unchanged; a librdkafka name wins over the Kafka name it
/// would come from.
std::map<std::string, std::string> librdkafka_ssl_config(const std::map<std::string, std::string>& props);

}  // namespace kc::config
