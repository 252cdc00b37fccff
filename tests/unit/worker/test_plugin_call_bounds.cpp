// Resource caps and call deadlines of plugin code (issue 23, item 3):
// tasks.max read in one place (connectors::parse_tasks_max over
// config_def.h tasks_max_value, the rule validation applies too, bounded by
// tasks.max.limit), tasks.max.enforce (KIP-1004) and the hard cap of
// generate_task_configs, CallWatchdog, and the runtime Worker failing a
// connector whose tasks.max is out of range, whose start() or whose task's
// poll() does not return within connector.call.timeout.ms. Process-level
// counterparts with C plugins: tests/integration/plugins/test_hostile_plugins.py.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "worker/connectors/connector.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/call_watchdog.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "tests/support/worker_test_util.h"

namespace kconn = kc::connectors;
using kc::connect::ConnectorTaskId;
using kc::runtime::CallWatchdog;
using kc::runtime::Worker;
using kc::runtime::WorkerOptions;
using kc::storage::StatusState;
using kc::test::eventually;

namespace {

/// A connector that returns `count` task configs whatever max_tasks says.
class CountingConnector : public kconn::Connector {
 public:
  explicit CountingConnector(size_t count) : count_(count) {}
  kconn::ConnectorType type() const override { return kconn::ConnectorType::Source; }
  void start(const kconn::ConfigMap&) override {}
  std::vector<kconn::ConfigMap> task_configs(int) override {
    return std::vector<kconn::ConfigMap>(count_, kconn::ConfigMap{{"k", "v"}});
  }
  void stop() override {}

 private:
  size_t count_;
};

/// Connector and task statuses, last one per name. Thread-safe.
struct Statuses : kc::runtime::StatusListener {
  void on_connector_status(const std::string& c, StatusState s, const std::optional<std::string>& trace) override {
    std::lock_guard lk(mu);
    connectors[c] = {s, trace.value_or("")};
  }
  void on_task_status(const ConnectorTaskId& id, StatusState s, const std::optional<std::string>& trace) override {
    std::lock_guard lk(mu);
    tasks[id.to_string()] = {s, trace.value_or("")};
  }
  std::optional<std::pair<StatusState, std::string>> connector(const std::string& c) {
    std::lock_guard lk(mu);
    auto it = connectors.find(c);
    if (it == connectors.end()) return std::nullopt;
    return it->second;
  }
  std::optional<std::pair<StatusState, std::string>> task(const std::string& t) {
    std::lock_guard lk(mu);
    auto it = tasks.find(t);
    if (it == tasks.end()) return std::nullopt;
    return it->second;
  }
  std::mutex mu;
  std::map<std::string, std::pair<StatusState, std::string>> connectors, tasks;
};

std::atomic<int> starts{0};
kc::test::Gate start_gate;
kc::test::Gate poll_gate;


class GatedSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap&, kconn::SourceTaskContext&) override {}
  std::vector<kconn::SourceRecord> poll() override {
    poll_gate.pass();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return {};
  }
  void stop() override {}
};

class GatedConnector : public kconn::Connector {
 public:
  kconn::ConnectorType type() const override { return kconn::ConnectorType::Source; }
  void start(const kconn::ConfigMap&) override {
    ++starts;
    start_gate.pass();
  }
  std::vector<kconn::ConfigMap> task_configs(int max_tasks) override {
    return std::vector<kconn::ConfigMap>(static_cast<size_t>(max_tasks));
  }
  void stop() override {}
  std::unique_ptr<kconn::SourceTask> create_source_task() override { return std::make_unique<GatedSourceTask>(); }
};

const kconn::PluginRegistry& registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] {
    kconn::PluginDesc d;
    d.class_name = "test.GatedConnector";
    d.type = kconn::ConnectorType::Source;
    d.factory = [] { return std::make_unique<GatedConnector>(); };
    reg.add(d);
  });
  return reg;
}

}  // namespace

