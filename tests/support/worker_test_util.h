#pragma once
// Helpers shared by the tests that run the runtime::Worker against
// librdkafka's mock cluster (tests/unit/worker, tests/unit/pipeline,
// tests/integration/storage): their common Worker settings, polling for a
// condition, recording the task statuses a Worker reports, and reading what a
// task wrote.

#include <catch2/catch.hpp>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "worker/connectors/connector.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"

namespace kc::test {

/// A mock cluster of `brokers` brokers with `topics` (name, partitions)
/// created in order. Fails the test when the cluster does not start or a
/// topic is not created.
inline std::unique_ptr<storage::MockCluster> start_mock_cluster(
    int brokers, const std::vector<std::pair<std::string, int>>& topics = {}) {
  auto started = storage::MockCluster::start(brokers);
  REQUIRE(started);
  auto m = std::move(started).value();
  for (const auto& [name, partitions] : topics) {
    INFO("topic " << name);
    REQUIRE(m->create_topic(name, partitions));
  }
  return m;
}

/// Worker settings for a test on the mock cluster `m`: worker id "w1:8083",
/// offsets flushed every `flush_ms` ms, String key and value converters, the
/// other options at their defaults.
inline runtime::WorkerOptions mock_worker_options(const storage::MockCluster& m, int64_t flush_ms) {
  runtime::WorkerOptions o;
  o.worker_id = "w1:8083";
  o.client = m.client_props();
  o.offset_flush_interval_ms = flush_ms;
  o.key_converter = "org.apache.kafka.connect.storage.StringConverter";
  o.value_converter = "org.apache.kafka.connect.storage.StringConverter";
  return o;
}

/// Polls `f` every `step_ms` until it returns true or `timeout_ms` passed;
/// returns its last answer (so a late success still counts).
template <typename F>
bool eventually(F f, int timeout_ms, int step_ms = 20) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
  }
  return f();
}

/// A StatusListener that keeps the last state and trace reported, per task
/// and overall (the latest report of any task). Thread-safe.
struct TaskStates : runtime::StatusListener {
  void on_connector_status(const std::string&, storage::StatusState, const std::optional<std::string>&) override {}
  void on_task_status(const connect::ConnectorTaskId& id, storage::StatusState s,
                      const std::optional<std::string>& trace) override {
    std::lock_guard lk(mu_);
    per_task_[id] = {s, trace.value_or("")};
    last_ = {s, trace.value_or("")};
  }
  /// The latest state reported by any task, if any.
  std::optional<storage::StatusState> state() {
    std::lock_guard lk(mu_);
    if (!last_) return std::nullopt;
    return last_->first;
  }
  /// The latest state of task `id`, if it reported one.
  std::optional<storage::StatusState> state(const connect::ConnectorTaskId& id) {
    std::lock_guard lk(mu_);
    auto it = per_task_.find(id);
    if (it == per_task_.end()) return std::nullopt;
    return it->second.first;
  }
  /// The trace of task `id`'s latest report ("" when none).
  std::string trace(const connect::ConnectorTaskId& id) {
    std::lock_guard lk(mu_);
    auto it = per_task_.find(id);
    return it == per_task_.end() ? "" : it->second.second;
  }
  /// The trace of the latest report of any task ("" when none).
  std::string last_trace() {
    std::lock_guard lk(mu_);
    return last_ ? last_->second : "";
  }

 private:
  std::mutex mu_;
  std::map<connect::ConnectorTaskId, std::pair<storage::StatusState, std::string>> per_task_;
  std::optional<std::pair<storage::StatusState, std::string>> last_;
};

/// The lines of a text file (none when it does not exist).
inline std::vector<std::string> lines_of(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The value of header `key` of a record: "<null>" for a null value,
/// "<missing>" when absent.
inline std::string header(const storage::TopicReader::Record& r, const std::string& key) {
  for (const auto& [k, v] : r.headers)
    if (k == key) return v.value_or("<null>");
  return "<missing>";
}

/// Every record of `topic` on the mock cluster, in offset order.
inline std::vector<storage::TopicReader::Record> read_all(const storage::MockCluster& m, const std::string& topic) {
  auto r = storage::TopicReader::open(m.client_props(), topic, 10000);
  REQUIRE(r);
  std::vector<storage::TopicReader::Record> out;
  REQUIRE((*r)->read_to_end(20000, [&](const storage::TopicReader::Record& rec) { out.push_back(rec); }));
  return out;
}

/// A gate a plugin call blocks on once armed, until the test opens it.
/// Thread-safe.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool armed = false;
  bool blocked = false;  ///< a plugin call is waiting at the gate now
  bool open = false;

  /// Back to unarmed and closed (gates are often function statics).
  void reset() {
    std::lock_guard lk(mu);
    armed = blocked = open = false;
  }
  /// From now on pass() blocks until release().
  void arm() {
    std::lock_guard lk(mu);
    armed = true;
  }
  /// Called by the plugin; returns true when it blocked (and was let through).
  bool pass() {
    std::unique_lock lk(mu);
    if (!armed) return false;
    blocked = true;
    cv.notify_all();
    cv.wait(lk, [&] { return open; });
    blocked = false;
    return true;
  }
  /// Waits until a plugin call blocks at the gate (at most `timeout_ms`).
  bool wait_blocked(int timeout_ms) {
    std::unique_lock lk(mu);
    return cv.wait_for(lk, std::chrono::milliseconds(timeout_ms), [&] { return blocked; });
  }
  /// Opens the gate for good (until reset()).
  void release() {
    std::lock_guard lk(mu);
    open = true;
    cv.notify_all();
  }
};

/// Opens the offsets store of the mock cluster (topic "connect-offsets").
inline std::unique_ptr<storage::OffsetBackingStore> open_offsets(const storage::MockCluster& m) {
  storage::OffsetBackingStore::Options o;
  o.client = m.client_props();
  auto s = storage::OffsetBackingStore::open(o);
  REQUIRE(s);
  return std::move(s).value();
}

/// A test connector of one task of type `TaskT` (a connectors::SourceTask or
/// connectors::SinkTask) that gets the connector's own config.
template <typename TaskT>
class OneTaskConnector : public connectors::Connector {
 public:
  static constexpr bool kSource = std::is_base_of_v<connectors::SourceTask, TaskT>;
  connectors::ConnectorType type() const override {
    return kSource ? connectors::ConnectorType::Source : connectors::ConnectorType::Sink;
  }
  void start(const connectors::ConfigMap& c) override { config_ = c; }
  std::vector<connectors::ConfigMap> task_configs(int) override { return {config_}; }
  void stop() override {}
  std::unique_ptr<connectors::SourceTask> create_source_task() override {
    if constexpr (kSource) return std::make_unique<TaskT>();
    else return nullptr;
  }
  std::unique_ptr<connectors::SinkTask> create_sink_task() override {
    if constexpr (kSource) return nullptr;
    else return std::make_unique<TaskT>();
  }

 private:
  connectors::ConfigMap config_;
};

/// Adds plugin `class_name`: a OneTaskConnector of `TaskT`.
template <typename TaskT>
void add_one_task_plugin(connectors::PluginRegistry& reg, const std::string& class_name) {
  connectors::PluginDesc d;
  d.class_name = class_name;
  d.type = OneTaskConnector<TaskT>::kSource ? connectors::ConnectorType::Source : connectors::ConnectorType::Sink;
  d.factory = [] { return std::make_unique<OneTaskConnector<TaskT>>(); };
  reg.add(d);
}

}  // namespace kc::test
