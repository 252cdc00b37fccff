// A task that misses task.shutdown.graceful.timeout.ms is cut off from Kafka
// at once (KAFKA-15826, issue 9 scenario 7): a sink task's consumer leaves
// group connect-<connector> while the plugin's put() is still blocked, and a
// source task's producer is purged; the late results of either reach neither
// the topic, the group's committed offsets nor the offsets topic.
// Runs the Worker against librdkafka's in-process mock cluster with test
// plugins whose put() / poll() block on a gate the test opens.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // must follow rdkafka.h

#include "worker/plugins/registry.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_worker_cutoff {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using kc::test::eventually;
using kc::test::Gate;
using kc::test::open_offsets;

using Clock = std::chrono::steady_clock;

constexpr int kGracefulMs = 1000;

int64_t ms_since(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count();
}

Gate& sink_gate() {
  static Gate g;
  return g;
}
Gate& source_gate() {
  static Gate g;
  return g;
}
/// Held by the blocking source task's start() once armed.
Gate& start_gate() {
  static Gate g;
  return g;
}
std::atomic<int64_t> g_sink_records{0};   ///< records put by the blocking sink
std::atomic<int64_t> g_source_polls{0};   ///< polls of the blocking source that returned records
std::atomic<int64_t> g_late_polls{0};     ///< polls of the blocking source after its gate opened

/// Opens the gates when a test leaves (also on a failed REQUIRE), so the
/// Worker's destructor can join the abandoned task threads. Declare it after
/// the Worker so it runs first.
struct OpenGatesOnExit {
  ~OpenGatesOnExit() {
    sink_gate().release();
    source_gate().release();
    start_gate().release();
  }
};

class BlockingSinkTask : public kconn::SinkTask {
 public:
  void start(const kconn::ConfigMap&) override {}
  void put(const std::vector<kconn::SinkRecord>& records) override {
    sink_gate().pass();
    g_sink_records += static_cast<int64_t>(records.size());
  }
  void flush(const kconn::TopicPartitionOffsets&) override {}
  void stop() override {}
};

/// Writes "v-<n>" with source offset {"seq": n}; once its gate is armed,
/// poll() blocks, and after the gate opens it returns "late-<n>" records.
class BlockingSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap& c, kconn::SourceTaskContext&) override {
    topic_ = c.at("topic");
    start_gate().pass();
  }
  std::vector<kconn::SourceRecord> poll() override {
    bool late = source_gate().pass();
    if (late) ++g_late_polls;
    else std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::vector<kconn::SourceRecord> out;
    for (int i = 0; i < 10; ++i, ++next_) {
      kconn::SourceRecord r;
      r.topic = topic_;
      r.source_partition = kconn::OrderedJson{{"task", 0}};
      r.source_offset = kconn::OrderedJson{{"seq", next_}};
      r.value = kconn::Data::string((late ? "late-" : "v-") + std::to_string(next_));
      out.push_back(std::move(r));
    }
    ++g_source_polls;
    return out;
  }
  void stop() override {}

 private:
  std::string topic_;
  int64_t next_ = 0;
};

const kconn::PluginRegistry& test_registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] {
    kc::test::add_one_task_plugin<BlockingSinkTask>(reg, "test.BlockingSinkConnector");
    kc::test::add_one_task_plugin<BlockingSourceTask>(reg, "test.BlockingSourceConnector");
  });
  return reg;
}

/// Counts task starts and stops (on_task_stop must still fire for a task
/// that was cut off, once its thread ends) and task status reports (none
/// may follow the cut-off).
struct Observer : kc::runtime::TaskObserver, kc::runtime::StatusListener {
  std::mutex mu;
  std::map<ConnectorTaskId, int> starts, stops, statuses;
  void on_connector_status(const std::string&, StatusState, const std::optional<std::string>&) override {}
  void on_task_status(const ConnectorTaskId& id, StatusState, const std::optional<std::string>&) override {
    std::lock_guard lk(mu);
    ++statuses[id];
  }
  int status_reports(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    return statuses[id];
  }
  void on_task_start(const std::string&, const ConnectorTaskId& id) override {
    std::lock_guard lk(mu);
    ++starts[id];
  }
  void on_task_stop(const std::string&, const ConnectorTaskId& id) override {
    std::lock_guard lk(mu);
    ++stops[id];
  }
  int stopped(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    return stops[id];
  }
};

