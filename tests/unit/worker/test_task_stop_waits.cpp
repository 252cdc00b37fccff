// A task's waits end on its stop (issue 25, "threads without surprises"):
// a sink task whose put() keeps failing with a retriable error backs off
// 100 ms doubling to 10 s between attempts; a stop requested in the middle
// of a long backoff ends it, so the task stops within the graceful timeout
// instead of being abandoned. Runs the Worker on librdkafka's mock cluster.
#include <catch2/catch.hpp>

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

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
