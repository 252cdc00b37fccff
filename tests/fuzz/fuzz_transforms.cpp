// libFuzzer target: transformation and predicate configs (KIP-66, KIP-585).
// The input is a connector config in properties syntax ("transforms=a",
// "transforms.a.type=InsertField$Value", ...). It goes through the chain
// builder (worker/transforms/chain.h) and the validation rule that
// PUT /connector-plugins/{p}/config/validate runs (transform_config.h); a
// chain that builds is applied to a few fixed records (a struct value with
// a schema, a schemaless map, a tombstone). Bad configs must end in config
// errors and bad records in apply errors, never a crash or an exception.
#include <string>
#include <vector>

#include "config/properties.h"
#include "tests/fuzz/fuzz_input.h"
#include "worker/connectors/transform_config.h"
#include "worker/converters/json_converter.h"
#include "worker/transforms/chain.h"

namespace {

using namespace kc;

/// A value read by JsonConverter from `json` (schemas.enable as given).
data::SchemaAndValue read(const std::string& json, bool schemas) {
  converters::JsonConverter c;
  KC_FUZZ_CHECK(c.configure({{"schemas.enable", schemas ? "true" : "false"}}, false).ok());
  auto r = c.to_connect("t", &json);
  KC_FUZZ_CHECK(r.ok());
  return std::move(r.value());
}

/// Fixed sink records: fresh copies for each input (transforms edit in place).
std::vector<data::SinkRecord> records() {
  static const auto key = read(R"({"schema":{"type":"string","optional":true},"payload":"k1"})", true);
  static const auto value = read(
      R"({"schema":{"type":"struct","name":"v","optional":false,"fields":[)"
      R"({"field":"id","type":"int32","optional":false},)"
      R"({"field":"name","type":"string","optional":true},)"
      R"({"field":"ts","type":"int64","optional":true,"name":"org.apache.kafka.connect.data.Timestamp","version":1},)"
      R"({"field":"inner","type":"struct","optional":true,"fields":[{"field":"x","type":"double","optional":true}]},)"
      R"({"field":"tags","type":"array","items":{"type":"string"},"optional":true}]},)"
      R"("payload":{"id":7,"name":"seven","ts":1700000000000,"inner":{"x":1.5},"tags":["a","b"]}})",
      true);
  static const auto schemaless = read(R"({"id":7,"name":"seven","inner":{"x":1.5},"ts":1700000000000})", false);
  std::vector<data::SinkRecord> out(3);
  for (auto& r : out) {
    r.topic = "orders";
    r.kafka_partition = 0;
    r.kafka_offset = 42;
    r.timestamp = 1700000000000;
    r.timestamp_type = data::TimestampType::CREATE_TIME;
    r.key_schema = key.schema;
    r.key = key.value;
    r.headers.add("h1", key.schema, key.value);
  }
  out[0].value_schema = value.schema;
  out[0].value = value.value;
  out[1].value = schemaless.value;
  // out[2]: a tombstone (null value, no schema).
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  transforms::Config config;
  try {
    config = kc::config::parse_properties(kc::fuzz::as_text(data, size));
  } catch (const kc::config::ConfigError&) {
    return 0;
  }
  connectors::ConfigErrors errors;
  connectors::transformation_rule(config, errors);
  (void)connectors::transformation_config_defs(config);

  std::vector<transforms::ConfigError> build_errors;
  auto chain = transforms::TransformChain::build(config, &build_errors);
  if (!chain) {
    KC_FUZZ_CHECK(!build_errors.empty());
    return 0;
  }
  for (auto& r : records()) {
    transforms::ApplyError err;
    (void)chain.value().apply(r, &err);
  }
  return 0;
}
