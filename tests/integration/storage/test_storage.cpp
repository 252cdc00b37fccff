// Internal topics, built-in connectors and the Worker against an in-process
// librdkafka mock cluster.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // must follow rdkafka.h

#include "worker/runtime/worker.h"
#include "worker/storage/config_store.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "worker/storage/status_store.h"
#include "tests/support/worker_test_util.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_storage {

using namespace kc::storage;
using kc::connect::ConnectorTaskId;
using kc::Error;
using kc::ok_status;
using kc::Status;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
namespace fs = std::filesystem;

namespace {

using kc::test::eventually;
using kc::test::open_offsets;
using kc::test::read_all;

using Clock = std::chrono::steady_clock;

std::unique_ptr<MockCluster> start_cluster() {
  return kc::test::start_mock_cluster(1, {{"connect-configs", 1}, {"connect-offsets", 5}, {"connect-status", 5}});
}

fs::path temp_dir(const std::string& name) {
  auto p = fs::temp_directory_path() / ("kc-test-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::vector<std::string> read_lines(const fs::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void append_lines(const fs::path& p, int from, int to) {
  std::ofstream out(p, std::ios::app);
  for (int i = from; i < to; ++i) out << "line-" << i << "\n";
}

/// Records status changes and observer calls.
struct Recorder : kc::runtime::StatusListener, kc::runtime::TaskObserver {
  std::mutex mu;
  std::map<ConnectorTaskId, std::pair<StatusState, std::optional<std::string>>> tasks;
  std::map<std::string, StatusState> connectors;
  int starts = 0, stops = 0;
  std::set<ConnectorTaskId> running;
  bool overlap = false;

  std::map<std::pair<ConnectorTaskId, std::string>, int> topic_reports;  // (task, topic) → reports

  void on_connector_status(const std::string& c, StatusState s, const std::optional<std::string>&) override {
    std::lock_guard lk(mu);
    connectors[c] = s;
  }
  void on_topic_active(const ConnectorTaskId& id, const std::string& topic) override {
    std::lock_guard lk(mu);
    ++topic_reports[{id, topic}];
  }
  void on_task_status(const ConnectorTaskId& id, StatusState s, const std::optional<std::string>& t) override {
    std::lock_guard lk(mu);
    tasks[id] = {s, t};
  }
  void on_task_start(const std::string&, const ConnectorTaskId& id) override {
    std::lock_guard lk(mu);
    ++starts;
    if (!running.insert(id).second) overlap = true;
  }
  void on_task_stop(const std::string&, const ConnectorTaskId& id) override {
    std::lock_guard lk(mu);
    ++stops;
    running.erase(id);
  }
  std::optional<StatusState> task_state(const ConnectorTaskId& id) {
    std::lock_guard lk(mu);
    auto it = tasks.find(id);
    if (it == tasks.end()) return std::nullopt;
    return it->second.first;
  }
};

WorkerOptions worker_options(const MockCluster& m, const std::string& id) {
  WorkerOptions o = kc::test::mock_worker_options(m, 300);
  o.worker_id = id;
  // The mock coordinator waits for a departed sink member's session to expire
  // before the next owner's join completes; keep that short.
  o.consumer_overrides = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "1000"}};
  o.task_shutdown_graceful_timeout_ms = 10000;
  return o;
}

}  // namespace

