// Connect's data model: schema equality, SchemaBuilder errors, Struct
// validation and its messages, BigDecimal and the logical types, Java number
// formatting.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "worker/data/record.h"
#include "worker/data/value.h"

using namespace kc::data;

namespace {
SchemaPtr build(SchemaBuilder b) {
  auto r = b.build();
  REQUIRE(r);
  return *r;
}
}  // namespace

TEST_CASE("schema equality follows ConnectSchema.equals", "[pipeline][data]") {
  auto a = build(SchemaBuilder::int32().optional().name("n").version(2).doc("d").parameter("a", "1").parameter("b", "2"));
  auto same = build(SchemaBuilder::int32().optional().name("n").version(2).doc("d").parameter("a", "1").parameter("b", "2"));
  CHECK(*a == *same);
  // Parameter order is kept for output but ignored by equality (Map.equals).
  auto reordered = build(SchemaBuilder::int32().optional().name("n").version(2).doc("d").parameter("b", "2").parameter("a", "1"));
  CHECK(*a == *reordered);
  REQUIRE(reordered->parameters());
  CHECK(reordered->parameters()->front().first == "b");
  // doc, default, optional, version, name and parameters all count.
  CHECK_FALSE(*a == *build(SchemaBuilder::int32().optional().name("n").version(2).doc("other").parameter("a", "1").parameter("b", "2")));
  CHECK_FALSE(*a == *build(SchemaBuilder::int32().name("n").version(2).doc("d").parameter("a", "1").parameter("b", "2")));
  CHECK_FALSE(*a == *build(SchemaBuilder::int32().optional().name("n").version(3).doc("d").parameter("a", "1").parameter("b", "2")));
  CHECK_FALSE(*a == *build(SchemaBuilder::int32().optional().name("n").version(2).doc("d").parameter("a", "1")));
  CHECK_FALSE(*build(SchemaBuilder::int32().parameters({})) == *INT32_SCHEMA());  // {} != no parameters
  auto d1 = build(SchemaBuilder::int32().optional().default_value(Value(int32_t{7})));
  auto d2 = build(SchemaBuilder::int32().optional().default_value(Value(int32_t{8})));
  CHECK_FALSE(*d1 == *d2);
  CHECK_FALSE(*d1 == *OPTIONAL_INT32_SCHEMA());
  // Nested: fields by name, index and schema.
  auto s1 = build(SchemaBuilder::struct_().field("a", INT32_SCHEMA()).field("b", OPTIONAL_STRING_SCHEMA()));
  auto s2 = build(SchemaBuilder::struct_().field("a", INT32_SCHEMA()).field("b", OPTIONAL_STRING_SCHEMA()));
  auto s3 = build(SchemaBuilder::struct_().field("b", OPTIONAL_STRING_SCHEMA()).field("a", INT32_SCHEMA()));
  CHECK(*s1 == *s2);
  CHECK_FALSE(*s1 == *s3);
  CHECK(schema_equals(nullptr, nullptr));
  CHECK_FALSE(schema_equals(s1, nullptr));
  CHECK(s1->to_string() == "Schema{STRUCT}");
  CHECK(build(date_builder())->to_string() == "Schema{org.apache.kafka.connect.data.Date:INT32}");
}

TEST_CASE("SchemaBuilder reports Connect's SchemaBuilderException messages", "[pipeline][data]") {
  auto r = SchemaBuilder::int32().name("a").name("b").build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "Invalid SchemaBuilder call: name has already been set.");
  r = SchemaBuilder::int32().field("x", INT32_SCHEMA()).build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "Cannot create fields on type INT32");
  r = SchemaBuilder::struct_().field("x", INT32_SCHEMA()).field("x", INT64_SCHEMA()).build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "Cannot create field because of field name duplication x");
  r = SchemaBuilder::int32().default_value(Value("text")).build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "Invalid default value");
  r = SchemaBuilder::array(nullptr).build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "valueSchema cannot be null.");
  r = SchemaBuilder::map(nullptr, INT32_SCHEMA()).build();
  REQUIRE_FALSE(r);
  CHECK(r.error().message == "keySchema cannot be null.");
  auto ok = SchemaBuilder::struct_().build();
  REQUIRE(ok);
  CHECK((*ok)->fields().empty());
  auto f = INT32_SCHEMA()->fields_checked();
  REQUIRE_FALSE(f);
  CHECK(f.error().message == "Cannot list fields on non-struct type");
}

