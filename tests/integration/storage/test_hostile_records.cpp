// Issue 23 item 4: internal topics that every worker can always read.
// Hostile records are written straight to the config, status and offsets
// topics of a mock cluster; each store reading them skips each one with one
// log line naming topic, partition and offset, keeps every other connector,
// and refuses to write anything a reader would skip.
#include <catch2/catch.hpp>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "worker/metrics/log_levels.h"
#include "worker/storage/config_store.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "worker/storage/status_store.h"
#include "tests/support/worker_test_util.h"

using namespace kc::storage;
using kc::connect::ConnectorTaskId;

namespace {

std::unique_ptr<MockCluster> start_cluster() {
  return kc::test::start_mock_cluster(1, {{"connect-configs", 1}, {"connect-offsets", 5}, {"connect-status", 5}});
}

/// Captures the log lines written while it lives.
class LogCapture {
 public:
  LogCapture() : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(1024)) {
    spdlog::default_logger()->sinks().push_back(sink_);
  }
  ~LogCapture() {
    auto& sinks = spdlog::default_logger()->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  std::vector<std::string> lines() const { return sink_->last_formatted(); }
  /// Lines that contain every one of `parts`.
  int count(const std::vector<std::string>& parts) const {
    auto all = lines();
    return static_cast<int>(std::count_if(all.begin(), all.end(), [&](const std::string& line) {
      return std::all_of(parts.begin(), parts.end(), [&](const std::string& p) { return line.find(p) != std::string::npos; });
    }));
  }
  /// True when no line contains `text`.
  bool never(const std::string& text) const { return count({text}) == 0; }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
};

/// Sends raw records (key, value; nullopt = tombstone) to `topic`.
void produce(const MockCluster& m, const std::string& topic,
             const std::vector<std::pair<std::string, std::optional<std::string>>>& records) {
  auto producer = Producer::create(m.client_props());
  REQUIRE(producer);
  REQUIRE((*producer)->send_and_wait(topic, records, 10000));
}

std::unique_ptr<ConfigBackingStore> open_configs(const MockCluster& m) {
  ConfigBackingStore::Options o;
  o.client = m.client_props();
  auto s = ConfigBackingStore::open(o);
  REQUIRE(s);
  return std::move(s).value();
}

std::unique_ptr<StatusBackingStore> open_statuses(const MockCluster& m) {
  StatusBackingStore::Options o;
  o.client = m.client_props();
  auto s = StatusBackingStore::open(o);
  REQUIRE(s);
  return std::move(s).value();
}

std::string nested(std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); }

const ConfigMap kConfig{{"connector.class", "FileStreamSource"}, {"topic", "t"}, {"file", "/tmp/x"}};
const std::string kSecret = "hunter2-secret";
// Odd names written by older versions: all valid UTF-8, all still readable.
const std::string kOdd = "odd name/%41 \xC3\xBCnic\xC3\xB8" "de";
const std::string kOddControl = "ctl\x01name";
const std::string kOddLong = std::string(3000, 'L');

}  // namespace

