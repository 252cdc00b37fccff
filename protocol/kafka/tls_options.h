#pragma once
// TLS settings and the OpenSSL client context of the group client's
// Connection (security.protocol SSL / SASL_SSL; Kafka's SslFactory on the
// client side). Everything is PEM: CA certificates, the client certificate
// chain and its private key, each from a file or inline text.
//
// make_tls_context() (connection.h) builds the context from these settings.
// Threading: a TlsContext is built once (any thread) and is then only read;
// one context is shared by the connections of a GroupMember.

#include <memory>
#include <string>


namespace kc::kafka {

/// One PEM input: a file path or inline PEM text (at most one is set).
/// `label` names its origin in error messages, e.g. the config key
/// "ssl.truststore.location"; the protocol layer treats it as opaque text.
struct PemSource {
  std::string file;   ///< path of a PEM file; empty = not from a file
  std::string pem;    ///< inline PEM text; empty = not inline
  std::string label;  ///< where it came from, for errors ("ssl.keystore.key")

  /// True when neither a file nor inline text is given.
  [[nodiscard]] bool empty() const { return file.empty() && pem.empty(); }
};

/// Client-side TLS settings of one Connection (Kafka's ssl.* client configs).
struct TlsOptions {
  /// Trusted CA certificates (ssl.truststore.*). Empty: the system's
  /// default trust store (OpenSSL's default verify paths).
  PemSource ca;
  /// Client certificate chain, leaf first (ssl.keystore.*). Empty: no client
  /// certificate (only brokers without ssl.client.auth=required accept it).
  /// A file may hold the private key too (Kafka's PEM keystore file).
  PemSource certificate;
  /// Private key of `certificate` (PKCS#8 or traditional PEM, optionally
  /// encrypted). Required when `certificate` is set.
  PemSource key;
  /// ssl.key.password: decrypts `key`; empty = the key is not encrypted.
  std::string key_password;
  /// ssl.endpoint.identification.algorithm: true ("https", the default)
  /// checks that the broker's certificate names the host we connect to
  /// (DNS SAN, or IP SAN for an address); false ("") skips only that check,
  /// the chain is still verified.
  bool verify_hostname = true;
};

/// A built OpenSSL client context (opaque; owns an asio::ssl::context).
class TlsContext;

}  // namespace kc::kafka
