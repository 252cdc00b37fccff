#include "worker/rest/rest_server.h"
#include "common/strings.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <spdlog/spdlog.h>

#include "common/names.h"
#include "worker/rest/basic_auth.h"
#include "worker/rest/json_codec.h"
#include "worker/api/rest_tls.h"
#include "worker/api/url.h"

namespace kc::rest {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using nlohmann::json;

// ---------------------------------------------------------------------------
// Small public helpers
// ---------------------------------------------------------------------------

const char* to_string(Method m) {
  switch (m) {
    case Method::Get: return "GET";
    case Method::Head: return "HEAD";
    case Method::Post: return "POST";
    case Method::Put: return "PUT";
    case Method::Patch: return "PATCH";
    case Method::Delete: return "DELETE";
    case Method::Options: return "OPTIONS";
    case Method::Other: return "OTHER";
  }
  return "OTHER";
}

std::optional<std::string> RestRequest::query_value(const std::string& name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::vector<std::string> RestRequest::query_values(const std::string& name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : query) {
    if (k == name) out.push_back(v);
  }
  return out;
}

RestResponse RestResponse::json(int status, std::string body) {
  RestResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

RestResponse RestResponse::error(int status, std::string_view message) {
  return json(status, error_body(status, message));
}

RestResponse RestResponse::empty(int status) {
  RestResponse r;
  r.status = status;
  r.content_type.clear();
  return r;
}

namespace {

Method method_from_verb(http::verb v) {
  switch (v) {
    case http::verb::get: return Method::Get;
    case http::verb::head: return Method::Head;
    case http::verb::post: return Method::Post;
    case http::verb::put: return Method::Put;
    case http::verb::patch: return Method::Patch;
    case http::verb::delete_: return Method::Delete;
    case http::verb::options: return Method::Options;
    default: return Method::Other;
  }
}

http::verb verb_from_method(Method m) {
  switch (m) {
    case Method::Get: return http::verb::get;
    case Method::Head: return http::verb::head;
    case Method::Post: return http::verb::post;
    case Method::Put: return http::verb::put;
    case Method::Patch: return http::verb::patch;
    case Method::Delete: return http::verb::delete_;
    case Method::Options: return http::verb::options;
    case Method::Other: return http::verb::unknown;
  }
  return http::verb::unknown;
}

/// JAX-RS style boolean query parameter: absent → `def`; otherwise true only
/// for "true" (any case), as Jersey's Boolean conversion does.
bool bool_param(const RestRequest& req, const std::string& name, bool def) {
  auto v = req.query_value(name);
  return v ? ascii_iequals(*v, "true") : def;
}

const char* kNoLeaderMessage =
    "Cannot complete request momentarily due to no known leader URL, likely because a rebalance was underway.";
const char* kUnhealthyTimeoutMessage =
    "Worker was unable to handle this request and may be unable to handle other requests";

/// A route pattern: literal segments, "{name}" captures, optional final "*".
struct Pattern {
  std::vector<std::string> segments;
  bool wildcard = false;
};

Pattern parse_pattern(std::string_view text) {
  Pattern p;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t next = text.find('/', pos);
    if (next == std::string_view::npos) next = text.size();
    std::string_view seg = text.substr(pos, next - pos);
    if (!seg.empty()) p.segments.emplace_back(seg);
    pos = next + 1;
  }
  if (!p.segments.empty() && p.segments.back() == "*") {
    p.segments.pop_back();
    p.wildcard = true;
  }
  return p;
}

bool match_pattern(const Pattern& p, const std::vector<std::string>& segs, std::map<std::string, std::string>& params) {
  if (p.wildcard ? segs.size() < p.segments.size() : segs.size() != p.segments.size()) return false;
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < p.segments.size(); ++i) {
    const std::string& ps = p.segments[i];
    if (ps.size() >= 2 && ps.front() == '{' && ps.back() == '}') {
      out[ps.substr(1, ps.size() - 2)] = segs[i];
    } else if (ps != segs[i]) {
      return false;
    }
  }
  if (p.wildcard) {
    std::string rest;
    for (size_t i = p.segments.size(); i < segs.size(); ++i) {
      if (!rest.empty()) rest.push_back('/');
      rest += segs[i];
    }
    out["*"] = rest;
  }
  params = std::move(out);
  return true;
}

/// Lets any thread post onto the io_context for as long as the server runs.
/// Closed by stop(); afterwards posts are dropped (no use of a dead io_context).
struct Gate {
  std::mutex mu;
  asio::io_context* ioc = nullptr;

  template <typename F>
  void post(F&& f) {
    std::lock_guard<std::mutex> lock(mu);
    if (ioc != nullptr) asio::post(*ioc, std::forward<F>(f));
  }
  void close() {
    std::lock_guard<std::mutex> lock(mu);
    ioc = nullptr;
  }
};

/// One accepted connection's byte stream: plain TCP or TLS over TCP, with
/// the AsyncRead/WriteStream surface Beast needs, so one Session serves both.
class ServerStream {
 public:
  using executor_type = tcp::socket::executor_type;

  ServerStream(tcp::socket socket, TlsContext* tls) {
    if (tls != nullptr) {
      tls_.emplace(std::move(socket), tls->native());
    } else {
      plain_.emplace(std::move(socket));
    }
  }
  executor_type get_executor() { return socket().get_executor(); }
  tcp::socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }
  [[nodiscard]] bool is_tls() const { return tls_.has_value(); }
  asio::ssl::stream<tcp::socket>& tls() { return *tls_; }

  template <typename Buffers, typename Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }
  template <typename Buffers, typename Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

 private:
  std::optional<asio::ssl::stream<tcp::socket>> tls_;
  std::optional<tcp::socket> plain_;
};

/// A bound listener and what it serves.
struct BoundListener {
  std::string text;                  ///< as configured, for logs
  HttpUrl url;
  std::shared_ptr<TlsContext> tls;   ///< null = plain http
  bool regular = true;               ///< serves the Connect API (in `listeners`)
  bool admin = true;                 ///< serves the admin endpoints
};

/// Admin endpoints: /admin/... except our worker-to-leader drain request,
/// which must reach the leader's advertised (regular) listener.
bool is_admin_path(const std::vector<std::string>& segments) {
  if (segments.empty() || segments[0] != "admin") return false;
  return !(segments.size() == 3 && segments[1] == "drain" && segments[2] == "members");
}

/// "POST /connectors" for log lines (the raw path: never a body or a query,
/// which may hold secrets).
std::string describe(const RestRequest& req) { return std::string(to_string(req.method)) + " " + req.raw_path; }

/// The 500 for an unexpected failure (an exception from a handler or a
/// herder callback): Connect's error body, with the request id that the
/// error log line written here also carries.
RestResponse internal_error(const std::string& request_id, const std::string& what, std::string_view why) {
  spdlog::error("rest: request {} ({}) failed unexpectedly: {}", request_id, what, why);
  return RestResponse::error(500, "Unexpected error while handling the request (request id " + request_id +
                                      "); the worker log has the details");
}

/// Runs `fn`; anything it throws answers `r` with internal_error instead
/// of escaping into the io loop (`r` ignores a second answer).
template <typename F>
void guarded(const std::string& request_id, const std::string& what, const Responder& r, F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    r(internal_error(request_id, what, e.what()));
  } catch (...) {
    r(internal_error(request_id, what, "unknown exception"));
  }
}

