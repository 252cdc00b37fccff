#pragma once
// Connect's schemas (org.apache.kafka.connect.data.Schema, ConnectSchema,
// SchemaBuilder, Field) and the logical types Decimal, Date, Time and
// Timestamp. No I/O; immutable once built, so a SchemaPtr is shared freely
// between threads.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kc::data {

struct Value;
class Schema;

/// A built schema, shared and immutable. nullptr means "no schema"
/// (schemaless data), as a Java `null` Schema does in Connect.
using SchemaPtr = std::shared_ptr<const Schema>;

/// Connect's Schema.Type.
enum class Type { INT8, INT16, INT32, INT64, FLOAT32, FLOAT64, BOOLEAN, STRING, BYTES, ARRAY, MAP, STRUCT };

/// Upper-case name as Java's enum prints it ("INT32", "STRUCT").
std::string_view type_name(Type t);
/// Lower-case name as Connect's Schema.Type.getName() ("int32"): the names of
/// the vector notation. JsonConverter writes "float"/"double" instead.
std::string_view type_lower_name(Type t);
/// Parses a lower-case Connect type name; nullopt when unknown.
std::optional<Type> type_from_lower_name(std::string_view name);
/// True for INT8..STRING and BYTES (Schema.Type.isPrimitive()).
bool is_primitive(Type t);

/// Schema parameters: string -> string in insertion order (a Java
/// LinkedHashMap). Order matters for output (JsonConverter writes it) but
/// not for equality (Java Map.equals ignores order).
using Parameters = std::vector<std::pair<std::string, std::string>>;

/// One field of a STRUCT schema (Connect's Field): name, position in the
/// struct (0-based) and schema.
struct Field {
  std::string name;
  int index = 0;
  SchemaPtr schema;
};

/// Connect's ConnectSchema. Build one with SchemaBuilder, or use the
/// predefined schemas below. Accessors mirror Schema's methods; attributes
/// that Java leaves null are empty optionals here.
class Schema {
 public:
  /// Schema.type() and Schema.isOptional().
  Type type() const { return type_; }
  bool optional() const { return optional_; }
  /// The default value, or nullptr when there is none (a Java null default).
  const Value* default_value() const { return default_.get(); }
  /// Schema.name(), version() and doc(); nullopt where Java returns null.
  const std::optional<std::string>& name() const { return name_; }
  const std::optional<int32_t>& version() const { return version_; }
  const std::optional<std::string>& doc() const { return doc_; }
  /// nullopt = no parameter map (Java null); an empty map is distinct.
  const std::optional<Parameters>& parameters() const { return parameters_; }
  /// The value of parameter `key`, or nullptr.
  const std::string* parameter(std::string_view key) const;
  /// MAP only (nullptr otherwise).
  const SchemaPtr& key_schema() const { return key_schema_; }
  /// ARRAY and MAP only (nullptr otherwise; may be nullptr for an ARRAY
  /// built by Values.parseString-style inference).
  const SchemaPtr& value_schema() const { return value_schema_; }
  /// STRUCT only: the fields in order. Empty for other types; use
  /// fields_checked() to get Connect's error on non-struct types.
  const std::vector<Field>& fields() const { return fields_; }
  /// Connect's fields(): errors with "Cannot list fields on non-struct type"
  /// when this is not a STRUCT.
  Result<const std::vector<Field>*> fields_checked() const;
  /// Field by name (STRUCT only); nullptr when absent or not a struct.
  const Field* field(std::string_view name) const;

  /// Connect's toString(): "Schema{NAME:TYPE}" or "Schema{TYPE}".
  std::string to_string() const;

  /// Structural equality as ConnectSchema.equals: type, optional, default
  /// (deep), name, version, doc, parameters (order-insensitive), fields,
  /// key and value schemas.
  friend bool operator==(const Schema& a, const Schema& b);

 private:
  friend class SchemaBuilder;
  Type type_ = Type::INT8;
  bool optional_ = false;
  std::shared_ptr<const Value> default_;
  std::optional<std::string> name_;
  std::optional<int32_t> version_;
  std::optional<std::string> doc_;
  std::optional<Parameters> parameters_;
  SchemaPtr key_schema_;
  SchemaPtr value_schema_;
  std::vector<Field> fields_;
};

/// Equality of two possibly-null schemas (Objects.equals): both null, or
/// both non-null and equal.
bool schema_equals(const SchemaPtr& a, const SchemaPtr& b);