std::unique_ptr<MockCluster> start_cluster() { return kc::test::start_mock_cluster(1, {{"connect-offsets", 5}}); }

WorkerOptions worker_options(const MockCluster& m) {
  WorkerOptions o = kc::test::mock_worker_options(m, 200);
  o.consumer_overrides = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "500"}};
  o.task_shutdown_graceful_timeout_ms = kGracefulMs;
  return o;
}

void produce(const MockCluster& m, const std::string& topic, int from, int to) {
  auto p = Producer::create(m.client_props());
  REQUIRE(p);
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  for (int i = from; i < to; ++i) {
    // Appended, not "k" + std::to_string(i): GCC 12 at -O3 raises a false
    // -Wrestrict on the inlined concatenation.
    std::string key = "k", value = "r-";
    key += std::to_string(i);
    value += std::to_string(i);
    recs.emplace_back(std::move(key), std::move(value));
  }
  REQUIRE((*p)->send_and_wait(topic, recs, 10000));
}

/// A consumer of group `group` (range, like the sink tasks).
RdKafkaPtr group_consumer(const MockCluster& m, const std::string& group) {
  auto c = make_client(RD_KAFKA_CONSUMER, m.client_props(),
                       {{"group.id", group},
                        {"partition.assignment.strategy", "range"},
                        {"enable.auto.commit", "false"},
                        {"auto.offset.reset", "earliest"},
                        {"session.timeout.ms", "6000"},
                        {"heartbeat.interval.ms", "500"}});
  REQUIRE(c);
  rd_kafka_poll_set_consumer(c->get());
  return std::move(c).value();
}

/// Committed offsets of `group` for partitions 0..n-1 of `topic` (-1001 = none).
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

/// Subscribes `c` to `topic` and polls until it owns `n` partitions;
/// returns the milliseconds it took, or -1 after `timeout_ms`.
int64_t time_to_own(rd_kafka_t* c, const std::string& topic, int n, int timeout_ms) {
  auto start = Clock::now();
  auto* sub = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(sub, topic.c_str(), RD_KAFKA_PARTITION_UA);
  auto err = rd_kafka_subscribe(c, sub);
  rd_kafka_topic_partition_list_destroy(sub);
  if (err) return -1;
  while (ms_since(start) < timeout_ms) {
    // The default rebalance handling (no callback) assigns and revokes.
    if (auto* msg = rd_kafka_consumer_poll(c, 100)) rd_kafka_message_destroy(msg);
    rd_kafka_topic_partition_list_t* a = nullptr;
    if (rd_kafka_assignment(c, &a) == RD_KAFKA_RESP_ERR_NO_ERROR && a) {
      int cnt = a->cnt;
      rd_kafka_topic_partition_list_destroy(a);
      if (cnt == n) return ms_since(start);
    }
  }
  return -1;
}

/// Values in a topic (all partitions, from the beginning).
std::vector<std::string> topic_values(const MockCluster& m, const std::string& topic) {
  auto r = TopicReader::open(m.client_props(), topic, 10000);
  REQUIRE(r);
  std::vector<std::string> out;
  REQUIRE((*r)->read_to_end(20000, [&](const TopicReader::Record& rec) { out.push_back(rec.value.value_or("")); }));
  return out;
}

size_t count_prefix(const std::vector<std::string>& values, const std::string& prefix) {
  size_t n = 0;
  for (const auto& v : values)
    if (v.rfind(prefix, 0) == 0) ++n;
  return n;
}

std::optional<int64_t> source_seq(const MockCluster& m, const std::string& connector) {
  auto offsets = open_offsets(m);
  auto off = offsets->get(connector, kconn::OrderedJson{{"task", 0}});
  if (!off) return std::nullopt;
  return off->at("seq").get<int64_t>();
}

void reset_plugins() {
  sink_gate().reset();
  source_gate().reset();
  start_gate().reset();
  g_sink_records = 0;
  g_source_polls = 0;
  g_late_polls = 0;
}