/// True when `content_type` is application/json (parameters such as
/// charset allowed, case-insensitive), what Connect's @Consumes accepts.
bool is_json_media_type(std::string_view content_type) {
  auto semi = content_type.find(';');
  std::string_view type = content_type.substr(0, semi);
  while (!type.empty() && (type.front() == ' ' || type.front() == '\t')) type.remove_prefix(1);
  while (!type.empty() && (type.back() == ' ' || type.back() == '\t')) type.remove_suffix(1);
  static constexpr std::string_view kJson = "application/json";
  return type.size() == kJson.size() &&
         std::equal(type.begin(), type.end(), kJson.begin(),
                    [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

struct Route {
  Method method = Method::Get;
  std::string text;  ///< the pattern as registered (for routes())
  Pattern pattern;
  RouteHandler handler;
  std::chrono::milliseconds timeout{0};
  RestResponse timeout_response;
};

}  // namespace

// ---------------------------------------------------------------------------
// Impl
// ---------------------------------------------------------------------------

class RestServer::Impl {
 public:
  class Session;
  class ForwardCall;

  Impl(RestServerOptions options, HerderApi& herder);
  ~Impl();

  Status start();
  void stop();
  void add_route(Method method, std::string pattern, RouteHandler handler, std::chrono::milliseconds timeout,
                 RestResponse timeout_response, bool builtin);

  /// Outcome of routing: either a handler (with its deadline) or an
  /// immediate response (404 / 405).
  struct Match {
    RouteHandler handler;
    std::chrono::milliseconds timeout{0};
    RestResponse timeout_response;
    std::optional<RestResponse> immediate;
  };
  Match route(RestRequest& req);

  /// Wraps a continuation that must run on the io thread into a herder
  /// Callback that may be invoked from any thread. Whatever the continuation
  /// throws answers `r` with internal_error (so no request waits out its
  /// deadline because of a local failure) and never reaches the io loop.
  template <typename T>
  Callback<T> on_io(const RestRequest& req, const Responder& r, std::function<void(Reply<T>)> fn) {
    return [gate = gate_, fn = std::move(fn), r, id = req.request_id, what = describe(req)](Reply<T> reply) {
      gate->post([fn, r, id, what, reply = std::move(reply)]() mutable {
        guarded(id, what, r, [&] { fn(std::move(reply)); });
      });
    };
  }

  /// Answers with the error, or forwards on NotLeader / NotOwner (io thread).
  void fail(const RestRequest& req, const Responder& r, const RestError& err);
  /// Sends `method` `target` (path and query, as sent) to `url`'s host with
  /// the forwarding client, after the size checks a peer would make; the
  /// answer (or a 500 "IO Error ...") goes to `r`. io thread.
  void send_checked(HttpUrl url, Method method, std::string target, const std::string& authorization,
                    const std::string& body, const Responder& r, std::chrono::milliseconds timeout);
  void forward(const RestRequest& req, const Responder& r, const RestError& err);

  void register_builtin_routes();
  /// POST /connectors, PUT and PATCH .../config: one leader write, 201 +
  /// Location when created, else 200, both with ConnectorInfo.
  void put_config(const RestRequest& req, const Responder& r, PutConnectorRequest put);
  void do_accept(size_t index);
  /// At max_connections: closes the evictable session that has waited
  /// longest for a request. False when none is evictable (io thread).
  bool make_room();
  /// Listener and authentication checks before routing (header comment of
  /// rest_server.h); nullopt = go on, else the answer.
  std::optional<RestResponse> admit(const RestRequest& req, const BoundListener& listener) const;
  Status bind_listener(const std::string& text, std::shared_ptr<TlsContext> tls, bool regular, bool admin);

  void list_connectors(const RestRequest& req, const Responder& r);
  void expand_connectors(const RestRequest& req, const Responder& r, std::vector<std::string> names, bool status,
                         bool info, bool any_expand);

  RestServerOptions opts_;
  HerderApi& herder_;
  std::shared_ptr<Gate> gate_ = std::make_shared<Gate>();

  std::mutex routes_mu_;
  std::vector<Route> extra_routes_;
  std::vector<Route> builtin_routes_;

  std::unique_ptr<asio::io_context> ioc_;
  std::vector<std::unique_ptr<tcp::acceptor>> acceptors_;
  std::vector<HttpUrl> listener_urls_;
  std::vector<BoundListener> bound_;  // parallel to acceptors_
  std::vector<uint16_t> ports_;
  std::map<uint64_t, std::shared_ptr<Session>> sessions_;  // io thread only
  uint64_t next_session_id_ = 0;
  std::thread thread_;
  std::thread::id io_thread_id_;
  bool started_ = false;
  bool stopped_ = false;
};

// ---------------------------------------------------------------------------
// Session: one HTTP/1.1 connection with bounded pipelining
// ---------------------------------------------------------------------------

class RestServer::Impl::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(Impl& srv, tcp::socket socket, uint64_t id, const BoundListener& listener)
      : srv_(srv), listener_(listener), stream_(std::move(socket), listener.tls.get()),
        io_timer_(stream_.get_executor()), id_(id),
        // Unread pipelined bytes wait here while the pipeline is full: at
        // most one header plus a few reads.
        buffer_(srv.opts_.header_limit + 4 * 65536) {}

  /// May be closed to make room for a new connection (max_connections):
  /// no request is pending or being answered on it.
  [[nodiscard]] bool evictable() const { return !closed_ && queue_.empty() && !writing_; }
  /// When this connection started waiting for its current request.
  [[nodiscard]] std::chrono::steady_clock::time_point waiting_since() const { return waiting_since_; }

  /// TLS listeners first complete the handshake (bounded by io_timeout).
  void start() {
    if (!stream_.is_tls()) return do_read();
    arm_io_timer();
    stream_.tls().async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](beast::error_code ec) {
      if (self->closed_) return;
      if (ec) {
        spdlog::debug("rest: TLS handshake on {} failed: {}", self->listener_.text, ec.message());
        return self->close_now();
      }
      self->do_read();
    });
  }

  /// Closes the socket at once and forgets the session (io thread).
  void close_now() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ec;
    io_timer_.cancel();
    for (auto& slot : queue_) {
      if (slot.deadline) slot.deadline->cancel();
    }
    stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
    stream_.socket().close(ec);
    srv_.sessions_.erase(id_);  // callers hold a shared_ptr to this
  }

  /// Delivers the response of pipelined request `slot_id` (io thread).
  void complete(uint64_t slot_id, RestResponse res) {
    if (closed_) return;
    auto it = std::find_if(queue_.begin(), queue_.end(), [&](const Slot& s) { return s.id == slot_id; });
    if (it == queue_.end() || it->ready) return;
    Slot& slot = *it;
    if (slot.deadline) slot.deadline->cancel();
    slot.res.version(slot.version);
    slot.res.result(static_cast<unsigned>(res.status));
    slot.res.set(http::field::server, "kconnectd");
    if (!res.body.empty() && !res.content_type.empty()) slot.res.set(http::field::content_type, res.content_type);
    for (const auto& [k, v] : res.headers) slot.res.set(k, v);
    slot.res.body() = std::move(res.body);
    slot.res.keep_alive(slot.keep_alive);
    slot.res.prepare_payload();
    slot.ready = true;
    auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - slot.started);
    spdlog::debug("rest: {} -> {} ({} ms)", slot.log_line, res.status, elapsed.count());
    maybe_write();
  }

 private:
  struct Slot {
    uint64_t id = 0;
    bool ready = false;
    bool keep_alive = true;
    unsigned version = 11;
    std::string log_line;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    http::response<http::string_body> res;
    std::unique_ptr<asio::steady_timer> deadline;
  };

  void arm_io_timer() {
    io_timer_.expires_after(draining_ ? std::min(srv_.opts_.io_timeout, std::chrono::milliseconds(1000))
                                      : srv_.opts_.io_timeout);
    io_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->on_io_timeout();
    });
  }

  void on_io_timeout() {
    if (closed_) return;
    if (draining_ || writing_) {  // lingering close over, or the peer stopped reading
      close_now();
      return;
    }
    if (!queue_.empty()) {  // responses still pending: they are bounded by request deadlines
      arm_io_timer();
      return;
    }
    spdlog::debug("rest: closing connection {} after {} ms without a complete request", id_,
                  srv_.opts_.io_timeout.count());
    close_now();
  }

  void do_read() {
    if (reading_ || read_done_ || closed_ || draining_ || queue_.size() >= srv_.opts_.pipeline_limit) return;
    parser_.emplace();
    waiting_since_ = std::chrono::steady_clock::now();
    parser_->body_limit(srv_.opts_.body_limit);
    parser_->header_limit(static_cast<std::uint32_t>(srv_.opts_.header_limit));
    reading_ = true;
    arm_io_timer();
    http::async_read_header(stream_, buffer_, *parser_,
                            [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_header(ec); });
  }

  /// Headers are in. A client that sent "Expect: 100-continue" (curl does for
  /// bodies over 1 KiB) waits for an interim 100 before sending the body;
  /// send it unless a response is being written (the client then sends the
  /// body after its own short wait). Oversized bodies were already refused by
  /// the parser (body_limit is checked against Content-Length).
  void on_header(beast::error_code ec) {
    if (ec || closed_ || draining_ || parser_->is_done()) return on_read(ec);
    auto expect = parser_->get()[http::field::expect];
    if (ascii_iequals(std::string_view(expect.data(), expect.size()), "100-continue") && !writing_) {
      static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      writing_ = true;
      asio::async_write(stream_, asio::buffer(kContinue.data(), kContinue.size()),
                        [self = shared_from_this()](beast::error_code wec, std::size_t) {
                          self->writing_ = false;
                          if (self->closed_) return;
                          if (wec) return self->close_now();
                          self->read_body();
                          self->maybe_write();
                        });
      return;
    }
    read_body();
  }

  void read_body() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_read(ec); });
  }

  void on_read(beast::error_code ec) {
    reading_ = false;
    if (closed_) return;
    if (draining_) {
      close_now();
      return;
    }
    if (ec) {
      read_done_ = true;
      if (ec == http::error::body_limit) {
        push_immediate(RestResponse::error(
            413, "Request body is larger than the limit of " + std::to_string(srv_.opts_.body_limit) + " bytes"));
      } else if (ec == http::error::header_limit) {
        push_immediate(RestResponse::error(431, "Request headers are too large"));
      } else if (ec.category() == beast::error_code(http::error::bad_target).category() &&
                 ec != http::error::end_of_stream && ec != http::error::partial_message) {
        push_immediate(RestResponse::error(400, "Malformed HTTP request: " + ec.message()));
      } else if (queue_.empty()) {
        close_now();  // EOF, reset, timeout cancel: nothing left to answer
        return;
      }
      maybe_write();
      return;
    }
    handle(parser_->release());
    do_read();
  }

  /// Queues an already-complete response (parse errors); the connection
  /// closes after it.
  void push_immediate(RestResponse res) {
    Slot& slot = queue_.emplace_back();
    slot.id = next_slot_++;
    slot.keep_alive = false;
    slot.log_line = "(unparsed request)";
    complete(slot.id, std::move(res));
  }

  Responder make_responder(uint64_t slot_id) {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::weak_ptr<Session> weak = shared_from_this();
    return [done, gate = srv_.gate_, weak, slot_id](RestResponse res) {
      if (done->exchange(true)) return;
      gate->post([weak, slot_id, res = std::move(res)]() mutable {
        if (auto self = weak.lock()) self->complete(slot_id, std::move(res));
      });
    };
  }

  void handle(http::request<http::string_body> hreq) {
    Slot& slot = queue_.emplace_back();
    slot.id = next_slot_++;
    slot.keep_alive = hreq.keep_alive();
    slot.version = hreq.version();
    const uint64_t slot_id = slot.id;
    if (!slot.keep_alive) read_done_ = true;
    slot.log_line = std::string(hreq.method_string()) + " " + std::string(hreq.target());
    const std::string request_id = std::to_string(id_) + "-" + std::to_string(slot_id);
    // Nothing below may throw into the io loop: the slot would never be
    // answered and the connection would hang until its peer gives up.
    try {
      route_request(std::move(hreq), slot, request_id);
    } catch (const std::exception& e) {
      complete(slot_id, internal_error(request_id, slot.log_line, e.what()));
    } catch (...) {
      complete(slot_id, internal_error(request_id, slot.log_line, "unknown exception"));
    }
  }

  /// Checks, routes and dispatches one request whose Slot is queued.
  void route_request(http::request<http::string_body> hreq, Slot& slot, const std::string& request_id) {
    const uint64_t slot_id = slot.id;
    RestRequest req;
    req.request_id = request_id;
    req.method = method_from_verb(hreq.method());
    req.target = std::string(hreq.target());
    if (req.target.size() > srv_.opts_.target_limit) {
      complete(slot_id, RestResponse::error(414, "Request target is " + std::to_string(req.target.size()) +
                                                     " bytes long; the limit is " +
                                                     std::to_string(srv_.opts_.target_limit) + " bytes"));
      return;
    }
    req.authorization = std::string(hreq[http::field::authorization]);
    req.content_type = std::string(hreq[http::field::content_type]);
    if (auto it = hreq.find("X-Connect-Authorization"); it != hreq.end())
      req.connect_signature = std::string(it->value());
    if (auto it = hreq.find("X-Connect-Request-Signature-Algorithm"); it != hreq.end())
      req.connect_signature_algorithm = std::string(it->value());
    req.body = std::move(hreq.body());
    auto qpos = req.target.find('?');
    req.raw_path = req.target.substr(0, qpos);
    if (qpos != std::string::npos) req.raw_query = req.target.substr(qpos + 1);
    if (req.raw_path.empty() || req.raw_path.front() != '/') {
      complete(slot_id, RestResponse::error(400, "Request target must be an absolute path"));
      return;
    }
    auto segments = split_path(req.raw_path);
    auto query = parse_query(req.raw_query);
    if (!segments || !query) {
      complete(slot_id, RestResponse::error(400, "Malformed percent-encoding in request target"));
      return;
    }
    req.segments = std::move(*segments);
    req.query = std::move(*query);

    if (auto denied = srv_.admit(req, listener_)) {
      complete(slot_id, std::move(*denied));
      return;
    }
    // A name read from the path is used as a config-topic key and echoed in
    // JSON: it must be text. Any route, before the herder sees it.
    for (size_t i = 0; i < req.segments.size(); ++i) {
      if (!kc::is_valid_utf8(req.segments[i])) {
        complete(slot_id, RestResponse::error(400, "Path segment " + std::to_string(i + 1) +
                                                       " is not valid UTF-8 after percent-decoding; connector "
                                                       "names (and every path segment) must be valid UTF-8"));
        return;
      }
    }
    Match m = srv_.route(req);
    if (m.immediate) {
      complete(slot_id, std::move(*m.immediate));
      return;
    }
    // Connect's resources consume application/json (Jersey's @Consumes): a
    // body of another type, or of none (JAX-RS then assumes
    // application/octet-stream), is 415. Body-less requests need no type.
    const bool has_body_method =
        req.method == Method::Post || req.method == Method::Put || req.method == Method::Patch;
    if (has_body_method && !req.body.empty() && !is_json_media_type(req.content_type)) {
      complete(slot_id, RestResponse::error(415, "HTTP 415 Unsupported Media Type"));
      return;
    }
    Responder responder = make_responder(slot_id);
    slot.deadline = std::make_unique<asio::steady_timer>(stream_.get_executor());
    slot.deadline->expires_after(m.timeout);
    slot.deadline->async_wait([responder, timeout_response = m.timeout_response](beast::error_code ec) {
      if (!ec) responder(timeout_response);
    });
    guarded(req.request_id, describe(req), responder, [&] { m.handler(req, responder); });
  }

  void maybe_write() {
    if (closed_ || writing_ || draining_) return;
    if (queue_.empty()) {
      if (read_done_ && !reading_) linger_close();
      return;
    }
    if (!queue_.front().ready) return;
    writing_ = true;
    arm_io_timer();
    http::async_write(stream_, queue_.front().res,
                      [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_write(ec); });
  }

  void on_write(beast::error_code ec) {
    writing_ = false;
    if (closed_) return;
    if (ec) {
      close_now();
      return;
    }
    bool close = queue_.front().res.need_eof();
    queue_.pop_front();
    if (close) {
      read_done_ = true;
      linger_close();
      return;
    }
    if (reading_) arm_io_timer();  // the keep-alive idle window starts now
    do_read();
    maybe_write();
  }

  /// Half-closes, then discards what the peer still sends (e.g. the rest of
  /// an oversized body) for up to 1 s, so our last response is not destroyed
  /// by a TCP reset.
  void linger_close() {
    if (closed_ || draining_) return;
    draining_ = true;
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
    arm_io_timer();
    if (!reading_) drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(drain_buf_), [self = shared_from_this()](beast::error_code ec, std::size_t) {
      if (ec) {
        self->close_now();
      } else if (!self->closed_) {
        self->drain();
      }
    });
  }

  Impl& srv_;
  const BoundListener& listener_;  // owned by Impl, outlives every session
  ServerStream stream_;
  asio::steady_timer io_timer_;
  uint64_t id_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::deque<Slot> queue_;  // pipelined requests in arrival order
  uint64_t next_slot_ = 0;
  std::array<char, 4096> drain_buf_{};
  bool reading_ = false;
  bool writing_ = false;
  bool read_done_ = false;  // no further request will be read
  bool draining_ = false;
  bool closed_ = false;
  std::chrono::steady_clock::time_point waiting_since_ = std::chrono::steady_clock::now();
};

