// producer.shared=true (issue 10, item 8 "dense workers"): one producer,
// owned by the Worker, for all its at-least-once source tasks, with one poll
// thread routing every delivery report to the batch (and so the task) that
// sent the record. Checks that the tasks really share one producer, that
// each task's offsets follow its own acknowledgements only, that stopping or
// cutting off one task neither purges nor holds up the other, that a task
// ending with records in flight leaves no dangling batch behind, and that a
// delivery failure fails only the task that sent the record; that one task's
// slow acks hold up its own commits only; that the producer is shared only
// with producer.shared=true and never by exactly-once tasks; and that the
// worker's thread count drops. Runs the Worker
// against librdkafka's in-process mock cluster with a test source plugin.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // must follow rdkafka.h

#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_worker_shared_producer {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using Clock = std::chrono::steady_clock;

constexpr int kGracefulMs = 1000;

using kc::test::eventually;
using kc::test::Gate;
using kc::test::open_offsets;

Gate& gate() {
  static Gate g;
  return g;
}

/// Opens the gate when a test leaves (also on a failed REQUIRE), so the
/// Worker can join the gated task. Declare it after the Worker.
struct OpenGateOnExit {
  ~OpenGateOnExit() { gate().release(); }
};

/// Writes "<part>-<n>" to `topic` with source partition {"task": part} and
/// offset {"seq": n}, 10 records per poll, one poll every 20 ms. With
/// "gated", poll() blocks at the gate once it is armed and then returns
/// "late-<part>-<n>" records.
class PartSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap& c, kconn::SourceTaskContext&) override {
    topic_ = c.at("topic");
    part_ = c.at("part");
    gated_ = c.count("gated") > 0;
  }
  std::vector<kconn::SourceRecord> poll() override {
    const bool late = gated_ && gate().pass();
    if (!late) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<kconn::SourceRecord> out;
    for (int i = 0; i < 10; ++i, ++next_) {
      kconn::SourceRecord r;
      r.topic = topic_;
      r.source_partition = kconn::OrderedJson{{"task", part_}};
      r.source_offset = kconn::OrderedJson{{"seq", next_}};
      r.value = kconn::Data::string((late ? "late-" : "") + part_ + "-" + std::to_string(next_));
      out.push_back(std::move(r));
    }
    return out;
  }
  void stop() override {}

 private:
  std::string topic_, part_;
  bool gated_ = false;
  int64_t next_ = 0;
};

const kconn::PluginRegistry& registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] { kc::test::add_one_task_plugin<PartSourceTask>(reg, "test.PartSourceConnector"); });
  return reg;
}

/// The last state reported per task, the number of reports, and task
/// thread ends (the observer's on_task_stop also fires for a cut-off task).
struct States : kc::runtime::StatusListener, kc::runtime::TaskObserver {
  std::mutex mu;
  std::map<ConnectorTaskId, StatusState> last;
  std::map<ConnectorTaskId, int> reports;
  std::map<ConnectorTaskId, int> stops;
  void on_task_start(const std::string&, const ConnectorTaskId&) override {}
  void on_task_stop(const std::string&, const ConnectorTaskId& id) override {
    std::lock_guard lk(mu);
    ++stops[id];
  }
  int stopped(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    return stops[id];
  }
  void on_connector_status(const std::string&, StatusState, const std::optional<std::string>&) override {}
  void on_task_status(const ConnectorTaskId& id, StatusState s, const std::optional<std::string>&) override {
    std::lock_guard lk(mu);
    last[id] = s;
    ++reports[id];
  }
  std::optional<StatusState> state(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    auto it = last.find(id);
    if (it == last.end()) return std::nullopt;
    return it->second;
  }
  int count(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    return reports[id];
  }
};

WorkerOptions shared_options(const MockCluster& m) {
  WorkerOptions o = kc::test::mock_worker_options(m, 100);
  o.task_shutdown_graceful_timeout_ms = kGracefulMs;
  o.producer_shared = true;
  return o;
}