const ConfigMap kSinkConfig{{"connector.class", "test.BlockingSinkConnector"}, {"topics", "in"}};
const ConfigMap kSourceConfig{{"connector.class", "test.BlockingSourceConnector"}, {"topic", "out"}};

}  // namespace

/// Sink task snk-0 running on a Worker over topic "in" (3 partitions),
/// after 30 records were put and committed by its interval commit.
struct RunningSink {
  std::unique_ptr<MockCluster> m = start_cluster();
  std::unique_ptr<OffsetBackingStore> offsets;
  Observer obs;
  std::unique_ptr<Worker> w;
  OpenGatesOnExit open_gates;
  const ConnectorTaskId id{"snk", 0};

  RunningSink() {
    reset_plugins();
    REQUIRE(m->create_topic("in", 3));
    offsets = open_offsets(*m);
    w = std::make_unique<Worker>(worker_options(*m), offsets.get(), &obs, &test_registry());
    w->set_observer(&obs);
    produce(*m, "in", 0, 30);
    REQUIRE(w->start_task(id, kSinkConfig, kSinkConfig, TargetState::Started));
    REQUIRE(eventually([] { return g_sink_records.load() >= 30; }, 20000));
    REQUIRE(eventually(
        [&] {
          auto c = committed(*m, "connect-snk", "in", 3);
          return c[0] + c[1] + c[2] == 30;
        },
        10000));
  }
  // Members go in reverse order: the gates open before the Worker joins its
  // task threads, and the Worker goes before the cluster.

  /// The next owner (a plain consumer of the group) gets every partition
  /// promptly: the cut-off task left the group. Returns it, to close later.
  RdKafkaPtr next_owner_takes_over() {
    auto next_owner = group_consumer(*m, "connect-snk");
    auto took_ms = time_to_own(next_owner.get(), "in", 3, 20000);
    INFO("next owner got the partitions after " << took_ms << " ms");
    CHECK(took_ms >= 0);
    CHECK(took_ms < 8000);
    return next_owner;
  }
};

TEST_CASE("a sink task blocked in put() past the graceful timeout leaves its group at once and commits nothing",
          "[worker][cutoff]") {
  RunningSink run;
  auto& m = run.m;
  auto& obs = run.obs;
  const auto& id = run.id;
  sink_gate().arm();
  produce(*m, "in", 30, 60);
  REQUIRE(sink_gate().wait_blocked(20000));

  auto t0 = Clock::now();
  CHECK_FALSE(run.w->stop_task(id));
  auto stop_ms = ms_since(t0);
  CHECK(stop_ms >= kGracefulMs);
  CHECK(stop_ms < kGracefulMs + 3000);
  CHECK(run.w->task_ids().empty());
  const int statuses_at_cutoff = obs.status_reports(id);
  CHECK(statuses_at_cutoff == 1);  // RUNNING
  const auto before = committed(*m, "connect-snk", "in", 3);
  CHECK(before[0] + before[1] + before[2] == 30);

  // The next owner of the task gets every partition without waiting for the
  // abandoned consumer's session or max.poll.interval.ms to expire (the mock
  // coordinator delays the first join of an empty group by 3 s).
  auto next_owner = run.next_owner_takes_over();

  // The blocked put() returns: its records must not be committed.
  sink_gate().release();
  REQUIRE(eventually([&] { return obs.stopped(id) == 1; }, 20000));
  CHECK(g_sink_records.load() > 30);  // the blocked put() did finish its batch
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(committed(*m, "connect-snk", "in", 3) == before);
  CHECK(obs.status_reports(id) == statuses_at_cutoff);  // no UNASSIGNED from the abandoned task
  rd_kafka_consumer_close(next_owner.get());
}