// ---------------------------------------------------------------------------
// ForwardCall: one request re-sent to the leader/owner
// ---------------------------------------------------------------------------

class RestServer::Impl::ForwardCall : public std::enable_shared_from_this<ForwardCall> {
 public:
  /// `tls` non-null: the target is https and is reached over TLS.
  ForwardCall(Impl& srv, HttpUrl target, http::request<http::string_body> req, Responder done,
              TlsContext* tls, std::chrono::milliseconds timeout)
      : srv_(srv),
        target_(std::move(target)),
        resolver_(*srv.ioc_),
        req_(std::move(req)),
        done_(std::move(done)),
        timeout_(timeout) {
    if (tls != nullptr) {
      tls_stream_.emplace(*srv.ioc_, tls->native());
      tls_ctx_ = tls;
    } else {
      plain_stream_.emplace(*srv.ioc_);
    }
    parser_.body_limit(srv_.opts_.forward_response_limit);
    // The peer's reply may carry a Location with a long, percent-encoded
    // name: allow what a peer's own header limit would (Beast's default is
    // 8 KiB).
    parser_.header_limit(static_cast<std::uint32_t>(srv_.opts_.header_limit * 4));
  }

  void run() {
    resolver_.async_resolve(target_.host, std::to_string(target_.port),
                            [self = shared_from_this()](beast::error_code ec, tcp::resolver::results_type results) {
                              if (ec) return self->fail(ec);
                              auto& tcp_layer = self->tcp_layer();
                              tcp_layer.expires_after(self->timeout_);
                              tcp_layer.async_connect(results, [self](beast::error_code ec2, const tcp::endpoint&) {
                                if (ec2) return self->fail(ec2);
                                if (!self->tls_stream_) return self->write();
                                self->handshake();
                              });
                            });
  }

