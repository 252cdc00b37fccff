// A paused sink task whose consumer group rebalances keeps no stale pause:
// librdkafka remembers a partition's pause across unassign and reassign, so
// a partition the task lost while paused and gets back after its resume
// must be resumed by the runtime (found by the cluster soak, seed 71249:
// a sink resumed during a rebalance consumed nothing more). Runs the
// Worker against librdkafka's in-process mock cluster.
#include <catch2/catch.hpp>

#include <map>
#include <mutex>
#include <string>

#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_sink_pause_rebalance {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using kc::test::eventually;

/// Records put per partition of "in".
struct Received {
  std::mutex mu;
  std::map<int32_t, int> per_partition;
  int of(int32_t p) {
    std::lock_guard lk(mu);
    return per_partition[p];
  }
} received;

class CountingSinkTask : public kconn::SinkTask {
 public:
  void start(const kconn::ConfigMap&) override {}
  void put(const std::vector<kconn::SinkRecord>& records) override {
    std::lock_guard lk(received.mu);
    for (const auto& r : records) ++received.per_partition[r.kafka_partition];
  }
  void flush(const kconn::TopicPartitionOffsets&) override {}
  void stop() override {}
};

const kconn::PluginRegistry& registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] { kc::test::add_one_task_plugin<CountingSinkTask>(reg, "test.CountingSinkConnector"); });
  return reg;
}

/// `n` records to each partition of "in" (2 partitions).
void write_to_both(const MockCluster& m, int n) {
  auto p = Producer::create(m.client_props());
  REQUIRE(p);
  for (int part = 0; part < 2; ++part)
    for (int i = 0; i < n; ++i)
      REQUIRE((*p)->send("in", std::string("k"), std::string("v"), [](std::optional<kc::Error>) {}, part));
  REQUIRE((*p)->flush(10000));
}

/// The partitions of "in" a plain consumer in `group` holds now.
int assigned_count(rd_kafka_t* c) {
  rd_kafka_topic_partition_list_t* a = nullptr;
  if (rd_kafka_assignment(c, &a) != RD_KAFKA_RESP_ERR_NO_ERROR || !a) return 0;
  const int n = a->cnt;
  rd_kafka_topic_partition_list_destroy(a);
  return n;
}

}  // namespace

TEST_CASE("a sink task that lost a partition while paused consumes it again when it comes back after the resume",
          "[worker][connectors][pause]") {
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"in", 2}});
  auto offsets = kc::test::open_offsets(*m);
  kc::test::TaskStates states;
  WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  o.consumer_overrides = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "200"}};
  Worker w(o, offsets.get(), &states, &registry());
  const ConnectorTaskId id{"counting", 0};
  const ConfigMap cfg{{"connector.class", "test.CountingSinkConnector"}, {"topics", "in"}};
  REQUIRE(w.start_task(id, cfg, cfg, TargetState::Started));
  write_to_both(*m, 5);
  REQUIRE(eventually([] { return received.of(0) == 5 && received.of(1) == 5; }, 20000));

  // Paused, the task's group gains a member: each holds one partition.
  w.set_target_state("counting", TargetState::Paused);
  REQUIRE(eventually([&] { return states.state(id) == StatusState::Paused; }, 10000));
  auto other = make_client(RD_KAFKA_CONSUMER, m->client_props(),
                           {{"group.id", "connect-counting"},
                            {"enable.auto.commit", "false"},
                            {"auto.offset.reset", "latest"},
                            {"partition.assignment.strategy", "range"},
                            {"session.timeout.ms", "6000"},
                            {"heartbeat.interval.ms", "200"}});
  REQUIRE(other);
  rd_kafka_poll_set_consumer(other->get());
  auto* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, "in", RD_KAFKA_PARTITION_UA);
  REQUIRE(rd_kafka_subscribe(other->get(), topics) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(topics);
  REQUIRE(eventually(
      [&] {
        if (auto* msg = rd_kafka_consumer_poll(other->get(), 50)) rd_kafka_message_destroy(msg);
        return assigned_count(other->get()) == 1;
      },
      20000));

  // Resumed while it holds one partition; then the other member leaves and
  // the task gets both back. Records written to either must arrive.
  w.set_target_state("counting", TargetState::Started);
  REQUIRE(eventually([&] { return states.state(id) == StatusState::Running; }, 10000));
  rd_kafka_consumer_close(other->get());
  other->reset();
  write_to_both(*m, 7);
  CHECK(eventually([] { return received.of(0) == 12 && received.of(1) == 12; }, 30000));
  CHECK(received.of(0) == 12);
  CHECK(received.of(1) == 12);
  REQUIRE(w.stop_task(id));
}

}  // namespace unity_test_sink_pause_rebalance
