// RestServer end to end: a fake in-memory HerderApi, the real server on an
// ephemeral port, and a tiny blocking HTTP/1.1 client on POSIX sockets (kept
// free of Beast so this file compiles quickly).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <nlohmann/json.hpp>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>
#include <sstream>
#include <thread>
#include <tuple>

#include "worker/herder/plugin_config.h"
#include "worker/api/herder_api.h"
#include "worker/rest/admin_routes.h"
#include "worker/rest/logger_routes.h"
#include "worker/rest/console_routes.h"
#include "worker/rest/ui_assets.h"
#include "worker/rest/observability.h"
#include "worker/rest/rest_server.h"
#include "worker/rest/route_docs.h"

using namespace kc::rest;
using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// ---------------------------------------------------------------------------
// Fake herder: in-memory connectors; replies from its own thread (as the real
// herder will), optionally after a delay; can play a follower.
// ---------------------------------------------------------------------------
class FakeHerder : public HerderApi {
 public:
  FakeHerder() : thread_([this] { loop(); }) {}
  ~FakeHerder() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

  // --- knobs (set before requests) ---
  std::string not_leader_url;        // non-empty: writes answer not_leader(url)
  bool leader_unknown = false;       // writes answer not_leader("")
  bool hang = false;                 // never answer (request timeout test)
  std::atomic<int> delay_ms{0};      // delay every reply by this much
  Health health_value{HealthStatus::Healthy, "Worker has completed startup and is ready to handle requests."};
  bool hang_health = false;
  // Topic tracking as HerderConfig::topic_tracking_enable / _allow_reset
  // (the real herder answers these 403s; the REST layer relays them).
  bool tracking_enabled = true;
  bool tracking_reset_allowed = true;

  // --- state ---
  std::map<std::string, ConnectorInfo> connectors;
  std::map<std::string, TargetState> targets;
  std::vector<std::string> calls;  // "put c1", "delete c1", ... (what landed here)
  std::vector<RestartRequest> restarts;
  std::map<std::string, std::vector<ConnectorOffset>> offsets;
  std::map<std::string, std::set<std::string>> topics;
  bool last_plugins_connectors_only = false;

  std::vector<std::string> calls_snapshot() {
    std::lock_guard<std::mutex> lock(mu_);
    return calls;
  }
  bool has_connector(const std::string& name) {
    std::lock_guard<std::mutex> lock(mu_);
    return connectors.count(name) > 0;
  }

  void list_connectors(Callback<std::vector<std::string>> cb) override {
    run([this, cb] {
      std::vector<std::string> names;
      for (auto it = connectors.rbegin(); it != connectors.rend(); ++it) names.push_back(it->first);  // unsorted
      cb(names);
    });
  }
  void connector_info(const std::string& name, Callback<ConnectorInfo> cb) override {
    run([this, name, cb] {
      auto it = connectors.find(name);
      if (it == connectors.end()) return cb(RestError::connector_not_found(name));
      cb(it->second);
    });
  }
  void connector_config(const std::string& name, Callback<ConnectorConfig> cb) override {
    run([this, name, cb] {
      auto it = connectors.find(name);
      if (it == connectors.end()) return cb(RestError::connector_not_found(name));
      cb(it->second.config);
    });
  }
  void put_connector_config(PutConnectorRequest req, Callback<PutConnectorResult> cb) override {
    run([this, req, cb] {
      if (auto e = write_check()) return cb(*e);
      calls.push_back("put " + req.name);
      bool exists = connectors.count(req.name) > 0;
      if (exists && !req.allow_replace) return cb(RestError::already_exists(req.name));
      auto cls = req.config.find("connector.class");
      if (cls == req.config.end() || cls->second == "NoSuchClass") {
        return cb(RestError::bad_request(
            "Connector configuration is invalid and contains the following 1 error(s):\n"
            "Invalid value for configuration connector.class: Class could not be found.\n"));
      }
      ConnectorInfo info{req.name, req.config, {{req.name, 0}, {req.name, 1}},
                         cls->second.find("Sink") != std::string::npos ? ConnectorType::Sink : ConnectorType::Source};
      connectors[req.name] = info;
      targets[req.name] = req.initial_state.value_or(TargetState::Started);
      cb(PutConnectorResult{!exists, info});
    });
  }
  void delete_connector(const std::string& name, Callback<Done> cb) override {
    run([this, name, cb] {
      if (auto e = write_check()) return cb(*e);
      calls.push_back("delete " + name);
      if (connectors.erase(name) == 0) return cb(RestError::connector_not_found(name));
      cb(Done{});
    });
  }
  void connector_status(const std::string& name, Callback<ConnectorStateInfo> cb) override {
    run([this, name, cb] {
      auto it = connectors.find(name);
      if (it == connectors.end()) return cb(RestError::not_found("No status found for connector " + name));
      ConnectorStateInfo s{name, {ConnectState::Running, "w1:8083", ""},
                           {{1, ConnectState::Failed, "w2:8083", "java.lang.Boom"},
                            {0, ConnectState::Running, "w1:8083", ""}},
                           it->second.type};
      cb(s);
    });
  }
  void task_configs(const std::string& name, Callback<std::vector<TaskInfo>> cb) override {
    run([this, name, cb] {
      auto it = connectors.find(name);
      if (it == connectors.end()) return cb(RestError::connector_not_found(name));
      std::vector<TaskInfo> out;
      for (const auto& t : it->second.tasks) out.push_back(TaskInfo{t, {{"task.class", "T"}}});
      cb(out);
    });
  }
  void task_status(const TaskId& id, Callback<TaskStatus> cb) override {
    run([this, id, cb] {
      auto it = connectors.find(id.connector);
      if (it == connectors.end() || id.task < 0 || id.task >= static_cast<int32_t>(it->second.tasks.size())) {
        return cb(RestError::not_found("No status found for task " + id.connector + "-" + std::to_string(id.task)));
      }
      cb(TaskStatus{id.task, ConnectState::Running, "w1:8083", ""});
    });
  }
  void restart_connector(const std::string& name, RestartRequest req,
                         Callback<std::optional<ConnectorStateInfo>> cb) override {
    run([this, name, req, cb] {
      if (!req.plain()) {
        if (auto e = write_check()) return cb(*e);
      }
      calls.push_back("restart " + name);
      restarts.push_back(req);
      auto it = connectors.find(name);
      if (it == connectors.end()) return cb(RestError::connector_not_found(name));
      if (req.plain()) return cb(std::optional<ConnectorStateInfo>{});
      ConnectorStateInfo plan{name, {ConnectState::Restarting, "w1:8083", ""},
                              {{0, ConnectState::Restarting, "w1:8083", ""}}, it->second.type};
      cb(std::optional<ConnectorStateInfo>(plan));
    });
  }
  void restart_task(const TaskId& id, Callback<Done> cb) override {
    run([this, id, cb] {
      calls.push_back("restart-task " + id.connector + "-" + std::to_string(id.task));
      auto it = connectors.find(id.connector);
      if (it == connectors.end() || id.task >= static_cast<int32_t>(it->second.tasks.size())) {
        return cb(RestError::not_found("Task " + id.connector + "-" + std::to_string(id.task) + " not found"));
      }
      cb(Done{});
    });
  }
  void set_target_state(const std::string& name, TargetState state, Callback<Done> cb) override {
    run([this, name, state, cb] {
      if (state == TargetState::Stopped) {
        if (auto e = write_check()) return cb(*e);
      }
      if (!connectors.count(name)) return cb(RestError::connector_not_found(name));
      targets[name] = state;
      cb(Done{});
    });
  }
  void connector_plugins(bool connectors_only, Callback<std::vector<PluginInfo>> cb) override {
    run([this, connectors_only, cb] {
      last_plugins_connectors_only = connectors_only;
      std::vector<PluginInfo> out{{"kc.FileStreamSource", PluginType::Source, "0.1.0"},
                                  {"kc.FileStreamSink", PluginType::Sink, "0.1.0"}};
      if (!connectors_only) out.push_back({"kc.JsonConverter", PluginType::Converter, ""});
      cb(out);
    });
  }
  // Active topics: per-connector set; any name answers (as Connect).
  void connector_active_topics(const std::string& name, Callback<std::vector<std::string>> cb) override {
    run([this, name, cb] {
      if (!tracking_enabled) return cb(RestError::topic_tracking_disabled());
      auto& t = topics[name];
      cb(std::vector<std::string>(t.begin(), t.end()));
    });
  }
  void reset_connector_active_topics(const std::string& name, Callback<Done> cb) override {
    run([this, name, cb] {
      if (!tracking_enabled) return cb(RestError::topic_tracking_disabled());
      if (!tracking_reset_allowed) return cb(RestError::topic_tracking_reset_disabled());
      calls.push_back("reset-topics " + name);
      topics.erase(name);
      cb(Done{});
    });
  }
  // Offsets: per-connector list in partition order of first write; same
  // preconditions as the real herder (404, 400 unless STOPPED), for
  // source and sink connectors alike.
  void connector_offsets(const std::string& name, Callback<std::vector<ConnectorOffset>> cb) override {
    run([this, name, cb] {
      if (auto e = offsets_check(name, false)) return cb(*e);
      cb(offsets[name]);
    });
  }
  void modify_connector_offsets(const std::string& name, std::optional<std::vector<ConnectorOffset>> changes,
                                Callback<std::string> cb) override {
    run([this, name, changes, cb] {
      if (auto e = write_check()) return cb(*e);
      calls.push_back(std::string(changes ? "alter-offsets " : "reset-offsets ") + name);
      if (auto e = offsets_check(name, true)) return cb(*e);
      auto& list = offsets[name];
      if (!changes) {
        list.clear();
        return cb(std::string("The offsets for this connector have been reset successfully"));
      }
      for (const auto& c : *changes) {
        auto it = std::find_if(list.begin(), list.end(), [&](const auto& o) { return o.partition == c.partition; });
        if (it != list.end()) list.erase(it);
        if (c.offset) list.push_back(c);
      }
      cb(std::string("The offsets for this connector have been altered successfully"));
    });
  }
  // Plugin config and validation: the real built-in definitions and the
  // real validator, in the herder's REST mapping.
  void connector_plugin_config(const std::string& plugin, Callback<std::vector<ConfigKeyInfo>> cb) override {
    run([plugin, cb] { cb(kc::herder::plugin_config(kc::connectors::PluginRegistry::builtin(), plugin)); });
  }
  void validate_connector_config(ConnectorConfig config, Callback<ConfigInfos> cb) override {
    run([config, cb] { cb(kc::herder::to_rest(kc::connectors::PluginRegistry::builtin().validate(config))); });
  }
  void health(Callback<Health> cb) override {
    if (hang_health) return;
    run([this, cb] { cb(health_value); });
  }
  void worker_info(Callback<WorkerInfo> cb) override {
    run([cb] { cb(WorkerInfo{"w1:8083", "http://w1:8083/", "cluster-xyz"}); });
  }
  // Internal and kconnectd routes: record what arrived, answer `internal_status`.
  int internal_status = 202;
  std::string internal_message = "draining";
  std::vector<SignatureHeaders> signatures;  // as the routes passed them on
  std::vector<RebalanceRecord> rebalances;   // what rebalance_history() returns
  void accept_drain_request(const std::string& member, SignatureHeaders sig, std::string, StatusCallback done) override {
    internal_call("drain " + member, std::move(sig), std::move(done));
  }
  void accept_task_reconfiguration(const std::string& c, SignatureHeaders sig, std::string,
                                   StatusCallback done) override {
    internal_call("reconfigure " + c, std::move(sig), std::move(done));
  }
  void accept_fence_request(const std::string& c, SignatureHeaders sig, std::string, StatusCallback done) override {
    internal_call("fence " + c, std::move(sig), std::move(done));
  }
  std::vector<RebalanceRecord> rebalance_history() const override { return rebalances; }
  std::optional<MemberView> view;  // what member_view() answers; nullopt = the default 501
  void member_view(Callback<MemberView> cb) override {
    if (!view) return HerderApi::member_view(std::move(cb));
    cb(*view);
  }