 private:
  beast::tcp_stream& tcp_layer() { return tls_stream_ ? beast::get_lowest_layer(*tls_stream_) : *plain_stream_; }

  void handshake() {
    if (auto st = tls_ctx_->prepare_client(tls_stream_->native_handle(), target_.host); !st) {
      done_(RestResponse::error(500, "IO Error trying to forward REST request: " + st.error().message));
      return;
    }
    tls_stream_->async_handshake(asio::ssl::stream_base::client, [self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->fail(ec);
      self->write();
    });
  }

  template <typename Stream>
  void exchange(Stream& stream) {
    http::async_write(stream, req_, [self = shared_from_this(), &stream](beast::error_code ec, std::size_t) {
      if (ec) return self->fail(ec);
      http::async_read(stream, self->buffer_, self->parser_, [self](beast::error_code ec2, std::size_t) {
        if (ec2) return self->fail(ec2);
        try {
          self->relay();
        } catch (const std::exception& e) {  // never into the io loop: the client would wait out its deadline
          self->done_(RestResponse::error(500, std::string("IO Error trying to forward REST request: ") + e.what()));
        }
      });
    });
  }

  void write() {
    if (tls_stream_) {
      exchange(*tls_stream_);
    } else {
      exchange(*plain_stream_);
    }
  }

  void relay() {
    auto& res = parser_.get();
    RestResponse out;
    out.status = static_cast<int>(res.result_int());
    out.body = std::move(res.body());
    out.content_type = std::string(res[http::field::content_type]);
    if (out.content_type.empty() && !out.body.empty()) out.content_type = "application/json";
    auto location = res[http::field::location];
    if (!location.empty()) out.headers.emplace_back("Location", std::string(location));
    beast::error_code ec;
    tcp_layer().socket().shutdown(tcp::socket::shutdown_both, ec);
    spdlog::debug("rest: forwarded {} {} to {}:{} -> {}", std::string(req_.method_string()),
                  std::string(req_.target()), target_.host, target_.port, out.status);
    done_(std::move(out));
  }

  void fail(beast::error_code ec) {
    spdlog::warn("rest: forwarding {} to {}:{} failed: {}", std::string(req_.target()), target_.host, target_.port,
                 ec.message());
    done_(RestResponse::error(500, "IO Error trying to forward REST request: " + ec.message()));
  }

  Impl& srv_;
  HttpUrl target_;
  tcp::resolver resolver_;
  std::optional<beast::tcp_stream> plain_stream_;
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls_stream_;
  TlsContext* tls_ctx_ = nullptr;  // owned by RestServerOptions::forward_tls, alive while the server runs
  http::request<http::string_body> req_;
  beast::flat_buffer buffer_;
  http::response_parser<http::string_body> parser_;
  Responder done_;
  std::chrono::milliseconds timeout_;  // the whole exchange
};

// ---------------------------------------------------------------------------
// Impl: lifecycle and routing
// ---------------------------------------------------------------------------

RestServer::Impl::Impl(RestServerOptions options, HerderApi& herder)
    : opts_(std::move(options)), herder_(herder), ioc_(std::make_unique<asio::io_context>(1)) {
  gate_->ioc = ioc_.get();
  if (opts_.pipeline_limit == 0) opts_.pipeline_limit = 1;
  register_builtin_routes();
}

RestServer::Impl::~Impl() {
  stop();
  sessions_.clear();
  acceptors_.clear();
  ioc_.reset();  // destroys pending handlers (sessions, forward calls) while Impl is alive
}