TEST_CASE("a source task blocked in poll() past the graceful timeout produces and commits nothing after it",
          "[worker][cutoff]") {
  reset_plugins();
  auto m = start_cluster();
  REQUIRE(m->create_topic("out", 2));
  auto offsets = open_offsets(*m);
  Observer obs;
  Worker w(worker_options(*m), offsets.get(), &obs, &test_registry());
  OpenGatesOnExit open_gates;
  w.set_observer(&obs);
  const ConnectorTaskId id{"src", 0};

  REQUIRE(w.start_task(id, kSourceConfig, kSourceConfig, TargetState::Started));
  REQUIRE(eventually([] { return g_source_polls.load() >= 5; }, 20000));
  REQUIRE(eventually([&] { return source_seq(*m, "src").has_value(); }, 10000));
  source_gate().arm();
  REQUIRE(source_gate().wait_blocked(20000));

  auto t0 = Clock::now();
  CHECK_FALSE(w.stop_task(id));
  auto stop_ms = ms_since(t0);
  CHECK(stop_ms >= kGracefulMs);
  CHECK(stop_ms < kGracefulMs + 3000);
  const int statuses_at_cutoff = obs.status_reports(id);
  const auto seq_before = source_seq(*m, "src");
  REQUIRE(seq_before);
  const auto values_before = topic_values(*m, "out");
  CHECK(count_prefix(values_before, "v-") > 0);

  // Wait at least one offset.flush.interval.ms so that an interval commit
  // would be due when poll() returns.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  source_gate().release();
  REQUIRE(eventually([&] { return obs.stopped(id) == 1; }, 20000));
  CHECK(g_late_polls.load() == 1);  // the late records were handed to the runtime...
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  auto values_after = topic_values(*m, "out");
  CHECK(count_prefix(values_after, "late-") == 0);  // ...and none reached the topic
  CHECK(values_after.size() == values_before.size());
  CHECK(source_seq(*m, "src") == seq_before);  // nor the offsets topic
  CHECK(obs.status_reports(id) == statuses_at_cutoff);  // nor a status
}

