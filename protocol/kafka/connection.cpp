// Asio client connection: framing, correlation ids, per-request timeouts and
// ApiVersions negotiation. See connection.h for the contract.
#include "protocol/kafka/connection.h"

#include <algorithm>
#include <array>
#include <deque>

#include <spdlog/spdlog.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/error.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>

#include "protocol/kafka/tls_context.h"

namespace kc::kafka {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

// The version we offer first for ApiVersions; on UNSUPPORTED_VERSION we fall
// back to v0, which every broker since 0.10 answers.
constexpr int16_t kApiVersionsFirst = 3;
constexpr int16_t kApiVersionsFallback = 0;

std::string range_text(VersionRange r) {
  return std::to_string(r.min) + "-" + std::to_string(r.max);
}

int32_t read_be32(const uint8_t* p) {
  return static_cast<int32_t>((uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) |
                              (uint32_t{p[2]} << 8) | uint32_t{p[3]});
}

int16_t read_be16(const uint8_t* p) {
  return static_cast<int16_t>((uint16_t{p[0]} << 8) | uint16_t{p[1]});
}

// The APIs the group client uses; the version table covers exactly these.
constexpr std::array<ApiKey, 8> kUsedApis = {
    ApiKey::ApiVersions, ApiKey::FindCoordinator, ApiKey::JoinGroup,     ApiKey::SyncGroup,
    ApiKey::Heartbeat,   ApiKey::LeaveGroup,      ApiKey::SaslHandshake, ApiKey::SaslAuthenticate};

// SaslHandshake v0 would be followed by unframed tokens (pre-KIP-152);
// we only speak the framed form.
constexpr int16_t kSaslHandshakeMin = 1;

bool is_sasl_api(ApiKey key) {
  return key == ApiKey::SaslHandshake || key == ApiKey::SaslAuthenticate;
}

}  // namespace

const char* net_error_kind_name(NetErrorKind kind) {
  switch (kind) {
    case NetErrorKind::Connect: return "Connect";
    case NetErrorKind::Timeout: return "Timeout";
    case NetErrorKind::Disconnected: return "Disconnected";
    case NetErrorKind::Protocol: return "Protocol";
    case NetErrorKind::Unsupported: return "Unsupported";
    case NetErrorKind::Authentication: return "Authentication";
    case NetErrorKind::Tls: return "Tls";
  }
  return "?";
}

bool is_fatal_net_error(NetErrorKind kind) {
  switch (kind) {
    case NetErrorKind::Unsupported:
    case NetErrorKind::Tls:
    case NetErrorKind::Authentication:
      return true;
    case NetErrorKind::Connect:
    case NetErrorKind::Timeout:
    case NetErrorKind::Disconnected:
    case NetErrorKind::Protocol:
      return false;
  }
  return false;
}

std::string NetError::to_string() const {
  return std::string(net_error_kind_name(kind)) + ": " + message;
}

// ------------------------------------------------------- version negotiation

NetResult<int16_t> select_version(ApiKey key, VersionRange ours,
                                  std::optional<VersionRange> broker) {
  const std::string api = api_name(key);
  if (!broker) {
    return NetError{NetErrorKind::Unsupported,
                    api + ": not supported by the broker (ours " + range_text(ours) + ")"};
  }
  const int16_t lo = std::max(ours.min, broker->min);
  const int16_t hi = std::min(ours.max, broker->max);
  if (lo > hi || ours.min > ours.max || broker->min > broker->max) {
    return NetError{NetErrorKind::Unsupported, api + ": no common version (ours " +
                                                   range_text(ours) + ", broker " +
                                                   range_text(*broker) + ")"};
  }
  return hi;
}

ApiVersionTable ApiVersionTable::negotiate(const std::vector<ApiVersionRange>& broker) {
  ApiVersionTable t;
  for (ApiKey key : kUsedApis) {
    std::optional<VersionRange> theirs;
    for (const auto& row : broker) {
      if (row.api_key == static_cast<int16_t>(key)) {
        theirs = VersionRange{row.min_version, row.max_version};
        break;
      }
    }
    t.table_.insert_or_assign(key, select_version(key, supported_versions(key), theirs));
  }
  return t;
}