Status RestServer::Impl::bind_listener(const std::string& text, std::shared_ptr<TlsContext> tls, bool regular,
                                       bool admin) {
  auto url = parse_http_url(text);
  if (!url) return Error{regular ? "listeners" : "admin.listeners", url.error().message};
  const char* key = regular ? "listeners" : "admin.listeners";
  if (url->scheme != "http" && url->scheme != "https") {
    return Error{key, "unsupported listener scheme '" + url->scheme + "' in '" + text + "' (http or https)"};
  }
  if (url->scheme == "http") tls.reset();
  if (url->scheme == "https" && !tls) {
    return Error{key, "https listener '" + text + "' has no TLS settings (" +
                          std::string(regular ? "listeners.https." : "admin.listeners.https.") + "ssl.* or ssl.*)"};
  }
  beast::error_code ec;
  tcp::resolver resolver(*ioc_);
  auto results = resolver.resolve(url->host, std::to_string(url->port), tcp::resolver::passive, ec);
  if (ec || results.empty()) {
    return Error{key, "cannot resolve '" + url->host + "' of '" + text + "': " + ec.message()};
  }
  tcp::endpoint endpoint = results.begin()->endpoint();
  auto acceptor = std::make_unique<tcp::acceptor>(*ioc_);
  acceptor->open(endpoint.protocol(), ec);
  if (!ec) acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor->bind(endpoint, ec);
  if (!ec) acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Error{key, "cannot listen on '" + text + "': " + ec.message()};
  ports_.push_back(acceptor->local_endpoint().port());
  listener_urls_.push_back(*url);
  acceptors_.push_back(std::move(acceptor));
  bound_.push_back(BoundListener{text, *url, std::move(tls), regular, admin});
  spdlog::info("rest: listening on {} (port {}{}{})", text, ports_.back(), regular ? "" : ", admin endpoints only",
               regular && admin && opts_.admin_listeners ? ", also admin endpoints" : "");
  return ok_status();
}

Status RestServer::Impl::start() {
  if (started_) return Error{"rest", "RestServer::start() called twice"};
  started_ = true;
  bound_.reserve(opts_.listeners.size() + (opts_.admin_listeners ? opts_.admin_listeners->size() : 0));
  // An admin listener equal to a regular one (same scheme, host and a fixed
  // port) is served by that socket rather than bound twice.
  auto same = [](const std::string& a, const std::string& b) {
    auto x = parse_http_url(a);
    auto y = parse_http_url(b);
    return x && y && x->port != 0 && x->scheme == y->scheme && x->host == y->host && x->port == y->port;
  };
  for (const auto& listener : opts_.listeners) {
    bool admin = !opts_.admin_listeners.has_value();
    if (opts_.admin_listeners) {
      for (const auto& a : *opts_.admin_listeners) admin = admin || same(a, listener);
    }
    if (auto st = bind_listener(listener, opts_.https_tls, true, admin); !st) return st;
  }
  if (opts_.admin_listeners) {
    if (opts_.admin_listeners->empty()) spdlog::info("rest: admin.listeners is empty: admin endpoints are off");
    for (const auto& a : *opts_.admin_listeners) {
      bool shared = std::any_of(opts_.listeners.begin(), opts_.listeners.end(),
                                [&](const std::string& l) { return same(a, l); });
      if (shared) continue;
      auto tls = opts_.admin_https_tls ? opts_.admin_https_tls : opts_.https_tls;
      if (auto st = bind_listener(a, tls, false, true); !st) return st;
    }
  }
  for (size_t i = 0; i < acceptors_.size(); ++i) do_accept(i);
  std::promise<void> running;
  auto running_future = running.get_future();
  thread_ = std::thread([this, &running] {
    io_thread_id_ = std::this_thread::get_id();
    running.set_value();
    auto guard = asio::make_work_guard(*ioc_);
    for (;;) {
      try {
        ioc_->run();
        break;
      } catch (const std::exception& e) {
        spdlog::error("rest: io thread caught: {}", e.what());
      }
    }
  });
  running_future.wait();
  return ok_status();
}

void RestServer::Impl::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_ || !thread_.joinable()) return;
  const bool on_io_thread = std::this_thread::get_id() == io_thread_id_;
  auto closed = std::make_shared<std::promise<void>>();
  auto closed_future = closed->get_future();
  asio::post(*ioc_, [this, closed] {
    beast::error_code ec;
    for (auto& a : acceptors_) a->close(ec);
    auto sessions = sessions_;
    for (auto& [id, s] : sessions) s->close_now();
    closed->set_value();
  });
  if (!on_io_thread) closed_future.wait_for(std::chrono::seconds(5));
  gate_->close();
  ioc_->stop();
  if (on_io_thread) {
    thread_.detach();  // cannot join ourselves; the thread ends when run() returns
  } else {
    thread_.join();
  }
}

void RestServer::Impl::do_accept(size_t index) {
  acceptors_[index]->async_accept([this, index](beast::error_code ec, tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptors_[index]->is_open()) return;
    if (ec) {
      spdlog::warn("rest: accept failed: {}", ec.message());
    } else {
      beast::error_code ignored;
      if (sessions_.size() >= opts_.max_connections && !make_room()) {
        socket.close(ignored);  // every connection has a request pending
        return do_accept(index);
      }
      socket.set_option(tcp::no_delay(true), ignored);
      auto id = next_session_id_++;
      auto session = std::make_shared<Session>(*this, std::move(socket), id, bound_[index]);
      sessions_[id] = session;
      session->start();
    }
    do_accept(index);
  });
}

bool RestServer::Impl::make_room() {
  std::shared_ptr<Session> oldest;
  for (const auto& [id, s] : sessions_) {
    if (s->evictable() && (!oldest || s->waiting_since() < oldest->waiting_since())) oldest = s;
  }
  if (!oldest) {
    spdlog::warn("rest: {} connections open, all with a request pending: refusing a new one", sessions_.size());
    return false;
  }
  spdlog::debug("rest: {} connections open: closing the one idle longest", sessions_.size());
  oldest->close_now();
  return true;
}

void RestServer::Impl::add_route(Method method, std::string pattern, RouteHandler handler,
                                 std::chrono::milliseconds timeout, RestResponse timeout_response, bool builtin) {
  Route r;
  r.method = method;
  r.text = pattern;
  r.pattern = parse_pattern(pattern);
  r.handler = std::move(handler);
  r.timeout = timeout;
  r.timeout_response = std::move(timeout_response);
  std::lock_guard<std::mutex> lock(routes_mu_);
  (builtin ? builtin_routes_ : extra_routes_).push_back(std::move(r));
}

RestServer::Impl::Match RestServer::Impl::route(RestRequest& req) {
  Match m;
  std::set<std::string> allowed;
  std::lock_guard<std::mutex> lock(routes_mu_);
  for (const auto* table : {&extra_routes_, &builtin_routes_}) {
    for (const auto& r : *table) {
      std::map<std::string, std::string> params;
      if (!match_pattern(r.pattern, req.segments, params)) continue;
      if (r.method == req.method) {
        req.params = std::move(params);
        m.handler = r.handler;
        m.timeout = r.timeout;
        m.timeout_response = r.timeout_response;
        return m;
      }
      allowed.insert(to_string(r.method));
    }
  }
  if (allowed.empty()) {
    m.immediate = RestResponse::error(404, "HTTP 404 Not Found");
  } else {
    m.immediate = RestResponse::error(405, "HTTP 405 Method Not Allowed");
    std::string allow;
    for (const auto& a : allowed) allow += (allow.empty() ? "" : ", ") + a;
    m.immediate->headers.emplace_back("Allow", allow);
  }
  return m;
}

std::optional<RestResponse> RestServer::Impl::admit(const RestRequest& req, const BoundListener& listener) const {
  const bool admin_path = is_admin_path(req.segments);
  if (admin_path ? !listener.admin : !listener.regular) return RestResponse::error(404, "HTTP 404 Not Found");
  if (!opts_.basic_auth) return std::nullopt;
  const bool signed_request = req.connect_signature || req.connect_signature_algorithm;
  if (signature_replaces_basic_auth(to_string(req.method), req.segments, signed_request))
    return std::nullopt;  // the herder checks the KIP-507 signature
  if (!opts_.health_auth && req.method == Method::Get && req.segments.size() == 1 && req.segments[0] == "health") {
    return std::nullopt;
  }
  if (opts_.basic_auth->authenticate(req.authorization)) return std::nullopt;
  spdlog::debug("rest: {} {} failed basic authentication", to_string(req.method), req.raw_path);
  // Connect's JaasBasicAuthFilter: plain 401 with this entity and no
  // WWW-Authenticate challenge.
  RestResponse denied;
  denied.status = 401;
  denied.body = kUnauthorizedMessage;
  // The web console's pages challenge, so a browser asks for the
  // credentials and then sends them with the console's own calls.
  if (!req.segments.empty() && req.segments[0] == "ui")
    denied.headers.emplace_back("WWW-Authenticate", "Basic realm=\"kconnectd\", charset=\"UTF-8\"");
  return denied;
}

