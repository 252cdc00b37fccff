// A task's waits end on its stop (issue 25, "threads without surprises"):
// a sink task whose put() keeps failing with a retriable error backs off
// 100 ms doubling to 10 s between attempts; a stop requested in the middle
// of a long backoff ends it, so the task stops within the graceful timeout
// instead of being abandoned. The same for the naps of plugins (plugin ABI
// 1.3's wait_stopped): a source task's context wait, and PostgresSink's
// retry.backoff.ms inside put(). Runs the Worker on librdkafka's mock
// cluster.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "worker/plugins/registry.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "worker/storage/offset_store.h"
#include "tests/support/worker_test_util.h"

using kc::connect::ConnectorTaskId;
using kc::runtime::Worker;
namespace kconn = kc::connectors;

namespace {

std::atomic<int> g_puts{0};  ///< put() calls of RetryingSinkTask

/// put() always fails with a retriable error (the runtime backs off and
/// hands the same records again).
class RetryingSinkTask : public kconn::SinkTask {
 public:
  void start(const kconn::ConfigMap&) override {}
  void put(const std::vector<kconn::SinkRecord>& records) override {
    if (records.empty()) return;
    ++g_puts;
    throw kconn::RetriableError("the sink is not ready");
  }
  void flush(const kconn::TopicPartitionOffsets&) override {}
  void stop() override {}
};

const kconn::PluginRegistry& test_registry() {
  static kconn::PluginRegistry reg;
  static std::once_flag once;
  std::call_once(once, [] { kc::test::add_one_task_plugin<RetryingSinkTask>(reg, "test.RetryingSinkConnector"); });
  return reg;
}

}  // namespace

TEST_CASE("a stop during a sink task's put() retry backoff ends the backoff: the task stops within the graceful "
          "timeout",
          "[worker][stop]") {
  g_puts = 0;
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 1}, {"in", 1}});
  auto offsets = kc::test::open_offsets(*m);
  auto o = kc::test::mock_worker_options(*m, 60000);
  // Shorter than the backoff after the 6th put (3200 ms): the old sleep
  // was waited out before the stop was seen, past this timeout.
  o.task_shutdown_graceful_timeout_ms = 2000;
  Worker w(o, offsets.get(), nullptr, &test_registry());
  auto p = kc::storage::Producer::create(m->client_props());
  REQUIRE(p);
  REQUIRE((*p)->send_and_wait("in", {{"k", "v"}}, 10000));
  const ConnectorTaskId id{"snk", 0};
  const kconn::ConfigMap config{{"connector.class", "test.RetryingSinkConnector"}, {"topics", "in"}};
  REQUIRE(w.start_task(id, config, config, kc::runtime::TargetState::Started));
  // Backoffs 100, 200, 400, 800, 1600 ms: the 6th put comes after ~3.1 s
  // and is followed by a 3200 ms backoff.
  REQUIRE(kc::test::eventually([] { return g_puts.load() >= 6; }, 30000));
  CHECK(w.stop_task(id));  // stopped, not abandoned at the graceful timeout
  CHECK(g_puts.load() == 6);  // no put after the stop
}

namespace {

std::atomic<bool> g_napping{false};
std::atomic<int> g_nap_result{-1};

/// poll() naps 60 s through its context, once; records how the nap ended.
class NappingSourceTask : public kconn::SourceTask {
 public:
  void start(const kconn::ConfigMap&, kconn::SourceTaskContext& ctx) override { ctx_ = &ctx; }
  std::vector<kconn::SourceRecord> poll() override {
    if (g_nap_result.load() == -1) {
      g_napping = true;
      g_nap_result = ctx_->wait_stopped(std::chrono::seconds(60)) ? 1 : 0;
    }
    return {};
  }
  void stop() override {}

 private:
  kconn::SourceTaskContext* ctx_ = nullptr;
};

/// Counts the log lines that contain `needle` (the worker logs through
/// spdlog's default logger; plugins' kc_host_api.log too).
class CountingSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CountingSink(std::string needle) : needle_(std::move(needle)) {}
  std::atomic<int> count{0};

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (std::string_view(msg.payload.data(), msg.payload.size()).find(needle_) != std::string_view::npos) ++count;
  }
  void flush_() override {}

 private:
  std::string needle_;
};

}  // namespace

TEST_CASE("a stop ends a source task's context nap (wait_stopped): the task stops within the graceful timeout",
          "[worker][stop]") {
  g_napping = false;
  g_nap_result = -1;
  kconn::PluginRegistry reg;
  kc::test::add_one_task_plugin<NappingSourceTask>(reg, "test.NappingSourceConnector");
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 1}});
  auto offsets = kc::test::open_offsets(*m);
  auto o = kc::test::mock_worker_options(*m, 60000);
  o.task_shutdown_graceful_timeout_ms = 2000;  // far below the 60 s nap
  Worker w(o, offsets.get(), nullptr, &reg);
  const ConnectorTaskId id{"napper", 0};
  const kconn::ConfigMap config{{"connector.class", "test.NappingSourceConnector"}};
  REQUIRE(w.start_task(id, config, config, kc::runtime::TargetState::Started));
  REQUIRE(kc::test::eventually([] { return g_napping.load(); }, 30000));
  CHECK(w.stop_task(id));  // stopped and joined, not abandoned
  CHECK(g_nap_result == 1);
}

TEST_CASE("a stop during PostgresSink's retry.backoff.ms ends the backoff: the task stops within the graceful "
          "timeout, its thread joined",
          "[worker][stop][postgres]") {
  // Nothing listens on port 1: every put() fails to connect (retriable)
  // and backs off 10 minutes. No PostgreSQL server is needed.
  auto counter = std::make_shared<CountingSink>("PostgreSQL write failed (attempt 1 of");
  auto saved = spdlog::default_logger();
  auto logger =
      std::make_shared<spdlog::logger>("stop-waits", spdlog::sinks_init_list{saved->sinks().front(), counter});
  spdlog::set_default_logger(logger);
  {
    auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 1}, {"pg-in", 1}});
    auto offsets = kc::test::open_offsets(*m);
    auto o = kc::test::mock_worker_options(*m, 60000);
    o.task_shutdown_graceful_timeout_ms = 2000;
    Worker w(o, offsets.get(), nullptr, &kconn::PluginRegistry::builtin());
    auto p = kc::storage::Producer::create(m->client_props());
    REQUIRE(p);
    REQUIRE((*p)->send_and_wait("pg-in", {{"k", "v"}}, 10000));
    const ConnectorTaskId id{"pg", 0};
    const kconn::ConfigMap config{{"connector.class", "PostgresSink"},
                                  {"name", "pg"},
                                  {"topics", "pg-in"},
                                  {"connection.url", "postgresql://kc@127.0.0.1:1/postgres"},
                                  {"retry.backoff.ms", "600000"}};
    REQUIRE(w.start_task(id, config, config, kc::runtime::TargetState::Started));
    REQUIRE(kc::test::eventually([&] { return counter->count.load() >= 1; }, 30000));  // in the backoff now
    CHECK(w.stop_task(id));  // the old sleep was waited out: abandoned at 2 s
    CHECK(counter->count.load() == 1);  // no second attempt after the stop
  }
  spdlog::set_default_logger(saved);
}