TEST_CASE("tasks.max is an integer in 1..tasks.max.limit and tasks.max.enforce a boolean (default 1, true)",
          "[worker][connectors]") {
  auto ok = kconn::parse_tasks_max({}, 1000);
  REQUIRE(ok);
  CHECK(ok->max_tasks == 1);
  CHECK(ok->enforce);
  ok = kconn::parse_tasks_max({{"tasks.max", "1000"}, {"tasks.max.enforce", "FALSE"}}, 1000);
  REQUIRE(ok);
  CHECK(ok->max_tasks == 1000);
  CHECK_FALSE(ok->enforce);
  // Trimmed, as Connect's ConfigDef reads an INT and as create-time validation does.
  ok = kconn::parse_tasks_max({{"tasks.max", "2 "}}, 1000);
  REQUIRE(ok);
  CHECK(ok->max_tasks == 2);

  const std::vector<std::pair<kconn::ConfigMap, std::string>> bad = {
      {{{"tasks.max", "1000000000"}},
       "Invalid value 1000000000 for configuration tasks.max: Value must be no more than 1000 (the worker's "
       "tasks.max.limit)"},
      {{{"tasks.max", "0"}}, "Invalid value 0 for configuration tasks.max: Value must be at least 1"},
      {{{"tasks.max", "-3"}}, "Invalid value -3 for configuration tasks.max: Value must be at least 1"},
      {{{"tasks.max", "abc"}}, "Invalid value abc for configuration tasks.max: Not a number of type INT"},
      {{{"tasks.max", "99999999999999999999"}},
       "Invalid value 99999999999999999999 for configuration tasks.max: Not a number of type INT"},
      {{{"tasks.max", "2x"}}, "Invalid value 2x for configuration tasks.max: Not a number of type INT"},
      {{{"tasks.max.enforce", "maybe"}},
       "Invalid value maybe for configuration tasks.max.enforce: Expected value to be either true or false"},
  };
  for (const auto& [conf, message] : bad) {
    auto r = kconn::parse_tasks_max(conf, 1000);
    REQUIRE_FALSE(r);
    CHECK(r.error().message == message);
  }
}

TEST_CASE("generate_task_configs applies tasks.max.enforce with Connect's message and a hard cap",
          "[worker][connectors]") {
  SECTION("enforced: more configs than tasks.max fail") {
    CountingConnector c(3);
    auto r = kconn::generate_task_configs(c, "conn", {1, true}, 1000);
    REQUIRE_FALSE(r);
    CHECK(r.error().message ==
          "The connector conn has generated 3 tasks, which is greater than 1, the maximum number of tasks it is "
          "configured to create. This behaviour should be considered a bug and is disallowed. If necessary, it can "
          "be permitted by reconfiguring the connector with 'tasks.max.enforce' set to false; however, this option "
          "will be removed in a future release of Kafka Connect.");
  }
  SECTION("not enforced: the configs are kept") {
    CountingConnector c(3);
    auto r = kconn::generate_task_configs(c, "conn", {1, false}, 1000);
    REQUIRE(r);
    CHECK(r->size() == 3);
  }
  SECTION("at most tasks.max: fine") {
    CountingConnector c(2);
    auto r = kconn::generate_task_configs(c, "conn", {2, true}, 1000);
    REQUIRE(r);
    CHECK(r->size() == 2);
  }
  SECTION("past tasks.max.limit: failed even without enforcement") {
    CountingConnector c(11);
    auto r = kconn::generate_task_configs(c, "conn", {1, false}, 10);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("more task configs than this worker accepts (10 configs, tasks.max.limit") !=
          std::string::npos);
  }
}

