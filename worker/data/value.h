#pragma once
// Connect values: what a Java Object holding Connect data can be (Byte,
// Short, Integer, Long, Float, Double, Boolean, String, byte[], List, Map,
// Struct, BigDecimal, java.util.Date), Struct, and the validation rules of
// ConnectSchema.validateValue with Connect's messages.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "common/result.h"
#include "worker/data/schema.h"

namespace kc::data {

/// a / b rounded toward negative infinity (Java's Math.floorDiv): dates and
/// times before the epoch (negative ms) fall in the right day and second.
/// `b` must not be 0.
inline int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

/// A Java byte[] (distinct from a String). Holds raw octets.
struct Bytes {
  std::string data;
  friend bool operator==(const Bytes&, const Bytes&) = default;
};

/// java.util.Date: epoch milliseconds (UTC). The value of Date, Time and
/// Timestamp logical types; Date values are whole UTC days, Time values lie
/// in [0, 86400000].
struct JavaDate {
  int64_t epoch_ms = 0;
  friend bool operator==(const JavaDate&, const JavaDate&) = default;
};

/// java.math.BigDecimal: unscaled * 10^-scale, arbitrary precision.
/// `unscaled` is the minimal big-endian two's complement encoding
/// (BigInteger.toByteArray(), at least one byte), which is also Decimal's
/// wire form. Equality is BigDecimal.equals: 1.0 != 1.00.
struct BigDecimal {
  std::string unscaled{std::string(1, '\0')};
  int32_t scale = 0;

  /// Parses Java BigDecimal text: optional sign, digits with an optional
  /// point, optional exponent ("12.34", "-1E-7", "1.5E+3"). Scale is
  /// (digits after the point) - exponent. Errors on anything else.
  static Result<BigDecimal> parse(std::string_view text);
  /// From an unscaled two's complement big-endian byte string (any length >= 1).
  static BigDecimal from_unscaled_bytes(std::string_view bytes, int32_t scale);
  /// From a 64-bit unscaled value.
  static BigDecimal from_int64(int64_t unscaled, int32_t scale);
  /// BigDecimal.toString(): plain when scale >= 0 and the adjusted exponent
  /// >= -6, otherwise scientific ("1.2E+3", "1E-7").
  std::string to_string() const;
  /// The unscaled value in decimal, with a leading '-' when negative.
  std::string unscaled_decimal() const;
  bool is_negative() const { return !unscaled.empty() && (static_cast<unsigned char>(unscaled[0]) & 0x80); }
  /// The value as the nearest double (BigDecimal.doubleValue()).
  double to_double() const;
  friend bool operator==(const BigDecimal&, const BigDecimal&) = default;
};

class Struct;
struct Value;

/// A java.util.List of values.
using Array = std::vector<Value>;
/// A java.util.Map in iteration order: (key, value) pairs. Keys are values
/// too (Connect maps may have int, boolean, ... keys).
using Map = std::vector<std::pair<Value, Value>>;

/// Connect's Struct: a value for a STRUCT schema, one slot per field
/// (Java null = a null Value). Only fields of its schema can be set, and
/// put() validates the value against the field's schema.
class Struct {
 public:
  /// A struct with every field null. Precondition: `schema` is a non-null
  /// STRUCT schema (use of() for a checked version).
  explicit Struct(SchemaPtr schema);
  /// Checked constructor: "Not a struct schema: Schema{...}" otherwise.
  static Result<Struct> of(SchemaPtr schema);

  /// Struct.schema(): the STRUCT schema this struct was made for.
  const SchemaPtr& schema() const { return schema_; }

  /// Struct.put(String, Object): errors "NAME is not a valid field name" and
  /// ConnectSchema.validateValue's messages, e.g. "Invalid value: null used
  /// for required field: \"a\", schema type: INT32". The struct is
  /// unchanged on error.
  Status put(std::string_view field_name, Value value);
  /// Sets a slot by field index without validation (converters and
  /// transforms that build values they know are valid).
  void put_unchecked(size_t index, Value value);

  /// Struct.get(String): the stored value, or the field's default when the
  /// stored value is null. "NAME is not a valid field name" if unknown.
  Result<const Value*> get(std::string_view field_name) const;
  /// Struct.getWithoutDefault(String): the raw stored value.
  Result<const Value*> get_without_default(std::string_view field_name) const;
  /// The typed getters (getInt32, getString, ...): like get_without_default
  /// but also checks the field's schema type: "Field 'NAME' is not of type TYPE".
  Result<const Value*> get_checked(std::string_view field_name, Type type) const;
  /// Raw slot by index (no default). Precondition: index < fields().size().
  const Value& at(size_t index) const;

  /// Struct.validate(): every field's value is valid for its schema; a null
  /// is accepted for an optional field or one with a default.
  Status validate() const;

  /// Java's Struct.toString(): "Struct{a=1,b=x}" (null fields left out).
  std::string to_string() const;
  /// Appends to_string() to `out` (java_to_string builds one buffer).
  void append_to(std::string& out) const;

  /// Struct.equals: equal schemas and equal values field by field.
  friend bool operator==(const Struct& a, const Struct& b);

 private:
  SchemaPtr schema_;
  std::vector<Value> values_;
};

/// One Connect value: a Java null or an object of one of Connect's classes.
/// The alternative held *is* the Java class (int32_t = Integer, Bytes =
/// byte[], Array = List, ...), so schemaless data keeps its type.
struct Value {
  using Variant = std::variant<std::monostate, int8_t, int16_t, int32_t, int64_t, float, double, bool, std::string,
                               Bytes, Array, Map, Struct, BigDecimal, JavaDate>;
  Variant v;

