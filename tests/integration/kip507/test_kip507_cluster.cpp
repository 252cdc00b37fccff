// KIP-507 signed internal requests on an in-process cluster: two
// DistributedHerder workers against librdkafka's mock cluster, each with the
// REST route of Connect's internal POST /connectors/{c}/tasks. A test
// connector asks for task reconfigurations from its running instance, so a
// worker that is not the leader forwards signed requests to the leader.
// Cases: the leader writes a session key in Connect's format; forwarded
// requests verify; forged ones get Connect's 400/403 and change nothing; a
// short inter.worker.key.ttl.ms rotates the key and requests still verify;
// a key written by another writer (as Kafka Connect would) is accepted;
// under `compatible` nothing is signed and requests are accepted, but a
// drain request carrying signature headers is refused (403).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include <nlohmann/json.hpp>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/integration/worker/rest_cluster.h"
#include "worker/plugins/registry.h"
#include "worker/rest/admin_routes.h"
#include "worker/herder/internal_client.h"
#include "worker/herder/request_signature.h"
#include "worker/rest/rest_server.h"
#include "worker/storage/config_store.h"

using namespace kc;
using namespace kc::test;
using namespace std::chrono_literals;

namespace {

constexpr const char* kReconfClass = "org.kconnectd.test.ReconfiguringSourceConnector";

/// A source task that produces nothing.
class IdleTask : public connectors::SourceTask {
 public:
  void start(const storage::ConfigMap&, connectors::SourceTaskContext&) override {}
  std::vector<connectors::SourceRecord> poll() override {
    std::this_thread::sleep_for(100ms);
    return {};
  }
  void stop() override {}
};

/// A source connector whose running instance asks for a task
/// reconfiguration every 400 ms (as a connector that watches its source
/// does), so the worker running it forwards POST /connectors/{c}/tasks
/// when it is not the leader. Its task configs never change.
class ReconfiguringConnector : public connectors::Connector {
 public:
  ~ReconfiguringConnector() override { stop(); }
  void initialize(connectors::ConnectorContext& ctx) override { ctx_ = &ctx; }
  connectors::ConnectorType type() const override { return connectors::ConnectorType::Source; }
  void start(const storage::ConfigMap&) override {
    running_ = true;
    thread_ = std::thread([this] {
      while (running_) {
        std::this_thread::sleep_for(400ms);
        if (running_ && ctx_) ctx_->request_task_reconfiguration();
      }
    });
  }
  std::vector<storage::ConfigMap> task_configs(int) override { return {{{"task.kind", "idle"}}}; }
  void stop() override {
    running_ = false;
    if (thread_.joinable()) thread_.join();
  }
  std::unique_ptr<connectors::SourceTask> create_source_task() override { return std::make_unique<IdleTask>(); }

