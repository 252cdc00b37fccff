// kc::parse_json_bounded / kc::sax_parse_bounded (common/json_bounds.h): the
// one parser for JSON from outside. Depth is refused while parsing, errors
// say where (JSON Pointer and innermost key) and never quote the text.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "common/json_bounds.h"

namespace {

using Kind = kc::JsonParseError::Kind;
using nlohmann::json;
using nlohmann::ordered_json;

std::string arrays(std::size_t depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

std::string objects(std::size_t depth) {
  std::string s;
  for (std::size_t i = 0; i < depth; ++i) s += "{\"k\":";
  s += "1";
  return s + std::string(depth, '}');
}

// Counts what reaches the inner handler, to show a refused level never does.
struct CountingSax : nlohmann::json_sax<json> {
  std::size_t open = 0, deepest = 0;
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return up(); }
  bool key(string_t&) override { return true; }
  bool end_object() override { return down(); }
  bool start_array(std::size_t) override { return up(); }
  bool end_array() override { return down(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }
  bool up() {
    deepest = std::max(deepest, ++open);
    return true;
  }
  bool down() {
    --open;
    return true;
  }
};

}  // namespace

TEST_CASE("parse_json_bounded accepts 64 levels and refuses the 65th", "[common][json_bounds]") {
  auto ok = kc::parse_json_bounded<json>(arrays(64));
  REQUIRE(ok);
  CHECK(ok.value.dump() == arrays(64));
  CHECK(kc::parse_json_bounded<json>(objects(64)));

  for (const auto& text : {arrays(65), objects(65), arrays(100000)}) {
    auto deep = kc::parse_json_bounded<json>(text);
    REQUIRE_FALSE(deep);
    CHECK(deep.error->kind == Kind::TooDeep);
    CHECK(deep.error->message == "nests deeper than 64 levels of arrays and objects");
    CHECK(deep.value.is_null());  // no partial tree is handed back
  }
  // A smaller bound is the caller's choice.
  CHECK(kc::parse_json_bounded<json>(arrays(3), 3));
  CHECK(kc::parse_json_bounded<json>(arrays(4), 3).error->kind == Kind::TooDeep);
}

TEST_CASE("sax_parse_bounded never lets a refused level reach the inner handler", "[common][json_bounds]") {
  CountingSax inner;
  auto e = kc::sax_parse_bounded<json>(arrays(100000), inner);
  REQUIRE(e);
  CHECK(e->kind == Kind::TooDeep);
  CHECK(inner.deepest == 64);
}

TEST_CASE("brackets inside strings do not count towards the depth", "[common][json_bounds]") {
  const std::string brackets(1000, '[');
  auto r = kc::parse_json_bounded<json>(R"({"a":")" + brackets + R"(\"[{"})");
  REQUIRE(r);
  CHECK(r.value["a"].get<std::string>() == brackets + "\"[{");
  // ... nor does a key full of them, at exactly the bound.
  CHECK(kc::parse_json_bounded<json>(arrays(63, R"({"[[[[{{{{":1})")));
}

TEST_CASE("a refused depth names the JSON path of the container refused", "[common][json_bounds]") {
  std::string text = R"({"offsets":[{"partition":)" + arrays(62) + "}]}";
  auto r = kc::parse_json_bounded<ordered_json>(text);
  REQUIRE_FALSE(r);
  CHECK(r.error->kind == Kind::TooDeep);
  std::string path = "/offsets/0/partition";
  for (int i = 0; i < 61; ++i) path += "/0";
  CHECK(r.error->path == path);
  CHECK(r.error->key == "partition");
}

TEST_CASE("a number out of range names its key and path, never the number", "[common][json_bounds]") {
  auto r = kc::parse_json_bounded<json>(R"({"config":{"tasks.max":"1","batch.size":1e999}})");
  REQUIRE_FALSE(r);
  CHECK(r.error->kind == Kind::NumberOutOfRange);
  CHECK(r.error->key == "batch.size");
  CHECK(r.error->path == "/config/batch.size");
  CHECK(r.error->message == "the number for key 'batch.size' is out of range");

  // In an array, the innermost key and the element index.
  r = kc::parse_json_bounded<json>(R"({"a/b~c":[1,2,-1e999]})");
  REQUIRE_FALSE(r);
  CHECK(r.error->path == "/a~1b~0c/2");
  CHECK(r.error->message == "the number for key 'a/b~c' is out of range");

  // No key at all: the byte.
  r = kc::parse_json_bounded<json>("[1e999]");
  REQUIRE_FALSE(r);
  CHECK(r.error->kind == Kind::NumberOutOfRange);
  CHECK(r.error->path == "/0");
  CHECK(r.error->message.rfind("a number at byte ", 0) == 0);
  CHECK(r.error->message.find("out of range") != std::string::npos);
  CHECK(r.error->message.find("1e999") == std::string::npos);
}

TEST_CASE("syntax errors are reported without the token read", "[common][json_bounds]") {
  for (const std::string text : {R"({"password":"hunter2)", R"({"password":hunter2})", "{\"a\":\"\xFF\"}",
                                 R"({"a":1} trailing)", "", "[1,"}) {
    auto r = kc::parse_json_bounded<json>(text);
    REQUIRE_FALSE(r);
    CHECK(r.error->kind == Kind::Syntax);
    CHECK(r.error->message.find("hunter2") == std::string::npos);
    CHECK(r.error->message.find("last read") == std::string::npos);
    CHECK_FALSE(r.error->message.empty());
  }
  // The path points at the value being read.
  auto r = kc::parse_json_bounded<json>(R"({"a":[1,2,x]})");
  REQUIRE_FALSE(r);
  CHECK(r.error->path == "/a/2");
  // Not strict: trailing content is left alone (Jackson's readTree).
  CHECK(kc::parse_json_bounded<json>(R"({"a":1} trailing)", kc::kMaxJsonDepth, /*strict=*/false));
}

TEST_CASE("parse_json_bounded keeps member order for ordered_json", "[common][json_bounds]") {
  auto r = kc::parse_json_bounded<ordered_json>(R"({"z":1,"a":{"y":2,"b":3}})");
  REQUIRE(r);
  CHECK(r.value.dump() == R"({"z":1,"a":{"y":2,"b":3}})");
}