/// Connect's SchemaBuilder. Setters record the first error (Connect throws a
/// SchemaBuilderException; here build() returns it) with Connect's message,
/// e.g. "Invalid SchemaBuilder call: name has already been set.".
/// Setters chain: `SchemaBuilder::struct_().name("x").field("a", INT32()).build()`.
class SchemaBuilder {
 public:
  /// A required schema of `type` with nothing else set (use the factories
  /// below for ARRAY and MAP, which need element schemas).
  explicit SchemaBuilder(Type type);
  /// SchemaBuilder.int8() ... bytes() and struct(): builders of one type.
  static SchemaBuilder int8() { return SchemaBuilder(Type::INT8); }
  static SchemaBuilder int16() { return SchemaBuilder(Type::INT16); }
  static SchemaBuilder int32() { return SchemaBuilder(Type::INT32); }
  static SchemaBuilder int64() { return SchemaBuilder(Type::INT64); }
  static SchemaBuilder float32() { return SchemaBuilder(Type::FLOAT32); }
  static SchemaBuilder float64() { return SchemaBuilder(Type::FLOAT64); }
  static SchemaBuilder boolean() { return SchemaBuilder(Type::BOOLEAN); }
  static SchemaBuilder string() { return SchemaBuilder(Type::STRING); }
  static SchemaBuilder bytes() { return SchemaBuilder(Type::BYTES); }
  static SchemaBuilder struct_() { return SchemaBuilder(Type::STRUCT); }
  /// ARRAY of `value_schema` ("valueSchema cannot be null." when null).
  static SchemaBuilder array(SchemaPtr value_schema);
  /// ARRAY whose element schema is left null (what Values.parseString builds
  /// for mixed arrays); Connect's SchemaBuilder cannot make this.
  static SchemaBuilder array_without_element_schema();
  /// MAP from key to value schema (both required).
  static SchemaBuilder map(SchemaPtr key_schema, SchemaPtr value_schema);

  /// Marks the schema optional (null allowed) / required (the default).
  SchemaBuilder& optional();
  SchemaBuilder& required();
  /// Sets the default after validating it against the schema so far
  /// ("Invalid default value" on mismatch). Only settable once.
  SchemaBuilder& default_value(Value v);
  /// Name, version and doc, each settable once ("Invalid SchemaBuilder
  /// call: name has already been set." when set again to another value).
  SchemaBuilder& name(std::string n);
  SchemaBuilder& version(int32_t v);
  SchemaBuilder& doc(std::string d);
  /// Adds (or replaces, keeping its position) one parameter.
  SchemaBuilder& parameter(std::string key, std::string value);
  /// Adds every parameter of `params` in order (creates an empty map when
  /// `params` is empty, as Java's parameters(emptyMap) does).
  SchemaBuilder& parameters(const Parameters& params);
  /// Appends a STRUCT field. Errors: "Cannot create fields on type T",
  /// "fieldName cannot be null.", "Cannot create field because of field name
  /// duplication NAME".
  SchemaBuilder& field(std::string field_name, SchemaPtr schema);

  /// What has been set so far.
  Type type() const { return s_.type_; }
  bool is_optional() const { return s_.optional_; }
  const std::optional<std::string>& name_value() const { return s_.name_; }
  const std::vector<Field>& fields() const { return s_.fields_; }
  /// A view of the schema as built so far (no error check), e.g. to
  /// validate a default against it.
  const Schema& peek() const { return s_; }

  /// The first error any setter hit, or the built schema.
  Result<SchemaPtr> build() const;

 private:
  Schema s_;
  std::optional<Error> error_;
};

// Predefined schemas (Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA, ...).
const SchemaPtr& INT8_SCHEMA();
const SchemaPtr& INT16_SCHEMA();
const SchemaPtr& INT32_SCHEMA();
const SchemaPtr& INT64_SCHEMA();
const SchemaPtr& FLOAT32_SCHEMA();
const SchemaPtr& FLOAT64_SCHEMA();
const SchemaPtr& BOOLEAN_SCHEMA();
const SchemaPtr& STRING_SCHEMA();
const SchemaPtr& BYTES_SCHEMA();
const SchemaPtr& OPTIONAL_INT8_SCHEMA();
const SchemaPtr& OPTIONAL_INT16_SCHEMA();
const SchemaPtr& OPTIONAL_INT32_SCHEMA();
const SchemaPtr& OPTIONAL_INT64_SCHEMA();
const SchemaPtr& OPTIONAL_FLOAT32_SCHEMA();
const SchemaPtr& OPTIONAL_FLOAT64_SCHEMA();
const SchemaPtr& OPTIONAL_BOOLEAN_SCHEMA();
const SchemaPtr& OPTIONAL_STRING_SCHEMA();
const SchemaPtr& OPTIONAL_BYTES_SCHEMA();

// Logical types (org.apache.kafka.connect.data.Decimal/Date/Time/Timestamp).
inline constexpr std::string_view kDecimalLogicalName = "org.apache.kafka.connect.data.Decimal";
inline constexpr std::string_view kDateLogicalName = "org.apache.kafka.connect.data.Date";
inline constexpr std::string_view kTimeLogicalName = "org.apache.kafka.connect.data.Time";
inline constexpr std::string_view kTimestampLogicalName = "org.apache.kafka.connect.data.Timestamp";
/// Decimal's scale parameter key.
inline constexpr std::string_view kDecimalScaleParameter = "scale";
inline constexpr int64_t kMillisPerDay = 86400000;

/// Decimal.builder(scale): BYTES named Decimal, version 1, {"scale": "<scale>"}.
SchemaBuilder decimal_builder(int32_t scale);
/// Date.builder(): INT32 named Date, version 1 (days since the epoch on the wire).
SchemaBuilder date_builder();
/// Time.builder(): INT32 named Time, version 1 (milliseconds since midnight).
SchemaBuilder time_builder();
/// Timestamp.builder(): INT64 named Timestamp, version 1 (epoch milliseconds).
SchemaBuilder timestamp_builder();
/// The scale parameter of a Decimal schema. Errors as Decimal.scale():
/// "Invalid Decimal schema: scale parameter not found." or "Invalid scale
/// parameter found in Decimal schema: ".
Result<int32_t> decimal_scale(const Schema& schema);

}  // namespace kc::data
