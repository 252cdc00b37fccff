// FileStreamSource's reader on its own (no Kafka): batch sizes, offsets,
// line endings, a partial last line, resuming from a committed position.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "worker/plugins/builtin.h"

namespace kconn = kc::connectors;
namespace fs = std::filesystem;

namespace {

/// A context whose committed offset is `position` (or none).
class Ctx : public kconn::SourceTaskContext {
 public:
  explicit Ctx(std::optional<int64_t> position) : position_(position) {}
  std::optional<kconn::OrderedJson> offset(const kconn::OrderedJson&) const override {
    if (!position_) return std::nullopt;
    return kconn::OrderedJson{{"position", *position_}};
  }
  const std::string& connector_name() const override { return name_; }
  int32_t task_number() const override { return 0; }

 private:
  std::optional<int64_t> position_;
  std::string name_ = "file-src";
};

struct Reader {
  std::unique_ptr<kconn::Connector> connector = kconn::make_file_stream_source();
  std::unique_ptr<kconn::SourceTask> task;
  Ctx ctx;
  Reader(const fs::path& file, int batch, std::optional<int64_t> position = std::nullopt) : ctx(position) {
    kconn::ConfigMap c{{"file", file.string()}, {"topic", "lines"}, {"batch.size", std::to_string(batch)}};
    connector->start(c);
    task = connector->create_source_task();
    task->start(c, ctx);
  }
  ~Reader() { task->stop(); }
};

fs::path temp_file(const std::string& name, const std::string& content) {
  auto dir = fs::temp_directory_path() / ("kc-file-stream-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto p = dir / name;
  std::ofstream(p, std::ios::binary) << content;
  return p;
}

}  // namespace

TEST_CASE("FileStreamSource fills a poll up to batch.size lines across read chunks", "[worker][filestream]") {
  // 3,000 lines of 200 bytes: 600 kB, several 64 kB reads per full batch.
  std::string content;
  for (int i = 0; i < 3000; ++i) {
    std::string line = "line-" + std::to_string(i) + "-";
    line.resize(199, 'x');
    content += line + "\n";
  }
  auto file = temp_file("long-lines.txt", content);
  Reader r(file, 2000);
  auto first = r.task->poll();
  REQUIRE(first.size() == 2000);  // not just the lines of one 64 kB read
  auto second = r.task->poll();
  REQUIRE(second.size() == 1000);
  CHECK(first[0].value.value == "line-0-" + std::string(192, 'x'));
  CHECK(second.back().value.value.as<std::string>().rfind("line-2999-", 0) == 0);
  // The last record of each poll carries the offset (the byte position
  // just after its line) and the partition; the others carry none, so the
  // runtime keeps the poll's last offset. Both polls share one partition object.
  CHECK(first[0].source_offset.is_null());
  CHECK(first[1998].source_offset.is_null());
  CHECK(first.back().source_offset == kconn::OrderedJson{{"position", 400000}});
  CHECK(second.back().source_offset == kconn::OrderedJson{{"position", 600000}});
  CHECK(first.back().source_partition == kconn::OrderedJson{{"filename", file.string()}});
  CHECK(&first.back().source_partition.get() == &second.back().source_partition.get());
  CHECK(first[0].topic == "lines");
  CHECK(r.task->poll().empty());  // end of file
  fs::remove_all(file.parent_path());
}

TEST_CASE("FileStreamSource: CRLF, a partial last line, and resuming from a committed position",
          "[worker][filestream]") {
  auto file = temp_file("crlf.txt", "one\r\ntwo\nthr");
  {
    Reader r(file, 10);
    auto recs = r.task->poll();
    REQUIRE(recs.size() == 2);
    CHECK(recs[0].value.value == "one");
    CHECK(recs[1].value.value == "two");
    CHECK(recs[1].source_offset == kconn::OrderedJson{{"position", 9}});
    CHECK(r.task->poll().empty());  // "thr" has no newline yet
    std::ofstream(file, std::ios::binary | std::ios::app) << "ee\n";
    recs = r.task->poll();
    REQUIRE(recs.size() == 1);
    CHECK(recs[0].value.value == "three");
    CHECK(recs[0].source_offset == kconn::OrderedJson{{"position", 15}});
  }
  Reader resumed(file, 10, 5);  // committed: just after "one\r\n"
  auto recs = resumed.task->poll();
  REQUIRE(recs.size() == 2);
  CHECK(recs[0].value.value == "two");
  CHECK(recs[1].value.value == "three");
  fs::remove_all(file.parent_path());
}