 private:
  connectors::ConnectorContext* ctx_ = nullptr;
  std::atomic<bool> running_{false};
  std::thread thread_;
};

void register_test_connector() {
  static bool done = false;
  if (done) return;
  done = true;
  connectors::PluginDesc d;
  d.class_name = kReconfClass;
  d.type = connectors::ConnectorType::Source;
  d.factory = [] { return std::make_unique<ReconfiguringConnector>(); };
  connectors::PluginRegistry::builtin().add(std::move(d));
}

/// The two workers with REST servers carrying the internal task-config and
/// drain routes; the test connector is registered first.
struct SignedCluster : RestCluster {
  static ClusterOptions registered(ClusterOptions opts) {
    register_test_connector();
    return opts;
  }
  explicit SignedCluster(ClusterOptions opts)
      : RestCluster(registered(std::move(opts)),
                    [](rest::RestServer& server, DistributedHerder& worker, const std::string& id) {
                      rest::add_task_reconfiguration_route(server, worker);
                      rest::add_drain_routes(server, worker, id, [] {});
                    }) {}
};

std::optional<herder::SessionKey> topic_key(storage::ConfigBackingStore& store) {
  auto snap = store.read_to_end(5000);
  if (!snap || !snap->session_key) return std::nullopt;
  auto k = herder::session_key_from_record(*snap->session_key);
  if (!k) return std::nullopt;
  return *k;
}

herder::InternalResponse post_tasks(const std::string& url, const std::string& connector, const std::string& body,
                                    const std::vector<std::pair<std::string, std::string>>& headers) {
  auto r = herder::post_internal(url, "/connectors/" + connector + "/tasks", body, 10000, nullptr, headers);
  INFO((r ? std::string("ok") : r.error().to_string()));
  REQUIRE(r);
  return *r;
}

std::string message_of(const herder::InternalResponse& r) {
  auto j = nlohmann::json::parse(r.body, nullptr, false);
  return j.is_object() && j.contains("message") && j["message"].is_string() ? j["message"].get<std::string>() : r.body;
}

void put_reconfiguring_connectors(SignedCluster& sc, Expected& expected) {
  for (const char* name : {"rc1", "rc2"}) {
    sc.cluster.put_connector(name, {{"connector.class", kReconfClass}, {"tasks.max", "1"}});
    expected.add(name, 1);
  }
  sc.cluster.wait_stable(expected);
}

/// The follower running one of the connectors (balance puts one on each).
std::string follower_with_connector(SignedCluster& sc, const std::string& leader) {
  auto f = sc.follower_id(leader);
  auto st = sc.cluster.worker(f).assignment_state();
  INFO(sc.cluster.dump());
  REQUIRE(!st.assigned_connectors.empty());
  return f;
}

}  // namespace

TEST_CASE("sessioned: the leader distributes a key, forwarded requests verify, forged ones are refused",
          "[kip507][security]") {
  ClusterOptions opts;
  SignedCluster sc(opts);
  const auto leader = sc.leader_id();
  auto& lh = sc.cluster.worker(leader);

  // The leader writes a key in Connect's format, and every worker reads it.
  REQUIRE(eventually([&] { return lh.session_key_info().present; }, 60s));
  auto store = open_config_store(sc.cluster, "kip507-test-reader");
  std::optional<herder::SessionKey> key;
  REQUIRE(eventually([&] { return (key = topic_key(*store)).has_value(); }, 30s));
  CHECK(key->algorithm == "HmacSHA256");
  CHECK(key->key.size() == 32);  // 256 bits, the HmacSHA256 default
  REQUIRE(eventually(
      [&] {
        for (const auto& id : sc.ids) {
          auto info = sc.cluster.worker(id).session_key_info();
          if (!info.present || info.creation_timestamp_ms != key->creation_timestamp_ms || !info.current) return false;
        }
        return true;
      },
      30s));

  Expected expected;
  put_reconfiguring_connectors(sc, expected);
  const auto follower = follower_with_connector(sc, leader);
  auto& fh = sc.cluster.worker(follower);

  // The follower's forwarded requests are signed and the leader accepts them.
  REQUIRE(eventually(
      [&] { return fh.internal_request_stats().forwarded >= 2 && fh.internal_request_stats().signed_requests >= 2; },
      60s));
  CHECK(lh.internal_request_stats().verified >= 2);

  // Forged requests straight to the leader: Connect's statuses and messages.
  const auto before = lh.internal_request_stats();
  const auto offset_before = store->read_to_end(5000).value().offset;
  const std::string body;
  const std::string url = SignedCluster::url(leader);
  {
    auto r = post_tasks(url, "rc1", body, {});
    CHECK(r.status == 400);
    CHECK(message_of(r) == "Internal request missing required signature");
  }
  {
    std::string wrong = key->key;
    wrong[0] = static_cast<char>(wrong[0] ^ 0x55);
    auto r = post_tasks(url, "rc1", body, signed_headers(wrong, body));
    CHECK(r.status == 403);
    CHECK(message_of(r) == "Internal request contained invalid signature.");
    // A signature over another body does not carry over either.
    auto r2 = post_tasks(url, "rc1", "[{}]", signed_headers(key->key, body));
    CHECK(r2.status == 403);
  }
  {
    auto r = post_tasks(url, "rc1", body, {{"X-Connect-Authorization", "AAAA"},
                                            {"X-Connect-Request-Signature-Algorithm", "HmacFoo"}});
    CHECK(r.status == 400);
    CHECK(message_of(r) == "Algorithm HmacFoo not available");
  }
  {
    auto r = post_tasks(url, "rc1", body, {{"X-Connect-Authorization", "not*base64"},
                                            {"X-Connect-Request-Signature-Algorithm", "HmacSHA256"}});
    CHECK(r.status == 400);
    CHECK(message_of(r) == "Illegal base64 character 2a");
  }
  {
    auto r = post_tasks(url, "rc1", body, signed_headers(key->key, body, "HmacSHA512"));
    CHECK(r.status == 400);
    CHECK(message_of(r).starts_with("This worker does not support the 'HmacSHA512' key signing algorithm"));
  }
  {
    // The signature is checked before anything else: a forged request for
    // an unknown connector is 403, not 404.
    auto r = post_tasks(url, "ghost", body, signed_headers(std::string(32, 'x'), body));
    CHECK(r.status == 403);
  }
  const auto after = lh.internal_request_stats();
  CHECK(after.rejected == before.rejected + 7);
  CHECK(after.last_rejected_status == 403);
  // Nothing was written to the config topic by the forged requests.
  CHECK(store->read_to_end(5000).value().offset == offset_before);

  // Signed with the distributed key: accepted.
  CHECK(post_tasks(url, "rc1", body, signed_headers(key->key, body)).status == 204);
  CHECK(post_tasks(url, "ghost", body, signed_headers(key->key, body)).status == 404);
  // A follower checks the signature too, then answers 409: it is not the leader.
  CHECK(post_tasks(SignedCluster::url(follower), "rc1", body, signed_headers(key->key, body)).status == 409);
  sc.cluster.check_invariant();
}

