#pragma once
// SASL client mechanisms for the group client's broker connections: PLAIN
// (RFC 4616) and SCRAM-SHA-256 / SCRAM-SHA-512 (RFC 5802, RFC 7677), as a
// Kafka client speaks them inside SaslAuthenticate requests (KIP-152; SCRAM
// is KIP-84). Crypto comes from OpenSSL (HMAC, PKCS5_PBKDF2_HMAC, RAND_bytes).
//
// A SaslClient is a small state machine: initial() gives the first token,
// then step() takes each server token and gives the next token to send, or
// nothing once the exchange is complete. Errors are values (kc::Error with an
// empty field and a message that says what the server did wrong).
//
// Pure computation, no I/O: use from one thread at a time.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "common/result.h"
#include "protocol/kafka/messages.h"

namespace kc::kafka {

/// The SASL mechanisms kconnectd's group client speaks.
enum class SaslMechanism {
  Plain,        ///< "PLAIN" (RFC 4616)
  ScramSha256,  ///< "SCRAM-SHA-256" (RFC 5802 with SHA-256, RFC 7677)
  ScramSha512,  ///< "SCRAM-SHA-512" (RFC 5802 with SHA-512)
};

/// Kafka's name of a mechanism: "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512".
const char* sasl_mechanism_name(SaslMechanism m);

/// The mechanism named `name` (exact, upper-case, as Kafka's
/// sasl.mechanism), or nullopt for any other name (GSSAPI, OAUTHBEARER, ...).
std::optional<SaslMechanism> parse_sasl_mechanism(std::string_view name);

/// What a connection needs to authenticate: Kafka's sasl.mechanism plus the
/// username and password of the PLAIN or SCRAM login module.
struct SaslSettings {
  SaslMechanism mechanism = SaslMechanism::Plain;
  std::string username;
  std::string password;
};

/// One client side of a SASL exchange (see file comment).
class SaslClient {
 public:
  virtual ~SaslClient() = default;
  /// The client's first token (PLAIN: the whole credential; SCRAM: the
  /// client-first-message). Call once, before step().
  virtual Bytes initial() = 0;
  /// Takes the server's token. Returns the next token to send, nullopt when
  /// the exchange is complete (then complete() is true), or an Error when the
  /// server's token is malformed, reports an error ("e=" in SCRAM) or fails
  /// verification.
  virtual Result<std::optional<Bytes>> step(BytesView server_token) = 0;
  /// True once the server's last token was accepted.
  [[nodiscard]] virtual bool complete() const = 0;
};

/// A client for `settings.mechanism`. SCRAM clients draw a fresh random
/// nonce (RAND_bytes).
std::unique_ptr<SaslClient> make_sasl_client(const SaslSettings& settings);

/// PLAIN (RFC 4616): one token "\0<username>\0<password>" (empty
/// authorization id, as Kafka's PlainSaslClient); the server answers with an
/// empty token. Any further step() is an error.
class PlainSaslClient : public SaslClient {
 public:
  PlainSaslClient(std::string username, std::string password);
  Bytes initial() override;
  Result<std::optional<Bytes>> step(BytesView server_token) override;
  [[nodiscard]] bool complete() const override { return done_; }

 private:
  std::string username_;
  std::string password_;
  bool sent_ = false;
  bool done_ = false;
};

/// SCRAM-SHA-256/512 client (RFC 5802 section 3, as Kafka's ScramSaslClient):
///   initial():          "n,,n=<saslname>,r=<client nonce>"
///   step(server-first): checks that the server nonce extends ours, the salt
///                       decodes and 4096 <= i <= 16384 (Kafka's
///                       ScramMechanism bounds), then returns
///                       "c=biws,r=<nonce>,p=<base64 ClientProof>"
///   step(server-final): "v=<ServerSignature>" must match ours (constant-time
///                       compare); "e=<error>" is reported with its text.
/// The username is escaped ("=" -> "=3D", "," -> "=2C").
class ScramSaslClient : public SaslClient {
 public:
  /// `client_nonce`: the nonce to send; nullopt draws 24 random bytes
  /// (base64). Tests inject RFC vectors' nonces here.
  ScramSaslClient(SaslMechanism mechanism, std::string username, std::string password,
                  std::optional<std::string> client_nonce = std::nullopt);
  Bytes initial() override;
  Result<std::optional<Bytes>> step(BytesView server_token) override;
  [[nodiscard]] bool complete() const override { return state_ == State::Complete; }

 private:
  enum class State {
    Initial,            ///< nothing sent yet
    AwaitServerFirst,   ///< client-first sent
    AwaitServerFinal,   ///< client-final sent
    Complete,           ///< server signature verified
    Failed,             ///< an error was returned; no further steps
  };
  Result<std::optional<Bytes>> on_server_first(std::string_view msg);
  Result<std::optional<Bytes>> on_server_final(std::string_view msg);
  Error fail(std::string message);

  SaslMechanism mechanism_;
  std::string username_;
  std::string password_;
  std::string client_nonce_;
  std::string client_first_bare_;
  Bytes server_signature_;
  State state_ = State::Initial;
};

// ---------------------------------------------------------------- primitives
// Exposed for the RFC vector tests and the test broker's server side.

/// Base64 (RFC 4648, with padding, no line breaks).
std::string base64_encode(BytesView data);
/// Decodes strict base64 (length a multiple of 4, padding only at the end);
/// nullopt when `text` is not valid base64.
std::optional<Bytes> base64_decode(std::string_view text);

/// H(data): SHA-256 or SHA-512 by mechanism (PLAIN is not a SCRAM mechanism:
/// it uses SHA-256 here, never called for it).
Bytes scram_hash(SaslMechanism m, BytesView data);
/// HMAC(key, data) with the mechanism's hash.
Bytes scram_hmac(SaslMechanism m, BytesView key, BytesView data);
/// Hi(password, salt, iterations) = PBKDF2-HMAC with the mechanism's hash,
/// output as long as the hash (RFC 5802 section 2.2).
Bytes scram_salted_password(SaslMechanism m, std::string_view password, BytesView salt,
                            int iterations);
/// Escapes a username for the "n=" attribute: "=" -> "=3D", "," -> "=2C".
std::string scram_escape_username(std::string_view name);

/// The SCRAM iteration bounds Kafka accepts (ScramMechanism minIterations /
/// maxIterations).
inline constexpr int kScramMinIterations = 4096;
inline constexpr int kScramMaxIterations = 16384;

}  // namespace kc::kafka