void RestServer::Impl::fail(const RestRequest& req, const Responder& r, const RestError& err) {
  if (err.kind == ErrorKind::NotLeader || err.kind == ErrorKind::NotOwner) {
    forward(req, r, err);
    return;
  }
  r(RestResponse::error(err.http_status(), err.message));
}

void RestServer::Impl::forward(const RestRequest& req, const Responder& r, const RestError& err) {
  if (err.forward_url.empty()) {
    r(RestResponse::error(409, kNoLeaderMessage));
    return;
  }
  // Connect's loop protection: no param → forward=true; true → forward=false;
  // false (or anything else) → this is the second hop already: 409.
  std::string next;
  auto hop = req.query_value("forward");
  if (!hop) {
    next = "true";
  } else if (ascii_iequals(*hop, "true")) {
    next = "false";
  } else {
    r(RestResponse::error(409, RestError::rebalance_in_progress().message));
    return;
  }
  auto url = parse_http_url(err.forward_url);
  if (!url || (url->scheme != "http" && url->scheme != "https")) {
    r(RestResponse::error(500, "IO Error trying to forward REST request: unsupported URL '" + err.forward_url + "'"));
    return;
  }
  if (url->scheme == "https" && !opts_.forward_tls) {
    r(RestResponse::error(500, "IO Error trying to forward REST request: no TLS settings to reach '" +
                                   err.forward_url + "' (set listeners.https.ssl.* or ssl.*)"));
    return;
  }
  std::string query = strip_query_param(req.raw_query, "forward");
  std::string target = url->base_path + req.raw_path + "?" + (query.empty() ? "" : query + "&") + "forward=" + next;
  spdlog::debug("rest: {} {} not handled here ({}); forwarding to {}", to_string(req.method), req.target,
                err.message, err.forward_url);
  send_checked(std::move(*url), req.method, std::move(target), req.authorization, req.body, r, opts_.forward_timeout);
}

void RestServer::Impl::send_checked(HttpUrl url, Method method, std::string target, const std::string& authorization,
                                    const std::string& body, const Responder& r, std::chrono::milliseconds timeout) {
  http::request<http::string_body> out{verb_from_method(method), target, 11};
  std::string host = url.host.find(':') != std::string::npos ? "[" + url.host + "]" : url.host;
  out.set(http::field::host, host + ":" + std::to_string(url.port));
  out.set(http::field::user_agent, "kafka-connect");
  out.set(http::field::accept, "application/json");
  if (!authorization.empty()) out.set(http::field::authorization, authorization);
  if (!body.empty()) {
    out.set(http::field::content_type, "application/json");
    out.body() = body;
  }
  out.keep_alive(false);
  out.prepare_payload();
  // The peer has the same limits: what would not fit it is refused here,
  // before it could be half-applied there.
  if (target.size() > opts_.target_limit) {
    r(RestResponse::error(414, "Request target is too long to forward: " + std::to_string(target.size()) +
                                   " bytes; the limit is " + std::to_string(opts_.target_limit) + " bytes"));
    return;
  }
  std::size_t header_bytes = target.size() + 32;  // request line
  for (const auto& field : out) header_bytes += field.name_string().size() + field.value().size() + 4;
  if (header_bytes > opts_.header_limit) {
    r(RestResponse::error(431, "Request headers are too large to forward"));
    return;
  }
  TlsContext* tls = url.scheme == "https" ? opts_.forward_tls.get() : nullptr;
  std::make_shared<ForwardCall>(*this, std::move(url), std::move(out), r, tls, timeout)->run();
}

// ---------------------------------------------------------------------------
// Built-in Connect routes
// ---------------------------------------------------------------------------