  /// A Java null.
  Value() = default;
  /// One constructor per Java class (implicit, so `Value(int32_t{5})`,
  /// `Value("text")`, `Value(Array{...})` read naturally).
  Value(std::monostate) {}                              // NOLINT: implicit by design
  Value(int8_t x) : v(x) {}                             // NOLINT
  Value(int16_t x) : v(x) {}                            // NOLINT
  Value(int32_t x) : v(x) {}                            // NOLINT
  Value(int64_t x) : v(x) {}                            // NOLINT
  Value(float x) : v(x) {}                              // NOLINT
  Value(double x) : v(x) {}                             // NOLINT
  Value(bool x) : v(x) {}                               // NOLINT
  Value(std::string x) : v(std::move(x)) {}             // NOLINT
  Value(const char* x) : v(std::string(x)) {}           // NOLINT
  Value(Bytes x) : v(std::move(x)) {}                   // NOLINT
  Value(Array x) : v(std::move(x)) {}                   // NOLINT
  Value(Map x) : v(std::move(x)) {}                     // NOLINT
  Value(Struct x) : v(std::move(x)) {}                  // NOLINT
  Value(BigDecimal x) : v(std::move(x)) {}              // NOLINT
  Value(JavaDate x) : v(x) {}                           // NOLINT

  /// True for a Java null.
  bool is_null() const { return v.index() == 0; }
  /// Class checks and access: is<int32_t>(), as<Struct>() (throws
  /// std::bad_variant_access on the wrong class), get_if<Bytes>() (nullptr
  /// on the wrong class).
  template <typename T>
  bool is() const { return std::holds_alternative<T>(v); }
  template <typename T>
  const T& as() const { return std::get<T>(v); }
  template <typename T>
  T& as() { return std::get<T>(v); }
  template <typename T>
  const T* get_if() const { return std::get_if<T>(&v); }

  /// Java equals (deep for byte[], lists, maps and structs; floats compare
  /// bit patterns as Float.equals does, so NaN == NaN and 0.0 != -0.0).
  /// Maps compare as Java maps: same entries in any order.
  friend bool operator==(const Value& a, const Value& b);
};

/// The Java class name of the object a value stands for, as Class.toString()
/// prints it without the "class " prefix: "java.lang.Integer", "[B",
/// "java.util.ArrayList", "java.util.HashMap",
/// "org.apache.kafka.connect.data.Struct", "java.math.BigDecimal",
/// "java.util.Date". Empty for null.
std::string java_class_name(const Value& v);

/// ConnectSchema.schemaType(value.getClass()): the schema type a schemaless
/// value has; nullopt for null, BigDecimal and Date (no schemaless type).
std::optional<Type> schemaless_type(const Value& v);

/// ConnectSchema.validateValue(field, schema, value) with Connect's
/// messages. `field` is the field name used in messages; nullptr prints as
/// Java's "null" in the null check and omits the " for field" suffix in the
/// class check, as Connect does.
Status validate_value(const char* field, const Schema& schema, const Value& value);
/// validate_value without a field name (ConnectSchema.validateValue(schema, value)).
inline Status validate_value(const Schema& schema, const Value& value) { return validate_value(nullptr, schema, value); }

/// Java's String.valueOf(value) for Connect values: Integer "42", Float
/// "1.0E10", List "[1, 2]", Map "{a=1}", Struct "Struct{...}", BigDecimal
/// toString, Date "Tue Nov 14 22:13:20 UTC 2023" (UTC), null "null". byte[]
/// (whose Java text is an identity hash) is returned as its raw bytes.
std::string java_to_string(const Value& v);

/// Java Double.toString / Float.toString: the shortest text that reads back
/// to the same number at that width, in Java's layout ("1.0", "1.0E10",
/// "1.0E-7", "NaN", "Infinity").
std::string java_double_to_string(double d);
std::string java_float_to_string(float f);

// Logical type conversions (Decimal/Date/Time/Timestamp fromLogical/toLogical).
/// Decimal.fromLogical: the unscaled bytes; errors when the value's scale
/// differs from the schema's ("Decimal value has mismatching scale for given
/// Decimal schema. Schema has scale 2, value has scale 1.").
Result<std::string> decimal_from_logical(const Schema& schema, const BigDecimal& value);
/// Decimal.toLogical: the BigDecimal with the schema's scale.
Result<BigDecimal> decimal_to_logical(const Schema& schema, std::string_view bytes);
/// Date.fromLogical: days since the epoch; errors when the schema is not a
/// Date or the value is not midnight UTC.
Result<int32_t> date_from_logical(const Schema& schema, JavaDate value);
/// Date.toLogical: days -> java.util.Date.
Result<JavaDate> date_to_logical(const Schema& schema, int32_t days);
/// Time.fromLogical: milliseconds since midnight, in [0, 86400000].
Result<int32_t> time_from_logical(const Schema& schema, JavaDate value);
/// Time.toLogical.
Result<JavaDate> time_to_logical(const Schema& schema, int32_t millis);
/// Timestamp.fromLogical / toLogical.
Result<int64_t> timestamp_from_logical(const Schema& schema, JavaDate value);
Result<JavaDate> timestamp_to_logical(const Schema& schema, int64_t millis);

/// Connect's SchemaAndValue: a schema (nullptr = none) and a value.
struct SchemaAndValue {
  SchemaPtr schema;
  Value value;
};

}  // namespace kc::data
