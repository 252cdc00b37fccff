#pragma once
// The worker's HTTP/1.1 REST server: Kafka Connect's REST API (reference
// section 6) on top of HerderApi. Boost.Beast lives only in rest_server.cpp;
// this header is cheap to include.
//
// Threading: the server owns one io_context and runs it on one thread of its
// own (started by start(), joined by stop()). All routing, JSON work,
// forwarding and socket I/O happen on that thread. Herder callbacks and
// Responders may be invoked from any thread; they post back onto it.
//
// Hardening (STYLE item 10, 15; the limits table of README.md): a deadline per
// connection (a whole request must be read,
// or a response written, within `io_timeout`; an idle keep-alive connection is
// closed after it), a header and body size limit (413 for a body over
// `body_limit`, 431 for oversized headers), a bound on pipelined requests
// awaiting their response (`pipeline_limit`; reading pauses while full), a
// request-target limit (414), a cap on open connections (`max_connections`),
// 415 for a body that is not application/json, 400 for a path segment that
// is not UTF-8, and a catch-all around every handler and herder callback (an
// unexpected failure answers 500 at once with a request id that the error
// log line repeats),
// keep-alive per HTTP/1.1, and a deadline per request (`request_timeout`,
// 500 "Request timed out", as Connect's 90 s herder timeout; for writes the
// message adds that the change may still be applied, kWriteTimeoutMessage).
//
// Forwarding (reference 4.5, 6.3): when the herder answers NotLeader or
// NotOwner with a URL, the request (method, raw path, query, body,
// Authorization header) is re-sent to that URL with an async Beast client
// (timeout `forward_timeout`) and the target's status, body and Location
// header are relayed (reply headers up to 4 x header_limit, so a Location
// with a long encoded name is read). A request that would not fit a peer
// with the same limits (target_limit, header_limit) is answered here with
// 414 / 431 and not forwarded. Loop protection follows Connect's `forward` query
// parameter: a request without it is forwarded with `forward=true`; a request
// with `forward=true` is forwarded with `forward=false`; a request with
// `forward=false` that would need forwarding again gets 409 "Cannot complete
// request because of a conflicting operation (e.g. worker rebalance)". So a
// request makes at most two hops. An empty URL gives 409 "... no known leader
// URL ...". A transport failure gives 500 "IO Error trying to forward REST
// request: ...". https:// targets go over TLS with `forward_tls` (the
// worker's https trust settings, as Connect's RestClient); without it they
// get that 500.
//
// Security (issue 13): `https://` listeners serve TLS with `https_tls`
// (admin listeners with `admin_https_tls`), optionally asking for client
// certificates (rest_tls.h). Before routing, each request passes these
// checks, in order:
//   1. admin endpoints (first segment "admin", except our internal
//      /admin/drain/members) are served only on the admin listeners
//      (`admin_listeners`; unset = every listener, empty = none): elsewhere
//      404, as Connect. Listeners only in admin_listeners serve nothing else.
//   2. with `basic_auth` set, a request without valid credentials gets 401
//      "User cannot access the resource." (basic_auth.h), except Connect's
//      internal requests (POST /connectors/{c}/tasks, PUT
//      /connectors/{c}/fence), a POST /admin/drain/members that carries a
//      KIP-507 signature header (the herder verifies it) and, when
//      `health_auth` is false, GET /health.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "worker/api/herder_api.h"

