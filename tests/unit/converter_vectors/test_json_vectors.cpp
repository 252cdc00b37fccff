// JsonConverter vectors: every case of connect-json-vectors.json (and of the
// files in KC_JSON_VECTORS, separated by ',' or ':') through kc::converters'
// JsonConverter, compared as PIPELINE-VECTORS.md says: fromConnectData bytes
// exactly, toConnectData schema (Connect equality plus parameter order) and
// value (Java equality, maps unordered), errors by stage and top-level
// message (a prefix when Kafka chained a cause, whose text is Jackson's).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "tests/support/vector_file.h"
#include "worker/converters/json_converter.h"
#include "worker/data/notation.h"

using namespace kc::data;
using namespace kc::converters;
using notation::Json;

namespace {

// Cases we knowingly do not reproduce, with the reason. Empty: every case
// of connect-json-vectors.json agrees. (`java_only` cases are skipped by
// their own flag: the notation cannot express a ByteBuffer slice.)
const std::map<std::string, std::string> kSkip = {};

std::string hex(const std::string& s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::string unhex(const std::string& h) {
  std::string out;
  for (size_t i = 0; i + 1 < h.size(); i += 2) out.push_back(static_cast<char>(std::stoi(h.substr(i, 2), nullptr, 16)));
  return out;
}

// Empty string = agreement; otherwise what differs.
std::string run_case(const Json& c) {
  ConverterConfig config;
  if (c.contains("config"))
    for (const auto& [k, v] : c["config"].items()) config[k] = v.get<std::string>();
  const Json& error = c.contains("error") ? c["error"] : Json();
  std::string stage = error.is_null() ? "" : error["stage"].get<std::string>();
  std::string message = error.is_null() ? "" : error["message"].get<std::string>();
  bool has_cause = !error.is_null() && error.contains("cause");
  auto message_matches = [&](const std::string& got) {
    return has_cause ? got.rfind(message, 0) == 0 : got == message;
  };

  JsonConverter conv;
  auto st = conv.configure(config, false);
  if (stage == "configure") {
    if (st) return "configure succeeded, expected: " + message;
    return message_matches(st.error().message) ? "" : "configure error '" + st.error().message + "' != '" + message + "'";
  }
  if (!st) return "configure failed: " + st.error().to_string();
  std::string topic = c.value("topic", std::string("topic-a"));

  if (c["direction"] == "fromConnectData") {
    auto schema = notation::schema_from_json(c["schema"]);
    if (!schema) return "bad schema notation: " + schema.error().to_string();
    auto value = notation::value_from_json(*schema, c["value"]);
    if (!value) return "bad value notation: " + value.error().to_string();
    auto out = conv.from_connect(topic, *schema, *value);
    if (!stage.empty()) {
      if (out) return "succeeded, expected error: " + message;
      return message_matches(out.error().message) ? "" : "error '" + out.error().message + "' != '" + message + "'";
    }
    if (!out) return "failed: " + out.error().to_string();
    const Json& want = c["bytes_hex"];
    if (want.is_null()) return out->has_value() ? "expected null bytes, got " + **out : "";
    if (!out->has_value()) return "got null bytes, expected " + want.get<std::string>();
    if (hex(**out) != want.get<std::string>())
      return "bytes differ:\n  got  " + **out + "\n  want " + unhex(want.get<std::string>());
    return "";
  }

  std::optional<std::string> bytes;
  if (!c["bytes_hex"].is_null()) bytes = unhex(c["bytes_hex"].get<std::string>());
  auto got = conv.to_connect(topic, bytes);
  if (!stage.empty()) {
    if (got) return "succeeded, expected error: " + message;
    return message_matches(got.error().message) ? "" : "error '" + got.error().message + "' != '" + message + "'";
  }
  if (!got) return "failed: " + got.error().to_string();
  auto want_schema = notation::schema_from_json(c["schema"]);
  if (!want_schema) return "bad schema notation: " + want_schema.error().to_string();
  if (!schema_equals(got->schema, *want_schema))
    return "schema differs: got " + notation::schema_to_json(got->schema).dump() + " want " + c["schema"].dump();
  std::function<bool(const SchemaPtr&, const SchemaPtr&)> same_param_order = [&](const SchemaPtr& a, const SchemaPtr& b) {
    if (!a || !b) return true;
    if (a->parameters() != b->parameters()) return false;
    for (size_t i = 0; i < a->fields().size(); ++i)
      if (!same_param_order(a->fields()[i].schema, b->fields()[i].schema)) return false;
    return same_param_order(a->key_schema(), b->key_schema()) && same_param_order(a->value_schema(), b->value_schema());
  };
  if (!same_param_order(got->schema, *want_schema)) return "parameter order differs";
  auto want_value = notation::value_from_json(*want_schema, c["value"]);
  if (!want_value) return "bad value notation: " + want_value.error().to_string();
  if (!(got->value == *want_value))
    return "value differs: got " + notation::value_to_json(got->schema, got->value).dump() + " want " + c["value"].dump();
  return "";
}

kc::test::VectorOutcome run_file(const std::string& path) {
  return kc::test::run_vector_file(path, run_case, [](const Json& c) {
    return c.value("java_only", false) || kSkip.count(c.value("name", std::string("?"))) > 0;
  });
}

}  // namespace

TEST_CASE("JsonConverter vectors: connect-json-vectors.json", "[pipeline][vector]") {
  auto o = run_file(std::string(KC_SHARED_DIR) + "/testdata/connect-json-vectors.json");
  CHECK(o.total >= 91);
  CHECK(o.failures.empty());
  for (const auto& f : o.failures) UNSCOPED_INFO(f);
}

TEST_CASE("JsonConverter vectors: extra files from KC_JSON_VECTORS", "[pipeline][vector]") {
  const auto paths = kc::test::vector_files_from_env("KC_JSON_VECTORS");
  if (paths.empty()) SUCCEED("KC_JSON_VECTORS not set");
  for (const auto& path : paths) {
    auto o = run_file(path);
    CHECK(o.failures.empty());
    for (const auto& f : o.failures) UNSCOPED_INFO(f);
  }
}
