// The source task loop's offset bookkeeping (issue 10, item 4): a periodic
// offset commit covers only records the producer has acknowledged, and it
// does not hold the poll loop until the records in flight are acknowledged
// (the loop used to flush the producer on every commit). Runs the Worker
// against librdkafka's in-process mock cluster with a test source plugin.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
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
namespace unity_test_worker_dataplane {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace kconn = kc::connectors;

namespace {

using kc::test::eventually;
using kc::test::open_offsets;

using Clock = std::chrono::steady_clock;

std::atomic<int64_t> g_polls{0};  ///< polls of the counting source

constexpr int64_t kStampBase = 1600000000000;  ///< 2020-09-13, far from the producer's "now"

/// Writes "v-<n>" with source partition {"task": 0} and offset {"seq": n},
/// 10 records per poll, one poll every 20 ms. With `stamp`, even records
/// carry the timestamp kStampBase + n, odd ones none. With `sparse`, only
/// the last record of each poll carries a partition and an offset.
class CountingSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap& c, kconn::SourceTaskContext&) override {
    topic_ = c.at("topic");
    stamp_ = c.count("stamp") > 0;
    sparse_ = c.count("sparse") > 0;
  }
  std::vector<kconn::SourceRecord> poll() override {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::vector<kconn::SourceRecord> out;
    for (int i = 0; i < 10; ++i, ++next_) {
      kconn::SourceRecord r;
      r.topic = topic_;
      if (!sparse_ || i == 9) {
        r.source_partition = kconn::OrderedJson{{"task", 0}};
        r.source_offset = kconn::OrderedJson{{"seq", next_}};
      }
      r.value = kconn::Data::string("v-" + std::to_string(next_));
      if (stamp_ && next_ % 2 == 0) r.timestamp_ms = kStampBase + next_;
      out.push_back(std::move(r));
    }
    ++g_polls;
    return out;
  }
  void stop() override {}

 private:
  std::string topic_;
  bool stamp_ = false;
  bool sparse_ = false;
  int64_t next_ = 0;
};

const kconn::PluginRegistry& registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] { kc::test::add_one_task_plugin<CountingSourceTask>(reg, "test.CountingSourceConnector"); });
  return reg;
}

WorkerOptions worker_options(const MockCluster& m) {
  WorkerOptions o = kc::test::mock_worker_options(m, 100);
  o.task_shutdown_graceful_timeout_ms = 10000;
  return o;
}

/// The committed {"seq": n} of the task, as this store's cache has it.
std::optional<int64_t> committed_seq(const OffsetBackingStore& offsets) {
  auto off = offsets.get("src", kconn::OrderedJson{{"task", 0}});
  if (!off) return std::nullopt;
  return off->at("seq").get<int64_t>();
}

/// The n of every "v-<n>" in `topic`.
std::set<int64_t> seqs_in(const MockCluster& m, const std::string& topic) {
  auto r = TopicReader::open(m.client_props(), topic, 10000);
  REQUIRE(r);
  std::set<int64_t> out;
  REQUIRE((*r)->read_to_end(20000, [&](const TopicReader::Record& rec) {
    if (rec.value && rec.value->rfind("v-", 0) == 0) out.insert(std::stoll(rec.value->substr(2)));
  }));
  return out;
}

const ConfigMap kSource{{"connector.class", "test.CountingSourceConnector"}, {"topic", "out"}};

/// One broker with the offsets topic and "out", an offset store on it and
/// the task states: what most cases here start from.
struct OneBroker {
  std::unique_ptr<MockCluster> m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"out", 1}});
  std::unique_ptr<OffsetBackingStore> offsets = open_offsets(*m);
  kc::test::TaskStates states;
};

/// kSource with one of the counting source's options switched on.
ConfigMap source_with(const std::string& option) {
  ConfigMap cfg = kSource;
  cfg[option] = "yes";
  return cfg;
}

/// After a task's stop: its final committed seq is the last record in
/// "out", and every record before it is there.
void check_final_commit_is_last_record(const MockCluster& m, const OffsetBackingStore& offsets) {
  auto last = committed_seq(offsets);
  REQUIRE(last);
  auto in_topic = seqs_in(m, "out");
  REQUIRE(!in_topic.empty());
  CHECK(*last == *in_topic.rbegin());
  CHECK(static_cast<int64_t>(in_topic.size()) == *last + 1);
}

}  // namespace