 private:
  std::optional<RestError> offsets_check(const std::string& name, bool modify) {
    auto it = connectors.find(name);
    if (it == connectors.end()) return RestError::connector_not_found(name);
    if (modify && targets[name] != TargetState::Stopped) return RestError::connector_not_stopped(name);
    return std::nullopt;
  }
  void internal_call(std::string what, SignatureHeaders sig, StatusCallback done) {
    run([this, what = std::move(what), sig = std::move(sig), done = std::move(done)] {
      calls.push_back(what);
      signatures.push_back(sig);
      done(internal_status, internal_message);
    });
  }
  std::optional<RestError> write_check() {
    if (leader_unknown) return RestError::not_leader("");
    if (!not_leader_url.empty()) return RestError::not_leader(not_leader_url);
    return std::nullopt;
  }

  void run(std::function<void()> fn) {
    if (hang) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      queue_.push_back(std::move(fn));
    }
    cv_.notify_all();
  }

  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    for (;;) {
      cv_.wait(lock, [this] { return stop_ || !queue_.empty(); });
      if (stop_) return;
      auto fn = std::move(queue_.front());
      queue_.pop_front();
      int d = delay_ms.load();
      if (d > 0) {
        lock.unlock();
        std::this_thread::sleep_for(std::chrono::milliseconds(d));
        lock.lock();
      }
      fn();  // runs under mu_: state is only touched here and in the *_snapshot helpers
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;
  bool stop_ = false;
  std::thread thread_;
};

// ---------------------------------------------------------------------------
// Minimal blocking HTTP/1.1 client
// ---------------------------------------------------------------------------
struct HttpResult {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  json j() const { return body.empty() ? json() : json::parse(body); }
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

class Conn {
 public:
  explicit Conn(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    timeval tv{5, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
  }
  ~Conn() { ::close(fd_); }
  Conn(const Conn&) = delete;
  Conn& operator=(const Conn&) = delete;

  void send(const std::string& data) {
    size_t off = 0;
    while (off < data.size()) {
      ssize_t n = ::send(fd_, data.data() + off, data.size() - off, MSG_NOSIGNAL);
      if (n <= 0) return;  // peer closed; the test reads what it got
      off += static_cast<size_t>(n);
    }
  }

  /// Reads one response (Content-Length framed). nullopt on EOF/timeout.
  std::optional<HttpResult> read_response() {
    size_t end;
    while ((end = buf_.find("\r\n\r\n")) == std::string::npos) {
      if (!fill()) return std::nullopt;
    }
    HttpResult r;
    std::string head = buf_.substr(0, end);
    buf_.erase(0, end + 4);
    size_t line_end = head.find("\r\n");
    std::string status_line = head.substr(0, line_end);
    r.status = std::stoi(status_line.substr(9, 3));
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      std::string line = head.substr(pos, e - pos);
      auto colon = line.find(':');
      std::string name = line.substr(0, colon);
      for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      std::string value = line.substr(colon + 1);
      while (!value.empty() && value.front() == ' ') value.erase(0, 1);
      r.headers[name] = value;
      pos = e + 2;
    }
    size_t len = r.headers.count("content-length") ? std::stoul(r.headers["content-length"]) : 0;
    while (buf_.size() < len) {
      if (!fill()) return std::nullopt;
    }
    r.body = buf_.substr(0, len);
    buf_.erase(0, len);
    return r;
  }

  /// True when the server closed the connection (EOF) within the receive timeout.
  bool closed_by_peer() {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, 0);
    return n == 0;
  }

  /// True when the server closed or reset the connection: at once
  /// (`wait` false) or within the receive timeout.
  bool gone(bool wait) {
    char c;
    ssize_t n = ::recv(fd_, &c, 1, wait ? 0 : MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
  }

 private:
  bool fill() {
    char tmp[4096];
    ssize_t n = ::recv(fd_, tmp, sizeof tmp, 0);
    if (n <= 0) return false;
    buf_.append(tmp, static_cast<size_t>(n));
    return true;
  }
  int fd_ = -1;
  std::string buf_;
};

std::string raw(const std::string& method, const std::string& target, const std::string& body = "",
                bool keep_alive = false, const std::string& extra_headers = "") {
  std::string s = method + " " + target + " HTTP/1.1\r\nHost: localhost\r\n";
  if (!keep_alive) s += "Connection: close\r\n";
  if (!body.empty()) s += "Content-Type: application/json\r\n";
  s += "Content-Length: " + std::to_string(body.size()) + "\r\n" + extra_headers + "\r\n" + body;
  return s;
}

HttpResult request(uint16_t port, const std::string& method, const std::string& target, const std::string& body = "",
                   const std::string& extra_headers = "") {
  Conn c(port);
  c.send(raw(method, target, body, false, extra_headers));
  auto r = c.read_response();
  REQUIRE(r.has_value());
  return *r;
}

RestServerOptions test_options() {
  RestServerOptions o;
  o.listeners = {"http://127.0.0.1:0"};
  o.io_timeout = 2000ms;
  o.request_timeout = 2000ms;
  o.health_timeout = 300ms;
  o.forward_timeout = 2000ms;
  o.version = "9.9.9";
  o.commit = "abc123";
  return o;
}

struct Server {
  FakeHerder herder;
  RestServer server;
  explicit Server(RestServerOptions o = test_options()) : server(std::move(o), herder) {
    auto st = server.start();
    REQUIRE(st.ok());
    REQUIRE(server.port() != 0);
  }
  uint16_t port() const { return server.port(); }
};

const std::string kCreateC1 = R"({"name":"c1","config":{"connector.class":"kc.FileStreamSource","tasks.max":"2"}})";

void check_error_body(const HttpResult& r, int code) {
  INFO(r.body);
  CHECK(r.status == code);
  auto j = r.j();
  CHECK(j["error_code"] == code);
  CHECK(j["message"].is_string());
}

}  // namespace

TEST_CASE("GET / reports version, commit and cluster id", "[rest]") {
  Server s;
  auto r = request(s.port(), "GET", "/");
  CHECK(r.status == 200);
  CHECK(r.header("content-type") == "application/json");
  CHECK(r.j() == json{{"version", "9.9.9"}, {"commit", "abc123"}, {"kafka_cluster_id", "cluster-xyz"}});
}

TEST_CASE("create, read, update and delete a connector", "[rest]") {
  Server s;
  auto created = request(s.port(), "POST", "/connectors", kCreateC1);
  REQUIRE(created.status == 201);
  CHECK(created.header("location") == "/connectors/c1");
  CHECK(created.j() == json::parse(R"({"name":"c1","config":{"connector.class":"kc.FileStreamSource",
        "tasks.max":"2","name":"c1"},"tasks":[{"connector":"c1","task":0},{"connector":"c1","task":1}],
        "type":"source"})"));

  check_error_body(request(s.port(), "POST", "/connectors", kCreateC1), 409);

  auto info = request(s.port(), "GET", "/connectors/c1");
  CHECK(info.status == 200);
  CHECK(info.j()["name"] == "c1");
  CHECK(info.j()["tasks"].size() == 2);

  auto cfg = request(s.port(), "GET", "/connectors/c1/config");
  CHECK(cfg.status == 200);
  CHECK(cfg.j() == json{{"connector.class", "kc.FileStreamSource"}, {"tasks.max", "2"}, {"name", "c1"}});

  auto upd = request(s.port(), "PUT", "/connectors/c1/config", R"({"connector.class":"kc.FileStreamSource","tasks.max":"3"})");
  CHECK(upd.status == 200);
  CHECK(upd.header("location").empty());
  CHECK(upd.j()["config"]["tasks.max"] == "3");

  auto put_new = request(s.port(), "PUT", "/connectors/my%20sink-2/config", R"({"connector.class":"kc.FileStreamSink"})");
  CHECK(put_new.status == 201);
  CHECK(put_new.header("location") == "/connectors/my%20sink-2");
  CHECK(put_new.j()["name"] == "my sink-2");
  CHECK(put_new.j()["type"] == "sink");

  check_error_body(request(s.port(), "PUT", "/connectors/c1/config", R"({"name":"other"})"), 400);

  auto list = request(s.port(), "GET", "/connectors");
  CHECK(list.status == 200);
  CHECK(list.j() == json::array({"c1", "my sink-2"}));

  auto del = request(s.port(), "DELETE", "/connectors/c1");
  CHECK(del.status == 204);
  CHECK(del.body.empty());
  check_error_body(request(s.port(), "GET", "/connectors/c1"), 404);
  check_error_body(request(s.port(), "DELETE", "/connectors/c1"), 404);
}

TEST_CASE("PATCH config merges, null removes a key, and goes through the leader write", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);

  auto set = request(s.port(), "PATCH", "/connectors/c1/config", R"({"tasks.max":5,"file":"/tmp/in","name":"c1"})");
  CHECK(set.status == 200);
  CHECK(set.header("location").empty());
  CHECK(set.j() == json::parse(R"({"name":"c1","config":{"connector.class":"kc.FileStreamSource","tasks.max":"5",
        "file":"/tmp/in","name":"c1"},"tasks":[{"connector":"c1","task":0},{"connector":"c1","task":1}],
        "type":"source"})"));

  auto removed = request(s.port(), "PATCH", "/connectors/c1/config", R"({"file":null,"absent":null})");
  CHECK(removed.status == 200);
  CHECK(removed.j()["config"] == json{{"connector.class", "kc.FileStreamSource"}, {"tasks.max", "5"}, {"name", "c1"}});
  CHECK(request(s.port(), "GET", "/connectors/c1/config").j() == removed.j()["config"]);

  auto empty = request(s.port(), "PATCH", "/connectors/c1/config", "{}");
  CHECK(empty.status == 200);
  CHECK(empty.j()["config"] == removed.j()["config"]);

  // Removing connector.class: Connect's herder refuses the merged config
  // before anything else, naming it whole.
  auto invalid = request(s.port(), "PATCH", "/connectors/c1/config", R"({"connector.class":null})");
  check_error_body(invalid, 400);
  CHECK(invalid.j()["message"] == "Connector config {name=c1, tasks.max=5} contains no connector type");
  auto bad_class = request(s.port(), "PATCH", "/connectors/c1/config", R"({"connector.class":"NoSuchClass"})");
  check_error_body(bad_class, 400);
  CHECK(bad_class.j()["message"].get<std::string>().rfind("Connector configuration is invalid", 0) == 0);

  auto unknown = request(s.port(), "PATCH", "/connectors/nope/config", R"({"a":"b"})");
  check_error_body(unknown, 404);
  CHECK(unknown.j()["message"] == "Connector nope not found");
  CHECK_FALSE(s.herder.has_connector("nope"));  // a patch never creates

  auto bad_json = request(s.port(), "PATCH", "/connectors/c1/config", R"({"a":)");
  check_error_body(bad_json, 400);
  CHECK(bad_json.j()["message"].get<std::string>().rfind("Invalid JSON in request body: ", 0) == 0);
  auto not_object = request(s.port(), "PATCH", "/connectors/c1/config", R"(["a"])");
  check_error_body(not_object, 400);
  CHECK(not_object.j()["message"] == "Connector configuration patch must be a JSON object");
  auto bad_value = request(s.port(), "PATCH", "/connectors/c1/config", R"({"a":{"b":1}})");
  check_error_body(bad_value, 400);
  CHECK(bad_value.j()["message"] ==
        "Connector configuration value for 'a' must be a string, number or boolean or null, not object");
  auto other_name = request(s.port(), "PATCH", "/connectors/c1/config", R"({"name":"c2"})");
  check_error_body(other_name, 400);
  CHECK(other_name.j()["message"] == "Connector name configuration (c2) doesn't match connector name in the URL (c1)");
  auto null_name = request(s.port(), "PATCH", "/connectors/c1/config", R"({"name":null})");
  check_error_body(null_name, 400);
  CHECK(null_name.j()["message"] == "Connector name configuration (null) doesn't match connector name in the URL (c1)");

  // create + three good patches + the unknown class the herder refused; bad
  // bodies and the config without connector.class never reach it.
  auto calls = s.herder.calls_snapshot();
  CHECK(std::count(calls.begin(), calls.end(), "put c1") == 5);
  CHECK(calls.size() == 5);
}