TEST_CASE("Struct put/get/validate with Connect's messages", "[pipeline][data]") {
  auto schema = build(SchemaBuilder::struct_()
                          .field("id", INT64_SCHEMA())
                          .field("name", OPTIONAL_STRING_SCHEMA())
                          .field("n", build(SchemaBuilder::int32().optional().default_value(Value(int32_t{5}))))
                          .field("tags", build(SchemaBuilder::array(STRING_SCHEMA()))));
  Struct s(schema);
  auto st = s.put("nope", Value(int32_t{1}));
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "nope is not a valid field name");
  st = s.put("id", Value(int32_t{1}));
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "Invalid Java object for schema with type INT64: class java.lang.Integer for field: \"id\"");
  st = s.put("id", Value());
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "Invalid value: null used for required field: \"id\", schema type: INT64");
  // Elements are checked without a field name, as Connect does.
  st = s.put("tags", Value(Array{Value("a"), Value(int32_t{2})}));
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "Invalid Java object for schema with type STRING: class java.lang.Integer");
  REQUIRE(s.put("tags", Value(Array{Value("a"), Value("b")})));

  // validate(): the required id is still null.
  auto v = s.validate();
  REQUIRE_FALSE(v);
  CHECK(v.error().message == "Invalid value: null used for required field: \"id\", schema type: INT64");
  REQUIRE(s.put("id", Value(int64_t{42})));
  CHECK(s.validate());

  // get() applies the field default; get_without_default() does not.
  CHECK(**s.get("n") == Value(int32_t{5}));
  CHECK((*s.get_without_default("n"))->is_null());
  auto typed = s.get_checked("id", Type::INT32);
  REQUIRE_FALSE(typed);
  CHECK(typed.error().message == "Field 'id' is not of type INT32");
  CHECK(s.to_string() == "Struct{id=42,tags=[a, b]}");

  // A nested struct must carry an equal schema.
  auto outer = build(SchemaBuilder::struct_().field("inner", schema));
  Struct o(outer);
  auto other = build(SchemaBuilder::struct_().field("id", INT64_SCHEMA()));
  Struct wrong(other);
  st = o.put("inner", Value(wrong));
  REQUIRE_FALSE(st);
  CHECK(st.error().message == "Struct schemas do not match.");
  REQUIRE(o.put("inner", Value(s)));

  // Logical types accept their Java classes only.
  auto ts = build(SchemaBuilder::struct_().field("t", build(timestamp_builder())));
  Struct t(ts);
  st = t.put("t", Value(int64_t{5}));
  REQUIRE_FALSE(st);
  CHECK(st.error().message ==
        "Invalid Java object for schema \"org.apache.kafka.connect.data.Timestamp\" with type INT64: class java.lang.Long "
        "for field: \"t\"");
  CHECK(t.put("t", Value(JavaDate{5})));

  auto not_struct = Struct::of(INT32_SCHEMA());
  REQUIRE_FALSE(not_struct);
  CHECK(not_struct.error().message == "Not a struct schema: Schema{INT32}");
}