ApiVersionTable ApiVersionTable::fixed(const std::map<ApiKey, int16_t>& versions) {
  ApiVersionTable t;
  for (const auto& [key, v] : versions) t.table_.insert_or_assign(key, NetResult<int16_t>(v));
  return t;
}

NetResult<int16_t> ApiVersionTable::version_for(ApiKey key) const {
  auto it = table_.find(key);
  if (it == table_.end()) {
    return NetError{NetErrorKind::Unsupported,
                    std::string(api_name(key)) + ": versions not negotiated"};
  }
  return it->second;
}

// --------------------------------------------------------------- Connection

/// One request waiting for its response. A timed-out request keeps its entry
/// (handler empty) so that its late response is recognised and discarded.
struct Connection::Pending {
  ApiKey key{};
  int16_t version = 0;
  RawHandler handler;  // empty once timed out
  std::unique_ptr<asio::steady_timer> timer;
};

using TlsStream = asio::ssl::stream<tcp::socket&>;

struct Connection::Impl {
  explicit Impl(asio::io_context& io) : socket(io), resolver(io), connect_timer(io) {}
  tcp::socket socket;
  tcp::resolver resolver;
  asio::steady_timer connect_timer;
  // TLS: the SSL stream over `socket`. Every handler of an operation on it
  // holds this pointer, so the stream outlives its operations even when the
  // Connection goes away first (closing the socket only aborts them).
  std::shared_ptr<TlsStream> tls;
  std::shared_ptr<TlsContext> tls_context;
  bool handshaking = false;  // the TLS handshake is in flight
  std::shared_ptr<std::array<uint8_t, 4>> size_buf = std::make_shared<std::array<uint8_t, 4>>();
  std::deque<std::shared_ptr<Bytes>> write_queue;
  // Frames of ordinary requests sent while SASL runs; written once open.
  std::deque<std::shared_ptr<Bytes>> held;
  bool writing = false;
  int32_t next_correlation_id = 1;
  std::map<int32_t, Pending> pending;
};

std::shared_ptr<Connection> Connection::create(asio::io_context& io, ConnectionOptions options) {
  return std::shared_ptr<Connection>(new Connection(io, std::move(options)));
}

Connection::Connection(asio::io_context& io, ConnectionOptions options)
    : io_(io), options_(std::move(options)), impl_(std::make_unique<Impl>(io)) {}

Connection::~Connection() {
  // The owner is gone: pending handlers are dropped without being called.
  boost::system::error_code ec;
  impl_->socket.close(ec);
  impl_->resolver.cancel();
  impl_->connect_timer.cancel();
  for (auto& [id, p] : impl_->pending) p.timer->cancel();
}

size_t Connection::in_flight() const {
  return static_cast<size_t>(std::count_if(impl_->pending.begin(), impl_->pending.end(),
                                           [](const auto& kv) { return bool(kv.second.handler); }));
}

void Connection::fail_later(NetError error, std::function<void(NetError)> fn) {
  asio::post(io_, [fn = std::move(fn), error = std::move(error)]() mutable { fn(std::move(error)); });
}