TEST_CASE("TaskConfigsCap counts configs and bytes on its own thread only", "[worker][connectors]") {
  CHECK(kconn::TaskConfigsCap::current() == nullptr);
  {
    kconn::TaskConfigsCap cap(2);
    REQUIRE(kconn::TaskConfigsCap::current() == &cap);
    CHECK(cap.add_config());
    CHECK(cap.add_config());
    CHECK_FALSE(cap.hit());
    CHECK_FALSE(cap.add_config());
    CHECK(cap.hit());
    std::thread([] { CHECK(kconn::TaskConfigsCap::current() == nullptr); }).join();
  }
  kconn::TaskConfigsCap bytes(100);
  CHECK(bytes.add_bytes(kconn::kMaxTaskConfigsBytes - 1));
  CHECK(bytes.add_bytes(1));
  CHECK_FALSE(bytes.add_bytes(1));
  CHECK(bytes.hit());
}

TEST_CASE("CallWatchdog fires for a call still running at its deadline, not for one that returned",
          "[worker]") {
  CallWatchdog dog;
  std::atomic<int> fired{0};
  {
    auto g = dog.watch(30, [&] { ++fired; });
    CHECK_FALSE(g.fired());
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fired == 0);
  {
    auto g = dog.watch(30, [&] { ++fired; });
    REQUIRE(eventually([&] { return g.fired(); }, 5000));
    CHECK(fired == 1);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(fired == 1);
  CHECK(kc::runtime::run_with_deadline([] {}, 5000));
  auto release = std::make_shared<std::atomic<bool>>(false);
  CHECK_FALSE(kc::runtime::run_with_deadline(
      [release] {
        while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      },
      50));
  release->store(true);
}

TEST_CASE("call_with_deadline: in time, past the deadline, and refused while an abandoned call of its key runs "
          "or past the cap",
          "[worker]") {
  using kc::runtime::AbandonedCalls;
  using kc::runtime::call_with_deadline;
  CallWatchdog dog;
  auto calls = std::make_shared<AbandonedCalls>(2);
  struct Reports {
    std::mutex mu;
    std::vector<std::optional<std::string>> got;
    void add(std::optional<std::string> r) {
      std::lock_guard lk(mu);
      got.push_back(std::move(r));
    }
    size_t size() {
      std::lock_guard lk(mu);
      return got.size();
    }
    std::optional<std::string> at(size_t i) {
      std::lock_guard lk(mu);
      return got.at(i);
    }
  };
  auto reports = std::make_shared<Reports>();
  auto report = [reports](std::optional<std::string> r) { reports->add(std::move(r)); };
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto stall = [release] {
    while (!release->load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  };

  call_with_deadline(dog, calls, "plugin A", "validate() of plugin A", 5000, [] {}, report);
  REQUIRE(eventually([&] { return reports->size() == 1; }, 5000));
  CHECK_FALSE(reports->at(0).has_value());

  call_with_deadline(dog, calls, "plugin A", "validate() of plugin A", 50, stall, report);
  REQUIRE(eventually([&] { return reports->size() == 2; }, 5000));
  CHECK(reports->at(1) ==
        "validate() of plugin A did not return within 50 ms (connector.call.timeout.ms); its thread is abandoned");
  CHECK(calls->count() == 1);
  // The same key: refused at once, no thread.
  call_with_deadline(dog, calls, "plugin A", "validate() of plugin A", 50, [] {}, report);
  REQUIRE(reports->size() == 3);
  CHECK(reports->at(2) == "validate() of plugin A was not started: the previous call (validate() of plugin A) was "
                          "abandoned past its deadline and has not returned yet");
  // Another key is fine until the worker-wide cap (2 here).
  call_with_deadline(dog, calls, "connector c", "taskConfigs() of connector c", 50, stall, report);
  REQUIRE(eventually([&] { return reports->size() == 4; }, 5000));
  CHECK(calls->count() == 2);
  call_with_deadline(dog, calls, "plugin B", "validate() of plugin B", 50, [] {}, report);
  REQUIRE(reports->size() == 5);
  CHECK(reports->at(4) == "validate() of plugin B was not started: 2 plugin calls abandoned past their deadline "
                          "have not returned yet on this worker (the cap is 2)");
  // When they return, they are forgotten: calls start again.
  release->store(true);
  REQUIRE(eventually([&] { return calls->count() == 0; }, 5000));
  call_with_deadline(dog, calls, "plugin A", "validate() of plugin A", 5000, [] {}, report);
  REQUIRE(eventually([&] { return reports->size() == 6; }, 5000));
  CHECK_FALSE(reports->at(5).has_value());
}

TEST_CASE("a connector with tasks.max above tasks.max.limit is FAILED without running the plugin",
          "[worker][connectors]") {
  starts = 0;
  start_gate.reset();
  Statuses statuses;
  WorkerOptions o;
  o.worker_id = "w1:8083";
  o.tasks_max_limit = 1000;
  Worker w(o, nullptr, &statuses, &registry());
  REQUIRE(w.start_connector("huge", {{"connector.class", "test.GatedConnector"}, {"tasks.max", "1000000000"}},
                            kc::storage::TargetState::Started));
  REQUIRE(eventually([&] { return statuses.connector("huge").has_value(); }, 5000));
  auto st = *statuses.connector("huge");
  CHECK(st.first == StatusState::Failed);
  CHECK(st.second.find("Invalid value 1000000000 for configuration tasks.max: Value must be no more than 1000 "
                       "(the worker's tasks.max.limit)") != std::string::npos);
  CHECK(starts == 0);
  auto tc = w.connector_task_configs("huge", 1000);
  REQUIRE_FALSE(tc);
  CHECK(tc.error().message.find("tasks.max") != std::string::npos);
  CHECK(w.stop_connector("huge"));
}

TEST_CASE("a connector start() past connector.call.timeout.ms is FAILED naming the call", "[worker][connectors]") {
  start_gate.reset();
  start_gate.arm();
  Statuses statuses;
  WorkerOptions o;
  o.worker_id = "w1:8083";
  o.connector_call_timeout_ms = 100;
  Worker w(o, nullptr, &statuses, &registry());
  REQUIRE(w.start_connector("slow", {{"connector.class", "test.GatedConnector"}}, kc::storage::TargetState::Started));
  REQUIRE(start_gate.wait_blocked(5000));
  REQUIRE(eventually([&] { return statuses.connector("slow").has_value(); }, 5000));
  auto st = *statuses.connector("slow");
  CHECK(st.first == StatusState::Failed);
  CHECK(st.second == "connector slow: start() did not return within 100 ms (connector.call.timeout.ms)");
  start_gate.release();  // the call returns late: the connector stays FAILED
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(statuses.connector("slow")->first == StatusState::Failed);
  CHECK(w.stop_connector("slow"));
}

TEST_CASE("a task poll() past connector.call.timeout.ms is FAILED naming the call, and stops in time",
          "[worker][connectors]") {
  poll_gate.reset();
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}});
  auto offsets = kc::test::open_offsets(*m);
  Statuses statuses;
  WorkerOptions o = kc::test::mock_worker_options(*m, 100);
  o.connector_call_timeout_ms = 200;
  o.task_shutdown_graceful_timeout_ms = 500;
  {
    Worker w(o, offsets.get(), &statuses, &registry());
    poll_gate.arm();
    const ConnectorTaskId id{"stuck", 0};
    REQUIRE(w.start_task(id, {{"connector.class", "test.GatedConnector"}}, {}, kc::storage::TargetState::Started));
    REQUIRE(poll_gate.wait_blocked(10000));
    REQUIRE(eventually([&] { return statuses.task("stuck-0") && statuses.task("stuck-0")->first == StatusState::Failed; },
                       5000));
    CHECK(statuses.task("stuck-0")->second ==
          "task stuck-0: poll() did not return within 200 ms (connector.call.timeout.ms)");
    // Still stuck: the stop gives up after the graceful timeout (abandoned).
    CHECK_FALSE(w.stop_task(id));
    CHECK(w.stuck_threads() == 1);
    poll_gate.release();  // so that the Worker's destructor can join it
    REQUIRE(eventually([&] { return w.stuck_threads() == 0; }, 5000));
  }
}
