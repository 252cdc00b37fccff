// The kept assignment of a static member: file format round trip, every
// rejected input with its message, atomic save, load of a missing file, remove.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "worker/coordinator/static_assignment.h"

using kc::coordinator::StaticAssignmentRecord;
using namespace kc::coordinator;

namespace {

StaticAssignmentRecord sample() {
  StaticAssignmentRecord r;
  r.group_id = "connect-cluster";
  r.group_instance_id = "connect-1";
  r.generation = 42;
  r.member_id = "connect-1-5d2c";
  r.protocol = "sessioned";
  r.snapshot.version = 2;
  r.snapshot.leader = "connect-0-aa";
  r.snapshot.leader_url = "http://connect-0:8083/";
  r.snapshot.config_offset = 17;
  r.snapshot.connectors = {"files", "pg"};
  r.snapshot.tasks = {{"files", 0}, {"pg", 2}};
  r.received = {0x00, 0x02, 0xff, 0x10};
  r.url = "http://connect-1:8083/";
  return r;
}

std::string error_of(const std::string& text) {
  auto r = parse_static_assignment(text);
  return r ? "(parsed)" : r.error().to_string();
}

}  // namespace

TEST_CASE("static assignment: format and parse round trip", "[static]") {
  const auto r = sample();
  auto text = format_static_assignment(r);
  REQUIRE(text.ok());
  CHECK(text->find("\"received\":\"0002ff10\"") != std::string::npos);
  auto back = parse_static_assignment(text.value());
  REQUIRE(back.ok());
  CHECK(back.value() == r);
  // A file written before the url field (or by a worker that kept none)
  // still loads, with an empty url.
  auto old = text.value();
  old.replace(old.find(",\"url\":\"http://connect-1:8083/\""), std::string(",\"url\":\"http://connect-1:8083/\"").size(),
              "");
  auto back_old = parse_static_assignment(old);
  REQUIRE(back_old.ok());
  CHECK(back_old->url.empty());
  CHECK(error_of(text.value().replace(text->find("\"url\":\""), 7, "\"url\":1,\"x\":\"")) == "url: not a string");
}

TEST_CASE("static assignment: each bad file is refused with what is wrong", "[static]") {
  CHECK(error_of("not json") == "not a JSON object");
  CHECK(error_of("[]") == "not a JSON object");
  // A file nested 100,000 deep is refused while parsing (kc::parse_json_bounded).
  CHECK(error_of("{\"format\":" + std::string(100000, '[') + std::string(100000, ']') + "}") == "not a JSON object");
  CHECK(error_of("{\"format\":2}") == "format: unknown format (expected 1)");
  auto j = format_static_assignment(sample()).value();
  auto with = [&](const std::string& from, const std::string& to) {
    auto t = j;
    auto at = t.find(from);
    REQUIRE(at != std::string::npos);
    return t.replace(at, from.size(), to);
  };
  CHECK(error_of(with("\"generation\":42", "\"generation\":\"42\"")) == "generation: missing or not an integer");
  CHECK(error_of(with("\"member_id\":\"connect-1-5d2c\"", "\"member_id\":1")) == "member_id: missing or not a string");
  CHECK(error_of(with("\"received\":\"0002ff10\"", "\"received\":\"0002f\"")) == "received: not lower-case hex");
  CHECK(error_of(with("\"received\":\"0002ff10\"", "\"received\":\"zz\"")) == "received: not lower-case hex");
  const std::string bad_snapshot = error_of(with("\"snapshot\":\"", "\"snapshot\":\"00"));
  CHECK(bad_snapshot.rfind("snapshot: ", 0) == 0);
}

TEST_CASE("static assignment: save replaces atomically, load and remove", "[static]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kc-static-unit-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "assignment.json").string();
  std::filesystem::remove(path);
  auto none = load_static_assignment(path);
  REQUIRE(none.ok());
  CHECK_FALSE(none.value().has_value());

  auto r = sample();
  REQUIRE(save_static_assignment(path, r).ok());
  r.generation = 43;
  r.snapshot.tasks.push_back({"pg", 3});
  REQUIRE(save_static_assignment(path, r).ok());
  CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
  auto loaded = load_static_assignment(path);
  REQUIRE(loaded.ok());
  REQUIRE(loaded.value().has_value());
  CHECK(*loaded.value() == r);

  { std::ofstream(path) << "{\"format\":1"; }
  auto broken = load_static_assignment(path);
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().to_string() == "static.membership.assignment.file: " + path + ": not a JSON object");

  REQUIRE(remove_static_assignment(path).ok());
  CHECK_FALSE(std::filesystem::exists(path));
  CHECK(remove_static_assignment(path).ok());  // already gone is fine
  auto unwritable = save_static_assignment((dir / "no-such-dir" / "a.json").string(), r);
  REQUIRE_FALSE(unwritable.ok());
  CHECK(unwritable.error().message.find("cannot write") != std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_CASE("static assignment: the file's age is the time since its last save or touch", "[static]") {
  const auto dir = std::filesystem::temp_directory_path() / ("kc-static-age-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "assignment.json").string();
  CHECK_FALSE(static_assignment_age_ms(path).has_value());
  touch_static_assignment(path);  // no file: nothing created
  CHECK_FALSE(std::filesystem::exists(path));
  REQUIRE(save_static_assignment(path, sample()).ok());
  // Back-date the file by 60 s: its age is then about 60,000 ms.
  std::filesystem::last_write_time(path, std::filesystem::file_time_type::clock::now() - std::chrono::seconds(60));
  auto aged = static_assignment_age_ms(path);
  REQUIRE(aged.has_value());
  CHECK(*aged >= 59000);
  CHECK(*aged < 70000);
  touch_static_assignment(path);
  auto fresh = static_assignment_age_ms(path);
  REQUIRE(fresh.has_value());
  CHECK(*fresh < 5000);
  std::filesystem::remove_all(dir);
}