void Connection::connect(const std::string& host, uint16_t port, ConnectHandler done) {
  peer_ = host + ":" + std::to_string(port);
  if (state_ != ConnState::Idle) {
    fail_later(NetError{NetErrorKind::Connect, peer_ + ": connect() called twice"},
               [done](NetError e) { done(std::move(e)); });
    return;
  }
  state_ = ConnState::Connecting;
  connect_done_ = std::move(done);
  host_ = host;
  if (options_.tls) {
    impl_->tls_context = options_.tls_context;
    if (!impl_->tls_context) {
      auto built = make_tls_context(*options_.tls);
      if (!built) {
        NetError e = built.error();
        e.message = peer_ + ": " + e.message;
        drop(std::move(e));
        return;
      }
      impl_->tls_context = std::move(built.value());
    }
  }
  std::weak_ptr<Connection> weak = shared_from_this();

  impl_->connect_timer.expires_after(options_.connect_timeout);
  impl_->connect_timer.async_wait([weak](const boost::system::error_code& ec) {
    auto self = weak.lock();
    if (!self || ec || self->state_ != ConnState::Connecting) return;
    self->drop(NetError{NetErrorKind::Connect,
                        self->peer_ + (self->impl_->handshaking ? ": TLS handshake timed out after "
                                                                : ": connect timed out after ") +
                            std::to_string(self->options_.connect_timeout.count()) + " ms"});
  });

  impl_->resolver.async_resolve(
      host, std::to_string(port),
      [weak](const boost::system::error_code& ec, tcp::resolver::results_type results) {
        auto self = weak.lock();
        if (!self || self->state_ != ConnState::Connecting) return;
        if (ec) {
          self->drop(NetError{NetErrorKind::Connect,
                              self->peer_ + ": resolve failed: " + ec.message()});
          return;
        }
        asio::async_connect(
            self->impl_->socket, results,
            [weak](const boost::system::error_code& ec2, const tcp::endpoint&) {
              auto self2 = weak.lock();
              if (!self2 || self2->state_ != ConnState::Connecting) return;
              if (ec2) {
                self2->drop(NetError{NetErrorKind::Connect,
                                     self2->peer_ + ": connect failed: " + ec2.message()});
                return;
              }
              boost::system::error_code ignored;
              self2->impl_->socket.set_option(tcp::no_delay(true), ignored);
              if (self2->options_.tls) {
                self2->start_handshake(self2->host_);
                return;
              }
              self2->impl_->connect_timer.cancel();
              self2->on_transport_ready();
            });
      });
}

void Connection::on_transport_ready() {
  state_ = ConnState::Negotiating;
  start_read();
  if (options_.negotiate_versions) {
    negotiate(kApiVersionsFirst);
    return;
  }
  versions_ = ApiVersionTable::fixed(options_.fixed_versions);
  after_versions();
}

namespace {

// OpenSSL 3 reports a peer that closed without close_notify as this reason;
// Boost 1.74 maps only the older form to stream_truncated.
bool is_truncation(const boost::system::error_code& ec) {
  if (ec == asio::ssl::error::stream_truncated || ec == asio::error::eof ||
      ec == asio::error::connection_reset || ec == asio::error::broken_pipe) {
    return true;
  }
#ifdef SSL_R_UNEXPECTED_EOF_WHILE_READING
  if (ec.category() == asio::error::get_ssl_category() &&
      ERR_GET_REASON(static_cast<unsigned long>(ec.value())) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    return true;
  }
#endif
  return false;
}

}  // namespace

NetError Connection::io_error(const boost::system::error_code& ec, const std::string& what) const {
  if (impl_->tls && ec.category() == asio::error::get_ssl_category() && !is_truncation(ec)) {
    // A TLS alert or a record error after the handshake (for example a
    // broker that requires a client certificate rejects it with an alert on
    // the first read under TLS 1.3).
    return NetError{NetErrorKind::Tls,
                    peer_ + ": TLS error while " + what + ": " +
                        openssl_error_text(static_cast<unsigned long>(ec.value()))};
  }
  if (ec == asio::error::eof || (impl_->tls && is_truncation(ec) && what == "reading")) {
    return NetError{NetErrorKind::Disconnected, peer_ + ": connection closed by the broker"};
  }
  return NetError{NetErrorKind::Disconnected,
                  peer_ + ": " + (what == "reading" ? "read" : "write") + " failed: " + ec.message()};
}