TEST_CASE("PATCH config on a follower is forwarded and merged on the leader", "[rest][forward]") {
  Server leader;
  Server follower;
  REQUIRE(request(leader.port(), "POST", "/connectors", kCreateC1).status == 201);
  // The follower's snapshot knows c1 too (reads are local), but with a stale
  // value: the leader must merge against its own copy.
  follower.herder.connectors["c1"] = ConnectorInfo{"c1", {{"name", "c1"}, {"connector.class", "Stale"}}, {}, {}};
  follower.herder.not_leader_url = leader.server.url();

  auto r = request(follower.port(), "PATCH", "/connectors/c1/config", R"({"topic":"t"})");
  CHECK(r.status == 200);
  CHECK(r.j()["config"] ==
        json{{"connector.class", "kc.FileStreamSource"}, {"tasks.max", "2"}, {"name", "c1"}, {"topic", "t"}});
  CHECK(leader.herder.calls_snapshot() == std::vector<std::string>{"put c1", "put c1"});
  CHECK(follower.herder.calls_snapshot().empty());
}

TEST_CASE("request validation answers 400 with Connect's error body", "[rest]") {
  Server s;
  auto bad = request(s.port(), "POST", "/connectors", "{\"name\": \"c1\", ");
  check_error_body(bad, 400);
  CHECK(bad.j()["message"].get<std::string>().find("Invalid JSON") != std::string::npos);
  check_error_body(request(s.port(), "POST", "/connectors", ""), 400);
  check_error_body(request(s.port(), "POST", "/connectors", R"({"config":{"connector.class":"X"}})"), 400);
  check_error_body(request(s.port(), "POST", "/connectors", R"({"name":"c1","config":"x"})"), 400);
  check_error_body(request(s.port(), "POST", "/connectors", R"({"name":"c1","config":{"name":"c2"}})"), 400);
  auto unknown_class =
      request(s.port(), "POST", "/connectors", R"({"name":"c1","config":{"connector.class":"NoSuchClass"}})");
  check_error_body(unknown_class, 400);
  CHECK(unknown_class.j()["message"].get<std::string>().find("connector.class") != std::string::npos);
  check_error_body(request(s.port(), "GET", "/connectors/bad%zzname"), 400);
  CHECK(s.herder.calls_snapshot() == std::vector<std::string>{"put c1"});  // only the valid-shaped one reached it
}

TEST_CASE("status, tasks and task status", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);

  auto st = request(s.port(), "GET", "/connectors/c1/status");
  CHECK(st.status == 200);
  CHECK(st.j() == json::parse(R"({"name":"c1","connector":{"state":"RUNNING","worker_id":"w1:8083"},
        "tasks":[{"id":0,"state":"RUNNING","worker_id":"w1:8083"},
                 {"id":1,"state":"FAILED","worker_id":"w2:8083","trace":"java.lang.Boom"}],"type":"source"})"));
  check_error_body(request(s.port(), "GET", "/connectors/nope/status"), 404);

  auto tasks = request(s.port(), "GET", "/connectors/c1/tasks");
  CHECK(tasks.status == 200);
  CHECK(tasks.j() == json::parse(R"([{"id":{"connector":"c1","task":0},"config":{"task.class":"T"}},
                                     {"id":{"connector":"c1","task":1},"config":{"task.class":"T"}}])"));
  check_error_body(request(s.port(), "GET", "/connectors/nope/tasks"), 404);

  auto ts = request(s.port(), "GET", "/connectors/c1/tasks/1/status");
  CHECK(ts.status == 200);
  CHECK(ts.j() == json::parse(R"({"id":1,"state":"RUNNING","worker_id":"w1:8083"})"));
  check_error_body(request(s.port(), "GET", "/connectors/c1/tasks/7/status"), 404);
  check_error_body(request(s.port(), "GET", "/connectors/c1/tasks/x/status"), 404);
}

TEST_CASE("list connectors with expand=status and expand=info", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  REQUIRE(request(s.port(), "PUT", "/connectors/c2/config", R"({"connector.class":"kc.FileStreamSink"})").status == 201);

  auto st = request(s.port(), "GET", "/connectors?expand=status");
  CHECK(st.status == 200);
  auto j = st.j();
  REQUIRE(j.is_object());
  CHECK(j.size() == 2);
  CHECK(j["c1"]["status"]["connector"]["state"] == "RUNNING");
  CHECK_FALSE(j["c1"].contains("info"));

  auto both = request(s.port(), "GET", "/connectors?expand=info&expand=status&expand=bogus");
  CHECK(both.status == 200);
  CHECK(both.j()["c2"]["info"]["type"] == "sink");
  CHECK(both.j()["c2"]["status"]["name"] == "c2");

  auto empty = request(s.port(), "GET", "/connectors?expand=bogus");
  CHECK(empty.j() == json::parse(R"({"c1":{},"c2":{}})"));
}

TEST_CASE("restart, pause, resume and stop", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);

  auto plain = request(s.port(), "POST", "/connectors/c1/restart");
  CHECK(plain.status == 204);
  auto with_tasks = request(s.port(), "POST", "/connectors/c1/restart?includeTasks=true&onlyFailed=TRUE");
  CHECK(with_tasks.status == 202);
  CHECK(with_tasks.j()["connector"]["state"] == "RESTARTING");
  CHECK(with_tasks.j()["tasks"][0]["state"] == "RESTARTING");
  check_error_body(request(s.port(), "POST", "/connectors/nope/restart"), 404);
  CHECK(request(s.port(), "POST", "/connectors/c1/tasks/0/restart").status == 204);
  check_error_body(request(s.port(), "POST", "/connectors/c1/tasks/9/restart"), 404);

  CHECK(request(s.port(), "PUT", "/connectors/c1/pause").status == 202);
  CHECK(request(s.port(), "PUT", "/connectors/c1/resume").status == 202);
  CHECK(request(s.port(), "PUT", "/connectors/c1/stop").status == 204);
  check_error_body(request(s.port(), "PUT", "/connectors/nope/pause"), 404);

  auto calls = s.herder.calls_snapshot();
  CHECK(std::count(calls.begin(), calls.end(), "restart c1") == 2);
}

TEST_CASE("connector plugins and health", "[rest]") {
  Server s;
  auto p = request(s.port(), "GET", "/connector-plugins");
  CHECK(p.status == 200);
  CHECK(p.j() == json::parse(R"([{"class":"kc.FileStreamSource","type":"source","version":"0.1.0"},
                                 {"class":"kc.FileStreamSink","type":"sink","version":"0.1.0"}])"));
  auto all = request(s.port(), "GET", "/connector-plugins?connectorsOnly=false");
  CHECK(all.j().size() == 3);
  CHECK(all.j()[2] == json::parse(R"({"class":"kc.JsonConverter","type":"converter"})"));

  auto h = request(s.port(), "GET", "/health");
  CHECK(h.status == 200);
  CHECK(h.j()["status"] == "healthy");

  s.herder.health_value = Health{HealthStatus::Starting, "Worker is still starting up."};
  auto starting = request(s.port(), "GET", "/health");
  CHECK(starting.status == 503);
  CHECK(starting.j() == json{{"status", "starting"}, {"message", "Worker is still starting up."}});
  // The herder's lifecycle state rides along when it reports one.
  s.herder.health_value = Health{HealthStatus::Healthy, "ready", "Draining"};
  auto draining = request(s.port(), "GET", "/health");
  CHECK(draining.status == 200);
  CHECK(draining.j() == json{{"status", "healthy"}, {"message", "ready"}, {"worker_state", "Draining"}});

  s.herder.hang_health = true;
  auto t0 = std::chrono::steady_clock::now();
  auto hung = request(s.port(), "GET", "/health");
  CHECK(hung.status == 500);
  CHECK(hung.j()["status"] == "unhealthy");
  CHECK(std::chrono::steady_clock::now() - t0 >= 250ms);
}

TEST_CASE("connector offsets: GET, PATCH and DELETE only when STOPPED", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  auto empty = request(s.port(), "GET", "/connectors/c1/offsets");
  CHECK(empty.status == 200);
  CHECK(empty.body == R"({"offsets":[]})");

  // Writes need a STOPPED connector.
  const std::string alter = R"({"offsets":[{"partition":{"z":1,"filename":"/in"},"offset":{"position":30}},
                                           {"partition":{"filename":"/other"},"offset":{"position":7}}]})";
  const std::string not_stopped =
      "Connectors must be in the STOPPED state before their offsets can be modified. This can be done for the "
      "specified connector by issuing a 'PUT' request to the '/connectors/c1/stop' endpoint";
  auto running = request(s.port(), "PATCH", "/connectors/c1/offsets", alter);
  check_error_body(running, 400);
  CHECK(running.j()["message"] == not_stopped);
  auto running_reset = request(s.port(), "DELETE", "/connectors/c1/offsets");
  check_error_body(running_reset, 400);
  CHECK(running_reset.j()["message"] == not_stopped);

  REQUIRE(request(s.port(), "PUT", "/connectors/c1/stop").status == 204);
  auto altered = request(s.port(), "PATCH", "/connectors/c1/offsets", alter);
  CHECK(altered.status == 200);
  CHECK(altered.j() == json{{"message", "The offsets for this connector have been altered successfully"}});
  // Member order of partitions is kept (it is part of the offsets-topic key).
  auto listed = request(s.port(), "GET", "/connectors/c1/offsets");
  CHECK(listed.status == 200);
  CHECK(listed.body == R"({"offsets":[{"partition":{"z":1,"filename":"/in"},"offset":{"position":30}},)"
                       R"({"partition":{"filename":"/other"},"offset":{"position":7}}]})");

  // A null offset resets that partition only.
  auto one = request(s.port(), "PATCH", "/connectors/c1/offsets",
                     R"({"offsets":[{"partition":{"filename":"/other"},"offset":null}]})");
  CHECK(one.status == 200);
  CHECK(request(s.port(), "GET", "/connectors/c1/offsets").j()["offsets"].size() == 1);

  auto reset = request(s.port(), "DELETE", "/connectors/c1/offsets");
  CHECK(reset.status == 200);
  CHECK(reset.j() == json{{"message", "The offsets for this connector have been reset successfully"}});
  CHECK(request(s.port(), "GET", "/connectors/c1/offsets").body == R"({"offsets":[]})");

  for (const char* method : {"GET", "DELETE"}) {
    auto unknown = request(s.port(), method, "/connectors/nope/offsets");
    check_error_body(unknown, 404);
    CHECK(unknown.j()["message"] == "Connector nope not found");
  }
  auto unknown_patch = request(s.port(), "PATCH", "/connectors/nope/offsets", alter);
  check_error_body(unknown_patch, 404);
  CHECK(unknown_patch.j()["message"] == "Connector nope not found");
}