/// The committed {"seq": n} of source partition {"task": part}, as the
/// Worker's offset store has it (its commits update this cache).
std::optional<int64_t> committed_seq(const OffsetBackingStore& offsets, const std::string& part) {
  auto off = offsets.get("src", kconn::OrderedJson{{"task", part}});
  if (!off) return std::nullopt;
  return off->at("seq").get<int64_t>();
}

/// The values in `topic`.
std::vector<std::string> values_in(const MockCluster& m, const std::string& topic) {
  auto r = TopicReader::open(m.client_props(), topic, 10000);
  REQUIRE(r);
  std::vector<std::string> out;
  REQUIRE((*r)->read_to_end(20000, [&](const TopicReader::Record& rec) { out.push_back(rec.value.value_or("")); }));
  return out;
}

/// The n of every "<part>-<n>" in `values`.
std::set<int64_t> seqs_of(const std::vector<std::string>& values, const std::string& part) {
  std::set<int64_t> out;
  const std::string prefix = part + "-";
  for (const auto& v : values)
    if (v.rfind(prefix, 0) == 0) out.insert(std::stoll(v.substr(prefix.size())));
  return out;
}

size_t count_prefix(const std::vector<std::string>& values, const std::string& prefix) {
  size_t n = 0;
  for (const auto& v : values)
    if (v.rfind(prefix, 0) == 0) ++n;
  return n;
}

ConfigMap task_config(const std::string& topic, const std::string& part, bool gated = false) {
  ConfigMap c{{"connector.class", "test.PartSourceConnector"}, {"topic", topic}, {"part", part}};
  if (gated) c["gated"] = "yes";
  return c;
}

/// Threads of this process now (/proc/self/task): the test's, the mock
/// cluster's, the offset store's and the Worker's.
int threads_now() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

/// A cluster of `brokers` brokers with the offsets topic led by broker 1.
std::unique_ptr<MockCluster> start_cluster(int brokers) {
  auto m = kc::test::start_mock_cluster(brokers, {{"connect-offsets", 5}});
  for (int p = 0; p < 5; ++p)
    REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "connect-offsets", p, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  return m;
}

/// A two-broker cluster where "outa" is led by broker 1 and "outb" by
/// broker 2, so that one Produce request never carries records of both.
std::unique_ptr<MockCluster> start_split_cluster() {
  auto m = start_cluster(2);
  REQUIRE(m->create_topic("outa", 1));
  REQUIRE(m->create_topic("outb", 1));
  REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "outa", 0, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "outb", 0, 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  return m;
}

/// Starts task a (src-0) on "outa" and task b (src-1) on "outb" and waits
/// until each committed sequence number `min_seq`.
void start_split_pair(Worker& w, const OffsetBackingStore& offsets, int64_t min_seq) {
  REQUIRE(w.start_task({"src", 0}, task_config("outa", "a"), task_config("outa", "a"), TargetState::Started));
  REQUIRE(w.start_task({"src", 1}, task_config("outb", "b"), task_config("outb", "b"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(offsets, "a").value_or(-1) >= min_seq; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(offsets, "b").value_or(-1) >= min_seq; }, 20000));
}

}  // namespace

