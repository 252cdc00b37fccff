// KIP-821 field paths: V1 keeps the text whole, V2 splits on dots with
// backtick-quoted steps, as Connect's SingleFieldPath.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "worker/transforms/field_path.h"

using kc::transforms::detail::FieldSyntaxVersion;
using kc::transforms::detail::parse_field_path;
using Steps = std::vector<std::string>;

TEST_CASE("field path V2 splits into steps as Connect does", "[transforms][field_path]") {
  struct Row {
    std::string path;
    Steps steps;
  };
  const std::vector<Row> rows = {
      {"a", {"a"}},
      {"a.b.c", {"a", "b", "c"}},
      {"a.", {"a", ""}},
      {"a..b", {"a", "", "b"}},
      {"`a.b`.c", {"a.b", "c"}},
      {"`a.b`", {"a.b"}},
      {"`a.b`.", {"a.b", ""}},
      {"``", {""}},
      {"`a`b`.c", {"a`b", "c"}},      // a backtick not before a dot is part of the name
      {"`a\\`.b`.c", {"a`.b", "c"}},  // \` before a dot is a literal backtick
      {"`a\\b`", {"a\\b"}},           // other backslashes stay
      {"a`b.c", {"a`b", "c"}},        // backticks only quote at the start of a step
      {"", {""}},
  };
  for (const auto& r : rows) {
    INFO(r.path);
    auto got = parse_field_path(r.path, FieldSyntaxVersion::kV2);
    REQUIRE(got);
    CHECK(*got == r.steps);
  }
}

TEST_CASE("field path V1 is one step, backticks and dots included", "[transforms][field_path]") {
  auto got = parse_field_path("`a.b", FieldSyntaxVersion::kV1);
  REQUIRE(got);
  CHECK(*got == Steps{"`a.b"});
}

TEST_CASE("field path V2 refuses an incomplete backtick pair with Connect's text", "[transforms][field_path]") {
  auto msg = [](const std::string& path, int pos) {
    return "Incomplete backtick pair in path: [" + path + "], consider adding a backslash before backtick at position " +
           std::to_string(pos) + " to escape it";
  };
  for (const auto& [path, pos] : std::vector<std::pair<std::string, int>>{
           {"`a", 0}, {"a.`b", 2}, {"`a\\`", 0}, {"x.`a\\`.b", 2}, {"`", 0}}) {
    INFO(path);
    auto got = parse_field_path(path, FieldSyntaxVersion::kV2);
    REQUIRE_FALSE(got);
    CHECK(got.error().message == msg(path, pos));
  }
}