TEST_CASE("hostile config records are skipped with one log line each and other connectors stay readable",
          "[storage][config][hostile]") {
  auto m = start_cluster();
  LogCapture log;
  const auto props = encode_properties(kConfig);
  // Offsets 0..: good connectors first, then one hostile record each.
  std::vector<std::pair<std::string, std::optional<std::string>>> good = {
      {"connector-good", props},  {"task-good-0", encode_properties({{"a", "0"}})}, {"commit-good", encode_commit(1)},
      {"connector-" + kOdd, props}, {"connector-" + kOddControl, props}, {"connector-" + kOddLong, props},
      {"target-state-" + kOdd, encode_target_state(TargetState::Paused)}};
  const std::string with_secret = R"({"properties":{"connection.password":")" + kSecret + "\"";
  std::vector<std::tuple<std::string, std::optional<std::string>, std::string>> hostile = {
      {"connector-poison\xFE", props, "connector name is not valid UTF-8"},
      {"target-state-poison\xFE", encode_target_state(TargetState::Stopped), "not valid UTF-8"},
      {"task-poison\xFE-0", props, "not valid UTF-8"},
      {"commit-poison\xFE", encode_commit(1), "not valid UTF-8"},
      {"connector-nonjson", "not json " + kSecret, "malformed JSON"},
      {"connector-truncated", with_secret, "malformed JSON"},
      {"connector-badutf", R"({"properties":{"connection.password":")" + kSecret + "\xFF\"}}", "not valid UTF-8"},
      {"connector-deep", R"({"properties":)" + nested(200000) + "}", "deeper than 64 levels"},
      {"connector-wrongshape", R"({"properties":[")" + kSecret + "\"]}", "expected {\"properties\""},
      {"commit-good", R"({"tasks":-1})", "out of range"},
      {"commit-good", R"({"tasks":1e30})", "expected {\"tasks\":<integer>}"},
      {"commit-good", R"({"tasks":99999999999999999999999})", "expected {\"tasks\":<integer>}"},
      {"target-state-good", R"({"state":5})", "no valid target state"},
      {"tasks-fencing-good", R"({"task-count":2147483648})", "out of range"},
      {"restart-connector-good", nested(100), "deeper than 64"},
      {"session-key", R"({"key":5})", "'key' must be a string"},
      {"session-key", std::nullopt, "unexpectedly null"},
      {"connector-", props, "cannot be addressed over REST"},
      {"something-else", props, "unknown key"},
  };
  auto records = good;
  for (const auto& [k, v, _] : hostile) records.emplace_back(k, v);
  produce(*m, "connect-configs", records);

  auto store = open_configs(*m);
  auto snap = store->snapshot();
  CHECK(snap.offset == static_cast<int64_t>(records.size()));
  CHECK(snap.connectors() == std::vector<std::string>{kOddLong, kOddControl, "good", kOdd});
  CHECK(snap.tasks("good") == std::vector<ConnectorTaskId>{{"good", 0}});
  CHECK(snap.inconsistent.empty());
  CHECK(snap.target_state("good") == TargetState::Started);
  CHECK(snap.target_state(kOdd) == TargetState::Paused);
  CHECK_FALSE(snap.session_key);
  CHECK(snap.task_count_records.empty());

  // One line per hostile record: topic, partition, offset, reason.
  for (size_t i = 0; i < hostile.size(); ++i) {
    const auto offset = good.size() + i;
    const auto& [key, value, why] = hostile[i];
    INFO("offset " << offset << " key " << printable_key(key));
    CHECK(log.count({"connect-configs partition 0 offset " + std::to_string(offset) + ": skipping record", why}) == 1);
  }
  for (size_t i = 0; i < good.size(); ++i)
    CHECK(log.never("connect-configs partition 0 offset " + std::to_string(i) + ":"));
  CHECK(log.count({"'connector-poison\\xFE'"}) == 1);  // the key, printable
  CHECK(log.never(kSecret));                            // values are never logged

  // The odd-named connectors can be read and deleted through the store.
  CHECK(snap.connector_configs.at(kOdd) == kConfig);
  REQUIRE(store->put_task_configs(kOdd, {{{"a", "0"}}}, 10000));
  CHECK(store->snapshot().tasks(kOdd).size() == 1);
  REQUIRE(store->put_connector_config(kOddControl, {{"connector.class", "X"}}, std::nullopt, 10000));
  for (const auto& name : {kOdd, kOddControl, kOddLong}) REQUIRE(store->remove_connector(name, 10000));
  CHECK(store->snapshot().connectors() == std::vector<std::string>{"good"});

  // Another worker reading from the start builds the same snapshot.
  auto other = open_configs(*m);
  auto osnap = other->snapshot();
  CHECK(osnap.connectors() == std::vector<std::string>{"good"});
  CHECK(osnap.task_configs == store->snapshot().task_configs);
  CHECK(osnap.offset == store->snapshot().offset);
}