TEST_CASE("producer.shared: two source tasks deliver and commit their own offsets through one producer",
          "[worker][dataplane][shared]") {
  auto m = start_cluster(1);
  REQUIRE(m->create_topic("out", 2));
  auto offsets = open_offsets(*m);
  States states;
  Worker w(shared_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  CHECK(w.source_producers_created() == 0);  // none before the first source task
  REQUIRE(w.start_task(a, task_config("out", "a"), task_config("out", "a"), TargetState::Started));
  REQUIRE(w.start_task(b, task_config("out", "b"), task_config("out", "b"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= 50; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= 50; }, 20000));
  // One librdkafka producer for both (per-task producers would make 2).
  CHECK(w.source_producers_created() == 1);

  REQUIRE(w.stop_task(a));
  REQUIRE(w.stop_task(b));
  CHECK(states.state(a) == StatusState::Unassigned);
  CHECK(states.state(b) == StatusState::Unassigned);
  // Each final commit covers exactly the task's own records, all in the topic.
  const auto values = values_in(*m, "out");
  for (const std::string part : {"a", "b"}) {
    INFO("task " << part);
    auto seqs = seqs_of(values, part);
    auto last = committed_seq(*offsets, part);
    REQUIRE(last);
    REQUIRE(!seqs.empty());
    CHECK(*last == *seqs.rbegin());
    CHECK(static_cast<int64_t>(seqs.size()) == *last + 1);
  }
  CHECK(w.source_producers_created() == 1);
}

TEST_CASE("producer.shared: a task stopped with records in flight commits nothing after its stop while the other goes on",
          "[worker][dataplane][shared]") {
  // "out" is led by broker 2, which the test slows down; the offsets topic
  // stays on broker 1, so commits themselves are quick.
  auto m = start_cluster(2);
  REQUIRE(m->create_topic("out", 1));
  REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "out", 0, 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  auto offsets = open_offsets(*m);
  States states;
  auto opts = shared_options(*m);
  opts.offset_flush_timeout_ms = 300;  // the final drain gives up on acks 3 s late
  opts.task_shutdown_graceful_timeout_ms = 10000;
  Worker w(opts, offsets.get(), &states, &registry());
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  REQUIRE(w.start_task(a, task_config("out", "a"), task_config("out", "a"), TargetState::Started));
  REQUIRE(w.start_task(b, task_config("out", "b"), task_config("out", "b"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= 30; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= 30; }, 20000));

  // Acks 3 s late: b stops with records in flight. Its drain waits for
  // its own records only (300 ms, then it commits what was acknowledged),
  // and its batches must outlive it until their reports arrive.
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 3000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const auto t0 = Clock::now();
  REQUIRE(w.stop_task(b));
  const auto stop_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  INFO("stop of b took " << stop_ms << " ms");
  CHECK(stop_ms < 2000);  // not held until a's (or its own) records are acknowledged
  const auto b_at_stop = committed_seq(*offsets, "b");
  REQUIRE(b_at_stop);
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);

  // a goes on: its committed offset keeps rising past b's stop. b's late
  // reports arrive meanwhile and change nothing.
  const int64_t a_at_stop = committed_seq(*offsets, "a").value_or(-1);
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= a_at_stop + 100; }, 20000));
  CHECK(committed_seq(*offsets, "b") == b_at_stop);
  CHECK(states.state(a) == StatusState::Running);
  CHECK(states.state(b) == StatusState::Unassigned);
  CHECK(w.source_producers_created() == 1);

  REQUIRE(w.stop_task(a));
  // b's records in flight at its stop were delivered (the shared producer
  // was not purged), yet not committed: at-least-once, the next owner
  // writes them again.
  const auto values = values_in(*m, "out");
  CHECK(static_cast<int64_t>(seqs_of(values, "b").size()) > *b_at_stop + 1);
  CHECK(committed_seq(*offsets, "b") == b_at_stop);
  auto a_seqs = seqs_of(values, "a");
  REQUIRE(!a_seqs.empty());
  CHECK(committed_seq(*offsets, "a") == *a_seqs.rbegin());
}

