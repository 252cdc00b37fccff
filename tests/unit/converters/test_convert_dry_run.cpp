// ConvertDryRun: the per-line logic of `kconnectd convert` (issue 11 item 7).
// One line in, one JSON value out: the other side of the converter or
// {"error": {"stage", "message"}}.
#include <catch2/catch.hpp>

#include "worker/converters/dry_run.h"

using namespace kc;
using namespace kc::converters;
namespace nt = kc::data::notation;

namespace {

using Dir = ConvertDryRun::Direction;

ConvertDryRun make(const std::string& cls, Dir dir, const ConverterConfig& config = {}, bool is_key = false) {
  auto d = ConvertDryRun::create(cls, dir, config, is_key);
  INFO((d ? std::string() : d.error().to_string()));
  REQUIRE(d);
  return std::move(*d);
}

const char* kStructSchema = R"({"type":"struct","optional":false,"fields":[
  {"name":"id","schema":{"type":"int32","optional":false}},
  {"name":"name","schema":{"type":"string","optional":true}},
  {"name":"ok","schema":{"type":"boolean","optional":false}}]})";

Json struct_line() {
  Json line = Json::object();
  line["topic"] = "orders";
  line["schema"] = Json::parse(kStructSchema);
  line["value"] = Json::parse(R"({"id":7,"name":"a\"b","ok":true})");
  return line;
}

const std::string kStructEnvelope =
    R"({"schema":{"type":"struct","fields":[{"type":"int32","optional":false,"field":"id"},)"
    R"({"type":"string","optional":true,"field":"name"},{"type":"boolean","optional":false,"field":"ok"}],)"
    R"("optional":false},"payload":{"id":7,"name":"a\"b","ok":true}})";

Json hex_line(const std::string& bytes) {
  Json line = Json::object();
  line["topic"] = "orders";
  line["bytes_hex"] = to_hex(bytes);
  return line;
}

std::string error_stage(const Json& out) {
  if (!out.is_object() || !out.contains("error")) return "(no error: " + out.dump() + ")";
  return out["error"]["stage"].get<std::string>();
}

}  // namespace

TEST_CASE("ConvertDryRun: JsonConverter from-connect of a struct", "[pipeline][cli]") {
  auto d = make("org.apache.kafka.connect.json.JsonConverter", Dir::kFromConnect);
  Json out = d.process(struct_line());
  REQUIRE(out["topic"] == "orders");
  CHECK(from_hex(out["bytes_hex"].get<std::string>()).value() == kStructEnvelope);

  auto plain = make("JsonConverter", Dir::kFromConnect, {{"schemas.enable", "false"}});
  CHECK(from_hex(plain.process(struct_line())["bytes_hex"].get<std::string>()).value() ==
        R"({"id":7,"name":"a\"b","ok":true})");
}

TEST_CASE("ConvertDryRun: JsonConverter to-connect round trip", "[pipeline][cli]") {
  auto from = make("Json", Dir::kFromConnect);
  auto to = make("Json", Dir::kToConnect);
  Json bytes = from.process(struct_line());
  REQUIRE(bytes["bytes_hex"].is_string());
  Json back = to.process(bytes);
  INFO(back.dump());
  REQUIRE_FALSE(back.contains("error"));
  CHECK(back["topic"] == "orders");
  auto want_schema = nt::schema_from_json(Json::parse(kStructSchema));
  auto got_schema = nt::schema_from_json(back["schema"]);
  REQUIRE(want_schema);
  REQUIRE(got_schema);
  CHECK(data::schema_equals(*want_schema, *got_schema));
  CHECK(back["value"].dump() == R"({"id":7,"name":"a\"b","ok":true})");

  // Schemaless: plain JSON gives tagged values (JSON integers are int64).
  auto plain = make("Json", Dir::kToConnect, {{"schemas.enable", "false"}});
  Json v = plain.process(hex_line(R"({"a":1})"));
  CHECK(v["schema"].is_null());
  CHECK(v["value"].dump() == R"({"map":[["a",{"int64":1}]]})");

  // A null payload (tombstone) in and out.
  Json tomb = Json::object();
  tomb["topic"] = "t";
  tomb["bytes_hex"] = nullptr;
  Json t = to.process(tomb);
  CHECK(t["schema"].is_null());
  CHECK(t["value"].is_null());
}