TEST_CASE("BigDecimal text, two's complement bytes and Decimal", "[pipeline][data]") {
  auto d = BigDecimal::parse("12.34");
  REQUIRE(d);
  CHECK(d->scale == 2);
  CHECK(d->unscaled == std::string("\x04\xD2", 2));
  CHECK(d->to_string() == "12.34");
  CHECK(BigDecimal::parse("-0.01")->unscaled == std::string("\xFF", 1));
  CHECK(BigDecimal::parse("-0.01")->to_string() == "-0.01");
  CHECK(BigDecimal::parse("1.5E3")->to_string() == "1.5E+3");
  CHECK(BigDecimal::parse("1.5E3")->scale == -2);
  CHECK(BigDecimal::parse("1E-7")->to_string() == "1E-7");
  CHECK(BigDecimal::parse("0.0000001")->to_string() == "1E-7");
  CHECK(BigDecimal::parse("0.000001")->to_string() == "0.000001");
  CHECK(BigDecimal::parse("0")->to_string() == "0");
  CHECK(BigDecimal::parse("0.00")->unscaled == std::string(1, '\0'));
  CHECK(BigDecimal::parse("128")->unscaled == std::string("\x00\x80", 2));
  CHECK(BigDecimal::parse("-128")->unscaled == std::string("\x80", 1));
  CHECK(BigDecimal::parse("123456789012345678901234567890.123456789")->to_string() ==
        "123456789012345678901234567890.123456789");
  CHECK(BigDecimal::from_int64(-1234, 2).to_string() == "-12.34");
  CHECK_FALSE(BigDecimal::parse("1.2.3"));
  CHECK_FALSE(BigDecimal::parse("abc"));
  CHECK_FALSE(BigDecimal::parse("1e"));
  // 1.0 and 1.00 differ (BigDecimal.equals).
  CHECK_FALSE(Value(*BigDecimal::parse("1.0")) == Value(*BigDecimal::parse("1.00")));

  auto schema = build(decimal_builder(2));
  CHECK(schema->name() == std::string(kDecimalLogicalName));
  CHECK(*decimal_scale(*schema) == 2);
  auto bytes = decimal_from_logical(*schema, *BigDecimal::parse("12.34"));
  REQUIRE(bytes);
  CHECK(*decimal_to_logical(*schema, *bytes) == *BigDecimal::parse("12.34"));
  auto bad = decimal_from_logical(*schema, *BigDecimal::parse("1.5"));
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message ==
        "Decimal value has mismatching scale for given Decimal schema. Schema has scale 2, value has scale 1.");
  auto noscale = decimal_scale(*BYTES_SCHEMA());
  REQUIRE_FALSE(noscale);
  CHECK(noscale.error().message == "Invalid Decimal schema: scale parameter not found.");
}

TEST_CASE("Date, Time and Timestamp conversions", "[pipeline][data]") {
  auto date = build(date_builder());
  auto time = build(time_builder());
  auto ts = build(timestamp_builder());
  CHECK(*date_from_logical(*date, JavaDate{1705276800000}) == 19737);
  CHECK(date_to_logical(*date, 19737)->epoch_ms == 1705276800000);
  CHECK(date_to_logical(*date, -1)->epoch_ms == -86400000);
  auto notmidnight = date_from_logical(*date, JavaDate{1});
  REQUIRE_FALSE(notmidnight);
  CHECK(notmidnight.error().message == "Kafka Connect Date type should not have any time fields set to non-zero values.");
  CHECK_FALSE(date_from_logical(*INT32_SCHEMA(), JavaDate{0}));
  CHECK(*time_from_logical(*time, JavaDate{49530250}) == 49530250);
  CHECK_FALSE(time_from_logical(*time, JavaDate{-1}));
  auto big = time_to_logical(*time, 86400001);
  REQUIRE_FALSE(big);
  CHECK(big.error().message == "Time values must use number of milliseconds greater than 0 and less than 86400000");
  CHECK(*timestamp_from_logical(*ts, JavaDate{-5}) == -5);
  CHECK(timestamp_to_logical(*ts, 1700000000123)->epoch_ms == 1700000000123);
  CHECK(java_to_string(Value(JavaDate{1700000000123})) == "Tue Nov 14 22:13:20 UTC 2023");
  // Logical values have no schemaless type.
  CHECK_FALSE(schemaless_type(Value(JavaDate{0})));
  CHECK_FALSE(schemaless_type(Value(*BigDecimal::parse("1"))));
}