TEST_CASE("a commit of 2^31-1 tasks marks its connector inconsistent until the next task-config write repairs it",
          "[storage][config][hostile][inconsistent]") {
  auto m = start_cluster();
  auto store = open_configs(*m);
  REQUIRE(store->put_connector_config("c", kConfig, std::nullopt, 10000));
  REQUIRE(store->put_connector_config("other", kConfig, std::nullopt, 10000));
  REQUIRE(store->put_task_configs("c", {{{"a", "0"}}, {{"a", "1"}}}, 10000));
  REQUIRE(store->put_task_configs("other", {{{"b", "0"}}}, 10000));

  // As Connect: a commit whose count the task configs before it do not
  // fill marks the connector inconsistent: no tasks until a good commit.
  // Reading it walks what was read, never 2^31 entries.
  produce(*m, "connect-configs", {{"commit-c", encode_commit(2147483647)}});
  auto snap = store->read_to_end(10000);
  REQUIRE(snap);
  CHECK(snap->inconsistent == std::set<std::string>{"c"});
  CHECK(snap->tasks("c").empty());
  CHECK(snap->tasks("other").size() == 1);
  CHECK(snap->task_counts.at("c") == 2);  // the last good commit's count
  CHECK(open_configs(*m)->snapshot().inconsistent == std::set<std::string>{"c"});

  // A count that does not match the task configs written before it.
  produce(*m, "connect-configs", {{"task-other-0", encode_properties({{"b", "1"}})}, {"commit-other", encode_commit(3)}});
  snap = store->read_to_end(10000);
  REQUIRE(snap);
  CHECK(snap->inconsistent == std::set<std::string>{"c", "other"});

  // The leader's next generation of task configs (after a restart or a new
  // config) clears it, for this worker and for one that reads from scratch.
  REQUIRE(store->put_task_configs("c", {{{"a", "new"}}}, 10000));
  REQUIRE(store->put_task_configs("other", {{{"b", "new"}}, {{"b", "new1"}}}, 10000));
  for (const auto& s : {store->snapshot(), open_configs(*m)->snapshot()}) {
    CHECK(s.inconsistent.empty());
    CHECK(s.tasks("c") == std::vector<ConnectorTaskId>{{"c", 0}});
    CHECK(s.task_config({"c", 0})->at("a") == "new");
    CHECK(s.tasks("other").size() == 2);
    CHECK(s.task_counts.at("c") == 1);
  }
}

TEST_CASE("config writes no worker could read back are refused with a clear error and nothing is sent",
          "[storage][config][hostile]") {
  auto m = start_cluster();
  auto store = open_configs(*m);
  produce(*m, "connect-configs", {{"connector-" + kOddControl, encode_properties(kConfig)}});
  REQUIRE(store->read_to_end(10000));
  const auto before = kc::test::read_all(*m, "connect-configs").size();

  auto refused = [&](const kc::Status& st, const std::string& words) {
    INFO(words);
    REQUIRE_FALSE(st);
    CHECK(is_unreadable_record_error(st.error()));
    CHECK(st.error().message.find(words) != std::string::npos);
    CHECK(st.error().message.find("timed out") == std::string::npos);
  };
  refused(store->put_connector_config("poison\xFE", kConfig, TargetState::Started, 10000), "valid UTF-8");
  refused(store->put_connector_config("new\x01", kConfig, std::nullopt, 10000), "control characters");
  refused(store->put_connector_config(std::string(2000, 'n'), kConfig, std::nullopt, 10000), "the limit is 1024");
  refused(store->put_connector_config("c", {{"connection.password", kSecret + "\xFF"}}, std::nullopt, 10000),
          "the value of config key 'connection.password' is not valid UTF-8");
  refused(store->put_task_configs("c", {{{"a", "\xFF"}}}, 10000), "task configs not written");
  refused(store->remove_connector("", 10000), "cannot be addressed");
  refused(store->put_target_state("..", TargetState::Paused, 10000), "cannot be addressed");
  refused(store->put_restart_request("x\xFE", {}, 10000), "valid UTF-8");
  refused(store->put_task_count_record("x\xFE", 1, 10000), "valid UTF-8");
  CHECK(kc::test::read_all(*m, "connect-configs").size() == before);

  // An existing connector with a name the new-name rule refuses can still
  // be updated and deleted.
  REQUIRE(store->put_connector_config(kOddControl, {{"connector.class", "Y"}}, std::nullopt, 10000));
  REQUIRE(store->remove_connector(kOddControl, 10000));
  CHECK(store->snapshot().connectors().empty());
}