TEST_CASE("producer.shared: cutting off one task neither purges nor stops the other",
          "[worker][dataplane][shared][cutoff]") {
  gate().reset();
  // "out" on broker 2, slowed down around the cut-off so that b has records
  // in flight then (a purge would fail them); offsets on broker 1.
  auto m = start_cluster(2);
  REQUIRE(m->create_topic("out", 1));
  REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "out", 0, 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  auto offsets = open_offsets(*m);
  States states;
  Worker w(shared_options(*m), offsets.get(), &states, &registry());
  w.set_observer(&states);
  OpenGateOnExit open_gate;
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  REQUIRE(w.start_task(a, task_config("out", "a", /*gated=*/true), task_config("out", "a", true),
                       TargetState::Started));
  REQUIRE(w.start_task(b, task_config("out", "b"), task_config("out", "b"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= 30; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= 30; }, 20000));

  // a blocks in poll() and misses its graceful stop: it is cut off.
  gate().arm();
  REQUIRE(gate().wait_blocked(20000));
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 700) == RD_KAFKA_RESP_ERR_NO_ERROR);
  CHECK_FALSE(w.stop_task(a));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);
  CHECK(w.task_ids() == std::set<ConnectorTaskId>{b});
  const auto a_at_cutoff = committed_seq(*offsets, "a");
  REQUIRE(a_at_cutoff);
  const int a_reports = states.count(a);

  // b keeps producing and committing on the shared producer.
  const int64_t b_at_cutoff = committed_seq(*offsets, "b").value_or(-1);
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= b_at_cutoff + 100; }, 20000));

  // a's poll() returns: its late records are neither sent nor committed.
  gate().release();
  REQUIRE(eventually([&] { return states.stopped(a) == 1; }, 20000));
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const int64_t b_later = committed_seq(*offsets, "b").value_or(-1);
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= b_later + 50; }, 20000));
  CHECK(committed_seq(*offsets, "a") == a_at_cutoff);
  CHECK(states.count(a) == a_reports);  // no status from the cut-off task
  CHECK(states.state(b) == StatusState::Running);
  REQUIRE(w.stop_task(b));
  const auto values = values_in(*m, "out");
  CHECK(count_prefix(values, "late-") == 0);
  // b lost nothing to a's cut-off: every record up to its final commit is there.
  auto b_seqs = seqs_of(values, "b");
  auto b_last = committed_seq(*offsets, "b");
  REQUIRE(b_last);
  CHECK(static_cast<int64_t>(b_seqs.size()) == *b_last + 1);
  CHECK(w.source_producers_created() == 1);
}

TEST_CASE("producer.shared: a record that fails delivery fails only the task that sent it",
          "[worker][dataplane][shared]") {
  // a writes "outa" (broker 1), b writes "outb" (broker 2): one Produce
  // request never carries records of both, so an error on broker 2 hits b's
  // records only.
  auto m = start_split_cluster();
  auto offsets = open_offsets(*m);
  States states;
  Worker w(shared_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  start_split_pair(w, *offsets, 50);

  // The next Produce request to broker 2 fails for good (not retriable).
  REQUIRE(rd_kafka_mock_broker_push_request_error_rtts(m->handle(), 2, 0 /* Produce */, 1,
                                                       RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED, 0) ==
          RD_KAFKA_RESP_ERR_NO_ERROR);
  REQUIRE(eventually([&] { return states.state(b) == StatusState::Failed; }, 20000));
  const int64_t a_at_failure = committed_seq(*offsets, "a").value_or(-1);
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= a_at_failure + 100; }, 20000));
  CHECK(states.state(a) == StatusState::Running);
  CHECK(w.source_producers_created() == 1);
  w.stop_all();
  CHECK(states.state(a) == StatusState::Unassigned);

  // b committed nothing at or after its lost records.
  auto b_seqs = seqs_of(values_in(*m, "outb"), "b");
  auto b_last = committed_seq(*offsets, "b");
  REQUIRE(b_last);
  int64_t first_missing = 0;
  while (b_seqs.count(first_missing)) ++first_missing;
  CHECK(*b_last < first_missing);
  // a lost nothing.
  auto a_seqs = seqs_of(values_in(*m, "outa"), "a");
  auto a_last = committed_seq(*offsets, "a");
  REQUIRE(a_last);
  CHECK(static_cast<int64_t>(a_seqs.size()) == *a_last + 1);
}

