// libFuzzer target: JsonConverter.toConnectData (worker/converters/json_converter.h)
// on record bytes, with and without schemas. The first byte's bits pick
// schemas.enable, decimal.format, replace.null.with.default and key/value;
// the rest is the record. Beyond "never crash": what fromConnectData writes
// from what toConnectData read can be read again, and from the second hop
// on, reading and writing gives the same bytes (a record survives any number
// of hops through a sink and a source).
#include <memory>
#include <string>

#include "tests/fuzz/fuzz_input.h"
#include "worker/converters/json_converter.h"

namespace {

using kc::converters::JsonConverter;

/// One converter per configuration (8 combinations), as a worker keeps one
/// per connector: its schema caches then see many inputs, as in production.
JsonConverter& converter(uint8_t bits) {
  static std::unique_ptr<JsonConverter> all[16];
  auto& c = all[bits & 15];
  if (!c) {
    c = std::make_unique<JsonConverter>();
    kc::converters::ConverterConfig cfg{
        {"schemas.enable", (bits & 1) ? "true" : "false"},
        {"decimal.format", (bits & 2) ? "NUMERIC" : "BASE64"},
        {"replace.null.with.default", (bits & 4) ? "true" : "false"},
        {"schemas.cache.size", "4"},
    };
    auto st = c->configure(cfg, (bits & 8) != 0);
    KC_FUZZ_CHECK(st.ok());
  }
  return *c;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  auto& conv = converter(data[0]);
  const std::string bytes(kc::fuzz::as_text(data + 1, size - 1));
  auto read = conv.to_connect("topic", &bytes);
  if (!read) return 0;
  (void)conv.as_json_schema(read.value().schema);
  // Writing may refuse what reading accepted, as in Connect (e.g. a NUMERIC
  // decimal payload whose scale is not the schema's, written as BASE64).
  auto written = conv.from_connect("topic", read.value().schema, read.value().value);
  if (!written.ok() || !written.value()) return 0;  // refused, or a tombstone
  auto reread = conv.to_connect("topic", &*written.value());
  KC_FUZZ_CHECK(reread.ok());
  auto rewritten = conv.from_connect("topic", reread.value().schema, reread.value().value);
  KC_FUZZ_CHECK(rewritten.ok() && rewritten.value());
  // One hop may lose what JSON cannot carry, as in Connect: a float32 beyond
  // FLT_MAX reads as Infinity, is written as the string "Infinity" (Jackson
  // quotes non-finite numbers) and reads back as 0.0 (a text node's
  // floatValue()). From the second hop on, the bytes must not change.
  auto third = conv.to_connect("topic", &*rewritten.value());
  KC_FUZZ_CHECK(third.ok());
  auto again = conv.from_connect("topic", third.value().schema, third.value().value);
  KC_FUZZ_CHECK(again.ok() && again.value() == rewritten.value());
  return 0;
}