void Connection::start_handshake(const std::string& host) {
  boost::system::error_code addr_ec;
  const auto address = asio::ip::make_address(host, addr_ec);
  const bool is_ip = !addr_ec;
  impl_->tls = std::make_shared<TlsStream>(impl_->socket, impl_->tls_context->ctx);
  SSL* ssl = impl_->tls->native_handle();
  // SNI carries host names only (RFC 6066), never addresses.
  if (!is_ip && SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    drop(NetError{NetErrorKind::Tls, peer_ + ": cannot set the TLS server name: " +
                                         openssl_error_text(ERR_get_error())});
    return;
  }
  if (impl_->tls_context->verify_hostname) {
    // OpenSSL checks the name during chain verification, so a mismatch
    // fails the handshake with X509_V_ERR_HOSTNAME_MISMATCH.
    X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
    const int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, address.to_string().c_str())
                         : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
    if (ok != 1) {
      drop(NetError{NetErrorKind::Tls, peer_ + ": cannot set the host name to verify: " +
                                           openssl_error_text(ERR_get_error())});
      return;
    }
    X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  }
  impl_->handshaking = true;
  std::weak_ptr<Connection> weak = shared_from_this();
  impl_->tls->async_handshake(
      asio::ssl::stream_base::client, [weak, keep = impl_->tls](const boost::system::error_code& ec) {
        auto self = weak.lock();
        if (!self || self->state_ != ConnState::Connecting) return;
        self->impl_->handshaking = false;
        if (!ec) {
          self->impl_->connect_timer.cancel();
          self->on_transport_ready();
          return;
        }
        const long verify = SSL_get_verify_result(keep->native_handle());
        if (verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH) {
          self->drop(NetError{NetErrorKind::Tls,
                              self->peer_ + ": TLS handshake failed: host name mismatch: the broker's certificate "
                                            "does not name '" + self->host_ +
                                  "' (ssl.endpoint.identification.algorithm=https); " +
                                  openssl_error_text(static_cast<unsigned long>(ec.value()))});
          return;
        }
        if (ec.category() == asio::error::get_ssl_category() && !is_truncation(ec)) {
          std::string detail;
          if (verify != X509_V_OK) detail = " (" + std::string(X509_verify_cert_error_string(verify)) + ")";
          self->drop(NetError{NetErrorKind::Tls, self->peer_ + ": TLS handshake failed: " +
                                                     openssl_error_text(static_cast<unsigned long>(ec.value())) +
                                                     detail});
          return;
        }
        // The broker went away mid-handshake: a connection problem, retried.
        self->drop(NetError{NetErrorKind::Connect,
                            self->peer_ + ": TLS handshake failed: the broker closed the connection during the "
                                          "handshake (" + ec.message() + "); is this a TLS listener?"});
      });
}

void Connection::negotiate(int16_t version) {
  auto body = encode(ApiVersionsRequest{}, version);
  if (!body) {
    drop(NetError{NetErrorKind::Protocol,
                  peer_ + ": cannot encode ApiVersions v" + std::to_string(version) + ": " +
                      body.error().to_string()});
    return;
  }
  std::weak_ptr<Connection> weak = shared_from_this();
  send_raw(ApiKey::ApiVersions, version, std::move(body.value()),
           [weak, version](NetResult<Bytes> raw) {
             auto self = weak.lock();
             if (!self || self->state_ != ConnState::Negotiating) return;
             if (!raw) {
               NetError e = raw.error();
               e.message = "ApiVersions: " + e.message;
               self->drop(std::move(e));
               return;
             }
             // ErrorCode is the first field of every ApiVersionsResponse
             // version; a broker that does not know `version` answers with a
             // v0 body and UNSUPPORTED_VERSION (KIP-511), so peek before decoding.
             const Bytes& b = raw.value();
             if (b.size() >= 2 &&
                 read_be16(b.data()) == static_cast<int16_t>(ErrorCode::UNSUPPORTED_VERSION) &&
                 version != kApiVersionsFallback) {
               self->negotiate(kApiVersionsFallback);
               return;
             }
             auto resp = decode_ApiVersionsResponse(b, version);
             if (!resp) {
               self->drop(NetError{NetErrorKind::Protocol,
                                   self->peer_ + ": cannot decode ApiVersions v" +
                                       std::to_string(version) + " response: " +
                                       resp.error().to_string()});
               return;
             }
             if (resp->error_code != 0) {
               self->drop(NetError{NetErrorKind::Unsupported,
                                   self->peer_ + ": ApiVersions v" + std::to_string(version) +
                                       " failed: " + error_name(resp->error_code)});
               return;
             }
             self->broker_versions_ = resp->api_keys;
             self->versions_ = ApiVersionTable::negotiate(resp->api_keys);
             self->after_versions();
           });
}

// ------------------------------------------------------------------ SASL

void Connection::after_versions() {
  if (!options_.sasl) {
    open_now();
    return;
  }
  state_ = ConnState::Authenticating;
  sasl_client_ = make_sasl_client(*options_.sasl);
  sasl_handshake();
}

