#pragma once
// An asynchronous Kafka client connection on a Boost.Asio io_context.
//
// One Connection is one TCP connection to one broker. It frames requests with
// the int32 size prefix, assigns correlation ids, keeps several requests in
// flight (matched back by correlation id), times each request out on its own
// steady_timer, and negotiates API versions with ApiVersions right after the
// TCP connect. Every request then goes out at the highest version both sides
// support. With ConnectionOptions::tls set, a TLS handshake (Boost.Asio's SSL
// stream over OpenSSL, with SNI and host name verification) runs between the
// TCP connect and ApiVersions; without it the connection is plaintext. When
// SASL is configured (ConnectionOptions::sasl), SaslHandshake and the
// SaslAuthenticate rounds run right after ApiVersions, before the connection
// counts as open (KIP-152 order: ApiVersions, SaslHandshake v1,
// SaslAuthenticate...).
//
// Threading: a Connection is owned by the single thread that runs its
// io_context. Every member function must be called on that thread, and every
// handler is invoked on it. Nothing blocks: handlers are never called from
// inside the call that registered them (failures detected up front are posted).
//
// Errors travel as `NetError` values with a kind (Timeout, Disconnected,
// Protocol, Unsupported, Connect, Tls, Authentication). When the connection drops or is closed,
// every in-flight request fails with Disconnected, exactly once.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "protocol/kafka/messages.h"
#include "protocol/kafka/sasl.h"
#include "protocol/kafka/tls_options.h"

namespace kc::kafka {

/// What went wrong with a request or the connection itself.
enum class NetErrorKind {
  Connect,       ///< resolve/connect failed or the connect timeout expired
  Timeout,       ///< the request's own timeout expired before its response arrived
  Disconnected,  ///< the connection dropped or was closed while the request was pending
  Protocol,      ///< bytes could not be encoded/decoded, or framing was broken
  Unsupported,   ///< no API version common to us and the broker (see select_version)
  /// TLS failed for good: bad certificate/key material, the broker's
  /// certificate not trusted or not matching its host name, a TLS alert from
  /// the broker. Retrying cannot help, so the group client treats it as fatal.
  Tls,
  /// SASL failed: bad credentials, a mechanism the broker does not enable,
  /// or a server token that fails verification. Not transient: the group
  /// client treats it as fatal (Kafka's AuthenticationException, which
  /// clients do not retry).
  Authentication,
};

/// Name of a kind: "Connect", "Timeout", "Disconnected", "Protocol",
/// "Unsupported", "Tls", "Authentication".
const char* net_error_kind_name(NetErrorKind kind);

/// True for kinds that retrying cannot fix (Unsupported, Tls,
/// Authentication): the group
/// client stops with the error instead of reconnecting.
bool is_fatal_net_error(NetErrorKind kind);

/// A typed connection-level error: the kind plus a human-readable message.
struct NetError {
  NetErrorKind kind = NetErrorKind::Protocol;
  std::string message;

