// The Connect task hooks the runtime calls (issue 12): a source task's
// commit() after its offsets are written and commit_record() for each
// acknowledged record with Kafka's partition and offset; a sink task's
// open() on assignment, close() before stop, and pre_commit(), whose answer
// is what the consumer group gets. Runs the Worker against librdkafka's
// in-process mock cluster.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <thread>
#include <string>
#include <vector>

#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_task_hooks {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using kc::test::eventually;
using kc::test::open_offsets;

struct Hooks {
  std::mutex mu;
  std::vector<std::pair<std::string, kconn::RecordMetadata>> acked;  ///< value, metadata
  int commits = 0;
  std::vector<kconn::TopicPartitions> opened, closed;
  int put = 0;
  bool stopped_after_close = false;
} hooks;

/// 3 polls of 10 records "v-<n>" to "out", then nothing.
class AckedSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap&, kconn::SourceTaskContext&) override {}
  std::vector<kconn::SourceRecord> poll() override {
    std::vector<kconn::SourceRecord> out;
    if (next_ >= 30) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return out;
    }
    for (int i = 0; i < 10; ++i, ++next_) {
      kconn::SourceRecord r;
      r.topic = "out";
      r.source_partition = kconn::OrderedJson{{"task", 0}};
      r.source_offset = kconn::OrderedJson{{"seq", next_}};
      r.value = kconn::Data::string("v-" + std::to_string(next_));
      out.push_back(std::move(r));
    }
    return out;
  }
  void commit() override {
    std::lock_guard lk(hooks.mu);
    ++hooks.commits;
  }
  bool wants_commit_record() const override { return true; }
  void commit_record(const kconn::SourceRecord& r, const kconn::RecordMetadata& md) override {
    std::lock_guard lk(hooks.mu);
    hooks.acked.emplace_back(r.value.value.as<std::string>(), md);
  }
  void stop() override {}

 private:
  int64_t next_ = 0;
};

/// Commits only partition 0 of what it is asked (pre_commit), records
/// open/close.
class PartialSinkTask : public kconn::SinkTask {
 public:
  void start(const kconn::ConfigMap&) override {}
  void put(const std::vector<kconn::SinkRecord>& records) override {
    std::lock_guard lk(hooks.mu);
    hooks.put += static_cast<int>(records.size());
  }
  void flush(const kconn::TopicPartitionOffsets&) override {}
  kconn::TopicPartitionOffsets pre_commit(const kconn::TopicPartitionOffsets& current) override {
    kconn::TopicPartitionOffsets out;
    for (const auto& [tp, off] : current)
      if (tp.second == 0) out[tp] = off;
    return out;
  }
  void open(const kconn::TopicPartitions& p) override {
    std::lock_guard lk(hooks.mu);
    hooks.opened.push_back(p);
  }
  void close(const kconn::TopicPartitions& p) override {
    std::lock_guard lk(hooks.mu);
    hooks.closed.push_back(p);
  }
  void stop() override {
    std::lock_guard lk(hooks.mu);
    hooks.stopped_after_close = !hooks.closed.empty();
  }
};

/// A source task that produces nothing and throws from stop().
class ThrowingStopSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap&, kconn::SourceTaskContext&) override {}
  std::vector<kconn::SourceRecord> poll() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return {};
  }
  void stop() override { throw std::runtime_error("source stop boom"); }
};

/// A sink task that takes everything and throws from stop().
class ThrowingStopSinkTask : public kconn::SinkTask {
 public:
  void start(const kconn::ConfigMap&) override {}
  void put(const std::vector<kconn::SinkRecord>&) override {}
  void flush(const kconn::TopicPartitionOffsets&) override {}
  void stop() override { throw std::runtime_error("sink stop boom"); }
};

const kconn::PluginRegistry& registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] {
    kc::test::add_one_task_plugin<AckedSourceTask>(reg, "test.AckedSourceConnector");
    kc::test::add_one_task_plugin<PartialSinkTask>(reg, "test.PartialSinkConnector");
    kc::test::add_one_task_plugin<ThrowingStopSourceTask>(reg, "test.ThrowingStopSourceConnector");
    kc::test::add_one_task_plugin<ThrowingStopSinkTask>(reg, "test.ThrowingStopSinkConnector");
  });
  return reg;
}

WorkerOptions worker_options(const MockCluster& m) {
  WorkerOptions o = kc::test::mock_worker_options(m, 100);
  o.consumer_overrides = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
  o.task_shutdown_graceful_timeout_ms = 10000;
  return o;
}