void Connection::open_now() {
  state_ = ConnState::Open;
  sasl_client_.reset();
  // Requests queued while SASL ran go out now, in the order they were sent.
  while (!impl_->held.empty()) {
    impl_->write_queue.push_back(std::move(impl_->held.front()));
    impl_->held.pop_front();
  }
  write_next();
  auto cb = std::move(connect_done_);
  connect_done_ = nullptr;
  if (cb) cb(std::monostate{});
}

void Connection::sasl_failed(NetErrorKind kind, const std::string& what) {
  drop(NetError{kind, "SASL authentication failed with broker " + peer_ + " (" +
                          sasl_mechanism_name(options_.sasl->mechanism) + "): " + what});
}

void Connection::sasl_handshake() {
  const char* mech = sasl_mechanism_name(options_.sasl->mechanism);
  auto version = versions_.version_for(ApiKey::SaslHandshake);
  if (!version || *version < kSaslHandshakeMin) {
    sasl_failed(NetErrorKind::Authentication,
                version ? "the broker only speaks SaslHandshake v0 (unframed SASL, Kafka < 1.0)"
                        : version.error().message);
    return;
  }
  std::weak_ptr<Connection> weak = shared_from_this();
  send_at(SaslHandshakeRequest{mech}, *version,
          [weak](NetResult<SaslHandshakeResponse> r) {
            auto self = weak.lock();
            if (!self || self->state_ != ConnState::Authenticating) return;
            if (!r) {
              if (r.error().kind != NetErrorKind::Disconnected) {
                self->sasl_failed(r.error().kind, "SaslHandshake: " + r.error().message);
              }
              return;  // a drop already reported itself (see drop())
            }
            if (r->error_code != 0) {
              std::string enabled;
              for (const auto& m : r->mechanisms) enabled += (enabled.empty() ? "" : ", ") + m;
              const bool unsupported =
                  r->error_code == static_cast<int16_t>(ErrorCode::UNSUPPORTED_SASL_MECHANISM);
              self->sasl_failed(NetErrorKind::Authentication,
                                (unsupported ? std::string("the broker does not enable this mechanism")
                                             : "SaslHandshake " + error_name(r->error_code)) +
                                    "; enabled mechanisms: [" + enabled + "]");
              return;
            }
            self->sasl_authenticate(self->sasl_client_->initial());
          });
}

void Connection::sasl_authenticate(Bytes token) {
  auto version = versions_.version_for(ApiKey::SaslAuthenticate);
  if (!version) {
    sasl_failed(NetErrorKind::Authentication, version.error().message);
    return;
  }
  std::weak_ptr<Connection> weak = shared_from_this();
  send_at(SaslAuthenticateRequest{std::move(token)}, *version,
          [weak](NetResult<SaslAuthenticateResponse> r) {
            auto self = weak.lock();
            if (!self || self->state_ != ConnState::Authenticating) return;
            if (!r) {
              if (r.error().kind != NetErrorKind::Disconnected) {
                self->sasl_failed(r.error().kind, "SaslAuthenticate: " + r.error().message);
              }
              return;
            }
            if (r->error_code != 0) {
              // The broker's text is what an operator needs, e.g. "Authentication
              // failed during authentication due to invalid credentials with SASL
              // mechanism SCRAM-SHA-256".
              self->sasl_failed(NetErrorKind::Authentication,
                                r->error_message && !r->error_message->empty()
                                    ? *r->error_message
                                    : error_name(r->error_code));
              return;
            }
            auto next = self->sasl_client_->step(r->auth_bytes);
            if (!next) {
              self->sasl_failed(NetErrorKind::Authentication, next.error().to_string());
              return;
            }
            if (next->has_value()) {
              self->sasl_authenticate(std::move(**next));
              return;
            }
            if (r->session_lifetime_ms > 0) {
              // KIP-368: the broker drops the connection after this; the
              // group client then reconnects and authenticates again.
              spdlog::debug("{}: SASL session lifetime {} ms", self->peer_, r->session_lifetime_ms);
            }
            self->open_now();
          });
}