TEST_CASE("sessioned: a short inter.worker.key.ttl.ms rotates the key and requests still verify",
          "[kip507][security]") {
  ClusterOptions opts;
  opts.configure = [](const std::string&, HerderConfig& c) { c.key_ttl_ms = 2000; };
  SignedCluster sc(opts);
  const auto leader = sc.leader_id();
  auto& lh = sc.cluster.worker(leader);
  REQUIRE(eventually([&] { return lh.session_key_info().present; }, 60s));

  Expected expected;
  put_reconfiguring_connectors(sc, expected);
  const auto follower = follower_with_connector(sc, leader);
  auto& fh = sc.cluster.worker(follower);

  auto store = open_config_store(sc.cluster, "kip507-test-reader");
  std::optional<herder::SessionKey> first;
  REQUIRE(eventually([&] { return (first = topic_key(*store)).has_value(); }, 30s));

  // New keys appear in the config topic with newer creation timestamps.
  std::optional<herder::SessionKey> second;
  REQUIRE(eventually(
      [&] {
        second = topic_key(*store);
        return second && second->creation_timestamp_ms > first->creation_timestamp_ms;
      },
      30s));
  CHECK(second->key != first->key);
  CHECK(second->creation_timestamp_ms - first->creation_timestamp_ms >= 2000);
  std::optional<herder::SessionKey> third;
  REQUIRE(eventually(
      [&] {
        third = topic_key(*store);
        return third && third->creation_timestamp_ms > second->creation_timestamp_ms;
      },
      30s));

  // Forwarded requests keep verifying across rotations.
  const auto forwarded = fh.internal_request_stats().forwarded;
  const auto verified = lh.internal_request_stats().verified;
  REQUIRE(eventually([&] { return fh.internal_request_stats().forwarded >= forwarded + 5; }, 60s));
  // The follower counts a request when it sends it; the leader verifies it
  // a moment later, on its own io thread.
  CHECK(eventually([&] { return lh.internal_request_stats().verified >= verified + 5; }, 30s));

  // Only the current key is accepted: sign with the newest key the topic
  // holds; a key two rotations old is refused.
  const std::string body;
  bool accepted = false;
  for (int i = 0; i < 5 && !accepted; ++i) {  // the key may rotate between reading and posting
    auto now_key = topic_key(*store);
    REQUIRE(now_key);
    accepted = post_tasks(SignedCluster::url(leader), "rc1", body, signed_headers(now_key->key, body)).status == 204;
  }
  CHECK(accepted);
  auto old = post_tasks(SignedCluster::url(leader), "rc1", body, signed_headers(first->key, body));
  CHECK(old.status == 403);
  sc.cluster.check_invariant();
}