namespace kc::rest {

class TlsContext;          // rest_tls.h
class BasicAuthenticator;  // basic_auth.h

/// The 500 message when a write (create, update, patch, delete, pause,
/// resume, stop, restart, offsets, topics reset) gets no herder answer within
/// `request_timeout`: the herder may still apply it. Reads keep Connect's
/// plain "Request timed out".
inline constexpr const char* kWriteTimeoutMessage =
    "Request timed out; the change may still be applied, so read the current state before retrying";

/// HTTP methods the router knows. Anything else is `Other` (→ 405 / 404).
enum class Method { Get, Head, Post, Put, Patch, Delete, Options, Other };

/// "GET", "POST", ...
const char* to_string(Method m);

/// One parsed request, as handed to route handlers.
struct RestRequest {
  Method method = Method::Other;
  std::string target;                  ///< raw request target, e.g. "/connectors/a%20b?forward=true"
  std::string raw_path;                ///< target before '?', still percent-encoded
  std::string raw_query;               ///< target after '?', still encoded ("" if none)
  std::vector<std::string> segments;   ///< decoded path segments, empty ones dropped
  std::vector<std::pair<std::string, std::string>> query;  ///< decoded, in order, repeats kept
  std::map<std::string, std::string> params;  ///< "{name}" captures of the matched pattern; "*" = rest
  std::string authorization;           ///< the Authorization header ("" if absent), copied when forwarding
  std::string content_type;            ///< the Content-Type header ("" if absent)
  /// KIP-507 X-Connect-Authorization (base64 HMAC of the body); nullopt if absent.
  std::optional<std::string> connect_signature;
  /// KIP-507 X-Connect-Request-Signature-Algorithm, e.g. "HmacSHA256"; nullopt if absent.
  std::optional<std::string> connect_signature_algorithm;
  std::string body;
  /// Identifies this request in the worker log and in an unexpected-failure
  /// 500 ("<connection>-<n>", unique while the server runs).
  std::string request_id;

  /// First value of query parameter `name`, nullopt if absent.
  [[nodiscard]] std::optional<std::string> query_value(const std::string& name) const;
  /// All values of query parameter `name`, in order.
  [[nodiscard]] std::vector<std::string> query_values(const std::string& name) const;
};

/// A response. An empty body with status 204 (or any status) sends no
/// Content-Type. `headers` are added as is (e.g. Location).
struct RestResponse {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;

