#pragma once
// Test helpers for the protocol integration suite: running an io_context
// until a condition holds, and a tiny Kafka-speaking Asio acceptor that the
// test controls request by request (FakeBroker).

#include <catch2/catch.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "worker/coordinator/group_member.h"
#include "protocol/kafka/messages.h"

namespace kc::test {

/// Runs `io` (on the calling thread) until `pred()` is true or `timeout`
/// passes. Returns pred().
template <typename Pred>
bool run_until(boost::asio::io_context& io, Pred pred, std::chrono::milliseconds timeout) {
  auto guard = boost::asio::make_work_guard(io);
  const auto end = std::chrono::steady_clock::now() + timeout;
  while (!pred() && std::chrono::steady_clock::now() < end) {
    io.run_for(std::chrono::milliseconds(20));
    if (io.stopped()) io.restart();
  }
  return pred();
}

/// Runs `io` for `d` regardless of conditions.
inline void run_for(boost::asio::io_context& io, std::chrono::milliseconds d) {
  run_until(io, [] { return false; }, d);
}

/// Settings for a member of group `group_id` on a scripted broker at
/// `bootstrap` ("host:port"): 3 s session and rebalance timeouts, 50 ms
/// heartbeats (a test sees many within a second), 2 s request timeout, 20 ms
/// retry backoff; no TLS, SASL or group.instance.id.
inline kafka::GroupMemberConfig scripted_group_config(const std::string& group_id, const std::string& bootstrap) {
  using std::chrono::milliseconds;
  kafka::GroupMemberConfig cfg;
  cfg.group_id = group_id;
  cfg.bootstrap_servers = {bootstrap};
  cfg.session_timeout = milliseconds(3000);
  cfg.rebalance_timeout = milliseconds(3000);
  cfg.heartbeat_interval = milliseconds(50);
  cfg.request_timeout = milliseconds(2000);
  cfg.retry_backoff = milliseconds(20);
  return cfg;
}

/// scripted_group_config for a scripted broker at 127.0.0.1:`port`.
inline kafka::GroupMemberConfig scripted_group_config(const std::string& group_id, uint16_t port) {
  return scripted_group_config(group_id, "127.0.0.1:" + std::to_string(port));
}

/// One response frame: size prefix, response header (v1 with an empty
/// tagged-field section for flexible versions, except ApiVersions) and `body`.
inline kafka::Bytes response_frame(const kafka::RequestHeader& header, const kafka::Bytes& body) {
  kafka::Bytes frame;
  auto put32 = [&frame](int32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8) frame.push_back(static_cast<uint8_t>((v >> shift) & 0xff));
  };
  const bool tagged = kafka::is_flexible(header.api_key, header.api_version) &&
                      header.api_key != kafka::ApiKey::ApiVersions;
  put32(static_cast<int32_t>(4 + (tagged ? 1 : 0) + body.size()));
  put32(header.correlation_id);
  if (tagged) frame.push_back(0);  // empty tagged-field section (response header v1)
  frame.insert(frame.end(), body.begin(), body.end());
  return frame;
}

/// One client connection of a scripted broker (plaintext FakeSession or the
/// TLS broker's session): what a script answers through.
class BrokerSession {
 public:
  virtual ~BrokerSession() = default;
  /// Writes one response frame for `header` with `body` (the message body,
  /// already encoded at header.api_version).
  void respond(const kafka::RequestHeader& header, const kafka::Bytes& body) {
    send_frame(response_frame(header, body));
  }
  /// Writes `r`, encoded at header.api_version, as the response to `header`
  /// (throws when `r` does not encode at that version).
  template <typename Response>
  void reply(const kafka::RequestHeader& header, const Response& r) {
    respond(header, kafka::encode(r, header.api_version).value());
  }
  /// Writes raw bytes (a complete frame, or garbage on purpose).
  virtual void send_frame(kafka::Bytes frame) = 0;
  /// Closes the connection (the client sees a disconnect).
  virtual void close() = 0;
};

/// One accepted client connection of the FakeBroker.
class FakeSession : public BrokerSession, public std::enable_shared_from_this<FakeSession> {
 public:
  explicit FakeSession(boost::asio::ip::tcp::socket s) : socket_(std::move(s)) {}

  /// Blocking write: local and tiny.
  void send_frame(kafka::Bytes frame) override {
    if (!socket_.is_open()) return;
    boost::system::error_code ec;
    boost::asio::write(socket_, boost::asio::buffer(frame), ec);
  }

  void close() override {
    boost::system::error_code ec;
    socket_.close(ec);
  }

  boost::asio::ip::tcp::socket& socket() { return socket_; }

 private:
  boost::asio::ip::tcp::socket socket_;
};

/// A request a scripted broker received (other than ApiVersions, which it
/// answers by itself).
struct FakeRequest {
  std::shared_ptr<BrokerSession> session;
  kafka::RequestHeader header;
  kafka::Bytes body;

