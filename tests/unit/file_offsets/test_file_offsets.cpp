// FileOffsetBackingStore (worker/storage/file_offset_store.h): the offset
// file of standalone mode.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "worker/storage/file_offset_store.h"
#include "worker/storage/records.h"

using namespace kc::storage;
namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  TempDir() {
    char tmpl[] = "/tmp/kc-file-offsets-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path, fs::perms::owner_all, ec);
    fs::remove_all(path, ec);
  }
};

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

SourcePartition part(const std::string& file) { return SourcePartition{{"filename", file}}; }
SourceOffset pos(int64_t p) { return SourceOffset{{"position", p}}; }

}  // namespace

TEST_CASE("offset file: format and parse round trip, entries as offsets-topic bytes") {
  auto rec = encode_offset_record("c1", part("/in"), pos(42));
  REQUIRE(rec);
  const std::vector<OffsetFileEntry> entries{{rec->key, *rec->value}};
  const auto text = format_offset_file(entries);
  CHECK(text.rfind("kconnectd-offsets 1 ", 0) == 0);
  auto back = parse_offset_file(text);
  REQUIRE(back);
  CHECK(*back == entries);
  CHECK(parse_offset_file("")->empty());
  CHECK(crc32_ieee("123456789") == 0xCBF43926u);  // the CRC-32 check value
}

TEST_CASE("offset file: truncated, corrupt and foreign texts are refused with the reason") {
  auto rec = encode_offset_record("c1", part("/in"), pos(42));
  const auto text = format_offset_file({{rec->key, *rec->value}});
  auto truncated = parse_offset_file(text.substr(0, text.size() - 5));
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find("is truncated") != std::string::npos);
  std::string flipped = text;
  flipped[flipped.size() - 4] ^= 0x01;
  auto corrupt = parse_offset_file(flipped);
  REQUIRE_FALSE(corrupt);
  CHECK(corrupt.error().message.find("is corrupt: checksum mismatch") != std::string::npos);
  CHECK(parse_offset_file(text + "x").error().message.find("is corrupt") != std::string::npos);
  CHECK(parse_offset_file("hello\n{}").error().message.find("not a kconnectd offset file") != std::string::npos);
  CHECK(parse_offset_file("kconnectd-offsets 2 2 00000000\n{}").error().message.find("unsupported version") !=
        std::string::npos);
  // A checksummed document whose entry the offsets topic would refuse.
  const std::string doc = R"({"offsets":[{"key":"not json","value":"{}"}]})";
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", crc32_ieee(doc));
  auto bad = parse_offset_file("kconnectd-offsets 1 " + std::to_string(doc.size()) + " " + crc + "\n" + doc);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("entry 0: key") != std::string::npos);
}

TEST_CASE("file store: commits survive a reopen, the previous copy is <file>.bak, tombstones delete") {
  TempDir dir;
  const auto file = (dir.path / "connect.offsets").string();
  {
    auto store = FileOffsetBackingStore::open(file);
    REQUIRE(store);
    CHECK_FALSE((*store)->get("c1", part("/in")));
    REQUIRE((*store)->commit("c1", {{part("/in"), pos(10)}}, 1000));
    REQUIRE((*store)->commit("c1", {{part("/in"), pos(20)}, {part("/other"), pos(5)}}, 1000));
    CHECK((*store)->writes() == 2);
    CHECK((*store)->get("c1", part("/in")) == pos(20));
    CHECK((*store)->description() == "the offset file " + file);
  }
  CHECK(fs::exists(file + ".bak"));
  auto bak = parse_offset_file(slurp(file + ".bak"));
  REQUIRE(bak);
  CHECK(bak->size() == 1);  // the copy before the second commit
  auto store = FileOffsetBackingStore::open(file);
  REQUIRE(store);
  CHECK((*store)->get("c1", part("/in")) == pos(20));
  CHECK((*store)->get_all("c1").size() == 2);
  REQUIRE((*store)->commit("c1", {{part("/other"), std::nullopt}}, 1000));
  CHECK((*store)->get_all("c1").size() == 1);
  CHECK_FALSE(fs::exists(file + ".tmp"));
}

TEST_CASE("file store: a damaged file is an error naming it, left on disk, pointing at <file>.bak") {
  TempDir dir;
  const auto file = (dir.path / "connect.offsets").string();
  {
    auto store = FileOffsetBackingStore::open(file);
    REQUIRE((*store)->commit("c1", {{part("/in"), pos(10)}}, 1000));
    REQUIRE((*store)->commit("c1", {{part("/in"), pos(20)}}, 1000));
  }
  const auto good = slurp(file);
  spit(file, good.substr(0, good.size() / 2));
  auto r = FileOffsetBackingStore::open(file);
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "offset.storage.file.filename");
  CHECK(r.error().message.find("the offset file " + file + " is truncated") != std::string::npos);
  CHECK(r.error().message.find(file + ".bak") != std::string::npos);
  CHECK(slurp(file) == good.substr(0, good.size() / 2));  // left as it was
  auto bak = FileOffsetBackingStore::open(file + ".bak");
  REQUIRE(bak);
  CHECK((*bak)->get("c1", part("/in")) == pos(10));
}

TEST_CASE("file store: a missing directory or one that takes no new file fails at open, naming it") {
  TempDir dir;
  auto missing = FileOffsetBackingStore::open((dir.path / "nope" / "x.offsets").string());
  REQUIRE_FALSE(missing);
  CHECK(missing.error().message.find("does not exist") != std::string::npos);
  if (::geteuid() != 0) {  // root ignores the mode bits
    const auto ro = dir.path / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    auto r = FileOffsetBackingStore::open((ro / "x.offsets").string());
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("cannot write the offset file directory " + ro.string()) != std::string::npos);
  } else {
    auto r = FileOffsetBackingStore::open("/sys/x.offsets");
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("cannot write the offset file directory /sys") != std::string::npos);
  }
}

TEST_CASE("file store: an offset the topic would refuse is refused and nothing is written") {
  TempDir dir;
  const auto file = (dir.path / "connect.offsets").string();
  auto store = FileOffsetBackingStore::open(file);
  REQUIRE(store);
  auto st = (*store)->commit("c1", {{SourcePartition("not an object"), pos(1)}}, 1000);
  CHECK_FALSE(st);
  CHECK_FALSE(fs::exists(file));
}