TEST_CASE("hostile status records are skipped, plugin traces are made safe and not refused",
          "[storage][status][hostile]") {
  auto m = start_cluster();
  LogCapture log;
  const auto running = encode_status({StatusState::Running, std::nullopt, "w:1", 3});
  const std::vector<std::pair<std::string, std::optional<std::string>>> hostile = {
      {"status-connector-poison\xFE", running},
      {"status-task-poison\xFE-0", running},
      {"status-connector-", running},
      {"status-connector-bad", "{\"state\":\"" + kSecret + "\"}"},
      {"status-connector-deep", nested(100000)},
      {"status-task-good-1", R"({"state":"RUNNING","worker_id":"w","generation":1099511627776})"},
      {"status-task-good-2", "{\"state\":\"FAILED\",\"trace\":\"" + kSecret + "\xFF\"}"},
      {"status-topic-t\xFF:connector-good", encode_topic_status({"t", "good", 0, 1})},
      {"status-topic-t:connector-good", R"({"topic":{"name":"t","connector":"good","task":4294967296}})"},
      {"status-nonsense", running},
  };
  auto records = hostile;
  records.emplace(records.begin(), "status-task-good-0", running);
  records.emplace(records.begin(), "status-connector-good", running);
  records.emplace(records.begin(), "status-connector-" + kOdd, running);
  produce(*m, "connect-status", records);

  auto store = open_statuses(*m);
  CHECK(store->all_connectors().size() == 2);
  CHECK(store->get_connector("good"));
  CHECK(store->get_connector(kOdd));
  CHECK(store->all_tasks().size() == 1);
  CHECK(store->get_topics("good").empty());
  for (const auto& [key, _] : hostile) {
    INFO(printable_key(key));
    CHECK(log.count({"connect-status partition ", ": skipping record with key '" + printable_key(key) + "'"}) == 1);
  }
  CHECK(log.count({"connect-status partition", "skipping record"}) == static_cast<int>(hostile.size()));
  CHECK(log.never(kSecret));

  // A plugin's failure message of invalid UTF-8, 1 MiB long: written as
  // valid UTF-8 cut to the bound, and read back by another worker.
  std::string trace = "org.example.PluginException: bad \xFE\xFF bytes\n" + std::string(1 << 20, 'x');
  store->put_task({"good", 0}, {StatusState::Failed, trace, "w:1", 4});
  store->put_connector(kOdd, {StatusState::Failed, std::string("\xC3"), "w:1", 4});
  REQUIRE(store->flush(10000));
  auto other = open_statuses(*m);
  auto task = other->get_task({"good", 0});
  REQUIRE(task);
  CHECK(task->state == StatusState::Failed);
  REQUIRE(task->trace);
  CHECK(task->trace->rfind("org.example.PluginException: bad \xEF\xBF\xBD\xEF\xBF\xBD bytes\n", 0) == 0);
  CHECK(task->trace->size() <= kMaxStatusTraceBytes);
  CHECK(*task == *store->get_task({"good", 0}));  // the cache holds what was written
  CHECK(*other->get_connector(kOdd)->trace == "\xEF\xBF\xBD");
}