  /// Answers this request with `r`, encoded at the request's version.
  template <typename Response>
  void reply(const Response& r) const {
    session->reply(header, r);
  }
};

/// Decodes `req`'s body at the request's version with `decode` (a
/// kafka::decode_<Request>), fails the test when it does not decode, appends
/// the message to `log` (a script's record of what it received) and returns
/// it.
template <typename Request, typename Decode>
Request decode_logged(const FakeRequest& req, Decode decode, std::vector<Request>& log) {
  auto m = decode(req.body, req.header.api_version);
  REQUIRE(m.ok());
  log.push_back(std::move(m).value());
  return log.back();
}

/// Answers a FindCoordinator request with this broker itself (node 1 at
/// `host`:`port`) as the coordinator of the requested key, at the request's
/// version. For the scripted group coordinators of the tests.
inline void answer_find_coordinator(FakeRequest& req, const std::string& host, uint16_t port) {
  const int16_t v = req.header.api_version;
  kafka::FindCoordinatorResponse r;
  kafka::Coordinator c;
  c.key = kafka::decode_FindCoordinatorRequest(req.body, v)->key;
  c.node_id = 1;
  c.host = host;
  c.port = port;
  r.coordinators.push_back(c);
  req.reply(r);
}

/// The Kafka side of a scripted broker, whatever its transport: answers
/// ApiVersions from `api_versions` (and with UNSUPPORTED_VERSION + a v0 body
/// for versions above `api_versions_max`), and hands every other request to
/// `on_request` (default: just record it in `requests`). A script adds APIs
/// (e.g. SaslHandshake/SaslAuthenticate) by listing them in `api_versions`
/// and answering them in `on_request`.
class ScriptedRequests {
 public:
  /// Ranges advertised in ApiVersionsResponse.
  std::vector<kafka::ApiVersionRange> api_versions = {
      {18, 0, 3}, {10, 0, 4}, {11, 0, 9}, {12, 0, 4}, {13, 0, 5}, {14, 0, 5}};
  /// Highest ApiVersions request version answered normally.
  int16_t api_versions_max = 3;
  /// ApiVersions request versions seen, in order.
  std::vector<int16_t> api_versions_seen;
  /// Every other request, in arrival order.
  std::vector<FakeRequest> requests;
  /// Called for every non-ApiVersions request after it is recorded.
  std::function<void(FakeRequest&)> on_request;

  /// Handles one request frame (without its size prefix) from `session`; a
  /// frame whose header does not decode closes the session.
  void handle(const std::shared_ptr<BrokerSession>& session, const kafka::Bytes& frame) {
    auto hdr = kafka::decode_request_header(frame);
    if (!hdr) {
      session->close();
      return;
    }
    const kafka::RequestHeader& h = hdr->first;
    kafka::Bytes body(frame.begin() + static_cast<std::ptrdiff_t>(hdr->second), frame.end());
    if (h.api_key == kafka::ApiKey::ApiVersions) {
      api_versions_seen.push_back(h.api_version);
      if (h.api_version > api_versions_max) {
        kafka::ApiVersionsResponse r;
        r.error_code = static_cast<int16_t>(kafka::ErrorCode::UNSUPPORTED_VERSION);
        r.api_keys = {{18, 0, api_versions_max}};
        session->respond(h, kafka::encode(r, 0).value());
        return;
      }
      kafka::ApiVersionsResponse r;
      r.api_keys = api_versions;
      session->reply(h, r);
      return;
    }
    requests.push_back(FakeRequest{session, h, std::move(body)});
    if (on_request) on_request(requests.back());
  }
};

/// A tiny plaintext broker on 127.0.0.1:<ephemeral> speaking the
/// ScriptedRequests script.
class FakeBroker : public ScriptedRequests {
 public:
  explicit FakeBroker(boost::asio::io_context& io)
      : io_(io), acceptor_(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    accept();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  /// Accepted sessions.
  std::vector<std::shared_ptr<FakeSession>> sessions;

 private:
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;
      auto session = std::make_shared<FakeSession>(std::move(s));
      sessions.push_back(session);
      read(session);
      accept();
    });
  }

  void read(std::shared_ptr<FakeSession> session) {
    auto size = std::make_shared<std::array<uint8_t, 4>>();
    boost::asio::async_read(session->socket(), boost::asio::buffer(*size),
                            [this, session, size](const boost::system::error_code& ec, size_t) {
                              if (ec) return;
                              const auto& b = *size;
                              const uint32_t n = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
                                                 (uint32_t{b[2]} << 8) | uint32_t{b[3]};
                              auto frame = std::make_shared<kafka::Bytes>(n);
                              boost::asio::async_read(
                                  session->socket(), boost::asio::buffer(*frame),
                                  [this, session, frame](const boost::system::error_code& ec2, size_t) {
                                    if (ec2) return;
                                    handle(session, *frame);
                                    read(session);
                                  });
                            });
  }

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace kc::test