  /// Status with a JSON (already serialised) body.
  static RestResponse json(int status, std::string body);
  /// Connect's error body {"error_code":status,"message":message}.
  static RestResponse error(int status, std::string_view message);
  /// Status without a body (204, 202 ...).
  static RestResponse empty(int status);
};

/// Completes one request. Call exactly once, from any thread; later calls and
/// calls after the server stopped are ignored.
using Responder = std::function<void(RestResponse)>;

/// A route handler. Runs on the REST io thread; must not block. It may answer
/// inline or keep the Responder and answer later from any thread.
using RouteHandler = std::function<void(const RestRequest&, Responder)>;

/// Server settings. Durations are wall-clock deadlines.
struct RestServerOptions {
  /// Listener URLs (Connect's `listeners`), e.g. "http://0.0.0.0:8083",
  /// "https://:8443", "http://127.0.0.1:0" (0 = any free port, see ports()).
  /// An https listener needs `https_tls` (else start() fails).
  std::vector<std::string> listeners{"http://0.0.0.0:8083"};
  /// Connect's `admin.listeners`: nullopt = admin endpoints on `listeners`;
  /// empty = admin endpoints off (404); else listener URLs of their own
  /// (bound after `listeners`; one equal to an entry of `listeners` is
  /// served by that socket, which then serves both).
  std::optional<std::vector<std::string>> admin_listeners;
  std::shared_ptr<TlsContext> https_tls;        ///< server context of https `listeners`
  std::shared_ptr<TlsContext> admin_https_tls;  ///< server context of https admin listeners (default: https_tls)
  std::shared_ptr<TlsContext> forward_tls;      ///< client context for forwarding to https:// workers
  std::shared_ptr<const BasicAuthenticator> basic_auth;  ///< null = no authentication
  bool health_auth = true;  ///< rest.health.auth (ours): false lets GET /health pass without credentials
  std::size_t body_limit = 1024 * 1024;   ///< bytes; larger bodies → 413 and close
  std::size_t header_limit = 16 * 1024;   ///< bytes of request line + headers; larger → 431
  /// Bytes of the request target (path + query, still encoded); longer →
  /// 414. Below header_limit so a forwarded request (target + forward=,
  /// Host, Authorization...) still fits a peer with the same limits.
  std::size_t target_limit = 12 * 1024;
  std::size_t pipeline_limit = 8;         ///< requests read but not yet answered, per connection
  /// Open connections per server. At the cap a new connection evicts the
  /// connection that has waited longest for a request and has none
  /// pending; if every connection has a request pending it is closed.
  std::size_t max_connections = 512;
  std::chrono::milliseconds io_timeout{30'000};       ///< per-connection read/write/idle deadline
  std::chrono::milliseconds request_timeout{90'000};  ///< herder call deadline → 500
  std::chrono::milliseconds health_timeout{10'000};   ///< GET /health deadline → 500 unhealthy
  std::chrono::milliseconds forward_timeout{90'000};  ///< forwarded request deadline → 500
  std::size_t forward_response_limit = 16 * 1024 * 1024;  ///< bytes accepted from the forward target
  std::string version = "0.1.0";  ///< "version" of GET /
  std::string commit = "unknown"; ///< "commit" of GET /
};

/// The REST server. Construct, optionally add_route(), start(), ... stop().
/// Not copyable. The HerderApi must outlive the server's stop(); callbacks the
/// herder still holds after that are harmless no-ops.
class RestServer {
 public:
  RestServer(RestServerOptions options, HerderApi& herder);
  ~RestServer();  ///< calls stop()
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  /// Parses the listeners, binds them (SO_REUSEADDR) and starts the io
  /// thread. Errors: unparsable listener, https listener without a TLS
  /// context, bind failure (the message names the listener). Call once.
  Status start();

  /// Closes the listeners and every connection, joins the io thread.
  /// Idempotent; in-flight requests get no response. Call it from any thread
  /// except the REST io thread (i.e. not from a route handler or Responder).
  void stop();

  /// Bound ports, one per listener, in listener order, then the admin
  /// listeners that have a socket of their own (valid after start()).
  [[nodiscard]] std::vector<uint16_t> ports() const;
  /// The first bound port.
  [[nodiscard]] uint16_t port() const;
  /// "<scheme>://<host>:<port>/" for the first listener; a wildcard host
  /// (0.0.0.0, ::) is reported as 127.0.0.1 / ::1. Meant for tests and logs;
  /// the advertised URL is the herder's (WorkerInfo::rest_url).
  [[nodiscard]] std::string url() const;

  /// Registers an extra route (e.g. GET /metrics, GET /rebalances). Pattern:
  /// '/'-separated segments; "{name}" captures one decoded segment into
  /// RestRequest::params; a final "*" matches any remaining segments (also
  /// none) and captures them joined by '/' as params["*"]. Extra routes are
  /// tried before the built-in Connect routes, in the order added. A path
  /// that matches some route but not its method gets 405. Thread-safe; may be
  /// called before or after start(). `timeout` defaults to request_timeout.
  void add_route(Method method, std::string pattern, RouteHandler handler,
                 std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Answers `r` with `err` as the built-in routes do: NotLeader and
  /// NotOwner are forwarded to err.forward_url (Connect's `forward` hops,
  /// at most two), any other kind answers its status with Connect's error
  /// body. For extra routes whose herder call may land on the wrong worker.
  /// Any thread.
  void fail(const RestRequest& req, const Responder& r, const RestError& err);

  /// Sends `method` `path_and_query` (starting with '/', already encoded)
  /// with `authorization` (the Authorization header, "" = none) and a JSON
  /// `body` ("" = none) to the worker at `base_url` ("http://w2:8083/"),
  /// with the forwarding client: TLS with `forward_tls`, `timeout` for the
  /// whole exchange (default `forward_timeout`),
  /// replies up to `forward_response_limit` bytes, and the peer's size
  /// limits checked first (414 / 431). `done` gets the peer's status, body
  /// and Location, or a 500 naming the failure (bad URL, no TLS settings,
  /// connect, read or timeout). Any thread; `done` runs on the io thread.
  void send(const std::string& base_url, Method method, const std::string& path_and_query,
            const std::string& authorization, const std::string& body, Responder done,
            std::optional<std::chrono::milliseconds> timeout = std::nullopt);

  /// Every registered route as (method, pattern as given): the extra
  /// routes in the order added, then the built-in Connect routes (for
  /// the route table's test, route_docs.h). Thread-safe.
  [[nodiscard]] std::vector<std::pair<Method, std::string>> routes() const;

 private:
  class Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kc::rest