void Connection::send_raw(ApiKey key, int16_t version, Bytes body, RawHandler handler,
                          std::optional<std::chrono::milliseconds> timeout) {
  if (state_ != ConnState::Open && state_ != ConnState::Negotiating &&
      state_ != ConnState::Authenticating) {
    fail_later(NetError{NetErrorKind::Disconnected,
                        std::string(api_name(key)) + ": connection to " + peer_ + " is not open"},
               [handler](NetError e) { handler(std::move(e)); });
    return;
  }
  const int32_t id = impl_->next_correlation_id;
  impl_->next_correlation_id =
      impl_->next_correlation_id == INT32_MAX ? 1 : impl_->next_correlation_id + 1;

  RequestHeader header;
  header.api_key = key;
  header.api_version = version;
  header.correlation_id = id;
  header.client_id = options_.client_id;
  auto frame = encode_request_frame(header, body);
  if (!frame) {
    fail_later(NetError{NetErrorKind::Protocol, std::string(api_name(key)) + " v" +
                                                    std::to_string(version) +
                                                    ": cannot encode header: " +
                                                    frame.error().to_string()},
               [handler](NetError e) { handler(std::move(e)); });
    return;
  }

  Pending p;
  p.key = key;
  p.version = version;
  p.handler = std::move(handler);
  p.timer = std::make_unique<asio::steady_timer>(io_);
  const auto limit = timeout.value_or(options_.request_timeout);
  p.timer->expires_after(limit);
  std::weak_ptr<Connection> weak = shared_from_this();
  p.timer->async_wait([weak, id](const boost::system::error_code& ec) {
    if (ec) return;
    if (auto self = weak.lock()) self->on_timeout(id);
  });
  impl_->pending.emplace(id, std::move(p));

  auto shared = std::make_shared<Bytes>(std::move(frame.value()));
  if (state_ == ConnState::Authenticating && !is_sasl_api(key)) {
    impl_->held.push_back(std::move(shared));  // nothing else goes out before SASL is done
    return;
  }
  impl_->write_queue.push_back(std::move(shared));
  write_next();
}

void Connection::on_timeout(int32_t correlation_id) {
  auto it = impl_->pending.find(correlation_id);
  if (it == impl_->pending.end() || !it->second.handler) return;
  auto handler = std::move(it->second.handler);
  it->second.handler = nullptr;  // tombstone: the late response is discarded
  handler(NetError{NetErrorKind::Timeout, std::string(api_name(it->second.key)) +
                                              ": no response from " + peer_ +
                                              " within the request timeout"});
}

void Connection::write_next() {
  if (impl_->writing || impl_->write_queue.empty()) return;
  if (state_ != ConnState::Open && state_ != ConnState::Negotiating &&
      state_ != ConnState::Authenticating) {
    return;
  }
  impl_->writing = true;
  auto frame = impl_->write_queue.front();
  std::weak_ptr<Connection> weak = shared_from_this();
  auto on_written = [weak, frame, keep = impl_->tls](const boost::system::error_code& ec, size_t) {
    auto self = weak.lock();
    if (!self) return;
    self->impl_->writing = false;
    if (ec) {
      self->drop(self->io_error(ec, "writing"));
      return;
    }
    if (!self->impl_->write_queue.empty()) self->impl_->write_queue.pop_front();
    self->write_next();
  };
  if (impl_->tls) {
    asio::async_write(*impl_->tls, asio::buffer(*frame), std::move(on_written));
  } else {
    asio::async_write(impl_->socket, asio::buffer(*frame), std::move(on_written));
  }
}