  /// "<Kind>: <message>".
  [[nodiscard]] std::string to_string() const;
};

/// Either a value or a NetError (the connection layer's expected-style
/// result). Check ok() before value(); error() is valid only when !ok().
template <typename T>
class NetResult {
 public:
  NetResult(T value) : v_(std::move(value)) {}      // NOLINT: implicit by design
  NetResult(NetError error) : v_(std::move(error)) {}  // NOLINT: implicit by design

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] const NetError& error() const { return std::get<1>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, NetError> v_;
};

/// Result of an operation that yields nothing on success.
using NetStatus = NetResult<std::monostate>;

// ---------------------------------------------------------------------- TLS

/// Builds the OpenSSL client context for `options`: TLS 1.2 minimum, the
/// broker's certificate chain verified against `options.ca` (or the system
/// trust store), the client certificate chain and key when given. Files are
/// read here, once. Errors are NetErrorKind::Tls: an unreadable file names
/// the label, the file and the OS reason; PEM that does not parse, a wrong
/// key password, or a key that does not match the certificate names the
/// label, the file (or "inline PEM") and OpenSSL's reason (ERR_error_string).
/// Source: Kafka's DefaultSslEngineFactory with PEM stores (KIP-651).
NetResult<std::shared_ptr<TlsContext>> make_tls_context(const TlsOptions& options);

/// OpenSSL's text for a packed error code (ERR_error_string_n), e.g.
/// "error:0A000086:SSL routines::certificate verify failed".
std::string openssl_error_text(unsigned long code);

// ------------------------------------------------------- version negotiation

/// Picks the version to use for `key`: the highest version in both `ours`
/// and `broker`. Pure function (no I/O), so it is unit-testable.
///   - broker == nullopt (the broker did not list the API) → Unsupported,
///     "<Api>: not supported by the broker (ours a-b)".
///   - no overlap → Unsupported, "<Api>: no common version (ours a-b, broker c-d)".
/// Source: the Java client's NodeApiVersions.latestUsableVersion behaviour.
NetResult<int16_t> select_version(ApiKey key, VersionRange ours,
                                  std::optional<VersionRange> broker);

/// The versions negotiated with one broker: for each API we use, either the
/// chosen version or the Unsupported error that select_version produced.
class ApiVersionTable {
 public:
  /// Empty table: every API is Unsupported ("versions not negotiated").
  ApiVersionTable() = default;

  /// Builds the table from an ApiVersionsResponse.ApiKeys list, running
  /// select_version(key, supported_versions(key), broker range) for each of
  /// FindCoordinator, JoinGroup, Heartbeat, LeaveGroup, SyncGroup, ApiVersions.
  static ApiVersionTable negotiate(const std::vector<ApiVersionRange>& broker);

  /// A table that pins each listed API to one version (tests, or a caller
  /// that must not negotiate).
  static ApiVersionTable fixed(const std::map<ApiKey, int16_t>& versions);

  /// The version to send `key` at, or the Unsupported error for it.
  [[nodiscard]] NetResult<int16_t> version_for(ApiKey key) const;

 private:
  std::map<ApiKey, NetResult<int16_t>> table_;
};

// -------------------------------------------------------------- API traits

/// Maps a request struct to its API key, response struct and response decoder.
template <typename Request>
struct ApiTraits;

#define KC_KAFKA_API_TRAITS(Req, Resp, Key)                                       \
  template <>                                                                      \
  struct ApiTraits<Req> {                                                          \
    static constexpr ApiKey key = ApiKey::Key;                                     \
    using Response = Resp;                                                         \
    static Result<Resp> decode(BytesView body, int16_t v) { return decode_##Resp(body, v); } \
  };
KC_KAFKA_API_TRAITS(ApiVersionsRequest, ApiVersionsResponse, ApiVersions)
KC_KAFKA_API_TRAITS(FindCoordinatorRequest, FindCoordinatorResponse, FindCoordinator)
KC_KAFKA_API_TRAITS(JoinGroupRequest, JoinGroupResponse, JoinGroup)
KC_KAFKA_API_TRAITS(SyncGroupRequest, SyncGroupResponse, SyncGroup)
KC_KAFKA_API_TRAITS(HeartbeatRequest, HeartbeatResponse, Heartbeat)
KC_KAFKA_API_TRAITS(LeaveGroupRequest, LeaveGroupResponse, LeaveGroup)
KC_KAFKA_API_TRAITS(SaslHandshakeRequest, SaslHandshakeResponse, SaslHandshake)
KC_KAFKA_API_TRAITS(SaslAuthenticateRequest, SaslAuthenticateResponse, SaslAuthenticate)
#undef KC_KAFKA_API_TRAITS

// --------------------------------------------------------------- Connection

/// Settings of one Connection. All durations are milliseconds.
struct ConnectionOptions {
  /// client_id written in every request header.
  std::string client_id = "kconnectd";
  /// Upper bound for resolve + TCP connect (not including ApiVersions).
  std::chrono::milliseconds connect_timeout{10000};
  /// Default per-request timeout, used when send() gets no explicit timeout
  /// (also for the ApiVersions exchange).
  std::chrono::milliseconds request_timeout{30000};
  /// Send ApiVersions after connecting and use the negotiated versions.
  /// When false, `fixed_versions` is used as is.
  bool negotiate_versions = true;
  /// Versions used when negotiate_versions is false.
  std::map<ApiKey, int16_t> fixed_versions;
  /// Largest response frame accepted; bigger frames are a Protocol error
  /// that closes the connection.
  int32_t max_response_bytes = 100 * 1024 * 1024;
  /// SASL credentials (security.protocol SASL_PLAINTEXT/SASL_SSL); nullopt =
  /// no authentication. Needs SaslHandshake v1+ at the broker (Kafka 1.0+).
  std::optional<SaslSettings> sasl;
  /// TLS (security.protocol SSL/SASL_SSL). nullopt = plaintext (the default).
  std::optional<TlsOptions> tls;
  /// A context already built from `tls` by make_tls_context() (shared by many
  /// connections). Null while `tls` is set: connect() builds one itself and
  /// fails with its Tls error.
  std::shared_ptr<TlsContext> tls_context;
};

/// One asynchronous client connection to a Kafka broker (see file comment).
/// Create with Connection::create(); keep the shared_ptr while using it.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  /// Completion of a raw request: the response body (after the response
  /// header) or a NetError.
  using RawHandler = std::function<void(NetResult<Bytes>)>;
  /// Completion of connect(): ok once TCP is up and versions are negotiated.
  using ConnectHandler = std::function<void(NetStatus)>;