TEST_CASE("config topic round trip", "[storage][config]") {
  auto m = start_cluster();
  ConfigBackingStore::Options opts;
  opts.client = m->client_props();
  std::vector<ConfigUpdate> updates;
  auto store = ConfigBackingStore::open(opts, [&](const ConfigUpdate& u) { updates.push_back(u); });
  REQUIRE(store);
  CHECK((*store)->snapshot().offset == -1);

  ConfigMap cfg{{"connector.class", "FileStreamSource"}, {"topic", "t"}, {"file", "/tmp/x"}};
  REQUIRE((*store)->put_connector_config("my-conn", cfg, TargetState::Started, 10000));
  REQUIRE((*store)->put_task_configs("my-conn", {{{"a", "0"}}, {{"a", "1"}}}, 10000));
  REQUIRE((*store)->put_target_state("my-conn", TargetState::Paused, 10000));
  auto snap = (*store)->snapshot();
  CHECK(snap.offset == 6);  // target-state, connector, 2 tasks, commit, target-state
  CHECK(snap.connector_configs.at("my-conn") == cfg);
  CHECK(snap.task_counts.at("my-conn") == 2);
  CHECK(snap.tasks("my-conn") == std::vector<ConnectorTaskId>{{"my-conn", 0}, {"my-conn", 1}});
  CHECK(snap.task_config({"my-conn", 1})->at("a") == "1");
  CHECK(snap.target_state("my-conn") == TargetState::Paused);
  CHECK(snap.inconsistent.empty());
  CHECK_FALSE(updates.empty());

  // A second reader (another worker) sees the same snapshot.
  auto other = ConfigBackingStore::open(opts);
  REQUIRE(other);
  auto osnap = (*other)->snapshot();
  CHECK(osnap.offset == snap.offset);
  CHECK(osnap.connector_configs == snap.connector_configs);
  CHECK(osnap.task_configs == snap.task_configs);
  CHECK(osnap.target_states == snap.target_states);

  // Raw records carry Connect's JSON shapes.
  auto recs = read_all(*m, "connect-configs");
  REQUIRE(recs.size() == 6);
  CHECK(*recs[0].key == "target-state-my-conn");
  CHECK(*recs[0].value == R"({"state":"STARTED","state.v2":"STARTED"})");
  CHECK(*recs[1].key == "connector-my-conn");
  CHECK(*recs[1].value == R"({"properties":{"connector.class":"FileStreamSource","file":"/tmp/x","topic":"t"}})");
  CHECK(*recs[2].key == "task-my-conn-0");
  CHECK(*recs[4].key == "commit-my-conn");
  CHECK(*recs[4].value == R"({"tasks":2})");

  // Inconsistent commit: only task 0 written, commit says 2.
  REQUIRE((*store)->put_connector_config("c2", cfg, std::nullopt, 10000));
  auto producer = Producer::create(m->client_props());
  REQUIRE(producer);
  REQUIRE((*producer)->send_and_wait("connect-configs",
                                     {{"task-c2-0", encode_properties({{"x", "y"}})}, {"commit-c2", encode_commit(2)}},
                                     10000));
  auto r = (*store)->read_to_end(10000);
  REQUIRE(r);
  CHECK(r->inconsistent.count("c2") == 1);
  CHECK(r->tasks("c2").empty());
  CHECK(r->target_state("c2") == TargetState::Started);
  // A good commit heals it.
  REQUIRE((*store)->put_task_configs("c2", {{{"x", "0"}}, {{"x", "1"}}}, 10000));
  CHECK((*store)->snapshot().inconsistent.empty());
  CHECK((*store)->snapshot().tasks("c2").size() == 2);

  // Delete: tombstones for connector and target state.
  REQUIRE((*store)->remove_connector("my-conn", 10000));
  auto after = (*store)->snapshot();
  CHECK_FALSE(after.contains("my-conn"));
  CHECK(after.tasks("my-conn").empty());
  CHECK(after.target_states.count("my-conn") == 0);
  auto recs2 = read_all(*m, "connect-configs");
  CHECK_FALSE(recs2[recs2.size() - 2].value.has_value());
  CHECK_FALSE(recs2.back().value.has_value());
}

// Regression: the leader generates task configs when it hears of a new
// connector and reads snapshot() to find its config. Updates used to be
// announced before the snapshot holding them was published, so a fast reader
// found no config and the connector never got tasks.
TEST_CASE("a config update is announced after the snapshot holding it is published", "[storage][config]") {
  auto m = start_cluster();
  ConfigBackingStore::Options opts;
  opts.client = m->client_props();
  ConfigBackingStore* self = nullptr;
  std::vector<std::string> seen;  // "<kind>:<connector>:<in snapshot>"
  auto store = ConfigBackingStore::open(opts, [&](const ConfigUpdate& u) {
    const auto snap = self->snapshot();
    const bool visible = u.kind == ConfigUpdate::Kind::ConnectorConfig ? snap.contains(u.connector)
                         : u.kind == ConfigUpdate::Kind::TasksCommitted ? !snap.tasks(u.connector).empty()
                                                                         : true;
    seen.push_back(std::to_string(static_cast<int>(u.kind)) + ":" + u.connector + ":" + (visible ? "yes" : "no"));
  });
  REQUIRE(store);
  self = store->get();
  ConfigMap cfg{{"connector.class", "FileStreamSource"}, {"topic", "t"}, {"file", "/tmp/x"}};
  REQUIRE((*store)->put_connector_config("c", cfg, std::nullopt, 10000));
  REQUIRE((*store)->put_task_configs("c", {{{"a", "0"}}}, 10000));
  const auto conn = std::to_string(static_cast<int>(ConfigUpdate::Kind::ConnectorConfig));
  const auto tasks = std::to_string(static_cast<int>(ConfigUpdate::Kind::TasksCommitted));
  CHECK(seen == std::vector<std::string>{conn + ":c:yes", tasks + ":c:yes"});
}