TEST_CASE("hostile offset records are skipped and unreadable offsets are refused", "[storage][offsets][hostile]") {
  auto m = start_cluster();
  LogCapture log;
  auto store = kc::test::open_offsets(*m);
  const OrderedJson part = {{"file", "/tmp/in"}};
  REQUIRE(store->commit("c", {{part, OrderedJson{{"position", 1}}}}, 10000));

  const std::vector<std::pair<std::string, std::optional<std::string>>> hostile = {
      {"not json", R"({"position":2})"},
      {"[\"c\"," + nested(100000) + "]", R"({"position":2})"},
      {R"(["c",[1]])", R"({"position":2})"},
      {R"(["c"])", R"({"position":2})"},
      {"[\"c\xFF\",{}]", R"({"position":2})"},
      {R"(["c",{"file":"a"}])", "{\"password\":\"" + kSecret},
      {R"(["c",{"file":"b"}])", nested(100000)},
      {R"(["c",{"file":"d"}])", "{\"gtid\":\"" + kSecret + "\xFF\"}"},
  };
  produce(*m, "connect-offsets", hostile);
  REQUIRE(store->read_to_end(10000));
  auto other = kc::test::open_offsets(*m);
  for (auto* s : {store.get(), other.get()}) {
    auto all = s->get_all("c");
    REQUIRE(all.size() == 1);
    CHECK(all[0].first == part);
    CHECK(all[0].second == OrderedJson{{"position", 1}});
  }
  // Each worker logs each record once.
  for (const auto& [key, _] : hostile) {
    INFO(printable_key(key));
    CHECK(log.count({"connect-offsets partition ", ": skipping record with key '" + printable_key(key) + "'"}) == 2);
  }
  CHECK(log.never(kSecret));

  // Writes: nothing a reader would skip is sent.
  const auto before = kc::test::read_all(*m, "connect-offsets").size();
  OrderedJson deep = 1;
  for (int i = 0; i < 200; ++i) deep = OrderedJson::array({deep});
  for (const auto& [p, o] : std::vector<std::pair<OrderedJson, OrderedJson>>{
           {part, deep},
           {OrderedJson{{"d", deep}}, OrderedJson{{"position", 1}}},
           {OrderedJson{{"file", "\xFF"}}, OrderedJson{{"position", 1}}},
           {part, OrderedJson{{"g", std::string(kMaxOffsetValueBytes + 1, 'g')}}}}) {
    // One bad offset refuses the whole batch.
    auto st = store->commit("c", {{OrderedJson{{"file", "ok"}}, OrderedJson{{"position", 9}}}, {p, o}}, 10000);
    REQUIRE_FALSE(st);
    CHECK(is_unreadable_record_error(st.error()));
  }
  CHECK(kc::test::read_all(*m, "connect-offsets").size() == before);
  CHECK_FALSE(store->get("c", OrderedJson{{"file", "ok"}}));
}

TEST_CASE("KIP-976 logger-cluster records: a good one sets the level, hostile ones are skipped, none is fatal",
          "[storage][config][hostile][loggers]") {
  auto m = start_cluster();
  auto& levels = kc::metrics::LoggerLevels::instance();
  levels.reset(spdlog::level::info);
  // Written before this worker started: ignored, as Connect (a restart
  // resets a cluster-wide level).
  produce(*m, "connect-configs", {{"logger-cluster-kip976.before", R"({"level":"DEBUG"})"}});
  auto store = open_configs(*m);
  CHECK_FALSE(levels.get("kip976.before"));
  produce(*m, "connect-configs",
          {{"logger-cluster-kip976.bad.level", R"({"level":"LOUD"})"},
           {"logger-cluster-kip976.not.json", std::string("{level")},
           {"logger-cluster-kip976.number", R"({"level":7})"},
           {"logger-cluster-kip976.null", std::nullopt},
           {"logger-cluster-", R"({"level":"DEBUG"})"},
           {"logger-cluster-kip976.good", R"({"level":"debug"})"}});
  LogCapture logs;
  REQUIRE(store->read_to_end(10000));
  // Each hostile record: one skip line naming topic and offset; no level.
  CHECK(logs.count({"connect-configs partition 0 offset 1", "kip976.bad.level", "unknown log level"}) == 1);
  CHECK(logs.count({"offset 2", "kip976.not.json"}) == 1);
  CHECK(logs.count({"offset 3", "kip976.number", "must be a string"}) == 1);
  CHECK(logs.count({"offset 4", "unexpectedly null"}) == 1);
  CHECK(logs.count({"offset 5", "empty logger namespace"}) == 1);
  for (const char* n : {"kip976.bad.level", "kip976.not.json", "kip976.number", "kip976.null", "kip976.before"})
    CHECK_FALSE(levels.get(n));
  // The good one, written in lower case, is applied as DEBUG with a time.
  auto good = levels.get("kip976.good");
  REQUIRE(good);
  CHECK(good->level == spdlog::level::debug);
  CHECK(good->last_modified_ms.has_value());
  // A write through the store is read back and applied here before return.
  REQUIRE(store->put_logger_level("librdkafka", "TRACE", 10000));
  CHECK(levels.librdkafka_level(kc::metrics::KafkaClientKind::Consumer) == spdlog::level::trace);
  CHECK(levels.get("librdkafka")->last_modified_ms.has_value());
  levels.reset(spdlog::level::info);
}