TEST_CASE("stop_all returns within about the graceful timeout and cuts off blocked tasks", "[worker][cutoff]") {
  reset_plugins();
  auto m = start_cluster();
  REQUIRE(m->create_topic("in", 2));
  REQUIRE(m->create_topic("out", 1));
  auto offsets = open_offsets(*m);
  Observer obs;
  Worker w(worker_options(*m), offsets.get(), &obs, &test_registry());
  OpenGatesOnExit open_gates;
  w.set_observer(&obs);
  const ConnectorTaskId snk{"snk", 0}, src{"src", 0};

  REQUIRE(w.start_connector("snk", kSinkConfig, TargetState::Started));
  REQUIRE(w.start_task(snk, kSinkConfig, kSinkConfig, TargetState::Started));
  REQUIRE(w.start_task(src, kSourceConfig, kSourceConfig, TargetState::Started));
  REQUIRE(eventually([] { return g_source_polls.load() >= 3; }, 20000));
  produce(*m, "in", 0, 10);
  REQUIRE(eventually([] { return g_sink_records.load() >= 10; }, 20000));
  sink_gate().arm();
  source_gate().arm();
  produce(*m, "in", 10, 20);
  REQUIRE(sink_gate().wait_blocked(20000));
  REQUIRE(source_gate().wait_blocked(20000));

  auto t0 = Clock::now();
  w.stop_all();
  auto stop_ms = ms_since(t0);
  INFO("stop_all took " << stop_ms << " ms");
  CHECK(stop_ms < kGracefulMs + 3000);
  CHECK(w.task_ids().empty());
  CHECK(w.connector_names().empty());

  // Both tasks are cut off by the time stop_all returned.
  auto next_owner = group_consumer(*m, "connect-snk");
  auto took_ms = time_to_own(next_owner.get(), "in", 2, 20000);
  INFO("next owner got the partitions after " << took_ms << " ms");
  CHECK(took_ms >= 0);
  CHECK(took_ms < 8000);
  const auto before = committed(*m, "connect-snk", "in", 2);
  const auto values_before = topic_values(*m, "out");

  sink_gate().release();
  source_gate().release();
  REQUIRE(eventually([&] { return obs.stopped(snk) == 1 && obs.stopped(src) == 1; }, 20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(committed(*m, "connect-snk", "in", 2) == before);
  auto values_after = topic_values(*m, "out");
  CHECK(count_prefix(values_after, "late-") == 0);
  CHECK(values_after.size() == values_before.size());
  rd_kafka_consumer_close(next_owner.get());
}

TEST_CASE("a blocked sink task is cut off promptly while the broker is down", "[worker][cutoff]") {
  reset_plugins();
  auto m = start_cluster();
  REQUIRE(m->create_topic("in", 2));
  auto offsets = open_offsets(*m);
  Observer obs;
  Worker w(worker_options(*m), offsets.get(), &obs, &test_registry());
  OpenGatesOnExit open_gates;
  w.set_observer(&obs);
  const ConnectorTaskId id{"snk", 0};

  produce(*m, "in", 0, 10);
  REQUIRE(w.start_task(id, kSinkConfig, kSinkConfig, TargetState::Started));
  REQUIRE(eventually([] { return g_sink_records.load() >= 10; }, 20000));
  sink_gate().arm();
  produce(*m, "in", 10, 20);
  REQUIRE(sink_gate().wait_blocked(20000));

  rd_kafka_mock_broker_set_down(m->handle(), 1);
  auto t0 = Clock::now();
  CHECK_FALSE(w.stop_task(id));
  auto stop_ms = ms_since(t0);
  INFO("stop_task took " << stop_ms << " ms");
  CHECK(stop_ms < kGracefulMs + 3000);
  rd_kafka_mock_broker_set_up(m->handle(), 1);

  // The LeaveGroup could not reach the broker, but the closed consumer no
  // longer heartbeats: the coordinator drops it after session.timeout.ms
  // (6 s here) instead of keeping it until max.poll.interval.ms (300 s).
  auto next_owner = group_consumer(*m, "connect-snk");
  auto took_ms = time_to_own(next_owner.get(), "in", 2, 30000);
  INFO("next owner got the partitions after " << took_ms << " ms");
  CHECK(took_ms >= 0);
  CHECK(took_ms < 20000);
  sink_gate().release();
  REQUIRE(eventually([&] { return obs.stopped(id) == 1; }, 20000));
  rd_kafka_consumer_close(next_owner.get());
}

TEST_CASE("cut_off_all (a frozen worker) closes every sink consumer at once and nothing commits later",
          "[worker][cutoff]") {
  RunningSink run;
  // No graceful stop: the task is running normally when it is cut off.
  auto t0 = Clock::now();
  auto ids = run.w->cut_off_all();
  CHECK(ms_since(t0) < 3000);
  CHECK(ids == std::vector<ConnectorTaskId>{run.id});
  CHECK(run.w->task_ids().empty());
  const int statuses_at_cutoff = run.obs.status_reports(run.id);
  const auto before = committed(*run.m, "connect-snk", "in", 3);

  auto next_owner = run.next_owner_takes_over();
  produce(*run.m, "in", 30, 60);
  REQUIRE(eventually([&] { return run.obs.stopped(run.id) == 1; }, 20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(committed(*run.m, "connect-snk", "in", 3) == before);
  CHECK(run.obs.status_reports(run.id) == statuses_at_cutoff);  // no UNASSIGNED from the cut-off task
  rd_kafka_consumer_close(next_owner.get());
}

TEST_CASE("kconnectd_worker_tasks_running counts a task only once it has started", "[worker][metrics]") {
  reset_plugins();
  auto m = start_cluster();
  REQUIRE(m->create_topic("out", 2));
  auto offsets = open_offsets(*m);
  auto opts = worker_options(*m);
  opts.metrics = std::make_shared<kc::metrics::WorkerMetrics>();
  auto running = [&] {
    const std::string text = opts.metrics->render();
    const std::string family = "kconnectd_worker_tasks_running ";
    auto at = text.find("\n" + family);
    return at == std::string::npos ? -1 : std::stoi(text.substr(at + 1 + family.size()));
  };
  Worker w(opts, offsets.get(), nullptr, &test_registry());
  OpenGatesOnExit open_gates;
  const ConnectorTaskId id{"src", 0};
  start_gate().arm();
  REQUIRE(w.start_task(id, kSourceConfig, kSourceConfig, TargetState::Started));
  REQUIRE(start_gate().wait_blocked(20000));
  CHECK(running() == 0);  // assigned and starting, not running yet
  start_gate().release();
  CHECK(eventually([&] { return running() == 1; }, 20000));
  (void)w.stop_task(id);  // stopped or cut off: either way no longer running
  CHECK(running() == 0);
}

}  // namespace unity_test_worker_cutoff