// Issue 9: a connector name no REST request can address (the empty name of
// `connector-`, ".", "..") is skipped with a warning when the topic is read,
// so no consumer of the snapshot lists, assigns or reports it; a good
// connector written after such records is read normally.
TEST_CASE("records of unaddressable connector names are skipped with a warning", "[storage][config]") {
  auto m = start_cluster();
  auto warnings = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
  spdlog::default_logger()->sinks().push_back(warnings);
  struct Unhook {
    std::shared_ptr<spdlog::sinks::sink> sink;
    ~Unhook() {
      auto& sinks = spdlog::default_logger()->sinks();
      sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
    }
  } unhook{warnings};

  const ConfigMap cfg{{"connector.class", "FileStreamSource"}, {"topic", "t"}, {"file", "/tmp/x"}};
  auto producer = Producer::create(m->client_props());
  REQUIRE(producer);
  REQUIRE((*producer)->send_and_wait("connect-configs",
                                     {{"target-state-", encode_target_state(TargetState::Paused)},
                                      {"connector-", encode_properties(cfg)},
                                      {"task--0", encode_properties({{"a", "0"}})},
                                      {"commit-", encode_commit(1)},
                                      {"connector-.", encode_properties(cfg)},
                                      {"target-state-..", encode_target_state(TargetState::Stopped)},
                                      {"connector-..", encode_properties(cfg)},
                                      {"restart-connector-", R"({"include-tasks":true,"only-failed":false})"},
                                      {"connector-good", encode_properties(cfg)},
                                      {"task-good-0", encode_properties({{"a", "0"}})},
                                      {"commit-good", encode_commit(1)},
                                      {"target-state-good", encode_target_state(TargetState::Paused)}},
                                     10000));

  ConfigBackingStore::Options opts;
  opts.client = m->client_props();
  std::vector<std::string> updates;  // connectors named by the update listener
  auto store = ConfigBackingStore::open(opts, [&](const ConfigUpdate& u) { updates.push_back(u.connector); });
  REQUIRE(store);
  auto snap = (*store)->snapshot();
  CHECK(snap.offset == 12);  // every record consumed, skipped ones included
  CHECK(snap.connectors() == std::vector<std::string>{"good"});
  CHECK(snap.connector_configs.at("good") == cfg);
  CHECK(snap.tasks("good") == std::vector<ConnectorTaskId>{{"good", 0}});
  CHECK(snap.target_state("good") == TargetState::Paused);
  CHECK(snap.target_states == std::map<std::string, TargetState>{{"good", TargetState::Paused}});
  CHECK(snap.task_counts == std::map<std::string, int32_t>{{"good", 1}});
  CHECK(snap.task_configs.size() == 1);
  CHECK(snap.inconsistent.empty());
  CHECK_FALSE(updates.empty());
  CHECK(std::all_of(updates.begin(), updates.end(), [](const std::string& c) { return c == "good"; }));

  // One warning per skipped record, naming topic, partition, offset and
  // key. (`task--0` has no
  // connector name at all, so it is dropped as an unknown key.)
  auto logged = warnings->last_formatted();
  auto skipped = [&](const std::string& key) {
    return std::count_if(logged.begin(), logged.end(), [&](const std::string& line) {
      return line.find("skipping record with key '" + key + "'") != std::string::npos &&
             line.find("cannot be addressed over REST") != std::string::npos;
    });
  };
  CHECK(skipped("target-state-") == 1);
  CHECK(skipped("connector-") == 1);
  CHECK(skipped("commit-") == 1);
  CHECK(skipped("connector-.") == 1);
  CHECK(skipped("connector-..") == 1);
  CHECK(skipped("target-state-..") == 1);
  CHECK(skipped("restart-connector-") == 1);
  CHECK(skipped("connector-good") == 0);
  CHECK(std::count_if(logged.begin(), logged.end(), [](const std::string& line) {
          return line.find("'task--0': unknown key") != std::string::npos;
        }) == 1);

  // A delete of the empty name is skipped too and leaves the good connector.
  REQUIRE((*producer)->send_and_wait("connect-configs", {{"connector-", std::nullopt}}, 10000));
  auto again = (*store)->read_to_end(10000);
  REQUIRE(again);
  CHECK(again->offset == 13);
  CHECK(again->connectors() == std::vector<std::string>{"good"});

  // Another worker reading from the start builds the same snapshot.
  auto other = ConfigBackingStore::open(opts);
  REQUIRE(other);
  auto osnap = (*other)->snapshot();
  CHECK(osnap.connectors() == std::vector<std::string>{"good"});
  CHECK(osnap.target_states == again->target_states);
  CHECK(osnap.task_configs == again->task_configs);
}

TEST_CASE("config topic with more than one partition is refused", "[storage][config]") {
  auto m = start_cluster();
  REQUIRE(m->create_topic("bad-configs", 3));
  ConfigBackingStore::Options opts;
  opts.client = m->client_props();
  opts.topic = "bad-configs";
  auto store = ConfigBackingStore::open(opts);
  REQUIRE_FALSE(store);
  CHECK(store.error().message.find("exactly 1") != std::string::npos);
}