TEST_CASE("producer.shared: cut_off_all purges the shared producer and commits nothing later, and new tasks use it",
          "[worker][dataplane][shared][cutoff]") {
  auto m = start_cluster(1);
  REQUIRE(m->create_topic("out", 1));
  auto offsets = open_offsets(*m);
  States states;
  Worker w(shared_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  REQUIRE(w.start_task(a, task_config("out", "a"), task_config("out", "a"), TargetState::Started));
  REQUIRE(w.start_task(b, task_config("out", "b"), task_config("out", "b"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= 30; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= 30; }, 20000));

  auto ids = w.cut_off_all();
  CHECK(ids.size() == 2);
  CHECK(w.task_ids().empty());
  const auto a_cut = committed_seq(*offsets, "a");
  const auto b_cut = committed_seq(*offsets, "b");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  CHECK(committed_seq(*offsets, "a") == a_cut);
  CHECK(committed_seq(*offsets, "b") == b_cut);

  // A task started after the cut-off sends through the same producer and
  // loses nothing to the purge.
  const ConnectorTaskId c{"src", 2};
  REQUIRE(w.start_task(c, task_config("out", "c"), task_config("out", "c"), TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets, "c").value_or(-1) >= 50; }, 20000));
  REQUIRE(w.stop_task(c));
  CHECK(states.state(c) == StatusState::Unassigned);
  auto c_seqs = seqs_of(values_in(*m, "out"), "c");
  CHECK(static_cast<int64_t>(c_seqs.size()) == committed_seq(*offsets, "c").value_or(-1) + 1);
  CHECK(w.source_producers_created() == 1);
}

TEST_CASE("producer.shared: a task's offsets wait for its own acks only, not for the other task's",
          "[worker][dataplane][shared]") {
  // a writes "outa" (broker 1), b writes "outb" (broker 2); broker 2 then
  // answers 3 s late. Both share one producer, but a's commits must go on
  // while b's stand still until b's own records are acknowledged.
  auto m = start_split_cluster();
  auto offsets = open_offsets(*m);
  States states;
  Worker w(shared_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId a{"src", 0}, b{"src", 1};
  start_split_pair(w, *offsets, 30);

  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 3000) == RD_KAFKA_RESP_ERR_NO_ERROR);
  // Records acknowledged before the slow-down get committed meanwhile.
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  const auto b_slow = committed_seq(*offsets, "b");
  const int64_t a_slow = committed_seq(*offsets, "a").value_or(-1);
  REQUIRE(b_slow);
  // For the next second no record of b is acknowledged: its offset stays
  // where its acks are, while a commits hundreds more.
  REQUIRE(eventually([&] { return committed_seq(*offsets, "a").value_or(-1) >= a_slow + 50; }, 5000));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  CHECK(committed_seq(*offsets, "b") == b_slow);
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);
  // Every record up to b's committed offset is in its topic.
  {
    auto b_seqs = seqs_of(values_in(*m, "outb"), "b");
    int64_t contiguous = -1;
    while (b_seqs.count(contiguous + 1)) ++contiguous;
    CHECK(*b_slow <= contiguous);
  }
  // b's acks arrive and its commits catch up; it never failed.
  REQUIRE(eventually([&] { return committed_seq(*offsets, "b").value_or(-1) >= *b_slow + 50; }, 20000));
  CHECK(states.state(a) == StatusState::Running);
  CHECK(states.state(b) == StatusState::Running);
  REQUIRE(w.stop_task(a));
  REQUIRE(w.stop_task(b));
  for (const std::string part : {"a", "b"}) {
    INFO("task " << part);
    auto seqs = seqs_of(values_in(*m, "out" + part), part);
    auto last = committed_seq(*offsets, part);
    REQUIRE(last);
    REQUIRE(!seqs.empty());
    CHECK(*last == *seqs.rbegin());
    CHECK(static_cast<int64_t>(seqs.size()) == *last + 1);
  }
  CHECK(w.source_producers_created() == 1);
}

