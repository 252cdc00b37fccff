// The converters other than the vector-checked JsonConverter paths: number
// converters, StringConverter encodings, ByteArrayConverter,
// SimpleHeaderConverter, the factory and config errors, JsonConverter
// round trips and its schema caches.
#include <catch2/catch.hpp>

#include <cmath>

#include "worker/converters/json_converter.h"
#include "worker/data/values.h"

using namespace kc::data;
using namespace kc::converters;

namespace {
std::unique_ptr<Converter> make(std::string_view cls, ConverterConfig config = {}, bool is_key = false) {
  auto c = make_converter(cls, config, is_key);
  REQUIRE(c);
  return std::move(*c);
}
std::string bytes_of(const kc::Result<std::optional<std::string>>& r) {
  REQUIRE(r);
  REQUIRE(r->has_value());
  return **r;
}
}  // namespace

TEST_CASE("number converters: Kafka's serializer bytes, strict classes, size checks", "[pipeline][converter]") {
  auto sh = make("org.apache.kafka.connect.converters.ShortConverter");
  CHECK(bytes_of(sh->from_connect("t", nullptr, Value(int16_t{-2}))) == std::string("\xFF\xFE", 2));
  auto bad = sh->from_connect("t", nullptr, Value(int32_t{1}));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "Failed to serialize to short (was class java.lang.Integer): ");
  auto back = sh->to_connect("t", std::optional<std::string>(std::string("\xFF\xFE", 2)));
  REQUIRE(back);
  CHECK(back->value == Value(int16_t{-2}));
  CHECK(schema_equals(back->schema, OPTIONAL_INT16_SCHEMA()));
  auto size = sh->to_connect("t", std::optional<std::string>("abc"));
  REQUIRE_FALSE(size);
  CHECK(size.error().message == "Failed to deserialize short: Size of data received by ShortDeserializer is not 2");

  auto in = make("IntegerConverter");
  CHECK(bytes_of(in->from_connect("t", nullptr, Value(int32_t{0x01020304}))) == "\x01\x02\x03\x04");
  CHECK(in->to_connect("t", std::optional<std::string>("\x01\x02\x03\x04"))->value == Value(int32_t{0x01020304}));
  CHECK_FALSE(in->to_connect("t", std::optional<std::string>("\x01")));

  auto lo = make("Long");
  auto lb = bytes_of(lo->from_connect("t", nullptr, Value(int64_t{-1})));
  CHECK(lb == std::string(8, '\xFF'));
  CHECK(lo->to_connect("t", std::optional<std::string>(lb))->value == Value(int64_t{-1}));
  auto fl = make("FloatConverter");
  auto fb = bytes_of(fl->from_connect("t", nullptr, Value(1.5f)));
  CHECK(fb == std::string("\x3F\xC0\x00\x00", 4));
  CHECK(fl->to_connect("t", std::optional<std::string>(fb))->value == Value(1.5f));
  auto fsize = fl->to_connect("t", std::optional<std::string>("12"));
  REQUIRE_FALSE(fsize);
  CHECK(fsize.error().message == "Failed to deserialize float: Size of data received by Deserializer is not 4");
  auto db = make("DoubleConverter");
  auto dd = bytes_of(db->from_connect("t", nullptr, Value(-2.0)));
  CHECK(dd == std::string("\xC0\x00\x00\x00\x00\x00\x00\x00", 8));
  CHECK(db->to_connect("t", std::optional<std::string>(dd))->value == Value(-2.0));
  CHECK_FALSE(db->from_connect("t", nullptr, Value(1.0f)));
  // Null both ways.
  CHECK_FALSE(db->from_connect("t", nullptr, Value())->has_value());
  auto n = db->to_connect("t", std::optional<std::string>());
  REQUIRE(n);
  CHECK(n->value.is_null());
  CHECK(schema_equals(n->schema, OPTIONAL_FLOAT64_SCHEMA()));
}

TEST_CASE("LongConverter rejects 7 bytes", "[pipeline][converter]") {
  auto lo = make("LongConverter");
  auto r = lo->to_connect("t", std::optional<std::string>("1234567"));
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "Failed to deserialize long: Size of data received by LongDeserializer is not 8");
}