TEST_CASE("config store: writer_stats does not wait for a claim of write privileges in broker I/O",
          "[storage][config][stop]") {
  // The claim holds txn_mu_ across init_transactions; the counters have
  // their own lock, so a reader is not held up by the claim's broker I/O.
  auto m = start_cluster();
  REQUIRE(m->create_topic("txn-configs", 1));
  ConfigBackingStore::Options opts;
  opts.client = m->client_props();
  opts.topic = "txn-configs";
  opts.replication_factor = 1;
  opts.timeout_ms = 15000;
  opts.transactional_id = config_topic_transactional_id("g1");
  auto store = ConfigBackingStore::open(opts);
  REQUIRE(store);
  // Every broker round trip takes 3 s: the claim is in broker I/O for seconds.
  rd_kafka_mock_broker_set_rtt(m->handle(), 1, 3000);
  std::atomic<bool> claim_done{false};
  std::thread claimer([&] {
    (void)(*store)->claim_write_privileges(60000);
    claim_done = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the claim is under way
  const auto stats = (*store)->writer_stats();
  CHECK_FALSE(claim_done.load());  // answered while the claim still waits for the broker
  CHECK(stats.transactional);
  CHECK_FALSE(stats.write_privileges);
  rd_kafka_mock_broker_set_rtt(m->handle(), 1, 0);
  claimer.join();
  CHECK((*store)->writer_stats().write_privileges);
}

TEST_CASE("missing topic on a broker without CreateTopics gives a clear error", "[storage]") {
  auto m = start_cluster();
  auto r = ensure_topic(m->client_props(), TopicSpec{"never-created", 1, 1}, 10000);
  REQUIRE_FALSE(r);
  INFO(r.error().to_string());
  CHECK(r.error().to_string().find("never-created") != std::string::npos);
}

namespace {
/// Counts the delivery reports of send_view records.
struct CountingDelivery final : Producer::Delivery {
  std::atomic<int> ok{0}, failed{0};
  std::atomic<std::thread::id> thread;
  void delivered(rd_kafka_resp_err_t err) override {
    thread.store(std::this_thread::get_id());
    (err ? failed : ok).fetch_add(1);
  }
};
}  // namespace

TEST_CASE("a Deliveries::Caller producer reports on the sending thread only, also through a full queue",
          "[storage][producer]") {
  auto m = start_cluster();
  REQUIRE(m->create_topic("dp", 2));
  // A queue of 10 records: 200 sends only get through if send_view serves
  // the reports while the queue is full (no poll thread does).
  auto p = Producer::create(m->client_props(), {{"queue.buffering.max.messages", "10"}, {"linger.ms", "0"}},
                            Producer::Deliveries::Caller);
  REQUIRE(p);
  CountingDelivery d;
  auto* topic = (*p)->topic("dp");
  CHECK((*p)->topic("dp") == topic);  // cached
  REQUIRE((*p)->send_view(topic, std::nullopt, std::string_view("first"), &d));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // acknowledged by now, but not served
  CHECK(d.ok.load() == 0);
  (*p)->serve_deliveries();
  CHECK(d.ok.load() == 1);
  for (int i = 0; i < 200; ++i) {
    const std::string v = "v-" + std::to_string(i);
    REQUIRE((*p)->send_view(topic, std::string_view("k"), std::string_view(v), &d));
  }
  REQUIRE((*p)->flush(10000));  // serves the rest
  CHECK(d.ok.load() == 201);
  CHECK(d.failed.load() == 0);
  CHECK(d.thread.load() == std::this_thread::get_id());
  auto recs = read_all(*m, "dp");
  CHECK(recs.size() == 201);
}

TEST_CASE("offsets round trip with exact key bytes", "[storage][offsets]") {
  auto m = start_cluster();
  auto store = open_offsets(*m);
  OrderedJson part = {{"filename", "/tmp/in.txt"}};
  REQUIRE(store->commit("file-source", {{part, OrderedJson{{"position", 30}}}}, 10000));
  CHECK(store->get("file-source", part)->at("position") == 30);

  auto recs = read_all(*m, "connect-offsets");
  REQUIRE(recs.size() == 1);
  CHECK(*recs[0].key == R"(["file-source",{"filename":"/tmp/in.txt"}])");
  CHECK(*recs[0].value == R"({"position":30})");

  auto other = open_offsets(*m);
  REQUIRE(other->get("file-source", part));
  CHECK(other->get("file-source", part)->at("position") == 30);
  CHECK(other->get_all("file-source").size() == 1);
  CHECK_FALSE(other->get("other", part));

  REQUIRE(store->commit("file-source", {{part, std::nullopt}}, 10000));
  CHECK_FALSE(store->get("file-source", part));
  REQUIRE(other->read_to_end(10000));
  CHECK_FALSE(other->get("file-source", part));
}

TEST_CASE("concurrent reads to the end share one read and each sees what was written before its call",
          "[storage][shared-read]") {
  SharedReadToEnd shared;
  std::atomic<int> written{0};     // "records" written so far
  std::atomic<int> reads{0};       // reads actually run
  std::atomic<int> visible{0};     // what the last finished read saw (monotonic)
  auto read = [&]() -> Status {
    ++reads;
    int seen = written.load();  // a read sees what was written before it started
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    int prev = visible.load();
    while (prev < seen && !visible.compare_exchange_weak(prev, seen)) {
    }
    return ok_status();
  };
  constexpr int kCallers = 40;
  std::vector<std::thread> callers;
  std::atomic<int> stale{0}, failed{0};
  for (int i = 0; i < kCallers; ++i) {
    callers.emplace_back([&] {
      int mine = ++written;
      if (!shared.run(10000, read)) ++failed;
      if (visible.load() < mine) ++stale;
    });
  }
  for (auto& t : callers) t.join();
  CHECK(failed.load() == 0);
  CHECK(stale.load() == 0);
  // 40 callers within a few ms: far fewer reads than callers (serialised
  // reads would be 40).
  CHECK(reads.load() < kCallers / 4);

  SECTION("a read's error reaches every caller it answers; the next call reads again") {
    int before = reads.load();
    auto failing = [&]() -> Status {
      ++reads;
      return Error{"connect-offsets", "broker down"};
    };
    auto st = shared.run(1000, failing);
    REQUIRE_FALSE(st);
    CHECK(st.error().to_string().find("broker down") != std::string::npos);
    REQUIRE(shared.run(1000, read));
    CHECK(reads.load() == before + 2);
  }
}

TEST_CASE("tasks starting at once read the offsets topic together", "[storage][offsets][shared-read]") {
  auto m = start_cluster();
  auto writer = open_offsets(*m);
  auto reader = open_offsets(*m);
  OrderedJson part = {{"file", "x"}};
  REQUIRE(writer->commit("c", {{part, OrderedJson{{"position", 7}}}}, 10000));
  std::vector<std::thread> tasks;
  std::atomic<int> ok{0}, saw{0};
  for (int i = 0; i < 16; ++i) {
    tasks.emplace_back([&] {
      if (reader->read_to_end(10000)) ++ok;
      if (auto o = reader->get("c", part); o && o->at("position") == 7) ++saw;
    });
  }
  for (auto& t : tasks) t.join();
  CHECK(ok.load() == 16);
  CHECK(saw.load() == 16);
}

TEST_CASE("status records round trip", "[storage][status]") {
  auto m = start_cluster();
  StatusBackingStore::Options opts;
  opts.client = m->client_props();
  auto store = StatusBackingStore::open(opts);
  REQUIRE(store);
  StatusValue run{StatusState::Running, std::nullopt, "w1:8083", 4};
  StatusValue failed{StatusState::Failed, std::string("boom"), "w1:8083", 4};
  (*store)->put_connector("c", run);
  (*store)->put_task({"c", 0}, run);
  (*store)->put_task({"c", 1}, failed);
  REQUIRE((*store)->flush(10000));

  auto other = StatusBackingStore::open(opts);
  REQUIRE(other);
  CHECK((*other)->get_connector("c") == run);
  CHECK((*other)->get_task({"c", 1}) == failed);
  CHECK((*other)->get_tasks("c").size() == 2);

  bool found = false;
  for (const auto& r : read_all(*m, "connect-status")) {
    if (*r.key == "status-task-c-1") {
      found = true;
      CHECK(*r.value == R"({"state":"FAILED","trace":"boom","worker_id":"w1:8083","generation":4})");
    }
  }
  CHECK(found);

  // A late UNASSIGNED from an older generation does not hide RUNNING.
  (*store)->put_task({"c", 0}, StatusValue{StatusState::Unassigned, std::nullopt, "w2", 3});
  REQUIRE((*store)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));
  CHECK((*other)->get_task({"c", 0})->state == StatusState::Running);

  // putSafe refuses to overwrite a newer generation from another worker.
  CHECK_FALSE((*store)->put_task_safe({"c", 1}, StatusValue{StatusState::Running, std::nullopt, "w9", 2}));

  // The same worker's UNASSIGNED of the same generation applies: it stopped
  // the task after reporting it RUNNING (the shrink case of issue 9).
  (*store)->put_task({"c", 0}, StatusValue{StatusState::Unassigned, std::nullopt, "w1:8083", 4});
  REQUIRE((*store)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));
  CHECK((*other)->get_task({"c", 0})->state == StatusState::Unassigned);

  // Connectors follow the same rule; a frozen worker's late UNASSIGNED of an
  // older generation does not hide the new owner's PAUSED either.
  (*store)->put_connector("c", StatusValue{StatusState::Paused, std::nullopt, "w2:8083", 9});
  (*store)->put_connector("c", StatusValue{StatusState::Unassigned, std::nullopt, "w1:8083", 7});
  REQUIRE((*store)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));
  CHECK((*other)->get_connector("c")->state == StatusState::Paused);
  CHECK((*other)->get_connector("c")->worker_id == "w2:8083");

  (*store)->put_connector("c", StatusValue{StatusState::Destroyed, std::nullopt, "w1", 5});
  REQUIRE((*store)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));
  CHECK_FALSE((*other)->get_connector("c"));
}