TEST_CASE("sessioned: a key another writer put in Connect's format is used", "[kip507][security]") {
  ClusterOptions opts;
  SignedCluster sc(opts);
  const auto leader = sc.leader_id();
  auto& lh = sc.cluster.worker(leader);
  REQUIRE(eventually([&] { return lh.session_key_info().present; }, 60s));

  // As a Kafka Connect leader would write it: a 256-bit HmacSHA256 key.
  std::string raw;
  for (int i = 0; i < 32; ++i) raw.push_back(static_cast<char>(200 - i));
  const int64_t created =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  auto store = open_config_store(sc.cluster, "kip507-test-reader");
  REQUIRE(store->put_session_key(herder::session_key_record({raw, "HmacSHA256", created}), 10000));
  REQUIRE(eventually(
      [&] {
        for (const auto& id : sc.ids)
          if (sc.cluster.worker(id).session_key_info().creation_timestamp_ms != created) return false;
        return true;
      },
      30s));
  const std::string body;
  CHECK(post_tasks(SignedCluster::url(leader), "ghost", body, signed_headers(raw, body)).status == 404);
  // The leader kept it: same algorithm and size as its own, and not expired.
  std::this_thread::sleep_for(1500ms);
  auto k = topic_key(*store);
  REQUIRE(k);
  CHECK(k->key == raw);
  CHECK(lh.session_key_info().creation_timestamp_ms == created);
}

TEST_CASE("compatible: nothing is signed and internal requests are accepted", "[kip507][security]") {
  ClusterOptions opts;
  opts.protocol = ConnectProtocol::Compatible;
  SignedCluster sc(opts);
  const auto leader = sc.leader_id();
  auto& lh = sc.cluster.worker(leader);

  Expected expected;
  put_reconfiguring_connectors(sc, expected);
  const auto follower = follower_with_connector(sc, leader);
  auto& fh = sc.cluster.worker(follower);
  REQUIRE(eventually([&] { return fh.internal_request_stats().forwarded >= 2; }, 60s));
  CHECK(fh.internal_request_stats().signed_requests == 0);
  CHECK(lh.internal_request_stats().rejected == 0);

  // An unsigned request is accepted; no session key is ever written.
  CHECK(post_tasks(SignedCluster::url(leader), "rc1", "", {}).status == 204);
  // A drain request with signature headers anyway is refused: they would
  // let it past REST basic authentication with nothing to verify them.
  const std::string drain_body = nlohmann::json{{"member_id", fh.assignment_state().member_id}}.dump();
  auto drain = herder::post_internal(SignedCluster::url(leader), "/admin/drain/members", drain_body, 10000, nullptr,
                                     signed_headers("not-a-session-key", drain_body));
  REQUIRE(drain);
  CHECK(drain->status == 403);
  CHECK_THAT(message_of(*drain), Catch::Contains("connect.protocol is not sessioned"));
  CHECK_FALSE(fh.draining());
  auto store = open_config_store(sc.cluster, "kip507-test-reader");
  CHECK_FALSE(topic_key(*store).has_value());
  CHECK_FALSE(lh.session_key_info().present);
  sc.cluster.check_invariant();
}