TEST_CASE("StringConverter encodings", "[pipeline][converter]") {
  auto utf8 = make(kStringConverterClass);
  CHECK(bytes_of(utf8->from_connect("t", nullptr, Value("h\xC3\xA9"))) == "h\xC3\xA9");
  CHECK(bytes_of(utf8->from_connect("t", nullptr, Value(int32_t{42}))) == "42");
  CHECK(bytes_of(utf8->from_connect("t", nullptr, Value(1.0e10))) == "1.0E10");
  CHECK_FALSE(utf8->from_connect("t", nullptr, Value())->has_value());
  auto s = utf8->to_connect("t", std::optional<std::string>("x"));
  REQUIRE(s);
  CHECK(s->value == Value("x"));
  CHECK(schema_equals(s->schema, OPTIONAL_STRING_SCHEMA()));

  // Java's UTF-16 writes a big-endian byte order mark.
  auto utf16 = make("StringConverter", {{"converter.encoding", "UTF-16"}});
  std::string u16 = bytes_of(utf16->from_connect("t", nullptr, Value("h\xC3\xA9")));
  CHECK(u16 == std::string("\xFE\xFF\x00h\x00\xE9", 6));
  CHECK(utf16->to_connect("t", std::optional<std::string>(u16))->value == Value("h\xC3\xA9"));
  CHECK(utf16->to_connect("t", std::optional<std::string>(std::string("\xFF\xFEh\x00", 4)))->value == Value("h"));
  CHECK(utf16->to_connect("t", std::optional<std::string>(std::string("\x00h", 2)))->value == Value("h"));

  auto le = make("String", {{"converter.encoding", "utf-16le"}});
  CHECK(bytes_of(le->from_connect("t", nullptr, Value("h"))) == std::string("h\x00", 2));

  // ISO-8859-1: unmappable characters become '?'.
  auto latin1 = make("StringConverter", {{"converter.encoding", "ISO-8859-1"}});
  CHECK(bytes_of(latin1->from_connect("t", nullptr, Value("h\xC3\xA9\xE2\x82\xAC"))) == "h\xE9?");
  CHECK(latin1->to_connect("t", std::optional<std::string>("h\xE9"))->value == Value("h\xC3\xA9"));

  auto bad = make_converter("StringConverter", {{"converter.encoding", "NO-SUCH-CHARSET-XYZ"}}, false);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "converter.encoding");
}

TEST_CASE("ByteArrayConverter", "[pipeline][converter]") {
  auto c = make("ByteArrayConverter");
  CHECK(bytes_of(c->from_connect("t", BYTES_SCHEMA(), Value(Bytes{std::string("\x00\x01", 2)}))) ==
        std::string("\x00\x01", 2));
  auto wrong_schema = c->from_connect("t", STRING_SCHEMA(), Value("x"));
  REQUIRE_FALSE(wrong_schema);
  CHECK(wrong_schema.error().message == "Invalid schema type for ByteArrayConverter: STRING");
  auto wrong_value = c->from_connect("t", nullptr, Value("x"));
  REQUIRE_FALSE(wrong_value);
  CHECK(wrong_value.error().message == "ByteArrayConverter is not compatible with objects of type class java.lang.String");
  auto back = c->to_connect("t", std::optional<std::string>("ab"));
  REQUIRE(back);
  CHECK(back->value == Value(Bytes{"ab"}));
  CHECK(schema_equals(back->schema, OPTIONAL_BYTES_SCHEMA()));
}