TEST_CASE("an older record of this worker read back does not replace its own newer, unacknowledged status",
          "[storage][status]") {
  // The owner writes RESTARTING then RUNNING (KIP-745 restart). A read that
  // reaches the older record while the newer write is still in flight must
  // keep RUNNING: the owner's GET /status must never go back to RESTARTING.
  auto m = start_cluster();
  StatusBackingStore::Options opts;
  opts.client = m->client_props();
  auto owner = StatusBackingStore::open(opts);
  auto writer = StatusBackingStore::open(opts);
  REQUIRE(owner);
  REQUIRE(writer);
  for (int32_t task = 0; task < 20; ++task) {
    // The older record is already in the topic (written and acknowledged).
    (*writer)->put_task({"r", task}, StatusValue{StatusState::Restarting, std::nullopt, "w1:8083", 3});
    REQUIRE((*writer)->flush(10000));
    (*owner)->put_task({"r", task}, StatusValue{StatusState::Running, std::nullopt, "w1:8083", 3});
    REQUIRE((*owner)->read_to_end(10000));
    INFO("task " << task);
    CHECK((*owner)->get_task({"r", task})->state == StatusState::Running);
  }
  REQUIRE((*owner)->flush(10000));
  REQUIRE((*owner)->read_to_end(10000));
  for (int32_t task = 0; task < 20; ++task) CHECK((*owner)->get_task({"r", task})->state == StatusState::Running);
}