TEST_CASE("java_to_string of nested values", "[pipeline][data]") {
  auto schema = build(SchemaBuilder::struct_().field("id", INT64_SCHEMA()).field("tags", build(SchemaBuilder::array(STRING_SCHEMA()))));
  Struct s(schema);
  REQUIRE(s.put("id", Value(int64_t{7})));
  REQUIRE(s.put("tags", Value(Array{Value("x")})));
  Value v(Map{{Value("a"), Value(Array{Value(int32_t{1}), Value(Map{{Value("k"), Value()}})})},
              {Value(true), Value(s)}});
  CHECK(java_to_string(v) == "{a=[1, {k=null}], true=Struct{id=7,tags=[x]}}");
  CHECK(java_to_string(Value(Array{})) == "[]");
  CHECK(java_to_string(Value(Map{})) == "{}");

  // A map whose four keys and values are the level below, six levels deep
  // (8^6 leaves), as a plugin builds in a few calls: the text is built in
  // one buffer, and its length follows from the shape.
  Value leaf(int32_t{1});
  size_t len = 1;
  for (int depth = 0; depth < 6; ++depth) {
    Map m;
    for (int i = 0; i < 4; ++i) m.emplace_back(leaf, leaf);
    leaf = Value(std::move(m));
    len = 2 + 8 * len + 4 /* '=' */ + 3 * 2 /* ", " */;
  }
  CHECK(java_to_string(leaf).size() == len);
}

TEST_CASE("Java number text", "[pipeline][data]") {
  CHECK(java_double_to_string(1.0) == "1.0");
  CHECK(java_double_to_string(1e20) == "1.0E20");
  CHECK(java_double_to_string(1e-7) == "1.0E-7");
  CHECK(java_double_to_string(0.001) == "0.001");
  CHECK(java_double_to_string(1234567.0) == "1234567.0");
  CHECK(java_double_to_string(12345678.0) == "1.2345678E7");
  CHECK(java_double_to_string(-2.5e-3) == "-0.0025");
  CHECK(java_double_to_string(3.141592653589793) == "3.141592653589793");
  CHECK(java_double_to_string(-0.0) == "-0.0");
  CHECK(java_double_to_string(std::numeric_limits<double>::quiet_NaN()) == "NaN");
  CHECK(java_double_to_string(-std::numeric_limits<double>::infinity()) == "-Infinity");
  CHECK(java_float_to_string(3.4028235e38f) == "3.4028235E38");
  CHECK(java_float_to_string(0.1f) == "0.1");
  CHECK(java_float_to_string(100.0f) == "100.0");
  // Float.equals: NaN equals NaN, 0.0 differs from -0.0.
  CHECK(Value(std::nan("")) == Value(std::nan("")));
  CHECK_FALSE(Value(0.0) == Value(-0.0));
  CHECK_FALSE(Value(int32_t{1}) == Value(int64_t{1}));
}

TEST_CASE("records and headers", "[pipeline][data]") {
  SinkRecord r;
  r.topic = "orders";
  r.kafka_partition = 3;
  r.kafka_offset = 42;
  r.key_schema = STRING_SCHEMA();
  r.key = Value("k1");
  r.headers.add("h", STRING_SCHEMA(), Value("a"));
  r.headers.add("h", INT32_SCHEMA(), Value(int32_t{2}));
  r.headers.add("g", nullptr, Value());
  CHECK(r.headers.size() == 3);
  REQUIRE(r.headers.last_with_name("h"));
  CHECK(r.headers.last_with_name("h")->value == Value(int32_t{2}));
  r.headers.remove("h");
  CHECK(r.headers.size() == 1);
  CHECK(r.headers.last_with_name("h") == nullptr);
  SourceRecord s;
  s.source_partition.emplace_back(Value("file"), Value("/tmp/x"));
  s.source_offset.emplace_back(Value("position"), Value(int64_t{10}));
  CHECK(s.source_offset.front().second == Value(int64_t{10}));
  CHECK(timestamp_type_name(TimestampType::CREATE_TIME) == "CreateTime");
}