TEST_CASE("ConvertDryRun: StringConverter both ways", "[pipeline][cli]") {
  auto from = make("org.apache.kafka.connect.storage.StringConverter", Dir::kFromConnect);
  Json line = Json::object();
  line["topic"] = "t";
  line["schema"] = Json::parse(R"({"type":"int32","optional":false})");
  line["value"] = 42;
  CHECK(from.process(line)["bytes_hex"] == to_hex("42"));

  auto to = make("StringConverter", Dir::kToConnect);
  Json out = to.process(hex_line("h\xC3\xA9llo"));
  CHECK(out["schema"]["type"] == "string");
  CHECK(out["schema"]["optional"] == true);
  CHECK(out["value"] == "h\xC3\xA9llo");
}

TEST_CASE("ConvertDryRun: error lines", "[pipeline][cli]") {
  auto from = make("Json", Dir::kFromConnect);
  Json line = Json::object();
  line["topic"] = "t";
  line["schema"] = Json::parse(R"({"type":"int32","optional":false})");
  line["value"] = nullptr;
  Json out = from.process(line);
  CHECK(error_stage(out) == "fromConnectData");
  CHECK(out["error"]["message"] == "Conversion error: null value for field that is required and has no default value");

  line["schema"] = Json::parse(R"({"type":"int128","optional":false})");
  CHECK(error_stage(from.process(line)) == "input");
  CHECK(error_stage(from.process(Json::array())) == "input");

  auto to = make("Json", Dir::kToConnect);
  CHECK(error_stage(to.process(hex_line("{\"schema\":null"))) == "toConnectData");
  Json no_envelope = to.process(hex_line(R"({"a":1})"));
  CHECK(error_stage(no_envelope) == "toConnectData");
  CHECK(no_envelope["error"]["message"].get<std::string>().find("requires \"schema\" and \"payload\"") !=
        std::string::npos);
}

TEST_CASE("ConvertDryRun: bad hex input", "[pipeline][cli]") {
  auto to = make("Json", Dir::kToConnect);
  for (const char* bad : {"zz", "abc", "7b2"}) {
    Json line = Json::object();
    line["bytes_hex"] = bad;
    Json out = to.process(line);
    INFO(bad);
    CHECK(error_stage(out) == "input");
    CHECK(out["error"]["message"] == "bytes_hex is not valid hex");
  }
  Json num = Json::object();
  num["bytes_hex"] = 12;
  CHECK(error_stage(to.process(num)) == "input");
  CHECK(from_hex("7B7D").value() == "{}");
  CHECK_FALSE(from_hex("7").has_value());
}

TEST_CASE("ConvertDryRun: --key configures a key converter with the same output", "[pipeline][cli]") {
  // Connect's converters read isKey only to pick their config namespace; the
  // bytes of a key and a value converter are the same.
  auto value_conv = make("Json", Dir::kFromConnect, {}, false);
  auto key_conv = make("Json", Dir::kFromConnect, {}, true);
  CHECK(key_conv.process(struct_line()) == value_conv.process(struct_line()));
  auto key_plain = make("Json", Dir::kFromConnect, {{"schemas.enable", "false"}}, true);
  Json line = Json::object();
  line["topic"] = "t";
  line["schema"] = Json::parse(R"({"type":"string","optional":false})");
  line["value"] = "k1";
  CHECK(key_plain.process(line)["bytes_hex"] == to_hex("\"k1\""));
}

TEST_CASE("ConvertDryRun: unknown class and bad config are create() errors", "[pipeline][cli]") {
  auto unknown = ConvertDryRun::create("com.example.NoSuchConverter", Dir::kFromConnect, {}, false);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().to_string().find("com.example.NoSuchConverter") != std::string::npos);

  auto bad = ConvertDryRun::create("Json", Dir::kFromConnect, {{"decimal.format", "STRING"}}, false);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().to_string().find("decimal.format") != std::string::npos);

  auto header_only = ConvertDryRun::create("SimpleHeaderConverter", Dir::kFromConnect, {}, false);
  CHECK_FALSE(header_only);
}