TEST_CASE("SimpleHeaderConverter basics", "[pipeline][converter]") {
  auto h = make_header_converter("org.apache.kafka.connect.storage.SimpleHeaderConverter", {});
  REQUIRE(h);
  auto& c = **h;
  auto text = [&](const SchemaPtr& s, const Value& v) {
    auto r = c.from_connect_header("t", "k", s, v);
    REQUIRE(r);
    REQUIRE(r->has_value());
    return **r;
  };
  CHECK(text(STRING_SCHEMA(), Value("hello")) == "hello");
  CHECK(text(INT32_SCHEMA(), Value(int32_t{42})) == "42");
  CHECK(text(BOOLEAN_SCHEMA(), Value(true)) == "true");
  CHECK(text(nullptr, Value(Array{Value("a"), Value(int32_t{1})})) == "[\"a\",1]");
  CHECK_FALSE(c.from_connect_header("t", "k", nullptr, Value())->has_value());

  auto parse = [&](const std::string& s) {
    auto r = c.to_connect_header("t", "k", &s);
    REQUIRE(r);
    return *r;
  };
  auto i8 = parse("42");
  CHECK(i8.value == Value(int8_t{42}));
  CHECK(schema_equals(i8.schema, INT8_SCHEMA()));
  CHECK(parse("-129").value == Value(int16_t{-129}));
  CHECK(parse("3000000000").value == Value(int64_t{3000000000}));
  CHECK(parse("1.5").value == Value(1.5f));
  CHECK(parse("true").value == Value(true));
  CHECK(parse("TRUE").value == Value("TRUE"));
  CHECK(parse("hello world").value == Value("hello world"));
  auto empty = parse("");
  CHECK(empty.value == Value(std::string()));
  CHECK(schema_equals(empty.schema, STRING_SCHEMA()));
  auto null = parse("null");
  CHECK(null.value.is_null());
  CHECK(null.schema == nullptr);
  auto none = c.to_connect_header("t", "k", nullptr);
  REQUIRE(none);
  CHECK(none->value.is_null());
}

TEST_CASE("converter factory: class names, aliases, config errors", "[pipeline][converter]") {
  for (auto name : converter_class_names()) CHECK(resolve_converter_class(name) == name);
  CHECK(resolve_converter_class("Json") == kJsonConverterClass);
  CHECK(resolve_converter_class("JsonConverter") == kJsonConverterClass);
  CHECK_FALSE(resolve_converter_class("com.example.Nope"));
  auto unknown = make_converter("com.example.Nope", {}, false);
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().message == "Class com.example.Nope could not be found.");
  CHECK_FALSE(make_converter(kSimpleHeaderConverterClass, {}, false));  // a HeaderConverter only
  auto bad_bool = make_converter("JsonConverter", {{"schemas.enable", "yes"}}, false);
  REQUIRE_FALSE(bad_bool);
  CHECK(bad_bool.error().field == "schemas.enable");
  CHECK(bad_bool.error().message ==
        "Invalid value yes for configuration schemas.enable: Expected value to be either true or false");
  auto bad_int = make_converter("JsonConverter", {{"schemas.cache.size", "many"}}, false);
  REQUIRE_FALSE(bad_int);
  CHECK(bad_int.error().message == "Invalid value many for configuration schemas.cache.size: Not a number of type INT");
  CHECK(make_converter("JsonConverter", {{"schemas.enable", " FALSE "}}, true));
  // Every converter also serves as a header converter.
  auto jh = make_header_converter("JsonConverter", {{"schemas.enable", "false"}});
  REQUIRE(jh);
  auto hb = (*jh)->from_connect_header("t", "k", INT32_SCHEMA(), Value(int32_t{5}));
  REQUIRE(hb);
  CHECK(**hb == "5");
  auto ih = make_header_converter("IntegerConverter", {});
  REQUIRE(ih);
  CHECK(**(*ih)->from_connect_header("t", "k", nullptr, Value(int32_t{1})) == std::string("\0\0\0\1", 4));
}