TEST_CASE("a stop report of a worker cut off by a freeze never outlives the new owner's RUNNING on any reader",
          "[storage][status]") {
  // Cluster random suite, seed 2: connector pipe-sink ran on 11349 (gen 4);
  // 11349 was frozen, 28646 took it over in gen 8 (RUNNING), then the
  // thawed 11349 stopped everything on its generation reset and reported
  // UNASSIGNED with its own last generation (6). Every reader of the topic,
  // the frozen writer included, must end with RUNNING on 28646.
  auto m = start_cluster();
  StatusBackingStore::Options opts;
  opts.client = m->client_props();
  auto frozen = StatusBackingStore::open(opts);  // 127.0.0.1:11349's store
  auto owner = StatusBackingStore::open(opts);   // 127.0.0.1:28646's store
  auto other = StatusBackingStore::open(opts);   // 127.0.0.1:31655's store
  REQUIRE(frozen);
  REQUIRE(owner);
  REQUIRE(other);
  const StatusValue old_run{StatusState::Running, std::nullopt, "127.0.0.1:11349", 4};
  const StatusValue new_run{StatusState::Running, std::nullopt, "127.0.0.1:28646", 8};
  const StatusValue late_stop{StatusState::Unassigned, std::nullopt, "127.0.0.1:11349", 6};

  (*frozen)->put_connector("pipe-sink", old_run);
  REQUIRE((*frozen)->flush(10000));
  for (auto* s : {&*frozen, &*owner, &*other}) REQUIRE((*s)->read_to_end(10000));
  (*owner)->put_connector("pipe-sink", new_run);
  REQUIRE((*owner)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));

  SECTION("the frozen worker had not read the new owner's RUNNING when it stopped") {
    // Its putSafe sees only its own RUNNING of gen 4, so it writes.
    CHECK((*frozen)->put_connector_safe("pipe-sink", late_stop));
  }
  SECTION("the frozen worker read the new owner's RUNNING between its putSafe check and its write") {
    REQUIRE((*frozen)->read_to_end(10000));
    REQUIRE((*frozen)->get_connector("pipe-sink") == new_run);
    (*frozen)->put_connector("pipe-sink", late_stop);
  }
  REQUIRE((*frozen)->flush(10000));
  for (auto* s : {&*frozen, &*owner, &*other}) REQUIRE((*s)->read_to_end(10000));
  auto late_reader = StatusBackingStore::open(opts);  // reads the whole sequence at once
  REQUIRE(late_reader);
  CHECK((*frozen)->get_connector("pipe-sink") == new_run);
  CHECK((*owner)->get_connector("pipe-sink") == new_run);
  CHECK((*other)->get_connector("pipe-sink") == new_run);
  CHECK((*late_reader)->get_connector("pipe-sink") == new_run);
}

TEST_CASE("topic status records round trip and reset", "[storage][status]") {
  auto m = start_cluster();
  StatusBackingStore::Options opts;
  opts.client = m->client_props();
  auto store = StatusBackingStore::open(opts);
  REQUIRE(store);
  (*store)->put_topic(TopicStatus{"orders", "c", 1, 1700000000000});
  (*store)->put_topic(TopicStatus{"orders", "c", 0, 1700000000999});  // already known: not written again
  (*store)->put_topic(TopicStatus{"audit.log", "c", 0, 1700000000001});
  (*store)->put_topic(TopicStatus{"orders", "d", 0, 1700000000002});
  REQUIRE((*store)->flush(10000));
  CHECK((*store)->get_topics("c") == std::vector<std::string>{"audit.log", "orders"});

  auto other = StatusBackingStore::open(opts);
  REQUIRE(other);
  CHECK((*other)->get_topics("c") == std::vector<std::string>{"audit.log", "orders"});
  CHECK((*other)->get_topics("d") == std::vector<std::string>{"orders"});
  CHECK((*other)->get_topics("nope").empty());

  int orders_c = 0;
  for (const auto& r : read_all(*m, "connect-status")) {
    if (*r.key == "status-topic-orders:connector-c") {
      ++orders_c;
      CHECK(*r.value == R"({"topic":{"name":"orders","connector":"c","task":1,"discoverTimestamp":1700000000000}})");
    }
  }
  CHECK(orders_c == 1);

  (*store)->delete_topics("c");
  CHECK((*store)->get_topics("c").empty());
  REQUIRE((*store)->flush(10000));
  REQUIRE((*other)->read_to_end(10000));
  CHECK((*other)->get_topics("c").empty());
  CHECK((*other)->get_topics("d") == std::vector<std::string>{"orders"});
  int tombstones = 0;
  for (const auto& r : read_all(*m, "connect-status")) {
    if (r.key->rfind("status-topic-", 0) == 0 && r.key->find(":connector-c") != std::string::npos && !r.value)
      ++tombstones;
  }
  CHECK(tombstones == 2);
}