TEST_CASE("a source task keeps polling while its records wait for acks, commits cover acknowledged records only",
          "[worker][dataplane]") {
  // Broker 2 leads "out" and answers 1.5 s late; broker 1 leads the offsets
  // topic and answers at once, so commits themselves are quick.
  auto m = kc::test::start_mock_cluster(2, {{"connect-offsets", 5}, {"out", 1}});
  for (int p = 0; p < 5; ++p)
    REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "connect-offsets", p, 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  REQUIRE(rd_kafka_mock_partition_set_leader(m->handle(), "out", 0, 2) == RD_KAFKA_RESP_ERR_NO_ERROR);
  auto offsets = open_offsets(*m);
  g_polls = 0;
  kc::test::TaskStates states;
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId id{"src", 0};
  REQUIRE(w.start_task(id, kSource, kSource, TargetState::Started));
  REQUIRE(eventually([] { return g_polls.load() > 0; }, 20000));
  REQUIRE(eventually([&] { return committed_seq(*offsets).has_value(); }, 20000));
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 1500) == RD_KAFKA_RESP_ERR_NO_ERROR);

  // 3 s with produce acks 1.5 s late and a commit due every 100 ms. Waiting
  // for the producer in each commit allowed about 10 polls; the
  // loop now polls on (20 ms per poll: about 145 polls here).
  const int64_t polls_before = g_polls.load();
  std::optional<int64_t> highest_committed;
  for (auto until = Clock::now() + std::chrono::seconds(3); Clock::now() < until;) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    highest_committed = committed_seq(*offsets);
  }
  const int64_t polls = g_polls.load() - polls_before;
  INFO("polls in 3 s with 1.5 s acks: " << polls);
  CHECK(polls >= 40);
  // What was committed meanwhile is in the topic: acknowledged.
  REQUIRE(highest_committed);
  REQUIRE(rd_kafka_mock_broker_set_rtt(m->handle(), 2, 0) == RD_KAFKA_RESP_ERR_NO_ERROR);
  auto in_topic = seqs_in(*m, "out");
  CHECK(in_topic.count(*highest_committed) == 1);

  // The final commit waits for every record: the next owner resumes right
  // after the last record written, and nothing is missing before it.
  REQUIRE(w.stop_task(id));
  CHECK(states.state() == StatusState::Unassigned);
  check_final_commit_is_last_record(*m, *offsets);
}

TEST_CASE_METHOD(OneBroker,
                 "a record that fails delivery fails the source task and no offset at or after it is committed",
                 "[worker][dataplane]") {
  g_polls = 0;
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId id{"src", 0};
  REQUIRE(w.start_task(id, kSource, kSource, TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets).value_or(-1) >= 50; }, 20000));

  // The next Produce request fails for good (not retriable): its records
  // are lost; the records after them may still be written.
  rd_kafka_mock_push_request_errors(m->handle(), 0 /* Produce */, 1, RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  REQUIRE(eventually([&] { return states.state() == StatusState::Failed; }, 20000));
  w.stop_all();

  auto in_topic = seqs_in(*m, "out");
  auto last = committed_seq(*offsets);
  REQUIRE(last);
  // Every record up to the committed offset is in the topic: the failed
  // ones (a gap) lie after it.
  for (int64_t n = 0; n <= *last; ++n) {
    INFO("seq " << n << ", committed " << *last);
    REQUIRE(in_topic.count(n) == 1);
  }
  int64_t first_missing = 0;
  while (in_topic.count(first_missing)) ++first_missing;
  CHECK(*last < first_missing);
}

