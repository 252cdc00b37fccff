#pragma once
// TLS for the REST API: the `https` listeners (server side) and the client
// that forwards requests to other workers (RestServer's forwarding and
// herder::post_internal), over Boost.Asio's SSL stream on OpenSSL. PEM only.
//
// Settings follow Kafka Connect's SSLUtils: the keys are read under the
// prefix `listeners.https.` (admin listeners: `admin.listeners.https.`) if
// ANY key with that prefix is present, otherwise from the top-level `ssl.*`
// keys (AbstractConfig.valuesWithPrefixAllOrNothing). The client side uses
// the same settings as the https listener, as Connect's RestClient does.
//
// Built once at startup (any thread); a TlsContext is read-only afterwards
// and shared by the REST io thread and the herder's pool threads.

#include <map>
#include <memory>
#include <string>
#include <string_view>

#include <boost/asio/ssl/context.hpp>

#include "common/result.h"

typedef struct ssl_st SSL;

namespace kc::rest {

/// `ssl.client.auth` (Kafka's BrokerSecurityConfigs): whether an https
/// listener asks clients for a certificate.
enum class ClientAuth {
  None,       ///< no certificate requested (default)
  Requested,  ///< asked for; a client without one is still admitted, a bad one is refused
  Required,   ///< a client without a certificate trusted by the truststore is refused
};

/// PEM settings of one https listener (or of the forwarding client). Empty
/// strings mean "not set". Each field remembers nothing else: `prefix` says
/// where the keys were read, so errors can name the exact key.
struct TlsSettings {
  std::string prefix;                      ///< "listeners.https.", "admin.listeners.https." or "" (top-level ssl.*)
  std::string keystore_type;               ///< ssl.keystore.type; only "PEM" (or unset) is accepted
  std::string keystore_location;           ///< ssl.keystore.location: PEM file with the private key and certificate chain
  std::string keystore_certificate_chain;  ///< ssl.keystore.certificate.chain: PEM text of the chain
  std::string keystore_key;                ///< ssl.keystore.key: PEM text of the private key
  std::string key_password;                ///< ssl.key.password: passphrase of an encrypted key
  std::string truststore_type;             ///< ssl.truststore.type; only "PEM" (or unset)
  std::string truststore_location;         ///< ssl.truststore.location: PEM file of trusted CA certificates
  std::string truststore_certificates;     ///< ssl.truststore.certificates: PEM text of trusted CAs
  ClientAuth client_auth = ClientAuth::None;                ///< ssl.client.auth
  std::string endpoint_identification_algorithm = "https";  ///< ssl.endpoint.identification.algorithm; "" = no host check

  /// Full key name for messages, e.g. key("ssl.keystore.location") →
  /// "listeners.https.ssl.keystore.location".
  [[nodiscard]] std::string key(std::string_view ssl_key) const { return prefix + std::string(ssl_key); }
  /// True when a private key and certificate are configured.
  [[nodiscard]] bool has_keystore() const {
    return !keystore_location.empty() || !keystore_certificate_chain.empty() || !keystore_key.empty();
  }
};

/// Reads TlsSettings from worker properties (originals) with Connect's
/// all-or-nothing prefix rule: keys under `prefix` if any exists, else the
/// top-level ssl.* keys. Errors (naming the key): a keystore/truststore type
/// other than PEM, an ssl.client.auth other than none|requested|required.
Result<TlsSettings> tls_settings_from(const std::map<std::string, std::string>& originals, std::string_view prefix);

/// An OpenSSL context built from TlsSettings: certificates and keys loaded
/// and checked once. Thread-safe to share for creating streams.
class TlsContext {
 public:
  /// Server side of an https listener: needs a keystore; trusts the
  /// truststore (or the system CAs) for client certificates when
  /// ssl.client.auth is requested or required. Errors name the key and the
  /// file with OpenSSL's reason: unreadable file, not PEM, wrong password,
  /// key that does not match the certificate, missing keystore.
  static Result<std::shared_ptr<TlsContext>> server(const TlsSettings& settings);
  /// Client side (forwarding to https workers): verifies the peer with the
  /// truststore (or the system CAs when none is set); presents the keystore
  /// when one is configured. Same errors as server(), except that no
  /// keystore is fine.
  static Result<std::shared_ptr<TlsContext>> client(const TlsSettings& settings);

  /// The Asio context to build ssl_streams from. Streams only read it after
  /// construction, so it is handed out from a const context.
  boost::asio::ssl::context& native() const { return ctx_; }
  /// Client side: whether the server's certificate must match the host name
  /// (ssl.endpoint.identification.algorithm=https, Connect's default).
  [[nodiscard]] bool verify_host_name() const { return verify_host_; }

  /// Prepares a client SSL handle before its handshake: SNI (names only)
  /// and, when verify_host_name(), the expected host name or IP address.
  /// Returns an error when OpenSSL refuses the host.
  Status prepare_client(SSL* ssl, const std::string& host) const;

  explicit TlsContext(boost::asio::ssl::context::method m) : ctx_(m) {}

 private:
  mutable boost::asio::ssl::context ctx_;
  bool verify_host_ = true;
};

}  // namespace kc::rest