// The README tour's teardown (broker and workers stopped together): the
// herder's status flush timed out, so records were still queued when the
// store was destroyed. ~Producer then purged them and ran their reports
// after the store's mutex, cache and sequence map were gone (heap
// corruption, exit 139). Under KC_SANITIZE the old code fails here with a
// heap-use-after-free; in any build it lacks the "closing" report.
TEST_CASE("a status store destroyed while its broker is gone reports its queued writes and retries none",
          "[storage][status][shutdown]") {
  auto m = start_cluster();
  StatusBackingStore::Options opts;
  opts.client = m->client_props();
  auto store = StatusBackingStore::open(opts);
  REQUIRE(store);
  auto logs = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(256);
  spdlog::default_logger()->sinks().push_back(logs);
  struct Unhook {
    std::shared_ptr<spdlog::sinks::sink> sink;
    ~Unhook() {
      auto& sinks = spdlog::default_logger()->sinks();
      sinks.erase(std::remove(sinks.begin(), sinks.end(), sink), sinks.end());
    }
  } unhook{logs};

  REQUIRE(rd_kafka_mock_broker_set_down(m->handle(), 1) == RD_KAFKA_RESP_ERR_NO_ERROR);
  const StatusValue run{StatusState::Running, std::nullopt, "w1:8083", 4};
  (*store)->put_connector("c", run);
  (*store)->put_task({"c", 0}, run);
  (*store)->put_task({"c", 1}, run);
  CHECK_FALSE((*store)->flush(200));  // what the herder's stop saw: "flush: Local: Timed out"

  const auto began = Clock::now();
  store->reset();
  CHECK(Clock::now() - began < std::chrono::seconds(10));  // ~Producer: flush 2 s + purge

  int closing = 0;
  for (const auto& line : logs->last_formatted()) {
    INFO(line);
    CHECK(line.find("), retrying") == std::string::npos);
    CHECK(line.find("a newer status was written since") == std::string::npos);
    if (line.find("Purged in queue") != std::string::npos &&
        line.find("the store is closing, not retrying") != std::string::npos)
      ++closing;
  }
  CHECK(closing == 3);
}

TEST_CASE("FileStreamSource to FileStreamSink moves every line, resuming after a stop", "[storage][runtime]") {
  auto m = start_cluster();
  REQUIRE(m->create_topic("lines", 3));
  auto dir = temp_dir("file");
  auto in = dir / "in.txt";
  auto out = dir / "out.txt";
  append_lines(in, 0, 300);

  auto offsets = open_offsets(*m);
  Recorder rec;
  ConfigMap src{{"connector.class", "org.apache.kafka.connect.file.FileStreamSourceConnector"},
                {"file", in.string()},
                {"topic", "lines"},
                {"batch.size", "50"}};
  ConfigMap sink{{"connector.class", "FileStreamSink"}, {"file", out.string()}, {"topics", "lines"}};
  {
    Worker w1(worker_options(*m, "w1"), offsets.get(), &rec);
    w1.set_observer(&rec);
    REQUIRE(w1.start_connector("src", src, TargetState::Started));
    auto cfgs = w1.connector_task_configs("src", 10000);
    REQUIRE(cfgs);
    REQUIRE(cfgs->size() == 1);
    REQUIRE(w1.start_task({"src", 0}, src, cfgs->at(0), TargetState::Started));
    REQUIRE(w1.start_task({"sink", 0}, sink, sink, TargetState::Started));
    REQUIRE(eventually([&] { return read_lines(out).size() >= 300; }, 60000));
    // Stop the source mid-stream: its offset is committed on stop.
    REQUIRE(w1.stop_task({"src", 0}));
    CHECK(rec.task_state({"src", 0}) == StatusState::Unassigned);
  }
  auto committed = offsets->get("src", OrderedJson{{"filename", in.string()}});
  REQUIRE(committed);
  CHECK(committed->at("position").get<int64_t>() == static_cast<int64_t>(fs::file_size(in)));

  // More lines arrive while nobody owns the task; a new instance on another
  // worker resumes from the committed position.
  append_lines(in, 300, 600);
  {
    auto offsets2 = open_offsets(*m);
    Worker w2(worker_options(*m, "w2"), offsets2.get(), &rec);
    w2.set_observer(&rec);
    REQUIRE(w2.start_task({"src", 0}, src, src, TargetState::Started));
    REQUIRE(w2.start_task({"sink", 0}, sink, sink, TargetState::Started));
    REQUIRE(eventually([&] { return read_lines(out).size() >= 600; }, 60000));
    w2.stop_all();
  }
  auto lines = read_lines(out);
  std::set<std::string> seen(lines.begin(), lines.end());
  for (int i = 0; i < 600; ++i) CHECK(seen.count("line-" + std::to_string(i)) == 1);
  // Resuming from the committed offset means no re-reads of the first 300.
  CHECK(lines.size() == 600);
  CHECK(rec.starts == rec.stops);
  CHECK_FALSE(rec.overlap);
  // Topic tracking: each task run reports its topic once, not per record.
  using Reports = std::map<std::pair<ConnectorTaskId, std::string>, int>;
  CHECK(rec.topic_reports == Reports{{{{"sink", 0}, "lines"}, 2}, {{{"src", 0}, "lines"}, 2}});
  fs::remove_all(dir);
}