TEST_CASE("JsonConverter round trip of a struct with logical types, with and without caches", "[pipeline][converter]") {
  auto schema = SchemaBuilder::struct_()
                    .name("com.example.Order")
                    .field("id", INT64_SCHEMA())
                    .field("amount", decimal_builder(2).build().value())
                    .field("day", date_builder().optional().build().value())
                    .field("at", timestamp_builder().build().value())
                    .field("tags", SchemaBuilder::array(STRING_SCHEMA()).build().value())
                    .field("attrs", SchemaBuilder::map(INT32_SCHEMA(), OPTIONAL_FLOAT64_SCHEMA()).build().value())
                    .field("raw", OPTIONAL_BYTES_SCHEMA())
                    .build()
                    .value();
  Struct s(schema);
  REQUIRE(s.put("id", Value(int64_t{9007199254740993})));
  REQUIRE(s.put("amount", Value(*BigDecimal::parse("-12.34"))));
  REQUIRE(s.put("day", Value(JavaDate{19737 * kMillisPerDay})));
  REQUIRE(s.put("at", Value(JavaDate{1700000000123})));
  REQUIRE(s.put("tags", Value(Array{Value("a"), Value("\xF0\x9F\x98\x80")})));
  REQUIRE(s.put("attrs", Value(Map{{Value(int32_t{1}), Value(0.5)}, {Value(int32_t{2}), Value()}})));
  for (const char* cache : {"1000", "0", "1"}) {
    for (const char* fmt : {"BASE64", "NUMERIC"}) {
      JsonConverter c;
      REQUIRE(c.configure({{"schemas.cache.size", cache}, {"decimal.format", fmt}}, false));
      for (int round = 0; round < 2; ++round) {  // the second round hits the caches
        auto bytes = c.from_connect("t", schema, Value(s));
        REQUIRE(bytes);
        REQUIRE(bytes->has_value());
        auto back = c.to_connect("t", *bytes);
        REQUIRE(back);
        CHECK(schema_equals(back->schema, schema));
        CHECK(back->value == Value(s));
      }
    }
  }
  JsonConverter plain;
  REQUIRE(plain.configure({{"schemas.enable", "false"}}, false));
  auto text = plain.from_connect("t", nullptr, Value(Map{{Value("a"), Value(int32_t{1})}, {Value("b"), Value(2.5)}}));
  REQUIRE(text);
  CHECK(**text == "{\"a\":1,\"b\":2.5}");
  auto back = plain.to_connect("t", std::optional<std::string>(**text));
  REQUIRE(back);
  CHECK(back->value == Value(Map{{Value("a"), Value(int64_t{1})}, {Value("b"), Value(2.5)}}));
  // A control character, an escaped quote and a non-BMP character, as Jackson writes them.
  auto esc = plain.from_connect("t", STRING_SCHEMA(), Value("\x01\"\xF0\x9F\x98\x80/\x7F"));
  REQUIRE(esc);
  CHECK(**esc == "\"\\u0001\\\"\\uD83D\\uDE00/\x7F\"");
  CHECK(plain.as_json_schema(nullptr).value() == "null");
}

TEST_CASE("JsonConverter reads what Jackson reads: leading zeros, 1e400, long integers, base64 padding",
          "[pipeline][converter]") {
  JsonConverter plain;
  REQUIRE(plain.configure({{"schemas.enable", "false"}}, false));
  auto read = [&](const std::string& text) { return plain.to_connect("t", std::optional<std::string>(text)); };
  CHECK(read("007")->value == Value(int64_t{7}));
  CHECK(read("[-01.50, \"0012\"]")->value == Value(Array{Value(-1.5), Value("0012")}));
  auto inf = read("1e400");
  REQUIRE(inf);
  CHECK(std::isinf(inf->value.as<double>()));
  CHECK(read("123456789012345678901234567890")->value == Value(int64_t{static_cast<int64_t>(0xC373E0EE4E3F0AD2ULL)}));
  CHECK(read("  \n ")->value.is_null());
  auto bad = read("[1, x]");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.rfind("Converting byte[] to Kafka Connect data failed due to serialization error: ", 0) == 0);

  JsonConverter env;
  REQUIRE(env.configure({}, false));
  auto bytes = [&](const std::string& payload) {
    return env.to_connect("t", std::optional<std::string>("{\"schema\":{\"type\":\"bytes\"},\"payload\":" + payload + "}"));
  };
  CHECK(bytes("\"AAEC/w==\"")->value == Value(Bytes{std::string("\x00\x01\x02\xFF", 4)}));
  CHECK(bytes("\"\"")->value == Value(Bytes{}));
  auto unpadded = bytes("\"AAEC/w\"");
  REQUIRE_FALSE(unpadded);
  CHECK(unpadded.error().message == "Invalid bytes field");
  CHECK(bytes("42")->value.is_null());  // binaryValue() of a number is null
  // Decimal read from either payload form whatever decimal.format says.
  auto dec = env.to_connect("t", std::optional<std::string>(
                                     "{\"schema\":{\"type\":\"bytes\",\"name\":\"org.apache.kafka.connect.data.Decimal\","
                                     "\"parameters\":{\"scale\":\"2\"}},\"payload\":012.50}"));
  REQUIRE(dec);
  CHECK(dec->value == Value(*BigDecimal::parse("12.50")));
}