TEST_CASE("PATCH offsets validates its body, sinks reach the herder, writes are forwarded", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  REQUIRE(request(s.port(), "PUT", "/connectors/c1/stop").status == 204);
  struct Case {
    const char* body;
    const char* message;
  };
  for (const Case& c : {Case{R"({"offsets":[]})", "Partitions / offsets need to be provided for an alter offsets request"},
                        Case{R"({"offsets":null})", "Partitions / offsets need to be provided for an alter offsets request"},
                        Case{R"({"x":1})", "Request body must be a JSON object with an \"offsets\" array"},
                        Case{R"([])", "Request body must be a JSON object with an \"offsets\" array"},
                        Case{R"({"offsets":[1]})", "Each entry of \"offsets\" must be a JSON object"},
                        Case{R"({"offsets":[{"offset":{"a":1}}]})", "Partitions may not be null"},
                        Case{R"({"offsets":[{"partition":"p","offset":{"a":1}}]})", "Partitions must be JSON objects"},
                        Case{R"({"offsets":[{"partition":{"p":1},"offset":5}]})", "Offsets must be JSON objects or null"}}) {
    INFO(c.body);
    auto r = request(s.port(), "PATCH", "/connectors/c1/offsets", c.body);
    check_error_body(r, 400);
    CHECK(r.j()["message"] == c.message);
  }
  auto bad_json = request(s.port(), "PATCH", "/connectors/c1/offsets", R"({"offsets":)");
  check_error_body(bad_json, 400);
  CHECK(bad_json.j()["message"].get<std::string>().rfind("Invalid JSON in request body: ", 0) == 0);
  CHECK(s.herder.calls_snapshot() == std::vector<std::string>{"put c1"});  // none reached the herder

  REQUIRE(request(s.port(), "PUT", "/connectors/k/config", R"({"connector.class":"kc.FileStreamSink"})").status == 201);
  // Sink offsets are the herder's business (consumer group, KIP-875): the
  // REST layer passes GET and the checked PATCH body through unchanged.
  auto sink = request(s.port(), "GET", "/connectors/k/offsets");
  CHECK(sink.status == 200);
  CHECK(sink.j() == nlohmann::json::parse(R"({"offsets":[]})"));
  REQUIRE(request(s.port(), "PUT", "/connectors/k/stop").status == 204);
  auto sink_patch = request(s.port(), "PATCH", "/connectors/k/offsets",
                            R"({"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":3}}]})");
  CHECK(sink_patch.status == 200);
  auto sink_get = request(s.port(), "GET", "/connectors/k/offsets");
  CHECK(sink_get.j() == nlohmann::json::parse(
                           R"({"offsets":[{"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":3}}]})"));

  Server follower;
  follower.herder.not_leader_url = s.server.url();
  auto fwd = request(follower.port(), "PATCH", "/connectors/c1/offsets",
                     R"({"offsets":[{"partition":{"f":"x"},"offset":{"position":1}}]})");
  CHECK(fwd.status == 200);
  CHECK(fwd.j()["message"] == "The offsets for this connector have been altered successfully");
  CHECK(request(follower.port(), "DELETE", "/connectors/c1/offsets").status == 200);
  auto calls = s.herder.calls_snapshot();
  CHECK(std::vector<std::string>(calls.end() - 2, calls.end()) ==
        std::vector<std::string>{"alter-offsets c1", "reset-offsets c1"});
  CHECK(follower.herder.calls_snapshot().empty());
}

TEST_CASE("active topics: GET lists them per connector, reset answers 202", "[rest]") {
  Server s;
  s.herder.topics["c1"] = {"zeta", "alpha"};
  auto r = request(s.port(), "GET", "/connectors/c1/topics");
  CHECK(r.status == 200);
  CHECK(r.body == R"({"c1":{"topics":["alpha","zeta"]}})");
  auto none = request(s.port(), "GET", "/connectors/my%20c/topics");
  CHECK(none.status == 200);
  CHECK(none.j() == json::parse(R"({"my c":{"topics":[]}})"));

  auto reset = request(s.port(), "PUT", "/connectors/c1/topics/reset");
  CHECK(reset.status == 202);
  CHECK(reset.body.empty());
  CHECK(request(s.port(), "GET", "/connectors/c1/topics").j() == json::parse(R"({"c1":{"topics":[]}})"));
  CHECK(s.herder.calls_snapshot() == std::vector<std::string>{"reset-topics c1"});
  check_error_body(request(s.port(), "POST", "/connectors/c1/topics/reset"), 405);
}

TEST_CASE("GET connector plugin config lists ConfigKeyInfo, unknown plugin is 404", "[rest]") {
  Server s;
  auto r = request(s.port(), "GET", "/connector-plugins/FileStreamSource/config");
  CHECK(r.status == 200);
  auto j = r.j();
  REQUIRE(j.is_array());
  // The plugin's 3 keys, then the 4 exactly-once keys of every source (KIP-618).
  REQUIRE(j.size() == 7);
  CHECK(j[3]["name"] == "exactly.once.support");
  CHECK(j[0] == json::parse(R"({"name":"file","type":"STRING","required":true,"default_value":null,
        "importance":"HIGH","documentation":"Path of the file to read lines from.","group":null,"order":-1,
        "width":"NONE","display_name":"File","dependents":[]})"));
  CHECK(j[1]["name"] == "topic");
  CHECK(j[2]["name"] == "batch.size");
  CHECK(j[2]["type"] == "INT");
  CHECK(j[2]["required"] == false);
  CHECK(j[2]["default_value"] == "2000");

  // Full class name and the simple name resolve to the same plugin.
  CHECK(request(s.port(), "GET", "/connector-plugins/org.apache.kafka.connect.file.FileStreamSourceConnector/config")
            .j() == j);
  auto seq = request(s.port(), "GET", "/connector-plugins/SequenceSourceConnector/config");
  CHECK(seq.status == 200);
  CHECK(seq.j()[1] == json::parse(R"({"name":"throughput","type":"DOUBLE","required":false,"default_value":"10",
        "importance":"MEDIUM","documentation":"Records per second per task; 0 or less = as fast as possible.",
        "group":null,"order":-1,"width":"NONE","display_name":"Throughput","dependents":[]})"));

  auto unknown = request(s.port(), "GET", "/connector-plugins/Nope/config");
  check_error_body(unknown, 404);
  CHECK(unknown.j()["message"] == "Unknown plugin Nope.");
}

namespace {
// The "value" half of the validate entry for `key`.
json validate_value(const json& infos, const std::string& key) {
  for (const auto& c : infos["configs"]) {
    if (c["definition"]["name"] == key) return c["value"];
  }
  FAIL("no config entry for " << key);
  return json();
}
}  // namespace

TEST_CASE("validate and create name placement.labels / placement.tasks when malformed", "[rest][labels]") {
  Server s;
  auto r = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate",
                   R"({"connector.class":"FileStreamSource","file":"/tmp/x","topic":"a","name":"c1","placement.labels":"host",)"
                   R"("placement.tasks":"heap"})");
  CHECK(r.status == 200);
  auto j = r.j();
  CHECK(j["error_count"] == 2);
  CHECK(validate_value(j, "placement.labels")["errors"][0].get<std::string>().find(
            "for configuration placement.labels") != std::string::npos);
  CHECK(validate_value(j, "placement.tasks")["errors"][0].get<std::string>().find("spread, pack") !=
        std::string::npos);
  auto ok = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate",
                    R"({"connector.class":"FileStreamSource","file":"/tmp/x","topic":"a","name":"c1","placement.labels":"host=a",)"
                    R"("placement.tasks":"pack"})");
  CHECK(ok.j()["error_count"] == 0);
  // Create / update: a 400 whose message names the key.
  auto err = kc::herder::reject_invalid_config(kc::connectors::PluginRegistry::builtin(), nullptr,
                                               {{"name", "c2"}, {"connector.class", "FileStreamSource"},
                                                {"file", "/tmp/x"}, {"topic", "t"},
                                                {"placement.labels", "host=a,host=b"}});
  REQUIRE(err);
  CHECK(err->http_status() == 400);
  CHECK(err->message.find("Invalid value 'host=a,host=b' for configuration placement.labels: label key 'host' is "
                          "given twice") != std::string::npos);
}

TEST_CASE("validate reports per-field errors as 200 ConfigInfos", "[rest]") {
  Server s;
  auto r = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate",
                   R"({"connector.class":"FileStreamSource","tasks.max":"0","topic":"a,b","name":"c1"})");
  CHECK(r.status == 200);
  auto j = r.j();
  CHECK(j["name"] == "org.apache.kafka.connect.file.FileStreamSourceConnector");
  CHECK(j["error_count"] == 3);
  CHECK(j["groups"] ==
        json::array({"Common", "Transforms", "Predicates", "Error Handling", "Exactly Once Support", "offsets.topic",
                     "Placement"}));  // Connect's groups in Connect's order, then ours
  // 6 common keys, transforms, predicates, placement.labels and placement.tasks (ours, issue 29), 5 error
  // handling keys, 4 exactly-once source keys (KIP-618) + file, topic, batch.size
  REQUIRE(j["configs"].size() == 22);
  CHECK(j["configs"][0]["definition"] == json::parse(R"({"name":"name","type":"STRING","required":true,
        "default_value":null,"importance":"HIGH","documentation":"Globally unique name to use for this connector.",
        "group":"Common","order":1,"width":"MEDIUM","display_name":"Connector name","dependents":[]})"));
  CHECK(validate_value(j, "name") ==
        json::parse(R"({"name":"name","value":"c1","recommended_values":[],"errors":[],"visible":true})"));
  CHECK(validate_value(j, "tasks.max")["errors"] ==
        json::array({"Invalid value 0 for configuration tasks.max: Value must be at least 1"}));
  CHECK(validate_value(j, "file") == json::parse(R"({"name":"file","value":null,"recommended_values":[],
        "errors":["Missing required configuration \"file\" which has no default value."],"visible":true})"));
  CHECK(validate_value(j, "topic")["errors"] ==
        json::array({"Invalid value a,b for configuration topic: FileStreamSource 'topic' must be a single topic"}));
  CHECK(validate_value(j, "batch.size") ==
        json::parse(R"({"name":"batch.size","value":"2000","recommended_values":[],"errors":[],"visible":true})"));
  CHECK(validate_value(j, "key.converter")["value"].is_null());

  auto bad_int = request(s.port(), "PUT", "/connector-plugins/SequenceSource/config/validate",
                         R"({"connector.class":"SequenceSource","tasks.max":"many","throughput":"fast","topic":"t",
                             "name":"s"})");
  CHECK(bad_int.status == 200);
  CHECK(bad_int.j()["error_count"] == 2);
  CHECK(validate_value(bad_int.j(), "tasks.max")["errors"] ==
        json::array({"Invalid value many for configuration tasks.max: Not a number of type INT"}));
  CHECK(validate_value(bad_int.j(), "throughput")["errors"] ==
        json::array({"Invalid value fast for configuration throughput: Not a number of type DOUBLE"}));
  CHECK(validate_value(bad_int.j(), "connector.class")["value"] == "SequenceSource");

  auto sink = request(s.port(), "PUT", "/connector-plugins/FileStreamSinkConnector/config/validate",
                      R"({"connector.class":"org.apache.kafka.connect.file.FileStreamSinkConnector","name":"k"})");
  CHECK(sink.status == 200);
  CHECK(sink.j()["error_count"] == 2);
  CHECK(validate_value(sink.j(), "topics")["errors"] == json::array({"Must configure one of topics or topics.regex"}));
  CHECK(validate_value(sink.j(), "topics.regex")["errors"] ==
        json::array({"Must configure one of topics or topics.regex"}));

  auto ok = request(s.port(), "PUT", "/connector-plugins/FileStreamSink/config/validate",
                    R"({"connector.class":"FileStreamSink","name":"k","topics":"t","tasks.max":3})");
  CHECK(ok.status == 200);
  CHECK(ok.j()["error_count"] == 0);
  CHECK(validate_value(ok.j(), "tasks.max")["value"] == "3");
}

TEST_CASE("validate answers 400 for a class mismatch and bad bodies", "[rest]") {
  Server s;
  auto mismatch = request(s.port(), "PUT", "/connector-plugins/FileStreamSink/config/validate",
                          R"({"connector.class":"FileStreamSource","topics":"t"})");
  check_error_body(mismatch, 400);
  CHECK(mismatch.j()["message"] == "Included connector type FileStreamSource does not match request type FileStreamSink");
  auto bad_json = request(s.port(), "PUT", "/connector-plugins/FileStreamSink/config/validate", "{");
  check_error_body(bad_json, 400);
  CHECK(bad_json.j()["message"].get<std::string>().rfind("Invalid JSON in request body: ", 0) == 0);
  auto not_object = request(s.port(), "PUT", "/connector-plugins/FileStreamSink/config/validate", "[]");
  check_error_body(not_object, 400);
  CHECK(not_object.j()["message"] == "Connector configuration must be a JSON object of string values");
  // An unknown plugin validates the common keys and flags connector.class.
  auto unknown = request(s.port(), "PUT", "/connector-plugins/com.example.Nope/config/validate",
                         R"({"name":"x","connector.class":"com.example.Nope"})");
  CHECK(unknown.status == 200);
  CHECK(unknown.j()["error_count"] == 1);
  CHECK(validate_value(unknown.j(), "connector.class")["errors"] ==
        json::array({"Invalid value com.example.Nope for configuration connector.class: Class com.example.Nope "
                     "could not be found."}));
}