TEST_CASE("producer.shared: only with producer.shared=true, and never for exactly-once source tasks",
          "[worker][dataplane][shared]") {
  auto m = start_cluster(1);
  REQUIRE(m->create_topic("out", 1));
  auto offsets = open_offsets(*m);
  struct Case {
    const char* what;
    bool shared, exactly_once;
    int64_t producers;  ///< for two source tasks
  };
  for (const Case& k : {Case{"default (producer.shared=false)", false, false, 2},
                        Case{"producer.shared=true", true, false, 1},
                        Case{"producer.shared=true with exactly.once.source.support=enabled", true, true, 2}}) {
    INFO(k.what);
    States states;
    auto opts = shared_options(*m);
    opts.producer_shared = k.shared;
    opts.exactly_once_source = k.exactly_once;
    Worker w(opts, offsets.get(), &states, &registry());
    const std::string pa = std::string("a") + (k.shared ? "s" : "") + (k.exactly_once ? "x" : "");
    const std::string pb = std::string("b") + (k.shared ? "s" : "") + (k.exactly_once ? "x" : "");
    const ConnectorTaskId a{"src", 0}, b{"src", 1};
    REQUIRE(w.start_task(a, task_config("out", pa), task_config("out", pa), TargetState::Started));
    REQUIRE(w.start_task(b, task_config("out", pb), task_config("out", pb), TargetState::Started));
    REQUIRE(eventually([&] { return committed_seq(*offsets, pa).value_or(-1) >= 30; }, 20000));
    REQUIRE(eventually([&] { return committed_seq(*offsets, pb).value_or(-1) >= 30; }, 20000));
    CHECK(w.source_producers_created() == k.producers);
    REQUIRE(w.stop_task(a));
    REQUIRE(w.stop_task(b));
    CHECK(states.state(a) == StatusState::Unassigned);
    CHECK(states.state(b) == StatusState::Unassigned);
  }
}

TEST_CASE("producer.shared: a worker's threads grow by about one per source task instead of one producer's each",
          "[worker][dataplane][shared]") {
  auto m = start_cluster(1);
  REQUIRE(m->create_topic("out", 1));
  auto offsets = open_offsets(*m);
  constexpr int kTasks = 6;
  // Threads added by kTasks running source tasks (every one has delivered
  // and committed, so its producer's broker threads exist).
  auto added_threads = [&](bool shared) {
    States states;
    auto opts = shared_options(*m);
    opts.producer_shared = shared;
    Worker w(opts, offsets.get(), &states, &registry());
    const int before = threads_now();
    std::vector<ConnectorTaskId> ids;
    for (int t = 0; t < kTasks; ++t) {
      ids.push_back(ConnectorTaskId{"src", t});
      const std::string part = std::string(shared ? "s" : "p") + std::to_string(t);
      REQUIRE(w.start_task(ids.back(), task_config("out", part), task_config("out", part), TargetState::Started));
    }
    for (int t = 0; t < kTasks; ++t) {
      const std::string part = std::string(shared ? "s" : "p") + std::to_string(t);
      REQUIRE(eventually([&] { return committed_seq(*offsets, part).value_or(-1) >= 20; }, 20000));
    }
    const int added = threads_now() - before;
    CHECK(w.source_producers_created() == (shared ? 1 : kTasks));
    for (const auto& id : ids) REQUIRE(w.stop_task(id));
    return added;
  };
  const int per_task = added_threads(false);
  const int shared = added_threads(true);
  INFO("threads added by " << kTasks << " source tasks: " << per_task << " with a producer each, " << shared
                           << " with producer.shared");
  // A task thread each, plus one producer's threads (librdkafka's main and
  // broker threads, the poll thread) in all rather than per task.
  CHECK(shared <= kTasks + 8);
  CHECK(per_task >= 3 * kTasks);
  CHECK(per_task - shared >= 2 * (kTasks - 1));
}

}  // namespace unity_test_worker_shared_producer