  /// Creates an unconnected connection bound to `io`.
  static std::shared_ptr<Connection> create(boost::asio::io_context& io,
                                            ConnectionOptions options = {});
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  /// Resolves host:port, connects within options.connect_timeout, with TLS
  /// runs the handshake (SNI = `host` unless it is an IP address; the
  /// certificate must name `host` when verify_hostname; the connect timeout
  /// covers the handshake too), then (unless disabled) runs ApiVersions:
  /// first at our max (v3); if the broker answers UNSUPPORTED_VERSION, again
  /// at v0. `done` gets ok, or a Connect error (resolve/connect/timeout, or
  /// the broker closing the connection during the TLS handshake), or a Tls
  /// error ("<host:port>: TLS handshake failed: <OpenSSL reason>", with "host
  /// name mismatch" when the certificate does not name `host`, or a bad
  /// context), or the error of the ApiVersions exchange
  /// (Timeout/Disconnected/Protocol/Tls, or Unsupported when the broker
  /// returns another error code). With options.sasl it then authenticates
  /// (SaslHandshake, SaslAuthenticate rounds); a failure is an Authentication
  /// error "SASL authentication failed with broker <host:port> (<mechanism>):
  /// <broker's error_message or what failed>" (an unsupported mechanism lists
  /// the broker's enabled ones); a drop during SASL is Disconnected and says
  /// "SASL authentication (<mechanism>) with <host:port> interrupted". Call at
  /// most once per Connection.
  void connect(const std::string& host, uint16_t port, ConnectHandler done);

  /// Sends `req` at the negotiated version of its API and decodes the
  /// response. `handler` receives the response, or:
  ///   Unsupported — no common version for the API (message names the API
  ///                 and both ranges); posted, nothing is sent;
  ///   Protocol    — the request could not be encoded at that version, or the
  ///                 response could not be decoded;
  ///   Timeout     — no response within `timeout` (default
  ///                 options.request_timeout); a late response is discarded;
  ///   Disconnected— the connection is not open, dropped, or was closed.
  /// Requests other than SASL ones sent while SASL runs wait (queued, their
  /// timeout running) until authentication succeeds.
  template <typename Request>
  void send(const Request& req,
            std::function<void(NetResult<typename ApiTraits<Request>::Response>)> handler,
            std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    using Traits = ApiTraits<Request>;
    auto version = versions_.version_for(Traits::key);
    if (!version) {
      fail_later(version.error(), [handler](NetError e) { handler(std::move(e)); });
      return;
    }
    send_at(req, *version, std::move(handler), timeout);
  }

