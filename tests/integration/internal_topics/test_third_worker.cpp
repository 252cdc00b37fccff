// Issue 23 item 4, with real herders: hostile records written straight to
// the config, status and offsets topics of a running 2-worker cluster
// (librdkafka's mock cluster, in process). Afterwards a third worker joins
// and becomes healthy, every worker lists the same connectors, a connector
// a bad commit made inconsistent gets its tasks back, and an odd-named
// connector can still be deleted.
//
// Set KC_TEST_LOG=info (or debug) to see the herders' logs.
#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/integration/worker/cluster_harness.h"
#include "worker/plugins/builtin.h"
#include "worker/storage/config_store.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/records.h"

namespace kc::test {
namespace {

using namespace std::chrono_literals;

void produce(storage::MockCluster& m, const std::string& topic,
             const std::vector<std::pair<std::string, std::optional<std::string>>>& records) {
  auto producer = storage::Producer::create(m.client_props());
  REQUIRE(producer);
  REQUIRE((*producer)->send_and_wait(topic, records, 10000));
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

/// GET /connectors of worker `id`, sorted; empty on an error reply.
std::vector<std::string> listed(TestCluster& c, const std::string& id) {
  auto r = herder_reply<std::vector<std::string>>([&](auto cb) { c.worker(id).list_connectors(std::move(cb)); });
  if (!r) return {};
  auto names = r.value();
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("after hostile internal-topic records a third worker joins, becomes healthy and lists the same connectors",
          "[worker][integration][storage][hostile]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}};
  TestCluster c(o);
  c.start_workers({"w1", "w2"});
  const std::string odd = "odd name/%41 \xC3\xBCnic\xC3\xB8" "de";
  Expected e;
  c.put_connector("a", seq_config(2));
  c.put_connector("victim", seq_config(2));
  c.put_connector(odd, seq_config(1));
  e.add("a", 2).add("victim", 2).add(odd, 1);
  c.wait_stable(e);

  const auto props = storage::encode_properties(seq_config(1));
  const auto running = storage::encode_status({storage::StatusState::Running, std::nullopt, "w9:1", 1});
  produce(c.mock(), "connect-configs",
          {{"connector-poison\xFE", props},
           {"target-state-poison\xFE", storage::encode_target_state(storage::TargetState::Paused)},
           {"connector-nonjson", std::string("{\"properties\":")},
           {"connector-deep", "{\"properties\":" + nested(100000) + "}"},
           {"connector-wrongshape", std::string(R"({"properties":[1]})")},
           {"commit-a", std::string(R"({"tasks":-5})")},
           {"target-state-a", std::string(R"({"state":7})")},
           {"session-key", std::string("{}")},
           {"connector-", props},
           // Inconsistent: no task configs fill this count. The leader repairs it.
           {"commit-victim", storage::encode_commit(2147483647)}});
  produce(c.mock(), "connect-status",
          {{"status-connector-poison\xFE", running},
           {"status-task-a-0", std::string(R"({"state":"RUNNING","generation":1099511627776})")},
           {"status-connector-a", nested(100000)},
           {"status-task-victim-0", std::string("{\"state\":\"FAILED\",\"trace\":\"\xFF\"}")}});
  produce(c.mock(), "connect-offsets",
          {{"[\"a\"," + nested(100000) + "]", std::string("{}")},
           {"[\"a\xFF\",{}]", std::string("{}")},
           {R"(["a",{"task":0}])", nested(100000)}});

  // The joining worker reads every topic from the start.
  c.start_worker("w3");
  c.wait_stable(e);
  c.check_invariant();
  // The bad commit was repaired: a fresh reader finds victim consistent.
  CHECK(eventually(
      [&] {
        storage::ConfigBackingStore::Options co;
        co.client = c.mock().client_props();
        auto store = storage::ConfigBackingStore::open(co);
        if (!store) return false;
        auto snap = (*store)->snapshot();
        return snap.inconsistent.empty() && snap.tasks("victim").size() == 2 &&
               snap.connectors() == std::vector<std::string>{"a", odd, "victim"};
      },
      60s));
  const std::vector<std::string> all = {"a", odd, "victim"};
  for (const auto& id : c.live()) {
    INFO("worker " << id);
    CHECK(eventually([&] { return listed(c, id) == all; }, 30s));
  }

  // A config write no worker could read back answers 400, not "timed out",
  // and leaves nothing behind.
  const auto leader = *c.leader();
  rest::PutConnectorRequest req;
  req.name = "new-poison\xFE";
  req.config = seq_config(1);
  req.config["name"] = req.name;
  auto put = herder_reply<rest::PutConnectorResult>(
      [&](auto cb) { c.worker(leader).put_connector_config(std::move(req), std::move(cb)); });
  REQUIRE_FALSE(put);
  CHECK(put.error().http_status() == 400);
  INFO(put.error().message);
  CHECK(put.error().message.find("UTF-8") != std::string::npos);
  CHECK(put.error().message.find("timed out") == std::string::npos);

  // The odd-named connector is still addressable: deleted through the herder.
  c.delete_connector(odd);
  e.remove(odd);
  c.wait_stable(e);
  for (const auto& id : c.live()) {
    INFO("worker " << id);
    CHECK(eventually([&] { return listed(c, id) == std::vector<std::string>{"a", "victim"}; }, 30s));
  }
  c.check_invariant();
}

}  // namespace kc::test