TEST_CASE("SequenceSource resumes from its committed offset", "[storage][runtime]") {
  auto m = start_cluster();
  REQUIRE(m->create_topic("seq", 2));
  auto offsets = open_offsets(*m);
  ConfigMap cfg{{"connector.class", "SequenceSource"}, {"topic", "seq"}, {"tasks.max", "2"}, {"throughput", "200"}};
  std::vector<ConfigMap> task_cfgs;
  for (int round = 0; round < 2; ++round) {
    Worker w(worker_options(*m, "w" + std::to_string(round)), offsets.get(), nullptr);
    REQUIRE(w.start_connector("seq", cfg, TargetState::Started));
    auto cfgs = w.connector_task_configs("seq", 10000);
    REQUIRE(cfgs);
    REQUIRE(cfgs->size() == 2);
    for (int t = 0; t < 2; ++t) REQUIRE(w.start_task({"seq", t}, cfg, cfgs->at(t), TargetState::Started));
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK(w.stop_tasks({{"seq", 0}, {"seq", 1}}).empty());
    CHECK(w.stop_connector("seq"));
  }
  std::map<std::string, std::set<int64_t>> seqs;
  for (const auto& r : read_all(*m, "seq")) {
    // StringConverter writes the Struct as Struct.toString does.
    const std::string& v = *r.value;
    REQUIRE(v.rfind("Struct{task=", 0) == 0);
    auto comma = v.find(",seq=");
    REQUIRE(comma != std::string::npos);
    seqs[v.substr(12, comma - 12)].insert(std::stoll(v.substr(comma + 5)));
  }
  REQUIRE(seqs.size() == 2);
  for (const auto& [task, s] : seqs) {
    INFO(task);
    CHECK(*s.begin() == 0);
    CHECK(static_cast<int64_t>(s.size()) == *s.rbegin() + 1);  // contiguous: nothing lost, no restart from 0
    auto n = task == "seq-0" ? 0 : 1;
    auto off = offsets->get("seq", OrderedJson{{"connector", "seq"}, {"task", n}});
    REQUIRE(off);
    CHECK(off->at("seq").get<int64_t>() == *s.rbegin());
    CHECK(s.size() > 150);  // both rounds produced
  }
}

TEST_CASE("unknown connector class is a clear error", "[storage][runtime]") {
  auto m = start_cluster();
  auto offsets = open_offsets(*m);
  Worker w(worker_options(*m, "w1"), offsets.get(), nullptr);
  ConfigMap cfg{{"connector.class", "com.example.DoesNotExist"}};
  auto st = w.start_connector("x", cfg, TargetState::Started);
  REQUIRE_FALSE(st);
  CHECK(st.error().message.find("com.example.DoesNotExist") != std::string::npos);
  CHECK_FALSE(w.start_task({"x", 0}, cfg, cfg, TargetState::Started));
  CHECK(w.task_ids().empty());
}

TEST_CASE("a failing task is reported FAILED with a trace", "[storage][runtime]") {
  auto m = start_cluster();
  auto offsets = open_offsets(*m);
  StatusBackingStore::Options sopts;
  sopts.client = m->client_props();
  auto status = StatusBackingStore::open(sopts);
  REQUIRE(status);
  kc::runtime::StatusStoreListener listener(**status, "w1:8083");
  listener.set_generation(3);
  Worker w(worker_options(*m, "w1:8083"), offsets.get(), &listener);
  // No `topic`: the task's start() throws.
  ConfigMap cfg{{"connector.class", "FileStreamSource"}, {"file", "/nonexistent"}};
  REQUIRE(w.start_task({"bad", 0}, cfg, cfg, TargetState::Started));
  REQUIRE(eventually([&] { return (*status)->get_task({"bad", 0}).has_value(); }, 20000));
  auto s = (*status)->get_task({"bad", 0});
  CHECK(s->state == StatusState::Failed);
  REQUIRE(s->trace);
  CHECK(s->trace->find("topic") != std::string::npos);
  CHECK(s->generation == 3);
  CHECK(s->worker_id == "w1:8083");
  // The connector instance fails the same way.
  REQUIRE(w.start_connector("bad", cfg, TargetState::Started));
  REQUIRE(eventually([&] { return (*status)->get_connector("bad").has_value(); }, 20000));
  CHECK((*status)->get_connector("bad")->state == StatusState::Failed);
  CHECK_FALSE(w.connector_task_configs("bad", 5000));
  CHECK(w.stop_task({"bad", 0}));
  REQUIRE((*status)->flush(10000));
  // Others read the FAILED record from the topic.
  auto other = StatusBackingStore::open(sopts);
  REQUIRE(other);
  CHECK((*other)->get_task({"bad", 0})->state == StatusState::Failed);
}

}  // namespace unity_test_storage
