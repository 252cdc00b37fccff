// common/json_text.h: the one writer of JSON string escapes (Jackson's forms),
// shared by JsonConverter, the internal topics' compact JSON and JSON logs.
#include <catch2/catch.hpp>
#include <string>

#include <nlohmann/json.hpp>

#include "common/json_text.h"

namespace {

std::string escaped(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (!kc::append_json_escape(out, static_cast<unsigned char>(ch))) out.push_back(ch);
  return out;
}

}  // namespace

TEST_CASE("append_json_escape writes Jackson's escapes and leaves other bytes to the caller", "[common][json]") {
  CHECK(escaped("a\"b\\c") == "a\\\"b\\\\c");
  CHECK(escaped("\b\t\n\f\r") == "\\b\\t\\n\\f\\r");
  CHECK(escaped(std::string("\x01\x1f", 2)) == "\\u0001\\u001F");
  CHECK(escaped(std::string(1, '\0')) == "\\u0000");
  CHECK(escaped("/ \x7f\xc3\xa9") == "/ \x7f\xc3\xa9");  // '/', DEL and UTF-8 pass through
  std::string unit;
  kc::append_json_u_escape(unit, 0xD83D);
  CHECK(unit == "\\uD83D");
}

TEST_CASE("every control character round-trips through a JSON parser", "[common][json]") {
  for (int c = 0; c < 0x20; ++c) {
    const std::string raw(1, static_cast<char>(c));
    CHECK(nlohmann::json::parse("\"" + escaped(raw) + "\"").get<std::string>() == raw);
  }
}