TEST_CASE("create/update rejection uses the validate endpoint's errors", "[rest]") {
  const auto& reg = kc::connectors::PluginRegistry::builtin();
  CHECK_FALSE(kc::herder::reject_invalid_config(reg, nullptr, {{"name", "c"}, {"connector.class", "FileStreamSink"},
                                                      {"topics", "t"}}));
  auto err = kc::herder::reject_invalid_config(reg, nullptr, {{"name", "c"}, {"connector.class", "FileStreamSource"},
                                                     {"tasks.max", "0"}, {"topic", "t"}});
  REQUIRE(err);
  CHECK(err->http_status() == 400);
  CHECK(err->message ==
        "Connector configuration is invalid and contains the following 2 error(s):\n"
        "Invalid value 0 for configuration tasks.max: Value must be at least 1\n"
        "Missing required configuration \"file\" which has no default value.\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`");
  auto no_class = kc::herder::reject_invalid_config(reg, nullptr, {{"name", "c"}});
  REQUIRE(no_class);
  CHECK(no_class->message ==
        "Connector configuration is invalid and contains the following 1 error(s):\n"
        "Missing required configuration \"connector.class\" which has no default value.\n"
        "You can also find the above list of errors at the endpoint "
        "`/connector-plugins/{connectorType}/config/validate`");
}

TEST_CASE("unknown path is 404, wrong method is 405", "[rest]") {
  Server s;
  check_error_body(request(s.port(), "GET", "/nope"), 404);
  check_error_body(request(s.port(), "GET", "/connectors/c1/bogus"), 404);
  auto m = request(s.port(), "DELETE", "/connectors");
  check_error_body(m, 405);
  CHECK(m.header("allow") == "GET, POST");
  check_error_body(request(s.port(), "POST", "/connectors/c1/pause"), 405);
  check_error_body(request(s.port(), "GET", "/connectors/c1/restart"), 405);
  CHECK(request(s.port(), "GET", "/connectors/").status == 200);  // trailing slash tolerated
}

TEST_CASE("body over the limit is rejected with 413", "[rest]") {
  auto o = test_options();
  o.body_limit = 1024;
  Server s(o);
  Conn c(s.port());
  std::string big(64 * 1024, 'x');
  c.send("POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
         std::to_string(big.size()) + "\r\n\r\n" + big);
  auto r = c.read_response();
  REQUIRE(r.has_value());
  check_error_body(*r, 413);
  CHECK(r->header("connection") == "close");
  CHECK(c.closed_by_peer());
  // The default limit is 1 MiB.
  CHECK(RestServerOptions{}.body_limit == 1024 * 1024);
}

TEST_CASE("keep-alive and bounded pipelining keep responses in order", "[rest]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  Conn c(s.port());
  c.send(raw("GET", "/connectors/c1", "", true));
  auto r1 = c.read_response();
  REQUIRE(r1.has_value());
  CHECK(r1->status == 200);
  // Ten pipelined requests in one write (more than pipeline_limit = 8);
  // the herder replies slowly and they must come back in order.
  s.herder.delay_ms = 5;
  std::string batch;
  for (int i = 0; i < 10; ++i) {
    batch += raw("GET", i % 2 == 0 ? "/connectors/c1/status" : "/connectors/none", "", true);
  }
  c.send(batch);
  for (int i = 0; i < 10; ++i) {
    auto r = c.read_response();
    REQUIRE(r.has_value());
    CHECK(r->status == (i % 2 == 0 ? 200 : 404));
  }
  c.send(raw("GET", "/", "", false));
  auto last = c.read_response();
  REQUIRE(last.has_value());
  CHECK(last->status == 200);
  CHECK(c.closed_by_peer());
}

TEST_CASE("Expect: 100-continue gets an interim response before the body", "[rest]") {
  Server s;
  Conn c(s.port());
  c.send("POST /connectors HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nExpect: 100-continue\r\n"
         "Content-Length: " + std::to_string(kCreateC1.size()) + "\r\n\r\n");
  auto interim = c.read_response();
  REQUIRE(interim.has_value());
  CHECK(interim->status == 100);
  c.send(kCreateC1);
  auto r = c.read_response();
  REQUIRE(r.has_value());
  CHECK(r->status == 201);
}

TEST_CASE("connection deadline and request deadline", "[rest]") {
  auto o = test_options();
  o.io_timeout = 200ms;
  o.request_timeout = 300ms;
  Server s(o);
  {
    Conn idle(s.port());
    auto t0 = std::chrono::steady_clock::now();
    CHECK(idle.closed_by_peer());  // nothing sent: closed after io_timeout
    CHECK(std::chrono::steady_clock::now() - t0 < 3s);
  }
  {
    Conn slow(s.port());
    slow.send("GET /connectors HTTP/1.1\r\nHost: x\r\n");  // never finishes the headers
    CHECK(slow.closed_by_peer());
  }
  s.herder.hang = true;
  auto r = request(s.port(), "GET", "/connectors");
  check_error_body(r, 500);
  CHECK(r.j()["message"] == "Request timed out");
}

TEST_CASE("add_route registers extra routes with patterns", "[rest]") {
  Server s;
  s.server.add_route(Method::Get, "/metrics", [](const RestRequest&, Responder r) {
    RestResponse out;
    out.body = "kc_up 1\n";
    out.content_type = "text/plain; version=0.0.4";
    r(out);
  });
  s.server.add_route(Method::Get, "/rebalances/{id}", [](const RestRequest& req, Responder r) {
    std::thread([r, id = req.params.at("id")] { r(RestResponse::json(200, json{{"id", id}}.dump())); }).detach();
  });
  s.server.add_route(Method::Get, "/debug/*", [](const RestRequest& req, Responder r) {
    r(RestResponse::json(200, json{{"rest", req.params.at("*")}, {"q", req.query_value("x").value_or("")}}.dump()));
  });
  auto m = request(s.port(), "GET", "/metrics");
  CHECK(m.status == 200);
  CHECK(m.header("content-type") == "text/plain; version=0.0.4");
  CHECK(m.body == "kc_up 1\n");
  CHECK(request(s.port(), "GET", "/rebalances/a%20b").j() == json{{"id", "a b"}});
  CHECK(request(s.port(), "GET", "/debug/x/y?x=1+2").j() == json{{"rest", "x/y"}, {"q", "1 2"}});
  check_error_body(request(s.port(), "POST", "/metrics"), 405);
}

TEST_CASE("a follower forwards writes to the leader", "[rest][forward]") {
  Server leader;
  Server follower;
  follower.herder.not_leader_url = leader.server.url();

  auto created = request(follower.port(), "POST", "/connectors", kCreateC1);
  CHECK(created.status == 201);
  CHECK(created.header("location") == "/connectors/c1");
  CHECK(created.j()["name"] == "c1");
  CHECK(leader.herder.has_connector("c1"));
  CHECK_FALSE(follower.herder.has_connector("c1"));

  // Errors from the leader are relayed as they are.
  check_error_body(request(follower.port(), "POST", "/connectors", kCreateC1), 409);
  auto restart = request(follower.port(), "POST", "/connectors/c1/restart?includeTasks=true");
  CHECK(restart.status == 202);
  REQUIRE_FALSE(leader.herder.restarts.empty());
  CHECK(leader.herder.restarts.back().include_tasks);
  CHECK(request(follower.port(), "PUT", "/connectors/c1/stop").status == 204);
  CHECK(request(follower.port(), "DELETE", "/connectors/c1").status == 204);
  CHECK_FALSE(leader.herder.has_connector("c1"));
  // Reads are answered locally.
  check_error_body(request(follower.port(), "GET", "/connectors/c1"), 404);
}

TEST_CASE("forwarding copies Authorization, sets forward=, and is bounded to two hops", "[rest][forward]") {
  Server a;
  Server b;
  // b records what arrives on DELETE (extra routes win over built-in ones).
  b.server.add_route(Method::Delete, "/connectors/{connector}", [](const RestRequest& req, Responder r) {
    r(RestResponse::json(200, json{{"target", req.target},
                                   {"auth", req.authorization},
                                   {"connector", req.params.at("connector")}}.dump()));
  });
  a.herder.not_leader_url = b.server.url();
  auto echoed = request(a.port(), "DELETE", "/connectors/my%20c?x=1&forward=bogus_removed_later",
                        "", "Authorization: Basic dXNlcjpwdw==\r\n");
  // forward=bogus counts as "false": this would be a third hop → 409.
  check_error_body(echoed, 409);
  auto ok = request(a.port(), "DELETE", "/connectors/my%20c?x=1", "", "Authorization: Basic dXNlcjpwdw==\r\n");
  CHECK(ok.status == 200);
  CHECK(ok.j()["target"] == "/connectors/my%20c?x=1&forward=true");
  CHECK(ok.j()["auth"] == "Basic dXNlcjpwdw==");
  CHECK(ok.j()["connector"] == "my c");

  // Two workers that each think the other is the leader: a → b (forward=true),
  // b → a (forward=false), a refuses to forward again → 409.
  Server c;
  Server d;
  c.herder.not_leader_url = d.server.url();
  d.herder.not_leader_url = c.server.url();
  auto loop = request(c.port(), "PUT", "/connectors/x/config", R"({"connector.class":"kc.FileStreamSource"})");
  check_error_body(loop, 409);
  CHECK(loop.j()["message"] == "Cannot complete request because of a conflicting operation (e.g. worker rebalance)");
  CHECK(c.herder.calls_snapshot().empty());
  CHECK(d.herder.calls_snapshot().empty());
}

TEST_CASE("forwarding with no known leader or a dead leader", "[rest][forward]") {
  Server s;
  s.herder.leader_unknown = true;
  auto r = request(s.port(), "POST", "/connectors", kCreateC1);
  check_error_body(r, 409);
  CHECK(r.j()["message"].get<std::string>().find("no known leader URL") != std::string::npos);

  s.herder.leader_unknown = false;
  s.herder.not_leader_url = "http://127.0.0.1:1/";  // nothing listens on port 1
  auto dead = request(s.port(), "DELETE", "/connectors/c1");
  check_error_body(dead, 500);
  CHECK(dead.j()["message"].get<std::string>().find("IO Error trying to forward REST request") != std::string::npos);
}

TEST_CASE("start fails cleanly on bad listeners", "[rest]") {
  FakeHerder h;
  {
    RestServerOptions o = test_options();
    o.listeners = {"https://127.0.0.1:0"};
    RestServer s(o, h);
    CHECK_FALSE(s.start().ok());
  }
  {
    RestServerOptions o = test_options();
    o.listeners = {"nonsense"};
    RestServer s(o, h);
    CHECK_FALSE(s.start().ok());
  }
  {
    Server first;
    RestServerOptions o = test_options();
    o.listeners = {"http://127.0.0.1:" + std::to_string(first.port())};
    RestServer s(o, h);
    auto st = s.start();
    CHECK_FALSE(st.ok());
  }
}