std::vector<int64_t> committed(const MockCluster& m, const std::string& group, const std::string& topic, int n) {
  auto c = make_client(RD_KAFKA_CONSUMER, m.client_props(), {{"group.id", group}, {"enable.auto.commit", "false"}});
  REQUIRE(c);
  auto* list = rd_kafka_topic_partition_list_new(n);
  for (int p = 0; p < n; ++p) rd_kafka_topic_partition_list_add(list, topic.c_str(), p);
  auto err = rd_kafka_committed(c->get(), list, 10000);
  std::vector<int64_t> out;
  for (int p = 0; p < n; ++p) out.push_back(list->elems[p].offset);
  rd_kafka_topic_partition_list_destroy(list);
  REQUIRE(err == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_consumer_close(c->get());
  return out;
}

}  // namespace

TEST_CASE("a source task's commit_record gets each acknowledged record with its Kafka offset, commit follows writes",
          "[worker][connectors]") {
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"out", 1}});
  auto offsets = open_offsets(*m);
  kc::test::TaskStates states;
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId id{"acked", 0};
  const ConfigMap cfg{{"connector.class", "test.AckedSourceConnector"}};
  REQUIRE(w.start_task(id, cfg, cfg, TargetState::Started));
  REQUIRE(eventually(
      [] {
        std::lock_guard lk(hooks.mu);
        return hooks.acked.size() >= 30 && hooks.commits > 0;
      },
      20000));
  REQUIRE(w.stop_task(id));
  std::lock_guard lk(hooks.mu);
  REQUIRE(hooks.acked.size() == 30);
  for (size_t i = 0; i < hooks.acked.size(); ++i) {
    const auto& [value, md] = hooks.acked[i];
    CHECK(value == "v-" + std::to_string(i));  // in order, as polled
    CHECK(md.topic == "out");
    CHECK(md.partition == 0);
    CHECK(md.offset == static_cast<int64_t>(i));  // the only writer of "out"
    CHECK(md.timestamp_ms > 0);
  }
}

TEST_CASE("a sink task is opened on assignment, committed what pre_commit returns, closed before stop",
          "[worker][connectors]") {
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"in", 2}});
  {
    auto p = Producer::create(m->client_props());
    REQUIRE(p);
    for (int part = 0; part < 2; ++part)
      for (int i = 0; i < 5; ++i)
        REQUIRE((*p)->send("in", std::string("k"), std::string("r"), [](std::optional<kc::Error>) {}, part));
    REQUIRE((*p)->flush(10000));
  }
  auto offsets = open_offsets(*m);
  kc::test::TaskStates states;
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId id{"partial", 0};
  const ConfigMap cfg{{"connector.class", "test.PartialSinkConnector"}, {"topics", "in"}};
  REQUIRE(w.start_task(id, cfg, cfg, TargetState::Started));
  REQUIRE(eventually(
      [] {
        std::lock_guard lk(hooks.mu);
        return hooks.put >= 10;
      },
      20000));
  // Partition 0 is committed (5 records: next offset 5); partition 1 never.
  REQUIRE(eventually([&] { return committed(*m, "connect-partial", "in", 2)[0] == 5; }, 10000));
  REQUIRE(w.stop_task(id));
  CHECK(committed(*m, "connect-partial", "in", 2)[1] < 0);
  std::lock_guard lk(hooks.mu);
  REQUIRE(hooks.opened.size() == 1);
  CHECK(hooks.opened[0] == kconn::TopicPartitions{{"in", 0}, {"in", 1}});
  REQUIRE(hooks.closed.size() == 1);
  CHECK(hooks.closed[0] == kconn::TopicPartitions{{"in", 0}, {"in", 1}});
  CHECK(hooks.stopped_after_close);
}

TEST_CASE("a task whose stop() throws ends FAILED with the stop's trace (source and sink)", "[worker][connectors]") {
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"in", 1}});
  auto offsets = open_offsets(*m);
  kc::test::TaskStates states;
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId src{"throwing-src", 0};
  const ConnectorTaskId snk{"throwing-snk", 0};
  const ConfigMap src_cfg{{"connector.class", "test.ThrowingStopSourceConnector"}};
  const ConfigMap snk_cfg{{"connector.class", "test.ThrowingStopSinkConnector"}, {"topics", "in"}};
  REQUIRE(w.start_task(src, src_cfg, src_cfg, TargetState::Started));
  REQUIRE(w.start_task(snk, snk_cfg, snk_cfg, TargetState::Started));
  REQUIRE(eventually([&] { return states.state(src) == StatusState::Running; }, 20000));
  REQUIRE(eventually([&] { return states.state(snk) == StatusState::Running; }, 20000));
  CHECK(w.stop_task(src));
  CHECK(w.stop_task(snk));
  REQUIRE(eventually([&] { return states.state(src) == StatusState::Failed; }, 20000));
  REQUIRE(eventually([&] { return states.state(snk) == StatusState::Failed; }, 20000));
  CHECK_THAT(states.trace(src), Catch::Contains("at stop of source task throwing-src-0") &&
                                    Catch::Contains("source stop boom"));
  CHECK_THAT(states.trace(snk), Catch::Contains("at stop of sink task throwing-snk-0") &&
                                    Catch::Contains("sink stop boom"));
}

}  // namespace unity_test_task_hooks
