// The built-in sources' idle naps go through their task context's
// wait_stopped (plugin ABI 1.3), so a stop ends them: FileStreamSource
// while its file cannot be opened (200 ms) and at its end (50 ms),
// SequenceSource when done (100 ms) and when ahead of `throughput` (until
// the next record is due, at most 100 ms). Driven through the registry's
// classes with a context that records each nap.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "common/stop_wait.h"
#include "worker/plugins/builtin.h"

namespace kconn = kc::connectors;
namespace fs = std::filesystem;

namespace {

/// A source task context with no offsets whose naps end on `stop` (as the
/// runtime's SourceContext on the task's stop token) and are recorded as
/// (timeout in ms, ended by a stop).
class NapCtx : public kconn::SourceTaskContext {
 public:
  std::optional<kconn::OrderedJson> offset(const kconn::OrderedJson&) const override { return std::nullopt; }
  const std::string& connector_name() const override { return name_; }
  int32_t task_number() const override { return 0; }
  bool wait_stopped(std::chrono::milliseconds timeout) const override {
    const bool stopped = kc::wait_for_stop(stop.get_token(), timeout);
    naps.emplace_back(timeout.count(), stopped);
    return stopped;
  }

  std::stop_source stop;
  mutable std::vector<std::pair<int64_t, bool>> naps;

 private:
  std::string name_ = "naps";
};

using Naps = std::vector<std::pair<int64_t, bool>>;

/// A started task of `connector` with `config`.
std::unique_ptr<kconn::SourceTask> start_task(kconn::Connector& connector, const kconn::ConfigMap& config,
                                              NapCtx& ctx) {
  connector.start(config);
  auto task = connector.create_source_task();
  REQUIRE(task);
  task->start(config, ctx);
  return task;
}

}  // namespace

TEST_CASE("FileStreamSource naps through its task context: a stop ends the wait for a missing file",
          "[worker][filestream]") {
  const auto dir = fs::temp_directory_path() / ("kc-naps-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const auto file = dir / "later.txt";
  auto connector = kconn::make_file_stream_source();
  NapCtx ctx;
  auto task = start_task(*connector, {{"file", file.string()}, {"topic", "lines"}}, ctx);

  CHECK(task->poll().empty());  // no file yet: one 200 ms nap, run out
  CHECK(ctx.naps == Naps{{200, false}});
  ctx.stop.request_stop();
  CHECK(task->poll().empty());  // the stop ends the nap
  CHECK(ctx.naps == Naps{{200, false}, {200, true}});

  // At the end of the file: a 50 ms nap, ended by the stop too.
  std::ofstream(file, std::ios::binary) << "one\n";
  CHECK(task->poll().size() == 1);
  CHECK(task->poll().empty());
  CHECK(ctx.naps.back() == std::pair<int64_t, bool>{50, true});
  task->stop();
  fs::remove_all(dir);
}

TEST_CASE("SequenceSource naps through its task context: when done and when ahead of throughput",
          "[worker][sequence]") {
  SECTION("max.records reached: 100 ms naps, which a stop ends") {
    auto connector = kconn::make_sequence_source();
    NapCtx ctx;
    auto task = start_task(*connector, {{"topic", "seq"}, {"max.records", "0"}}, ctx);
    CHECK(task->poll().empty());
    ctx.stop.request_stop();
    CHECK(task->poll().empty());
    CHECK(ctx.naps == Naps{{100, false}, {100, true}});
  }
  SECTION("ahead of throughput: a nap until the next record is due, at most 100 ms") {
    auto connector = kconn::make_sequence_source();
    NapCtx ctx;
    // 0.5 records/s: one record at once, the next due 2 s later.
    auto task = start_task(*connector, {{"topic", "seq"}, {"throughput", "0.5"}}, ctx);
    CHECK(task->poll().size() == 1);
    ctx.stop.request_stop();
    CHECK(task->poll().empty());
    CHECK(ctx.naps == Naps{{100, true}});
  }
}