TEST_CASE("no connector.class is 400 'contains no connector type' on create, update and validate", "[rest]") {
  Server s;
  // Connect's AbstractHerder.validateConnectorConfig: the config printed as
  // a Java map; the class is not taken from the validate path either.
  auto create = request(s.port(), "POST", "/connectors", R"({"name":"c1","config":{"tasks.max":"1"}})");
  check_error_body(create, 400);
  CHECK(create.j()["message"] == "Connector config {name=c1, tasks.max=1} contains no connector type");

  auto put = request(s.port(), "PUT", "/connectors/c2/config", R"({"topic":"t"})");
  check_error_body(put, 400);
  CHECK(put.j()["message"] == "Connector config {name=c2, topic=t} contains no connector type");

  auto validate = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate",
                          R"({"file":"/tmp/x","topic":"t"})");
  check_error_body(validate, 400);
  CHECK(validate.j()["message"] == "Connector config {file=/tmp/x, topic=t} contains no connector type");
  auto validate_empty = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate", "{}");
  check_error_body(validate_empty, 400);
  CHECK(validate_empty.j()["message"] == "Connector config {} contains no connector type");

  // On a follower too: the check is made where the request lands, before forwarding.
  s.herder.not_leader_url = "http://127.0.0.1:1/";
  auto follower = request(s.port(), "PUT", "/connectors/c3/config", R"({"name":"c3"})");
  check_error_body(follower, 400);
  CHECK(follower.j()["message"] == "Connector config {name=c3} contains no connector type");

  CHECK(s.herder.calls_snapshot().empty());
  CHECK_FALSE(s.herder.has_connector("c1"));
  CHECK_FALSE(s.herder.has_connector("c2"));

  // An empty class is present, so Connect's path check applies: "" does not
  // name FileStreamSource.
  s.herder.not_leader_url.clear();
  auto empty_class = request(s.port(), "PUT", "/connector-plugins/FileStreamSource/config/validate",
                             R"({"connector.class":"","name":"x"})");
  check_error_body(empty_class, 400);
  CHECK(empty_class.j()["message"] == "Included connector type  does not match request type FileStreamSource");
}

TEST_CASE("unaddressable connector names are refused on create", "[rest]") {
  Server s;
  for (const char* body : {R"({"name":"","config":{"connector.class":"kc.FileStreamSource"}})",
                           R"({"name":"   ","config":{"connector.class":"kc.FileStreamSource"}})",
                           R"({"config":{"connector.class":"kc.FileStreamSource"}})",
                           R"({"name":null,"config":{"connector.class":"kc.FileStreamSource"}})"}) {
    INFO(body);
    auto r = request(s.port(), "POST", "/connectors", body);
    check_error_body(r, 400);
    CHECK(r.j()["message"] == "Connector name may not be empty");
  }
  for (const char* name : {".", ".."}) {
    INFO(name);
    auto r = request(s.port(), "POST", "/connectors",
                     json{{"name", name}, {"config", {{"connector.class", "kc.FileStreamSource"}}}}.dump());
    check_error_body(r, 400);
    CHECK(r.j()["message"] == "Connector name may not be '.' or '..'");
  }
  auto dot = request(s.port(), "PUT", "/connectors/%2E/config", R"({"connector.class":"kc.FileStreamSource"})");
  check_error_body(dot, 400);
  CHECK(dot.j()["message"] == "Connector name may not be '.' or '..'");
  // The empty name has no path segment to match: /connectors//config is not a connector route.
  CHECK(request(s.port(), "PUT", "/connectors//config", R"({"connector.class":"kc.FileStreamSource"})").status != 200);
  CHECK(s.herder.calls_snapshot().empty());

  // Names with '/' or inner spaces stay addressable, percent-encoded.
  auto slash = request(s.port(), "POST", "/connectors",
                       R"({"name":"a/b","config":{"connector.class":"kc.FileStreamSource"}})");
  CHECK(slash.status == 201);
  CHECK(slash.header("location") == "/connectors/a%2Fb");
  CHECK(request(s.port(), "GET", "/connectors/a%2Fb").j()["name"] == "a/b");
}

TEST_CASE("topic tracking turned off answers 403 with Connect's messages", "[rest]") {
  Server s;
  s.herder.topics["c1"] = {"t"};
  s.herder.tracking_reset_allowed = false;
  CHECK(request(s.port(), "GET", "/connectors/c1/topics").j() == json::parse(R"({"c1":{"topics":["t"]}})"));
  auto no_reset = request(s.port(), "PUT", "/connectors/c1/topics/reset");
  check_error_body(no_reset, 403);
  CHECK(no_reset.j()["message"] == "Topic tracking reset is disabled.");

  s.herder.tracking_enabled = false;
  auto get = request(s.port(), "GET", "/connectors/c1/topics");
  check_error_body(get, 403);
  CHECK(get.j()["message"] == "Topic tracking is disabled.");
  auto reset = request(s.port(), "PUT", "/connectors/c1/topics/reset");
  check_error_body(reset, 403);
  CHECK(reset.j()["message"] == "Topic tracking is disabled.");
  CHECK(s.herder.calls_snapshot().empty());
}

TEST_CASE("error factories: write timeout, forbidden, no connector type", "[rest]") {
  auto w = RestError::write_timeout("connector config", "Timed out waiting for the config topic");
  CHECK(w.http_status() == 500);
  CHECK(w.kind == ErrorKind::Timeout);
  CHECK(w.message ==
        "Request timed out while writing the connector config; the change may still be applied: "
        "Timed out waiting for the config topic");
  CHECK(RestError::write_timeout("target state", "").message ==
        "Request timed out while writing the target state; the change may still be applied");
  CHECK(RestError::forbidden("x").http_status() == 403);
  CHECK(RestError::topic_tracking_disabled().http_status() == 403);
  CHECK(RestError::topic_tracking_reset_disabled().message == "Topic tracking reset is disabled.");
  CHECK(RestError::no_connector_type({}).message == "Connector config {} contains no connector type");
  CHECK(RestError::no_connector_type({{"b", "2"}, {"a", "1"}}).http_status() == 400);
  CHECK(RestError::no_connector_type({{"b", "2"}, {"a", "1"}}).message ==
        "Connector config {a=1, b=2} contains no connector type");
}

TEST_CASE("a write that outlives the request deadline says it may still be applied", "[rest]") {
  auto o = test_options();
  o.request_timeout = 300ms;
  Server s(o);
  s.herder.hang = true;
  for (auto [method, target, body] :
       {std::tuple{"POST", "/connectors", kCreateC1},
        std::tuple{"PUT", "/connectors/c1/config", std::string(R"({"connector.class":"kc.FileStreamSource"})")},
        std::tuple{"DELETE", "/connectors/c1", std::string()}, std::tuple{"PUT", "/connectors/c1/pause", std::string()},
        std::tuple{"PUT", "/connectors/c1/stop", std::string()},
        std::tuple{"POST", "/connectors/c1/restart?includeTasks=true", std::string()}}) {
    INFO(method << " " << target);
    auto r = request(s.port(), method, target, body);
    check_error_body(r, 500);
    CHECK(r.j()["message"] == kWriteTimeoutMessage);
    CHECK(r.j()["message"].get<std::string>().find("may still be applied") != std::string::npos);
  }
  // Reads keep Connect's plain message.
  auto read = request(s.port(), "GET", "/connectors/c1/config");
  check_error_body(read, 500);
  CHECK(read.j()["message"] == "Request timed out");
}

// ---------------------------------------------------------------------------
// Issue 23: hostile or careless input (bounded parsing, names, media type,
// no exception reaching the io loop, secrets, server bounds).
// ---------------------------------------------------------------------------

