// The offsets REST API (KIP-875) of an exactly-once source connector with
// its own offsets.storage.topic (KIP-618), on two workers with REST servers
// against librdkafka's mock cluster. As Connect's ConnectorOffsetBackingStore:
// GET shows the connector's topic first and the worker's topic for the
// partitions the connector's topic lacks; PATCH writes the connector's topic
// and the worker's; DELETE tombstones every partition in both.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/integration/worker/rest_cluster.h"
#include "tests/support/tls_test_util.h"
#include "tests/support/worker_test_util.h"
#include "worker/rest/rest_server.h"
#include "worker/storage/offset_store.h"

using namespace kc;
using namespace kc::test;
using namespace std::chrono_literals;
namespace http = boost::beast::http;

namespace {

/// Two exactly-once workers ("127.0.0.1:<port>") with REST servers.
struct OffsetsCluster : RestCluster {
  static ClusterOptions options() {
    ClusterOptions o;
    // own-offsets made here: the mock has no CreateTopics (a broker creates
    // it on first use, as for the task).
    o.data_topics = {{"eos-out", 1}, {"own-offsets", 3}};
    o.configure = [](const std::string&, herder::HerderConfig& c) { c.exactly_once_source = true; };
    return o;
  }
  OffsetsCluster() : RestCluster(options()) {}
  std::string leader() { return leader_id(); }
  std::string follower() { return follower_id(leader_id()); }
};

HttpResult call(const std::string& id, http::verb verb, const std::string& target, const std::string& body = "") {
  const auto port = static_cast<uint16_t>(std::stoi(id.substr(id.find(':') + 1)));
  return http_call(port, verb, target, body);
}

/// GET /connectors/own/offsets on worker `id`: partition JSON (compact) ->
/// offset JSON; nullopt unless 200.
std::string last_get;  // the last GET's answer, for failure messages

std::optional<std::map<std::string, nlohmann::json>> get_offsets(const std::string& id) {
  auto r = call(id, http::verb::get, "/connectors/own/offsets");
  last_get = std::to_string(r.status) + " " + r.body + r.error;
  if (r.status != 200) return std::nullopt;
  std::map<std::string, nlohmann::json> out;
  const auto body = nlohmann::json::parse(r.body);  // outlives the loop (a temporary's member would not)
  for (const auto& e : body.at("offsets")) out[e.at("partition").dump()] = e.at("offset");
  return out;
}

/// The connector's offsets in `topic`, read straight from the topic.
std::map<std::string, nlohmann::json> topic_offsets(const storage::MockCluster& m, const std::string& topic) {
  storage::OffsetBackingStore::Options o;
  o.client = m.client_props();
  o.topic = topic;
  o.replication_factor = 1;
  auto s = storage::OffsetBackingStore::open(o);
  REQUIRE(s);
  std::map<std::string, nlohmann::json> out;
  for (const auto& [p, off] : (*s)->get_all("own")) out[nlohmann::json::parse(p.dump()).dump()] = nlohmann::json::parse(off.dump());
  return out;
}

/// Seq numbers of the connector's task 0 in eos-out, in order.
std::vector<int64_t> seqs(const storage::MockCluster& m) {
  std::vector<int64_t> out;
  for (const auto& r : read_all(m, "eos-out")) {
    if (!r.value) continue;
    auto pos = r.value->find("seq=");
    if (pos != std::string::npos) out.push_back(std::stoll(r.value->substr(pos + 4)));
  }
  return out;
}

std::vector<int64_t> range(int64_t from, int64_t to) {  // [from, to]
  std::vector<int64_t> v;
  for (auto i = from; i <= to; ++i) v.push_back(i);
  return v;
}

std::vector<int64_t> concat(std::vector<int64_t> a, const std::vector<int64_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

/// Sets the target state through REST and waits until the leader's status
/// shows it (STOPPED: no tasks left either).
void transition(OffsetsCluster& oc, const std::string& id, const std::string& verb_path, const std::string& state) {
  auto r = call(id, http::verb::put, "/connectors/own/" + verb_path);
  INFO(r.status << " " << r.body << r.error);
  REQUIRE((r.status == 202 || r.status == 204));
  REQUIRE(eventually(
      [&] {
        auto s = call(oc.leader(), http::verb::get, "/connectors/own/status");
        if (s.status != 200) return false;
        auto j = nlohmann::json::parse(s.body);
        if (j["connector"]["state"] != state) return false;
        return state != "STOPPED" || j["tasks"].empty();
      },
      60000));
}

/// PATCH or DELETE on `id`, retried while the leader waits for a rebalance
/// (409) after the state change; returns the final answer.
HttpResult modify(const std::string& id, http::verb verb, const std::string& body = "") {
  HttpResult r;
  eventually(
      [&] {
        r = call(id, verb, "/connectors/own/offsets", body);
        return r.status != 409;
      },
      30000, 200);
  return r;
}

const std::string kTaskPartition = R"({"connector":"own","task":0})";
const std::string kGlobalOnly = R"({"extra":"only-global"})";

}  // namespace

TEST_CASE("offsets API: a connector with its own offsets.storage.topic is read, altered and reset as its tasks see it",
          "[eos][rest]") {
  OffsetsCluster oc;
  auto& m = oc.cluster.mock();
  // The worker's topic holds a stale offset of the task's partition and a
  // partition the connector's own topic never gets.
  {
    auto global = open_offsets(m);
    REQUIRE(global->commit("own",
                           {{storage::SourcePartition::parse(kTaskPartition), storage::SourceOffset{{"seq", 5}}},
                            {storage::SourcePartition::parse(kGlobalOnly), storage::SourceOffset{{"pos", 7}}}},
                           10000));
  }
  oc.cluster.put_connector("own", {{"connector.class", "SequenceSource"},
                                   {"tasks.max", "1"},
                                   {"topic", "eos-out"},
                                   {"throughput", "200"},
                                   {"max.records", "50"},
                                   {"exactly.once.support", "required"},
                                   {"offsets.storage.topic", "own-offsets"}});

  // The task fell back to the worker's seq 5 and wrote 6..49, its offsets
  // in own-offsets only. Both workers show seq 49 and the global-only partition.
  REQUIRE(eventually([&] { return seqs(m) == range(6, 49); }, 60000, 200));
  for (const auto& id : {oc.leader(), oc.follower()}) {
    std::optional<std::map<std::string, nlohmann::json>> got;
    const bool shown = eventually([&] { return (got = get_offsets(id)) && got->count(kTaskPartition) &&
                                               (*got)[kTaskPartition] == nlohmann::json{{"seq", 49}}; },
                                  30000, 200);
    INFO(id << ": " << last_get);
    REQUIRE(shown);
    CHECK(got->size() == 2);
    CHECK((*got)[kGlobalOnly] == nlohmann::json{{"pos", 7}});
  }
  CHECK(topic_offsets(m, "connect-offsets")[kTaskPartition] == nlohmann::json{{"seq", 5}});
  CHECK(topic_offsets(m, "own-offsets") == std::map<std::string, nlohmann::json>{{kTaskPartition, {{"seq", 49}}}});

  // PATCH through the follower (forwarded to the leader) while STOPPED.
  transition(oc, oc.follower(), "stop", "STOPPED");
  auto patched = modify(oc.follower(), http::verb::patch,
                        R"({"offsets":[{"partition":)" + kTaskPartition + R"(,"offset":{"seq":19}}]})");
  INFO(patched.body << patched.error);
  REQUIRE(patched.status == 200);
  CHECK(nlohmann::json::parse(patched.body)["message"] ==
        "The offsets for this connector have been altered successfully");
  // Written to the connector's topic and, as Connect's secondary write, the worker's.
  CHECK(topic_offsets(m, "own-offsets")[kTaskPartition] == nlohmann::json{{"seq", 19}});
  CHECK(topic_offsets(m, "connect-offsets")[kTaskPartition] == nlohmann::json{{"seq", 19}});
  for (const auto& id : oc.ids) {
    auto got = get_offsets(id);
    REQUIRE(got);
    CHECK((*got)[kTaskPartition] == nlohmann::json{{"seq", 19}});
    CHECK((*got)[kGlobalOnly] == nlohmann::json{{"pos", 7}});
  }

  // Resumed, the task goes on from the patched offset: 20..49 again.
  transition(oc, oc.leader(), "resume", "RUNNING");
  REQUIRE(eventually([&] { return seqs(m) == concat(range(6, 49), range(20, 49)); }, 60000, 200));
  REQUIRE(eventually([&] {
    auto got = get_offsets(oc.follower());
    return got && (*got)[kTaskPartition] == nlohmann::json{{"seq", 49}};
  }, 30000, 200));

  // DELETE through the leader: tombstones in both topics, nothing left.
  transition(oc, oc.leader(), "stop", "STOPPED");
  auto reset = modify(oc.leader(), http::verb::delete_);
  INFO(reset.body << reset.error);
  REQUIRE(reset.status == 200);
  CHECK(nlohmann::json::parse(reset.body)["message"] == "The offsets for this connector have been reset successfully");
  CHECK(topic_offsets(m, "own-offsets").empty());
  CHECK(topic_offsets(m, "connect-offsets").empty());
  for (const auto& id : oc.ids) {
    auto got = get_offsets(id);
    REQUIRE(got);
    CHECK(got->empty());
  }
  // With nothing to fall back to, the task starts over at seq 0.
  transition(oc, oc.follower(), "resume", "RUNNING");
  const auto all_seqs = concat(concat(range(6, 49), range(20, 49)), range(0, 49));
  REQUIRE(eventually([&] { return seqs(m) == all_seqs; }, 60000, 200));

  // Across a rebalance: the worker running the task leaves; the other one
  // takes the task over from the connector's own topic (seq 49, nothing
  // more to send; the worker's topic is empty, so reading it instead would
  // start over at 0) and reports the same offsets.
  std::string owner;
  REQUIRE(eventually([&] {
    auto s = call(oc.leader(), http::verb::get, "/connectors/own/status");
    if (s.status != 200) return false;
    auto j = nlohmann::json::parse(s.body);
    if (j["tasks"].empty() || j["tasks"][0]["state"] != "RUNNING") return false;
    owner = j["tasks"][0]["worker_id"].get<std::string>();
    return true;
  }, 30000, 200));
  REQUIRE(std::find(oc.ids.begin(), oc.ids.end(), owner) != oc.ids.end());
  const std::string other = oc.follower_id(owner);
  oc.rest.at(owner)->stop();
  oc.rest.erase(owner);
  oc.cluster.stop_worker(owner);
  REQUIRE(eventually([&] {
    auto s = call(other, http::verb::get, "/connectors/own/status");
    if (s.status != 200) return false;
    auto j = nlohmann::json::parse(s.body);
    return !j["tasks"].empty() && j["tasks"][0]["state"] == "RUNNING" && j["tasks"][0]["worker_id"] == other;
  }, 60000, 200));
  auto after = get_offsets(other);
  INFO(last_get);
  REQUIRE(after);
  CHECK((*after)[kTaskPartition] == nlohmann::json{{"seq", 49}});
  std::this_thread::sleep_for(std::chrono::seconds(2));  // a wrong resume would send seq 0.. again
  CHECK(seqs(m) == all_seqs);
}