TEST_CASE_METHOD(OneBroker,
                 "a source record's timestamp is the Kafka record's timestamp, without one the producer's time",
                 "[worker][dataplane]") {
  const ConfigMap cfg = source_with("stamp");
  const int64_t before_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                std::chrono::system_clock::now().time_since_epoch())
                                .count();
  {
    Worker w(worker_options(*m), offsets.get(), &states, &registry());
    const ConnectorTaskId id{"src", 0};
    REQUIRE(w.start_task(id, cfg, cfg, TargetState::Started));
    REQUIRE(eventually([&] { return committed_seq(*offsets).value_or(-1) >= 19; }, 20000));
    REQUIRE(w.stop_task(id));
  }
  // Read the first 20 records with their timestamps.
  auto c = make_client(RD_KAFKA_CONSUMER, m->client_props(), {{"group.id", "ts-check"}});
  REQUIRE(c);
  auto* parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, "out", 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  REQUIRE(rd_kafka_assign(c->get(), parts) == RD_KAFKA_RESP_ERR_NO_ERROR);
  rd_kafka_topic_partition_list_destroy(parts);
  int seen = 0;
  for (auto deadline = Clock::now() + std::chrono::seconds(20); seen < 20 && Clock::now() < deadline;) {
    rd_kafka_message_t* msg = rd_kafka_consumer_poll(c->get(), 200);
    if (!msg) continue;
    if (!msg->err) {
      const std::string v(static_cast<const char*>(msg->payload), msg->len);
      const int64_t n = std::stoll(v.substr(2));
      const int64_t ts = rd_kafka_message_timestamp(msg, nullptr);
      INFO(v << " has timestamp " << ts);
      if (n % 2 == 0) CHECK(ts == kStampBase + n);
      else CHECK(ts >= before_ms);
      // Runs without timestamps go in one call, the stamped ones on their
      // own, yet the partition holds them in the order polled.
      CHECK(n == seen);
      ++seen;
    }
    rd_kafka_message_destroy(msg);
  }
  CHECK(seen == 20);
  rd_kafka_consumer_close(c->get());
}

TEST_CASE_METHOD(OneBroker,
                 "records without an offset of their own: the partition keeps the last offset a record carried",
                 "[worker][dataplane]") {
  const ConfigMap cfg = source_with("sparse");
  Worker w(worker_options(*m), offsets.get(), &states, &registry());
  const ConnectorTaskId id{"src", 0};
  REQUIRE(w.start_task(id, cfg, cfg, TargetState::Started));
  // Commits every 100 ms: each is the offset of some poll's last record.
  std::set<int64_t> committed;
  for (auto until = Clock::now() + std::chrono::seconds(2); Clock::now() < until;) {
    if (auto c = committed_seq(*offsets)) committed.insert(*c);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  REQUIRE(!committed.empty());
  for (int64_t c : committed) CHECK(c % 10 == 9);
  REQUIRE(w.stop_task(id));
  check_final_commit_is_last_record(*m, *offsets);
}

TEST_CASE_METHOD(OneBroker,
                 "a producer queue smaller than a poll: the run waits for room and every record lands once, in order",
                 "[worker][dataplane]") {
  WorkerOptions o = worker_options(*m);
  // 10 records per poll, room for 3: each send_batch meets a full queue
  // and goes on from the first record not queued.
  o.producer_overrides["queue.buffering.max.messages"] = "3";
  Worker w(o, offsets.get(), &states, &registry());
  const ConnectorTaskId id{"src", 0};
  REQUIRE(w.start_task(id, kSource, kSource, TargetState::Started));
  REQUIRE(eventually([&] { return committed_seq(*offsets).value_or(-1) >= 199; }, 20000));
  REQUIRE(w.stop_task(id));
  CHECK(states.state() == StatusState::Unassigned);
  auto last = committed_seq(*offsets);
  REQUIRE(last);
  // Read in order: no record twice, none missing, none out of order.
  auto r = TopicReader::open(m->client_props(), "out", 10000);
  REQUIRE(r);
  std::vector<int64_t> order;
  REQUIRE((*r)->read_to_end(20000, [&](const TopicReader::Record& rec) {
    if (rec.value) order.push_back(std::stoll(rec.value->substr(2)));
  }));
  REQUIRE(static_cast<int64_t>(order.size()) == *last + 1);
  for (size_t i = 0; i < order.size(); ++i) {
    INFO("position " << i);
    REQUIRE(order[i] == static_cast<int64_t>(i));
  }
}

}  // namespace unity_test_worker_dataplane