namespace {

RestResponse ok_json(int status, const json& j) { return RestResponse::json(status, dump_json(j)); }

RestResponse created_or_ok(const PutConnectorResult& res) {
  auto out = ok_json(res.created ? 201 : 200, to_json(res.info));
  if (res.created) out.headers.emplace_back("Location", "/connectors/" + percent_encode_segment(res.info.name));
  return out;
}

std::optional<int32_t> parse_task_id(const std::string& s) {
  int32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

void RestServer::Impl::put_config(const RestRequest& req, const Responder& r, PutConnectorRequest put) {
  // Connect's herder validates before anything else, on the worker that got
  // the request (AbstractHerder.validateConnectorConfig): no connector.class
  // is a 400 naming the whole config, not a per-key validation error.
  if (!put.config.count("connector.class")) {
    const RestError e = RestError::no_connector_type(put.config);
    return r(RestResponse::error(e.http_status(), e.message));
  }
  herder_.put_connector_config(std::move(put),
                               on_io<PutConnectorResult>(req, r, [this, req, r](Reply<PutConnectorResult> res) {
                                 if (!res) return fail(req, r, res.error());
                                 r(created_or_ok(res.value()));
                               }));
}

void RestServer::Impl::list_connectors(const RestRequest& req, const Responder& r) {
  auto expands = req.query_values("expand");
  bool status = std::find(expands.begin(), expands.end(), "status") != expands.end();
  bool info = std::find(expands.begin(), expands.end(), "info") != expands.end();
  bool any = !expands.empty();
  herder_.list_connectors(
      on_io<std::vector<std::string>>(req, r, [this, req, r, status, info, any](Reply<std::vector<std::string>> names) {
        if (!names) return fail(req, r, names.error());
        std::sort(names.value().begin(), names.value().end());
        if (!any) return r(ok_json(200, json(names.value())));
        expand_connectors(req, r, std::move(names.value()), status, info, any);
      }));
}

void RestServer::Impl::expand_connectors(const RestRequest& req, const Responder& r, std::vector<std::string> names,
                                         bool status, bool info, bool /*any_expand*/) {
  // Fan out one herder call per connector and expansion; every continuation
  // runs on the io thread, so the aggregate needs no lock.
  struct Aggregate {
    std::map<std::string, json> entries;
    std::set<std::string> dropped;  // not found (e.g. deleted mid-listing): left out
    size_t remaining = 0;
    bool failed = false;
  };
  auto agg = std::make_shared<Aggregate>();
  for (const auto& n : names) agg->entries[n] = json::object();
  agg->remaining = names.size() * ((status ? 1 : 0) + (info ? 1 : 0));
  auto finish = [agg, r] {
    json out = json::object();
    for (auto& [name, entry] : agg->entries) {
      if (!agg->dropped.count(name)) out[name] = std::move(entry);
    }
    r(ok_json(200, out));
  };
  if (agg->remaining == 0) return finish();
  auto absorb = [this, agg, req, r, finish](const std::string& name, const char* key,
                                            std::optional<json> value, const RestError* err) {
    if (agg->failed) return;
    if (value) {
      agg->entries[name][key] = std::move(*value);
    } else if (err->kind == ErrorKind::NotFound) {
      agg->dropped.insert(name);
    } else {
      agg->failed = true;
      return fail(req, r, *err);
    }
    if (--agg->remaining == 0) finish();
  };
  for (const auto& name : names) {
    if (status) {
      herder_.connector_status(name, on_io<ConnectorStateInfo>(req, r, [absorb, name](Reply<ConnectorStateInfo> s) {
        if (s) absorb(name, "status", to_json(s.value()), nullptr);
        else absorb(name, "status", std::nullopt, &s.error());
      }));
    }
    if (info) {
      herder_.connector_info(name, on_io<ConnectorInfo>(req, r, [absorb, name](Reply<ConnectorInfo> i) {
        if (i) absorb(name, "info", to_json(i.value()), nullptr);
        else absorb(name, "info", std::nullopt, &i.error());
      }));
    }
  }
}

void RestServer::Impl::register_builtin_routes() {
  const auto t = opts_.request_timeout;
  const RestResponse timed_out = RestResponse::error(500, "Request timed out");
  auto add = [&](Method m, const char* pattern, RouteHandler h) {
    add_route(m, pattern, std::move(h), t, timed_out, true);
  };
  // A write that times out here may still land in the config (or offsets)
  // topic: the herder keeps going after we stop waiting. Say so, so that a
  // client re-reads before it retries (issue 9; Connect only says "Request
  // timed out").
  const RestResponse write_timed_out = RestResponse::error(500, kWriteTimeoutMessage);
  auto add_write = [&](Method m, const char* pattern, RouteHandler h) {
    add_route(m, pattern, std::move(h), t, write_timed_out, true);
  };

  add(Method::Get, "/", [this](const RestRequest& req, Responder r) {
    herder_.worker_info(on_io<WorkerInfo>(req, r, [this, req, r](Reply<WorkerInfo> w) {
      if (!w) return fail(req, r, w.error());
      r(ok_json(200, json{{"version", opts_.version},
                          {"commit", opts_.commit},
                          {"kafka_cluster_id", w.value().kafka_cluster_id}}));
    }));
  });

  add_route(
      Method::Get, "/health",
      [this](const RestRequest& req, Responder r) {
        herder_.health(on_io<Health>(req, r, [r](Reply<Health> h) {
          if (!h) {
            return r(ok_json(500, to_json(Health{HealthStatus::Unhealthy, h.error().message})));
          }
          int code = 200;
          switch (h.value().status) {
            case HealthStatus::Healthy: code = 200; break;
            case HealthStatus::Starting: code = 503; break;
            case HealthStatus::Rebalancing: code = 503; break;
            case HealthStatus::Unavailable: code = 503; break;
            case HealthStatus::Unhealthy: code = 500; break;
          }
          r(ok_json(code, to_json(h.value())));
        }));
      },
      opts_.health_timeout,
      RestResponse::json(500, dump_json(to_json(Health{HealthStatus::Unhealthy, kUnhealthyTimeoutMessage}))), true);

  add(Method::Get, "/connectors", [this](const RestRequest& req, Responder r) { list_connectors(req, r); });

  add_write(Method::Post, "/connectors", [this](const RestRequest& req, Responder r) {
    auto parsed = parse_create_request(req.body);
    if (!parsed) return r(RestResponse::error(parsed.error().http_status(), parsed.error().message));
    put_config(req, r, std::move(parsed.value()));
  });

  add(Method::Get, "/connectors/{connector}", [this](const RestRequest& req, Responder r) {
    herder_.connector_info(req.params.at("connector"),
                           on_io<ConnectorInfo>(req, r, [this, req, r](Reply<ConnectorInfo> info) {
                             if (!info) return fail(req, r, info.error());
                             r(ok_json(200, to_json(info.value())));
                           }));
  });

  add_write(Method::Delete, "/connectors/{connector}", [this](const RestRequest& req, Responder r) {
    herder_.delete_connector(req.params.at("connector"), on_io<Done>(req, r, [this, req, r](Reply<Done> d) {
                               if (!d) return fail(req, r, d.error());
                               r(RestResponse::empty(204));
                             }));
  });

  add(Method::Get, "/connectors/{connector}/config", [this](const RestRequest& req, Responder r) {
    herder_.connector_config(req.params.at("connector"),
                             on_io<ConnectorConfig>(req, r, [this, req, r](Reply<ConnectorConfig> c) {
                               if (!c) return fail(req, r, c.error());
                               r(ok_json(200, json(c.value())));
                             }));
  });

  add_write(Method::Put, "/connectors/{connector}/config", [this](const RestRequest& req, Responder r) {
    const std::string& name = req.params.at("connector");
    auto parsed = parse_put_config_request(name, req.body);
    if (!parsed) return r(RestResponse::error(parsed.error().http_status(), parsed.error().message));
    auto rule = kc::connector_name_error(name);
    if (!rule) return put_config(req, r, std::move(parsed.value()));
    // A name outside the rule may still belong to a connector an older
    // version created: it can be updated, but not created. The read is
    // local on leader and follower alike, so both answer the same.
    herder_.connector_config(name, on_io<ConnectorConfig>(req, r, [this, req, r, rule = *rule,
                                                                   put = std::move(parsed.value())](
                                                                      Reply<ConnectorConfig> c) mutable {
      if (!c && c.error().kind == ErrorKind::NotFound) return r(RestResponse::error(400, rule));
      if (!c) return fail(req, r, c.error());
      put_config(req, r, std::move(put));
    }));
  });

  // PATCH = read the stored config here, merge, then the same leader write as
  // PUT. A follower's write fails with not_leader and the whole PATCH is
  // forwarded, so the leader re-reads and merges against its own snapshot.
  add_write(Method::Patch, "/connectors/{connector}/config", [this](const RestRequest& req, Responder r) {
    const std::string& name = req.params.at("connector");
    auto patch = parse_config_patch(name, req.body);
    if (!patch) return r(RestResponse::error(patch.error().http_status(), patch.error().message));
    herder_.connector_config(
        name, on_io<ConnectorConfig>(req, r,
                                     [this, req, r, name, patch = std::move(patch.value())](Reply<ConnectorConfig> c) {
                                       if (!c) return fail(req, r, c.error());
                                       put_config(req, r, apply_config_patch(name, std::move(c.value()), patch));
                                     }));
  });

  add(Method::Get, "/connectors/{connector}/status", [this](const RestRequest& req, Responder r) {
    herder_.connector_status(req.params.at("connector"),
                             on_io<ConnectorStateInfo>(req, r, [this, req, r](Reply<ConnectorStateInfo> s) {
                               if (!s) return fail(req, r, s.error());
                               r(ok_json(200, to_json(s.value())));
                             }));
  });

  add(Method::Get, "/connectors/{connector}/tasks", [this](const RestRequest& req, Responder r) {
    herder_.task_configs(req.params.at("connector"),
                         on_io<std::vector<TaskInfo>>(req, r, [this, req, r](Reply<std::vector<TaskInfo>> tasks) {
                           if (!tasks) return fail(req, r, tasks.error());
                           json out = json::array();
                           for (const auto& ti : tasks.value()) out.push_back(to_json(ti));
                           r(ok_json(200, out));
                         }));
  });

  add(Method::Get, "/connectors/{connector}/tasks/{task}/status", [this](const RestRequest& req, Responder r) {
    auto task = parse_task_id(req.params.at("task"));
    if (!task) return r(RestResponse::error(404, "HTTP 404 Not Found"));
    herder_.task_status(TaskId{req.params.at("connector"), *task},
                        on_io<TaskStatus>(req, r, [this, req, r](Reply<TaskStatus> s) {
                          if (!s) return fail(req, r, s.error());
                          r(ok_json(200, to_json(s.value())));
                        }));
  });

  add_write(Method::Post, "/connectors/{connector}/restart", [this](const RestRequest& req, Responder r) {
    RestartRequest rr{bool_param(req, "includeTasks", false), bool_param(req, "onlyFailed", false)};
    herder_.restart_connector(req.params.at("connector"), rr,
                              on_io<std::optional<ConnectorStateInfo>>(
                                  req, r, [this, req, r, rr](Reply<std::optional<ConnectorStateInfo>> res) {
                                    if (!res) return fail(req, r, res.error());
                                    if (rr.plain()) return r(RestResponse::empty(204));
                                    if (!res.value()) return r(RestResponse::empty(202));
                                    r(ok_json(202, to_json(*res.value())));
                                  }));
  });

  add_write(Method::Post, "/connectors/{connector}/tasks/{task}/restart", [this](const RestRequest& req, Responder r) {
    auto task = parse_task_id(req.params.at("task"));
    if (!task) return r(RestResponse::error(404, "HTTP 404 Not Found"));
    herder_.restart_task(TaskId{req.params.at("connector"), *task}, on_io<Done>(req, r, [this, req, r](Reply<Done> d) {
                           if (!d) return fail(req, r, d.error());
                           r(RestResponse::empty(204));
                         }));
  });

  struct StateRoute {
    const char* pattern;
    TargetState state;
    int status;
  };
  for (const StateRoute& sr : {StateRoute{"/connectors/{connector}/pause", TargetState::Paused, 202},
                               StateRoute{"/connectors/{connector}/resume", TargetState::Started, 202},
                               StateRoute{"/connectors/{connector}/stop", TargetState::Stopped, 204}}) {
    add_write(Method::Put, sr.pattern, [this, sr](const RestRequest& req, Responder r) {
      herder_.set_target_state(req.params.at("connector"), sr.state,
                               on_io<Done>(req, r, [this, req, r, sr](Reply<Done> d) {
                                 if (!d) return fail(req, r, d.error());
                                 r(RestResponse::empty(sr.status));
                               }));
    });
  }

  add(Method::Get, "/connectors/{connector}/topics", [this](const RestRequest& req, Responder r) {
    const std::string& name = req.params.at("connector");
    herder_.connector_active_topics(
        name, on_io<std::vector<std::string>>(req, r, [this, req, r, name](Reply<std::vector<std::string>> t) {
          if (!t) return fail(req, r, t.error());
          r(ok_json(200, json{{name, json{{"topics", t.value()}}}}));
        }));
  });

  add_write(Method::Put, "/connectors/{connector}/topics/reset", [this](const RestRequest& req, Responder r) {
    herder_.reset_connector_active_topics(req.params.at("connector"),
                                          on_io<Done>(req, r, [this, req, r](Reply<Done> d) {
                                            if (!d) return fail(req, r, d.error());
                                            r(RestResponse::empty(202));
                                          }));
  });

  add(Method::Get, "/connectors/{connector}/offsets", [this](const RestRequest& req, Responder r) {
    herder_.connector_offsets(
        req.params.at("connector"),
        on_io<std::vector<ConnectorOffset>>(req, r, [this, req, r](Reply<std::vector<ConnectorOffset>> o) {
          if (!o) return fail(req, r, o.error());
          r(RestResponse::json(200, dump_json(to_json(o.value()))));
        }));
  });

  // PATCH alters the listed partitions, DELETE resets them all; both are one
  // leader write in the herder.
  auto modify_offsets = [this](const RestRequest& req, const Responder& r,
                               std::optional<std::vector<ConnectorOffset>> offsets) {
    herder_.modify_connector_offsets(req.params.at("connector"), std::move(offsets),
                                     on_io<std::string>(req, r, [this, req, r](Reply<std::string> m) {
                                       if (!m) return fail(req, r, m.error());
                                       r(ok_json(200, json{{"message", m.value()}}));
                                     }));
  };
  add_write(Method::Patch, "/connectors/{connector}/offsets", [modify_offsets](const RestRequest& req, Responder r) {
    auto offsets = parse_offsets_request(req.body);
    if (!offsets) return r(RestResponse::error(offsets.error().http_status(), offsets.error().message));
    modify_offsets(req, r, std::move(offsets.value()));
  });
  add_write(Method::Delete, "/connectors/{connector}/offsets",
      [modify_offsets](const RestRequest& req, Responder r) { modify_offsets(req, r, std::nullopt); });

  add(Method::Get, "/connector-plugins/{plugin}/config", [this](const RestRequest& req, Responder r) {
    herder_.connector_plugin_config(
        req.params.at("plugin"),
        on_io<std::vector<ConfigKeyInfo>>(req, r, [this, req, r](Reply<std::vector<ConfigKeyInfo>> k) {
          if (!k) return fail(req, r, k.error());
          json out = json::array();
          for (const auto& key : k.value()) out.push_back(to_json(key));
          r(ok_json(200, out));
        }));
  });

  add(Method::Put, "/connector-plugins/{plugin}/config/validate", [this](const RestRequest& req, Responder r) {
    auto config = parse_validate_request(req.params.at("plugin"), req.body);
    if (!config) return r(RestResponse::error(config.error().http_status(), config.error().message));
    herder_.validate_connector_config(std::move(config.value()),
                                      on_io<ConfigInfos>(req, r, [this, req, r](Reply<ConfigInfos> v) {
                                        if (!v) return fail(req, r, v.error());
                                        r(ok_json(200, to_json(v.value())));
                                      }));
  });

  add(Method::Get, "/connector-plugins", [this](const RestRequest& req, Responder r) {
    herder_.connector_plugins(bool_param(req, "connectorsOnly", true),
                              on_io<std::vector<PluginInfo>>(req, r, [this, req, r](Reply<std::vector<PluginInfo>> p) {
                                if (!p) return fail(req, r, p.error());
                                json out = json::array();
                                for (const auto& pi : p.value()) out.push_back(to_json(pi));
                                r(ok_json(200, out));
                              }));
  });
}

// ---------------------------------------------------------------------------
// RestServer
// ---------------------------------------------------------------------------

RestServer::RestServer(RestServerOptions options, HerderApi& herder)
    : impl_(std::make_shared<Impl>(std::move(options), herder)) {}

RestServer::~RestServer() { impl_->stop(); }

Status RestServer::start() { return impl_->start(); }

void RestServer::stop() { impl_->stop(); }

std::vector<uint16_t> RestServer::ports() const { return impl_->ports_; }

uint16_t RestServer::port() const { return impl_->ports_.empty() ? 0 : impl_->ports_.front(); }

std::string RestServer::url() const {
  if (impl_->listener_urls_.empty()) return {};
  std::string host = impl_->listener_urls_.front().host;
  if (host == "0.0.0.0") host = "127.0.0.1";
  if (host == "::") host = "::1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return impl_->listener_urls_.front().scheme + "://" + host + ":" + std::to_string(port()) + "/";
}

std::vector<std::pair<Method, std::string>> RestServer::routes() const {
  std::vector<std::pair<Method, std::string>> out;
  std::lock_guard<std::mutex> lock(impl_->routes_mu_);
  for (const auto* table : {&impl_->extra_routes_, &impl_->builtin_routes_})
    for (const auto& r : *table) out.emplace_back(r.method, r.text);
  return out;
}

void RestServer::fail(const RestRequest& req, const Responder& r, const RestError& err) {
  impl_->gate_->post([impl = impl_, req, r, err] { impl->fail(req, r, err); });
}

void RestServer::send(const std::string& base_url, Method method, const std::string& path_and_query,
                      const std::string& authorization, const std::string& body, Responder done,
                      std::optional<std::chrono::milliseconds> timeout) {
  impl_->gate_->post([impl = impl_, base_url, method, path_and_query, authorization, body, done = std::move(done),
                      timeout] {
    auto url = parse_http_url(base_url);
    if (!url || (url->scheme != "http" && url->scheme != "https"))
      return done(RestResponse::error(500, "unsupported worker URL '" + base_url + "'"));
    if (url->scheme == "https" && !impl->opts_.forward_tls)
      return done(RestResponse::error(500, "no TLS settings to reach '" + base_url +
                                               "' (set listeners.https.ssl.* or ssl.*)"));
    std::string target = url->base_path + path_and_query;
    impl->send_checked(std::move(*url), method, std::move(target), authorization, body, done,
                       timeout.value_or(impl->opts_.forward_timeout));
  });
}

void RestServer::add_route(Method method, std::string pattern, RouteHandler handler,
                           std::optional<std::chrono::milliseconds> timeout) {
  impl_->add_route(method, std::move(pattern), std::move(handler), timeout.value_or(impl_->opts_.request_timeout),
                   RestResponse::error(500, "Request timed out"), false);
}

}  // namespace kc::rest