TEST_CASE("SimpleHeaderConverter numbers follow Values.parseString", "[pipeline][converter]") {
  CHECK(values_parse_string("1e3").value == Value(int16_t{1000}));
  CHECK(values_parse_string("1.0").value == Value(int8_t{1}));
  CHECK(values_parse_string(" 7 ").value == Value(int8_t{7}));
  CHECK(values_parse_string("-1.25").value == Value(-1.25f));
  CHECK(values_parse_string("1e39").value == Value(1e39));  // beyond float: FLOAT64
  auto huge = values_parse_string("1e400");
  REQUIRE(huge.schema);
  CHECK(huge.schema->name() == std::string(kDecimalLogicalName));
}

TEST_CASE("SimpleHeaderConverter writes dates as Values.dateFormatFor picks", "[pipeline][converter]") {
  CHECK(values_convert_to_string(nullptr, Value(JavaDate{1705276800000})) == "2024-01-15");
  CHECK(values_convert_to_string(nullptr, Value(JavaDate{1705314030400})) == "2024-01-15T10:20:30.400Z");
  CHECK(values_convert_to_string(nullptr, Value(JavaDate{37230400})) == "10:20:30.400Z");
  CHECK(values_convert_to_string(nullptr, Value(*BigDecimal::parse("1.50"))) == "1.50");
  CHECK(values_convert_to_string(nullptr, Value(Bytes{"hi"})) == "aGk=");
}

TEST_CASE("JsonConverter refuses a record value nested past 1000 levels (Jackson's limit) with a converter error",
          "[pipeline][converter][hostile]") {
  // Record values are outside bytes: a 100,000-deep array used to become a
  // JNode tree that the recursive conversion and destruction overflowed.
  JsonConverter plain;
  REQUIRE(plain.configure({{"schemas.enable", "false"}}, false));
  auto read = [&](const std::string& text) { return plain.to_connect("t", std::optional<std::string>(text)); };
  auto nested = [](std::size_t depth) { return std::string(depth, '[') + "1" + std::string(depth, ']'); };
  const std::string prefix = "Converting byte[] to Kafka Connect data failed due to serialization error: ";
  for (std::size_t depth : {1001u, 100000u}) {
    auto deep = read(nested(depth));
    REQUIRE_FALSE(deep);
    CHECK(deep.error().message == prefix + "nests deeper than 1000 levels of arrays and objects");
  }
  // The retry pass (numbers Jackson reads, nlohmann refuses) is bounded too.
  auto deep_zero = read(std::string(100000, '[') + "007" + std::string(100000, ']'));
  REQUIRE_FALSE(deep_zero);
  CHECK(deep_zero.error().message == prefix + "nests deeper than 1000 levels of arrays and objects");
  auto ok = read(nested(1000));
  REQUIRE(ok);

  // With schemas.enable the envelope counts: its payload may nest 999 more.
  JsonConverter env;
  REQUIRE(env.configure({}, false));
  auto in_envelope = env.to_connect("t", std::optional<std::string>(R"({"schema":null,"payload":)" + nested(100000) + "}"));
  REQUIRE_FALSE(in_envelope);
  CHECK(in_envelope.error().message == prefix + "nests deeper than 1000 levels of arrays and objects");
}