  /// Like send(), but at an explicit `version` (bypasses negotiation; used
  /// for ApiVersions itself and by tests).
  template <typename Request>
  void send_at(const Request& req, int16_t version,
               std::function<void(NetResult<typename ApiTraits<Request>::Response>)> handler,
               std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    using Traits = ApiTraits<Request>;
    auto body = encode(req, version);
    if (!body) {
      fail_later(NetError{NetErrorKind::Protocol,
                          std::string(api_name(Traits::key)) + " v" + std::to_string(version) +
                              ": cannot encode request: " + body.error().to_string()},
                 [handler](NetError e) { handler(std::move(e)); });
      return;
    }
    send_raw(Traits::key, version, std::move(body.value()),
             [handler = std::move(handler), version](NetResult<Bytes> raw) {
               if (!raw) {
                 handler(raw.error());
                 return;
               }
               auto decoded = Traits::decode(raw.value(), version);
               if (!decoded) {
                 handler(NetError{NetErrorKind::Protocol,
                                  std::string(api_name(Traits::key)) + " v" +
                                      std::to_string(version) + ": cannot decode response: " +
                                      decoded.error().to_string()});
                 return;
               }
               handler(std::move(decoded.value()));
             },
             timeout);
  }

  /// Sends an already-encoded request body (no header, no size prefix) for
  /// (key, version). The handler receives the response body after the
  /// response header. Errors as for send().
  void send_raw(ApiKey key, int16_t version, Bytes body, RawHandler handler,
                std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Closes the socket and fails every in-flight request (and a pending
  /// connect) with Disconnected carrying `reason`. Idempotent.
  void close(const std::string& reason = "closed by client");

  /// True between a successful connect() completion and close()/drop.
  [[nodiscard]] bool is_open() const { return state_ == ConnState::Open; }

  /// The versions negotiated with this broker (empty table before connect).
  [[nodiscard]] const ApiVersionTable& versions() const { return versions_; }

  /// The raw ApiVersionsResponse.ApiKeys list the broker sent (empty before connect).
  [[nodiscard]] const std::vector<ApiVersionRange>& broker_versions() const {
    return broker_versions_;
  }

  /// "host:port" as given to connect().
  [[nodiscard]] const std::string& peer() const { return peer_; }

  /// Number of requests waiting for a response (not counting timed-out ones
  /// whose late response is still expected).
  [[nodiscard]] size_t in_flight() const;

  /// Registers a function called once when the connection drops or is
  /// closed after it was open (after the in-flight requests are failed).
  void on_close(std::function<void(const NetError&)> fn) { on_close_ = std::move(fn); }

 private:
  enum class ConnState {
    Idle,            ///< created, connect() not called
    Connecting,      ///< resolving / TCP connect
    Negotiating,     ///< ApiVersions in flight
    Authenticating,  ///< SaslHandshake / SaslAuthenticate in flight; other requests wait
    Open,            ///< ready for requests
    Closed,          ///< dropped or closed
  };
  struct Impl;
  struct Pending;

  Connection(boost::asio::io_context& io, ConnectionOptions options);
  void fail_later(NetError error, std::function<void(NetError)> fn);
  void negotiate(int16_t version);
  void on_transport_ready();
  void start_handshake(const std::string& host);
  NetError io_error(const boost::system::error_code& ec, const std::string& what) const;
  // After the versions are known: authenticate when SASL is configured,
  // else open.
  void after_versions();
  void sasl_handshake();
  void sasl_authenticate(Bytes token);
  void sasl_failed(NetErrorKind kind, const std::string& what);
  void open_now();
  void start_read();
  void write_next();
  void on_frame(Bytes frame);
  void on_timeout(int32_t correlation_id);
  void drop(NetError reason);

  boost::asio::io_context& io_;
  ConnectionOptions options_;
  std::unique_ptr<Impl> impl_;
  ConnState state_ = ConnState::Idle;
  std::string peer_;
  std::string host_;  // host as given to connect() (SNI, host name verification)
  ApiVersionTable versions_;
  std::vector<ApiVersionRange> broker_versions_;
  ConnectHandler connect_done_;
  std::function<void(const NetError&)> on_close_;
  std::unique_ptr<SaslClient> sasl_client_;  // set while Authenticating
};

}  // namespace kc::kafka