void Connection::start_read() {
  std::weak_ptr<Connection> weak = shared_from_this();
  auto size_buf = impl_->size_buf;
  auto on_frame_read = [weak, keep = impl_->tls](std::shared_ptr<Bytes> frame) {
    return [weak, frame, keep](const boost::system::error_code& ec2, size_t) {
      auto self2 = weak.lock();
      if (!self2 || self2->state_ == ConnState::Closed) return;
      if (ec2) {
        self2->drop(self2->io_error(ec2, "reading"));
        return;
      }
      self2->on_frame(std::move(*frame));
      if (self2->state_ == ConnState::Open || self2->state_ == ConnState::Negotiating ||
          self2->state_ == ConnState::Authenticating) {
        self2->start_read();
      }
    };
  };
  auto on_size_read = [weak, size_buf, on_frame_read, keep = impl_->tls](const boost::system::error_code& ec,
                                                                          size_t) {
    auto self = weak.lock();
    if (!self || self->state_ == ConnState::Closed) return;
    if (ec) {
      self->drop(self->io_error(ec, "reading"));
      return;
    }
    const int32_t size = read_be32(size_buf->data());
    if (size < 4 || size > self->options_.max_response_bytes) {
      self->drop(NetError{NetErrorKind::Protocol,
                          self->peer_ + ": invalid response frame size " + std::to_string(size)});
      return;
    }
    auto frame = std::make_shared<Bytes>(static_cast<size_t>(size));
    if (self->impl_->tls) {
      asio::async_read(*self->impl_->tls, asio::buffer(*frame), on_frame_read(frame));
    } else {
      asio::async_read(self->impl_->socket, asio::buffer(*frame), on_frame_read(frame));
    }
  };
  if (impl_->tls) {
    asio::async_read(*impl_->tls, asio::buffer(*size_buf), std::move(on_size_read));
  } else {
    asio::async_read(impl_->socket, asio::buffer(*size_buf), std::move(on_size_read));
  }
}

void Connection::on_frame(Bytes frame) {
  // The correlation id is the first field of every response header version,
  // so it can be read before we know which request the frame answers.
  const int32_t id = read_be32(frame.data());
  auto it = impl_->pending.find(id);
  if (it == impl_->pending.end()) {
    drop(NetError{NetErrorKind::Protocol,
                  peer_ + ": response with unknown correlation id " + std::to_string(id)});
    return;
  }
  Pending p = std::move(it->second);
  impl_->pending.erase(it);
  p.timer->cancel();
  if (!p.handler) return;  // timed out earlier; discard the late response

  auto header = decode_response_header(frame, p.key, p.version);
  if (!header) {
    p.handler(NetError{NetErrorKind::Protocol, std::string(api_name(p.key)) +
                                                   ": bad response header: " +
                                                   header.error().to_string()});
    return;
  }
  const size_t offset = header->second;
  p.handler(Bytes(frame.begin() + static_cast<std::ptrdiff_t>(offset), frame.end()));
}

void Connection::close(const std::string& reason) {
  drop(NetError{NetErrorKind::Disconnected, peer_ + ": " + reason});
}

void Connection::drop(NetError reason) {
  if (state_ == ConnState::Closed) return;
  const bool was_open = state_ == ConnState::Open;
  if (state_ == ConnState::Authenticating && reason.kind != NetErrorKind::Authentication) {
    // Say that SASL was under way: "closed by the broker" alone would hide
    // that the broker may have rejected us.
    reason.message = std::string("SASL authentication (") +
                     sasl_mechanism_name(options_.sasl->mechanism) + ") with " + peer_ +
                     " interrupted: " + reason.message;
  }
  sasl_client_.reset();
  state_ = ConnState::Closed;
  boost::system::error_code ignored;
  impl_->socket.close(ignored);
  impl_->resolver.cancel();
  impl_->connect_timer.cancel();
  impl_->write_queue.clear();
  impl_->held.clear();

  // Fail everything that is still waiting, each exactly once, outside of
  // this call (the caller of close() may be inside a handler).
  auto pending = std::move(impl_->pending);
  impl_->pending.clear();
  for (auto& [id, p] : pending) {
    p.timer->cancel();
    if (!p.handler) continue;
    // A TLS failure stays a TLS failure for the requests it cut off.
    const auto kind = reason.kind == NetErrorKind::Tls ? NetErrorKind::Tls : NetErrorKind::Disconnected;
    NetError e{kind, std::string(api_name(p.key)) + ": " + reason.message};
    asio::post(io_, [h = std::move(p.handler), e = std::move(e)]() mutable { h(std::move(e)); });
  }
  if (connect_done_) {
    auto cb = std::move(connect_done_);
    connect_done_ = nullptr;
    asio::post(io_, [cb = std::move(cb), reason]() mutable { cb(std::move(reason)); });
  }
  if (was_open && on_close_) {
    asio::post(io_, [cb = on_close_, reason]() { cb(reason); });
  }
}

}  // namespace kc::kafka