namespace {

std::string nested_arrays(size_t depth) { return std::string(depth, '[') + std::string(depth, ']'); }

/// A raw request with exactly the given headers (no automatic Content-Type).
std::string raw_with(const std::string& method, const std::string& target, const std::string& headers,
                     const std::string& body) {
  return method + " " + target + " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n" + headers +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

HttpResult send_raw(uint16_t port, const std::string& bytes) {
  Conn c(port);
  c.send(bytes);
  auto r = c.read_response();
  REQUIRE(r.has_value());
  return *r;
}

std::string message_of(const HttpResult& r) {
  INFO(r.body);
  return r.j()["message"].get<std::string>();
}

const std::string kStoppedOffsetsTarget = "/connectors/c1/offsets";

}  // namespace

TEST_CASE("60,000 nested arrays answer 400 on every body route, offsets included", "[rest][hostile]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  REQUIRE(request(s.port(), "PUT", "/connectors/c1/stop").status == 204);
  const std::string deep = nested_arrays(60'000);
  const std::string deep_offsets = R"({"offsets":[{"partition":{"p":)" + deep + R"(},"offset":{"o":1}}]})";
  struct Case {
    const char* method;
    std::string target;
    std::string body;
  };
  for (const Case& c : {Case{"PATCH", kStoppedOffsetsTarget, deep_offsets}, Case{"PATCH", kStoppedOffsetsTarget, deep},
                        Case{"POST", "/connectors", deep}, Case{"PUT", "/connectors/c2/config", deep},
                        Case{"PATCH", "/connectors/c1/config", deep},
                        Case{"PUT", "/connector-plugins/FileStreamSource/config/validate", deep}}) {
    INFO(c.method << " " << c.target);
    auto r = request(s.port(), c.method, c.target, c.body);
    check_error_body(r, 400);
    CHECK(message_of(r) ==
          "Invalid JSON in request body: the body nests deeper than 64 levels of arrays and objects");
  }
  // 64 levels are fine (the shape check answers instead).
  auto ok_depth = request(s.port(), "PATCH", kStoppedOffsetsTarget,
                          R"({"offsets":[{"partition":{"p":)" + nested_arrays(60) + R"(},"offset":null}]})");
  CHECK(ok_depth.status == 200);
  CHECK(request(s.port(), "GET", "/").status == 200);  // still serving
}

TEST_CASE("a number out of range answers 400 naming the key, never the value", "[rest][hostile]") {
  Server s;
  auto r = request(s.port(), "POST", "/connectors",
                   R"({"name":"c1","config":{"connector.class":"kc.FileStreamSource","tasks.max":1e999}})");
  check_error_body(r, 400);
  CHECK(message_of(r) == "Invalid JSON in request body: the number for key 'tasks.max' is out of range");
  // A numeric password: neither the reply nor the log may show it (nlohmann
  // quotes the token it was reading in out_of_range and parse errors).
  for (const char* body : {R"({"connector.class":"kc.FileStreamSource","connection.password":98765e999})",
                           R"({"connector.class":"kc.FileStreamSource","connection.password":98765x})",
                           R"({"connector.class":"kc.FileStreamSource","connection.password":"98765)"}) {
    INFO(body);
    auto p = request(s.port(), "PUT", "/connectors/c1/config", body);
    check_error_body(p, 400);
    CHECK(message_of(p).find("98765") == std::string::npos);
  }
  auto top = request(s.port(), "PUT", "/connectors/c1/config", "-1e400");
  check_error_body(top, 400);
  CHECK(message_of(top).rfind("Invalid JSON in request body: a number at byte ", 0) == 0);
  CHECK(message_of(top).find("400") == std::string::npos);
  // A value of the wrong type names its key.
  auto wrong = request(s.port(), "PUT", "/connectors/c1/config", R"({"connector.class":"X","topics":["a"]})");
  check_error_body(wrong, 400);
  CHECK(message_of(wrong).find("'topics'") != std::string::npos);
  CHECK(s.herder.calls_snapshot().empty());
}

TEST_CASE("'contains no connector type' hides secret values", "[rest][hostile]") {
  Server s;
  auto r = request(s.port(), "POST", "/connectors",
                   R"({"name":"c1","config":{"connection.password":12345678,"sasl.jaas.config":"x y z secret"}})");
  check_error_body(r, 400);
  CHECK(
      message_of(r) ==
      "Connector config {connection.password=[hidden], name=c1, sasl.jaas.config=[hidden]} contains no connector type");
}

TEST_CASE("connector names: the rule on create, before forwarding, on leader and follower alike", "[rest][hostile]") {
  Server leader;
  Server follower;
  follower.herder.not_leader_url = leader.server.url();
  const std::string long_name(10'000, 'n');
  const auto create_body = [](const std::string& name) {
    return json{{"name", name}, {"config", {{"connector.class", "kc.FileStreamSource"}}}}.dump();
  };
  for (Server* s : {&leader, &follower}) {
    auto too_long = request(s->port(), "POST", "/connectors", create_body(long_name));
    check_error_body(too_long, 400);
    CHECK(message_of(too_long) == "Connector name is 10000 bytes long; the limit is 1024 bytes of UTF-8");
    auto control = request(s->port(), "POST", "/connectors", create_body("a\u0085b"));
    check_error_body(control, 400);
    CHECK(message_of(control).find("control characters") != std::string::npos);
    auto put_new = request(s->port(), "PUT", "/connectors/" + std::string(2000, 'p') + "/config",
                           R"({"connector.class":"kc.FileStreamSource"})");
    check_error_body(put_new, 400);
    CHECK(message_of(put_new) == "Connector name is 2000 bytes long; the limit is 1024 bytes of UTF-8");
    auto put_ctl =
        request(s->port(), "PUT", "/connectors/a%01b/config", R"({"connector.class":"kc.FileStreamSource"})");
    check_error_body(put_ctl, 400);
    CHECK(message_of(put_ctl).find("control characters (found U+0001") != std::string::npos);
  }
  CHECK(leader.herder.calls_snapshot().empty());
  CHECK(follower.herder.calls_snapshot().empty());
  // A 1024-byte name goes through the follower: the leader's reply (Location
  // holds the name) is read and relayed.
  const std::string max_name(1024, 'm');
  auto created = request(follower.port(), "POST", "/connectors", create_body(max_name));
  CHECK(created.status == 201);
  CHECK(created.header("location") == "/connectors/" + max_name);
  CHECK(leader.herder.has_connector(max_name));
}

TEST_CASE("a connector with an odd name from an older version stays readable, updatable and deletable",
          "[rest][hostile]") {
  Server s;
  const std::string odd(2000, 'o');
  const std::string ctl = "old\x01name";
  for (const auto& name : {odd, ctl}) {
    s.herder.connectors[name] = ConnectorInfo{name, {{"connector.class", "kc.FileStreamSource"}, {"name", name}}, {},
                                              ConnectorType::Source};
  }
  for (const std::string& path : {"/connectors/" + odd, std::string("/connectors/old%01name")}) {
    INFO(path);
    CHECK(request(s.port(), "GET", path).status == 200);
    CHECK(request(s.port(), "GET", path + "/config").status == 200);
    CHECK(request(s.port(), "PUT", path + "/config", R"({"connector.class":"kc.FileStreamSource","topic":"t"})")
              .status == 200);
    CHECK(request(s.port(), "DELETE", path).status == 204);
  }
  CHECK_FALSE(s.herder.has_connector(odd));
  CHECK_FALSE(s.herder.has_connector(ctl));
}

TEST_CASE("a path segment that is not UTF-8 answers 400 at once on every route", "[rest][hostile]") {
  Server s;
  s.herder.connectors["c"] =
      ConnectorInfo{"c", {{"connector.class", "kc.FileStreamSource"}}, {}, ConnectorType::Source};
  const std::string msg =
      "is not valid UTF-8 after percent-decoding; connector names (and every path segment) must be valid UTF-8";
  struct Case {
    const char* method;
    const char* target;
  };
  for (const Case& c : {Case{"GET", "/connectors/%FF"}, Case{"GET", "/connectors/poison%FE/status"},
                        Case{"PUT", "/connectors/connector-poison%FE/config"}, Case{"DELETE", "/connectors/%C3"},
                        Case{"PATCH", "/connectors/%FF/config"}, Case{"GET", "/connector-plugins/%FF/config"},
                        Case{"GET", "/connectors/%FF/topics"}}) {
    INFO(c.method << " " << c.target);
    auto r = request(s.port(), c.method, c.target, std::string(c.method) == "GET" || std::string(c.method) == "DELETE"
                                                       ? ""
                                                       : R"({"connector.class":"kc.FileStreamSource"})");
    check_error_body(r, 400);
    CHECK(message_of(r).find(msg) != std::string::npos);
  }
  CHECK(s.herder.calls_snapshot().empty());
}

TEST_CASE("replies serialise invalid UTF-8 from the herder instead of failing", "[rest][hostile]") {
  Server s;
  s.herder.connectors["c"] =
      ConnectorInfo{"c", {{"connector.class", "kc.FileStreamSource"}, {"x", "bad\xFF"}}, {}, ConnectorType::Source};
  auto r = request(s.port(), "GET", "/connectors/c/config");
  CHECK(r.status == 200);
  CHECK(r.j()["x"] == "bad\xEF\xBF\xBD");
}

TEST_CASE("a body that is not application/json answers 415", "[rest][hostile]") {
  Server s;
  const std::string create = kCreateC1;
  auto plain = send_raw(s.port(), raw_with("POST", "/connectors", "Content-Type: text/plain\r\n", create));
  check_error_body(plain, 415);
  CHECK(message_of(plain) == "HTTP 415 Unsupported Media Type");
  auto none = send_raw(s.port(), raw_with("POST", "/connectors", "", create));
  check_error_body(none, 415);
  auto form = send_raw(s.port(), raw_with("PUT", "/connectors/c1/config",
                                          "Content-Type: application/x-www-form-urlencoded\r\n", "{}"));
  check_error_body(form, 415);
  CHECK(s.herder.calls_snapshot().empty());
  auto charset =
      send_raw(s.port(), raw_with("POST", "/connectors", "Content-Type: Application/JSON; charset=utf-8\r\n", create));
  CHECK(charset.status == 201);
  // Body-less POST/PUT need no Content-Type.
  CHECK(send_raw(s.port(), raw_with("POST", "/connectors/c1/restart", "", "")).status == 204);
  CHECK(send_raw(s.port(), raw_with("PUT", "/connectors/c1/pause", "", "")).status == 202);
  // An unknown path is still 404 (routing comes first, as in Jersey).
  check_error_body(send_raw(s.port(), raw_with("POST", "/nowhere", "Content-Type: text/plain\r\n", "x")), 404);
}

TEST_CASE("an exception in a handler answers 500 with a request id that the log line repeats", "[rest][hostile]") {
  std::ostringstream log;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(log);
  auto prev = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("rest-test", sink));
  {
    auto o = test_options();
    o.request_timeout = 30s;  // an answer must not wait for the deadline
    Server s(o);
    s.server.add_route(Method::Get, "/boom", [](const RestRequest&, Responder) { throw std::runtime_error("kaboom"); });
    s.server.add_route(Method::Get, "/boom-int", [](const RestRequest&, Responder) { throw 42; });
    for (const char* target : {"/boom", "/boom-int"}) {
      INFO(target);
      auto r = request(s.port(), "GET", target);
      check_error_body(r, 500);
      const std::string m = message_of(r);
      auto at = m.find("request id ");
      REQUIRE(at != std::string::npos);
      const std::string id = m.substr(at + 11, m.find(')', at) - at - 11);
      CHECK_FALSE(id.empty());
      CHECK(log.str().find("request " + id + " (GET " + target + ") failed unexpectedly") != std::string::npos);
    }
    CHECK(log.str().find("kaboom") != std::string::npos);
    CHECK(request(s.port(), "GET", "/").status == 200);
  }
  spdlog::set_default_logger(prev);
}

TEST_CASE("request line, target and header bounds", "[rest][hostile]") {
  Server s;
  // A 100 KB request line: 431 at once (it passes the header limit).
  auto line = send_raw(s.port(), "GET /" + std::string(100 * 1024, 'a') + " HTTP/1.1\r\nHost: x\r\n\r\n");
  check_error_body(line, 431);
  // A target over the target limit but within the header limit: 414.
  auto target = request(s.port(), "GET", "/connectors/" + std::string(13 * 1024, 't'));
  check_error_body(target, 414);
  CHECK(message_of(target) == "Request target is 13324 bytes long; the limit is 12288 bytes");
  // 10,000 headers: 431.
  std::string many;
  for (int i = 0; i < 10'000; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  check_error_body(send_raw(s.port(), "GET / HTTP/1.1\r\nHost: x\r\n" + many + "\r\n"), 431);
  CHECK(request(s.port(), "GET", "/").status == 200);
}

TEST_CASE("a forwarded reply with a large Location header is relayed", "[rest][forward][hostile]") {
  Server leader;
  Server follower;
  follower.herder.not_leader_url = leader.server.url();
  const std::string location = "/connectors/" + std::string(9000, 'L');  // over Beast's 8 KiB default
  leader.server.add_route(Method::Post, "/connectors", [location](const RestRequest&, Responder r) {
    auto out = RestResponse::json(201, "{}");
    out.headers.emplace_back("Location", location);
    r(out);
  });
  auto r = request(follower.port(), "POST", "/connectors", kCreateC1);
  CHECK(r.status == 201);
  CHECK(r.header("location") == location);
}

TEST_CASE("a slow client gets a deadline for the whole request, not per byte", "[rest][hostile]") {
  auto o = test_options();
  o.io_timeout = 300ms;
  Server s(o);
  Conn slow(s.port());
  // One byte every 20 ms would take about 4 s: the server closes at its
  // deadline although bytes keep arriving (a per-byte timeout never would).
  const std::string req = raw("GET", "/connectors", "", false, "X-Pad: " + std::string(150, 'p') + "\r\n");
  size_t sent = 0;
  for (; sent + 1 < req.size() && !slow.gone(false); ++sent) {
    slow.send(req.substr(sent, 1));
    std::this_thread::sleep_for(20ms);
  }
  CHECK(sent + 1 < req.size());  // closed before the request was complete
  CHECK(slow.gone(true));
  CHECK(request(s.port(), "GET", "/").status == 200);
}

TEST_CASE("1,000 pipelined requests on one connection are answered in order", "[rest][hostile]") {
  Server s;
  REQUIRE(request(s.port(), "POST", "/connectors", kCreateC1).status == 201);
  Conn c(s.port());
  std::string batch;
  for (int i = 0; i < 1000; ++i) batch += raw("GET", i % 2 == 0 ? "/connectors/c1" : "/connectors/none", "", true);
  std::thread writer([&] { c.send(batch); });
  int answered = 0;
  for (int i = 0; i < 1000; ++i) {
    auto r = c.read_response();
    if (!r) break;
    CHECK(r->status == (i % 2 == 0 ? 200 : 404));
    ++answered;
  }
  writer.join();
  CHECK(answered == 1000);
  CHECK(request(s.port(), "GET", "/").status == 200);  // others are served meanwhile and after
}

TEST_CASE("at max_connections an idle connection makes room and busy ones are kept", "[rest][hostile]") {
  auto o = test_options();
  o.io_timeout = 30s;  // idle connections would otherwise stay for 30 s
  o.max_connections = 4;
  Server s(o);
  std::vector<std::unique_ptr<Conn>> idle;
  for (int i = 0; i < 4; ++i) {
    idle.push_back(std::make_unique<Conn>(s.port()));
    std::this_thread::sleep_for(20ms);  // a known order: idle[0] waited longest
  }
  CHECK(request(s.port(), "GET", "/").status == 200);  // served although 4 were open
  CHECK(idle[0]->closed_by_peer());                     // the one idle longest made room
  // Every connection busy (the herder never answers): a new one is refused.
  idle.clear();
  std::this_thread::sleep_for(100ms);
  s.herder.hang = true;
  std::vector<std::unique_ptr<Conn>> busy;
  for (int i = 0; i < 4; ++i) {
    busy.push_back(std::make_unique<Conn>(s.port()));
    busy.back()->send(raw("GET", "/connectors", "", true));
  }
  std::this_thread::sleep_for(100ms);
  Conn refused(s.port());
  CHECK(refused.closed_by_peer());
  CHECK(RestServerOptions{}.max_connections == 512);
}

TEST_CASE("drain, internal and observability routes reach the herder only through HerderApi", "[rest][admin]") {
  Server s;
  int drains_begun = 0;
  add_drain_routes(s.server, s.herder, "w1:8083", [&] { ++drains_begun; });
  add_task_reconfiguration_route(s.server, s.herder);
  RebalanceRecord rec;
  rec.generation = 7;
  rec.protocol = "sessioned";
  rec.assigned_tasks = {kc::connect::ConnectorTaskId{"c1", 0}};
  rec.started_ms = 1000;
  rec.assigned_ms = 1250;
  s.herder.rebalances = {rec};
  add_observability_routes(s.server, s.herder, nullptr);

  auto drain = request(s.port(), "POST", "/admin/drain");
  CHECK(drain.status == 202);
  CHECK(drain.j() == json{{"worker_id", "w1:8083"}, {"draining", true}});
  CHECK(drains_begun == 1);

  const std::string sig = "X-Connect-Authorization: c2ln\r\nX-Connect-Request-Signature-Algorithm: HmacSHA256\r\n";
  auto member = request(s.port(), "POST", "/admin/drain/members", R"({"member_id":"m-1"})", sig);
  CHECK(member.status == 202);
  CHECK(member.j() == json{{"member_id", "m-1"}, {"message", "draining"}});
  check_error_body(request(s.port(), "POST", "/admin/drain/members", R"({"member_id":""})"), 400);

  s.herder.internal_status = 204;
  CHECK(request(s.port(), "POST", "/connectors/c1/tasks", "{}").status == 204);
  s.herder.internal_status = 409;
  s.herder.internal_message = "not the leader";
  auto fence = request(s.port(), "PUT", "/connectors/c1/fence");
  check_error_body(fence, 409);
  CHECK(fence.j()["message"] == "not the leader");
  {
    auto calls = s.herder.calls_snapshot();
    CHECK(calls == std::vector<std::string>{"drain m-1", "reconfigure c1", "fence c1"});
  }
  REQUIRE(s.herder.signatures.size() == 3);
  CHECK(s.herder.signatures[0].signature == std::optional<std::string>("c2ln"));
  CHECK(s.herder.signatures[0].algorithm == std::optional<std::string>("HmacSHA256"));
  CHECK_FALSE(s.herder.signatures[1].signature.has_value());

  auto rebalances = request(s.port(), "GET", "/rebalances");
  REQUIRE(rebalances.status == 200);
  REQUIRE(rebalances.j().size() == 1);
  CHECK(rebalances.j()[0]["generation"] == 7);
  CHECK(rebalances.j()[0]["join_to_sync_ms"] == 250);
  CHECK(rebalances.j()[0]["assigned"]["tasks"] == json::array({"c1-0"}));
  check_error_body(request(s.port(), "GET", "/rebalances?limit=0"), 400);
  check_error_body(request(s.port(), "GET", "/metrics"), 503);
}

// ------------------------------------------------------------ route table

TEST_CASE("route_docs lists exactly the routes a worker registers (docs/reference/rest-api.md is generated from it)",
          "[rest][reference]") {
  Server s;
  add_observability_routes(s.server, s.herder, nullptr);
  add_task_reconfiguration_route(s.server, s.herder);
  add_drain_routes(s.server, s.herder, "w1", [] {});
  add_logger_routes(s.server, s.herder);
  add_console_routes(s.server, s.herder, nullptr);
  std::set<std::pair<std::string, std::string>> registered, documented;
  for (const auto& [m, p] : s.server.routes()) registered.emplace(to_string(m), p);
  for (const auto& d : route_docs()) {
    INFO(to_string(d.method) << " " << d.path);
    CHECK(documented.emplace(to_string(d.method), d.path).second);  // listed once
    CHECK(std::string(d.summary).size() > 0);
    CHECK(std::string(d.statuses).size() > 0);
  }
  for (const auto& r : registered) {
    INFO(r.first << " " << r.second << " is served but missing from worker/rest/route_docs.cpp");
    CHECK(documented.count(r) == 1);
  }
  for (const auto& d : documented) {
    INFO(d.first << " " << d.second << " is in worker/rest/route_docs.cpp but no longer served");
    CHECK(registered.count(d) == 1);
  }
}

// ------------------------------------------------------------ web console

TEST_CASE("GET /cluster through a follower: the leader gathers every member's GET /worker", "[rest][ui]") {
  Server leader, follower;
  add_console_routes(leader.server, leader.herder, nullptr);
  add_console_routes(follower.server, follower.herder, nullptr);
  int drains = 0;
  add_drain_routes(follower.server, follower.herder, "wF", [&] { ++drains; });
  const std::string lurl = leader.server.url(), furl = follower.server.url();
  const std::string dead = "http://127.0.0.1:1/";  // nothing listens: an unreachable member
  MemberView lv;
  lv.worker_id = "wL";
  lv.url = lurl;
  lv.member_id = "m-L";
  lv.generation = 7;
  lv.is_leader = true;
  lv.leader_url = lurl;
  lv.protocol = "sessioned";
  lv.tasks = {"c1-0", "c1-2"};
  lv.members = {{"m-L", lurl, ""}, {"m-F", furl, ""}, {"m-X", dead, ""}};
  leader.herder.view = lv;
  MemberView fv;
  fv.worker_id = "wF";
  fv.url = furl;
  fv.member_id = "m-F";
  fv.generation = 7;
  fv.leader_url = lurl;
  fv.protocol = "sessioned";
  fv.tasks = {"c1-1"};
  follower.herder.view = fv;
  RebalanceRecord rec;
  rec.generation = 6;
  RebalanceRecord rec7 = rec;
  rec7.generation = 7;
  follower.herder.rebalances = {rec, rec7};

  auto r = request(follower.port(), "GET", "/cluster?rebalances=1");
  INFO(r.body);
  REQUIRE(r.status == 200);
  auto j = r.j();
  CHECK(j["served_by"] == "wL");
  CHECK(j["generation"] == 7);
  REQUIRE(j["workers"].size() == 3);
  std::map<std::string, json> by_url;
  for (const auto& w : j["workers"]) by_url[w["url"].get<std::string>()] = w;
  CHECK(by_url[lurl]["worker_id"] == "wL");
  CHECK(by_url[lurl]["is_leader"] == true);
  CHECK(by_url[lurl]["tasks"] == json::array({"c1-0", "c1-2"}));
  CHECK(by_url[furl]["worker_id"] == "wF");
  CHECK(by_url[furl]["member_id"] == "m-F");
  CHECK(by_url[furl]["is_leader"] == false);
  CHECK(by_url[furl]["tasks"] == json::array({"c1-1"}));
  REQUIRE(by_url[furl]["rebalances"].size() == 1);  // the last one only
  CHECK(by_url[furl]["rebalances"][0]["generation"] == 7);
  CHECK(by_url[furl]["health"]["status"] == "healthy");
  CHECK(by_url[dead]["member_id"] == "m-X");
  CHECK_THAT(by_url[dead]["error"].get<std::string>(), Catch::Contains("IO Error"));
  // Sorted by URL.
  std::vector<std::string> urls;
  for (const auto& w : j["workers"]) urls.push_back(w["url"]);
  CHECK(std::is_sorted(urls.begin(), urls.end()));

  // The drain relay: through the follower, to the leader, back to the follower's /admin/drain.
  auto drain = request(follower.port(), "POST", "/cluster/workers/wF/drain");
  CHECK(drain.status == 202);
  CHECK(drain.j() == json{{"worker_id", "wF"}, {"draining", true}});
  CHECK(drains == 1);
  auto unknown = request(follower.port(), "POST", "/cluster/workers/nobody/drain");
  check_error_body(unknown, 404);
  const std::string members = unknown.j()["message"].get<std::string>();
  CHECK_THAT(members, Catch::Contains("wL") && Catch::Contains("wF") && Catch::Contains(dead));
}

TEST_CASE("GET /worker: shape, the rebalances bound, and 501 without a group", "[rest][ui]") {
  Server s;
  add_console_routes(s.server, s.herder, nullptr);
  check_error_body(request(s.port(), "GET", "/worker"), 501);  // the default member_view
  MemberView v;
  v.worker_id = "w1";
  v.generation = 3;
  v.connectors = {"c1"};
  s.herder.view = v;
  auto r = request(s.port(), "GET", "/worker?rebalances=0");
  REQUIRE(r.status == 200);
  auto j = r.j();
  for (const char* k : {"worker_id", "url", "member_id", "is_leader", "leader_url", "generation", "protocol", "health",
                        "uptime_ms", "now_ms", "connectors", "tasks", "draining", "rss_bytes", "threads",
                        "task_records", "rebalances"})
    CHECK(j.contains(k));
  CHECK(j["generation"] == 3);
  CHECK(j["rss_bytes"].get<uint64_t>() > 0);  // read from /proc/self
  CHECK(j["threads"].get<uint64_t>() >= 2);
  CHECK(j["rebalances"] == json::array());
  for (const char* bad : {"/worker?rebalances=257", "/worker?rebalances=-1", "/worker?rebalances=x", "/cluster?rebalances=1x"})
    check_error_body(request(s.port(), "GET", bad), 400);
  // A follower whose leader cannot answer (here: no leader URL known, as
  // during a rebalance) shows itself alone, marked partial, with the reason.
  auto partial = request(s.port(), "GET", "/cluster?rebalances=0");
  REQUIRE(partial.status == 200);
  auto pj = partial.j();
  CHECK(pj["partial"] == true);
  CHECK_THAT(pj["error"].get<std::string>(), Catch::Contains("no known leader URL"));
  REQUIRE(pj["workers"].size() == 1);
  CHECK(pj["workers"][0]["worker_id"] == "w1");
  // The same when the leader's URL does not answer.
  v.leader_url = "http://127.0.0.1:1/";
  s.herder.view = v;
  auto gone = request(s.port(), "GET", "/cluster");
  REQUIRE(gone.status == 200);
  CHECK(gone.j()["partial"] == true);
  CHECK_THAT(gone.j()["error"].get<std::string>(), Catch::Contains("IO Error"));
  // The drain relay has no partial answer: it needs the leader.
  check_error_body(request(s.port(), "POST", "/cluster/workers/w1/drain"), 500);
}

TEST_CASE("the console's config view hides secrets, and its files are compiled in with their types", "[rest][ui]") {
  Server s;
  add_console_routes(s.server, s.herder, nullptr);
  ConnectorInfo info;
  info.name = "c1";
  info.config = {{"name", "c1"}, {"connector.class", "A"}, {"database.password", "pw1"},
                 {"producer.override.sasl.jaas.config", "x required password=\"p\";"}, {"topic", "t"}};
  s.herder.connectors["c1"] = info;
  auto r = request(s.port(), "GET", "/ui/api/connectors/c1/config");
  REQUIRE(r.status == 200);
  CHECK(r.j() == json{{"name", "c1"}, {"connector.class", "A"}, {"database.password", "[hidden]"},
                      {"producer.override.sasl.jaas.config", "[hidden]"}, {"topic", "t"}});
  check_error_body(request(s.port(), "GET", "/ui/api/connectors/nope/config"), 404);

  REQUIRE(find_ui_asset("index.html") != nullptr);
  auto page = request(s.port(), "GET", "/ui");
  CHECK(page.status == 200);
  CHECK(page.header("content-type") == "text/html; charset=utf-8");
  CHECK(page.body == std::string(find_ui_asset("index.html")->bytes));
  CHECK_THAT(page.header("content-security-policy"), Catch::Contains("default-src 'self'"));
  for (const auto& a : ui_assets()) {
    INFO(a.name);
    auto f = request(s.port(), "GET", "/ui/" + std::string(a.name));
    CHECK(f.status == 200);
    CHECK(f.body.size() == a.bytes.size());
    CHECK(f.header("content-type") == std::string(ui_content_type(a.name)));
  }
  CHECK(ui_content_type("app.js") == "text/javascript; charset=utf-8");
  CHECK(ui_content_type("x.css") == "text/css; charset=utf-8");
  CHECK(ui_content_type("noext") == "application/octet-stream");
  CHECK(find_ui_asset("../index.html") == nullptr);
  check_error_body(request(s.port(), "GET", "/ui/missing.js"), 404);
  check_error_body(request(s.port(), "GET", "/ui/a/index.html"), 404);
}

TEST_CASE("rest.ui.enable=false: no console, the cluster data stays", "[rest][ui]") {
  Server s;
  ConsoleOptions off;
  off.ui_enabled = false;
  add_console_routes(s.server, s.herder, nullptr, off);
  CHECK(request(s.port(), "GET", "/ui").status == 404);
  CHECK(request(s.port(), "GET", "/ui/app.js").status == 404);
  CHECK(request(s.port(), "GET", "/worker").status == 501);  // registered (the default herder answer)
}
