#include "worker/data/schema.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "worker/data/value.h"

namespace kc::data {

namespace {

constexpr std::array<std::string_view, 12> kUpper{"INT8",    "INT16",   "INT32",  "INT64", "FLOAT32", "FLOAT64",
                                                   "BOOLEAN", "STRING", "BYTES", "ARRAY", "MAP",     "STRUCT"};
constexpr std::array<std::string_view, 12> kLower{"int8",    "int16",  "int32", "int64", "float32", "float64",
                                                   "boolean", "string", "bytes", "array", "map",     "struct"};

Error builder_error(std::string message) { return Error{"", std::move(message)}; }

bool params_equal(const std::optional<Parameters>& a, const std::optional<Parameters>& b) {
  if (a.has_value() != b.has_value()) return false;
  if (!a) return true;
  if (a->size() != b->size()) return false;
  // Java Map.equals: same key set and values, order ignored.
  for (const auto& [k, v] : *a) {
    auto it = std::find_if(b->begin(), b->end(), [&k = k](const auto& e) { return e.first == k; });
    if (it == b->end() || it->second != v) return false;
  }
  return true;
}

SchemaPtr make_simple(Type t, bool optional) {
  SchemaBuilder b(t);
  if (optional) b.optional();
  return b.build().value();
}

}  // namespace

std::string_view type_name(Type t) { return kUpper[static_cast<size_t>(t)]; }
std::string_view type_lower_name(Type t) { return kLower[static_cast<size_t>(t)]; }

std::optional<Type> type_from_lower_name(std::string_view name) {
  for (size_t i = 0; i < kLower.size(); ++i)
    if (kLower[i] == name) return static_cast<Type>(i);
  return std::nullopt;
}

bool is_primitive(Type t) { return t != Type::ARRAY && t != Type::MAP && t != Type::STRUCT; }

const std::string* Schema::parameter(std::string_view key) const {
  if (!parameters_) return nullptr;
  for (const auto& [k, v] : *parameters_)
    if (k == key) return &v;
  return nullptr;
}

Result<const std::vector<Field>*> Schema::fields_checked() const {
  if (type_ != Type::STRUCT) return Error{"", "Cannot list fields on non-struct type"};
  return &fields_;
}

const Field* Schema::field(std::string_view name) const {
  for (const auto& f : fields_)
    if (f.name == name) return &f;
  return nullptr;
}

std::string Schema::to_string() const {
  if (name_) return "Schema{" + *name_ + ":" + std::string(type_name(type_)) + "}";
  return "Schema{" + std::string(type_name(type_)) + "}";
}

bool operator==(const Schema& a, const Schema& b) {
  if (&a == &b) return true;
  if (a.type_ != b.type_ || a.optional_ != b.optional_ || a.name_ != b.name_ || a.version_ != b.version_ ||
      a.doc_ != b.doc_)
    return false;
  if ((a.default_ == nullptr) != (b.default_ == nullptr)) return false;
  if (a.default_ && !(*a.default_ == *b.default_)) return false;
  if (!params_equal(a.parameters_, b.parameters_)) return false;
  if (!schema_equals(a.key_schema_, b.key_schema_) || !schema_equals(a.value_schema_, b.value_schema_)) return false;
  if (a.fields_.size() != b.fields_.size()) return false;
  for (size_t i = 0; i < a.fields_.size(); ++i) {
    const auto& fa = a.fields_[i];
    const auto& fb = b.fields_[i];
    if (fa.name != fb.name || fa.index != fb.index || !schema_equals(fa.schema, fb.schema)) return false;
  }
  return true;
}

bool schema_equals(const SchemaPtr& a, const SchemaPtr& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  return *a == *b;
}

SchemaBuilder::SchemaBuilder(Type type) { s_.type_ = type; }

SchemaBuilder SchemaBuilder::array(SchemaPtr value_schema) {
  SchemaBuilder b(Type::ARRAY);
  if (!value_schema) b.error_ = builder_error("valueSchema cannot be null.");
  b.s_.value_schema_ = std::move(value_schema);
  return b;
}

SchemaBuilder SchemaBuilder::array_without_element_schema() { return SchemaBuilder(Type::ARRAY); }

SchemaBuilder SchemaBuilder::map(SchemaPtr key_schema, SchemaPtr value_schema) {
  SchemaBuilder b(Type::MAP);
  if (!key_schema)
    b.error_ = builder_error("keySchema cannot be null.");
  else if (!value_schema)
    b.error_ = builder_error("valueSchema cannot be null.");
  b.s_.key_schema_ = std::move(key_schema);
  b.s_.value_schema_ = std::move(value_schema);
  return b;
}

SchemaBuilder& SchemaBuilder::optional() {
  s_.optional_ = true;
  return *this;
}

SchemaBuilder& SchemaBuilder::required() {
  s_.optional_ = false;
  return *this;
}

SchemaBuilder& SchemaBuilder::default_value(Value v) {
  if (error_) return *this;
  if (s_.default_ && !(*s_.default_ == v)) {
    error_ = builder_error("Invalid SchemaBuilder call: default has already been set.");
    return *this;
  }
  auto st = validate_value(s_, v);
  if (!st) {
    error_ = builder_error("Invalid default value");
    return *this;
  }
  // A null default is "no default" (Java stores null).
  if (v.is_null())
    s_.default_.reset();
  else
    s_.default_ = std::make_shared<const Value>(std::move(v));
  return *this;
}

SchemaBuilder& SchemaBuilder::name(std::string n) {
  if (!error_ && s_.name_ && *s_.name_ != n)
    error_ = builder_error("Invalid SchemaBuilder call: name has already been set.");
  else
    s_.name_ = std::move(n);
  return *this;
}

SchemaBuilder& SchemaBuilder::version(int32_t v) {
  if (!error_ && s_.version_ && *s_.version_ != v)
    error_ = builder_error("Invalid SchemaBuilder call: version has already been set.");
  else
    s_.version_ = v;
  return *this;
}

SchemaBuilder& SchemaBuilder::doc(std::string d) {
  if (!error_ && s_.doc_ && *s_.doc_ != d)
    error_ = builder_error("Invalid SchemaBuilder call: doc has already been set.");
  else
    s_.doc_ = std::move(d);
  return *this;
}

SchemaBuilder& SchemaBuilder::parameter(std::string key, std::string value) {
  if (!s_.parameters_) s_.parameters_.emplace();
  for (auto& [k, v] : *s_.parameters_) {
    if (k == key) {
      v = std::move(value);
      return *this;
    }
  }
  s_.parameters_->emplace_back(std::move(key), std::move(value));
  return *this;
}

SchemaBuilder& SchemaBuilder::parameters(const Parameters& params) {
  if (!s_.parameters_) s_.parameters_.emplace();
  for (const auto& [k, v] : params) parameter(k, v);
  return *this;
}

SchemaBuilder& SchemaBuilder::field(std::string field_name, SchemaPtr schema) {
  if (error_) return *this;
  if (s_.type_ != Type::STRUCT) {
    error_ = builder_error("Cannot create fields on type " + std::string(type_name(s_.type_)));
  } else if (field_name.empty()) {
    error_ = builder_error("fieldName cannot be null.");
  } else if (!schema) {
    error_ = builder_error("fieldSchema for field " + field_name + " cannot be null.");
  } else if (s_.field(field_name) != nullptr) {
    error_ = builder_error("Cannot create field because of field name duplication " + field_name);
  } else {
    int index = static_cast<int>(s_.fields_.size());
    s_.fields_.push_back(Field{std::move(field_name), index, std::move(schema)});
  }
  return *this;
}

Result<SchemaPtr> SchemaBuilder::build() const {
  if (error_) return *error_;
  return SchemaPtr(std::make_shared<const Schema>(s_));
}

#define KC_PREDEFINED(fn, type, opt)            \
  const SchemaPtr& fn() {                       \
    static const SchemaPtr s = make_simple(type, opt); \
    return s;                                   \
  }
KC_PREDEFINED(INT8_SCHEMA, Type::INT8, false)
KC_PREDEFINED(INT16_SCHEMA, Type::INT16, false)
KC_PREDEFINED(INT32_SCHEMA, Type::INT32, false)
KC_PREDEFINED(INT64_SCHEMA, Type::INT64, false)
KC_PREDEFINED(FLOAT32_SCHEMA, Type::FLOAT32, false)
KC_PREDEFINED(FLOAT64_SCHEMA, Type::FLOAT64, false)
KC_PREDEFINED(BOOLEAN_SCHEMA, Type::BOOLEAN, false)
KC_PREDEFINED(STRING_SCHEMA, Type::STRING, false)
KC_PREDEFINED(BYTES_SCHEMA, Type::BYTES, false)
KC_PREDEFINED(OPTIONAL_INT8_SCHEMA, Type::INT8, true)
KC_PREDEFINED(OPTIONAL_INT16_SCHEMA, Type::INT16, true)
KC_PREDEFINED(OPTIONAL_INT32_SCHEMA, Type::INT32, true)
KC_PREDEFINED(OPTIONAL_INT64_SCHEMA, Type::INT64, true)
KC_PREDEFINED(OPTIONAL_FLOAT32_SCHEMA, Type::FLOAT32, true)
KC_PREDEFINED(OPTIONAL_FLOAT64_SCHEMA, Type::FLOAT64, true)
KC_PREDEFINED(OPTIONAL_BOOLEAN_SCHEMA, Type::BOOLEAN, true)
KC_PREDEFINED(OPTIONAL_STRING_SCHEMA, Type::STRING, true)
KC_PREDEFINED(OPTIONAL_BYTES_SCHEMA, Type::BYTES, true)
#undef KC_PREDEFINED

SchemaBuilder decimal_builder(int32_t scale) {
  SchemaBuilder b = SchemaBuilder::bytes();
  b.name(std::string(kDecimalLogicalName)).parameter(std::string(kDecimalScaleParameter), std::to_string(scale));
  b.version(1);
  return b;
}

SchemaBuilder date_builder() {
  SchemaBuilder b = SchemaBuilder::int32();
  b.name(std::string(kDateLogicalName)).version(1);
  return b;
}

SchemaBuilder time_builder() {
  SchemaBuilder b = SchemaBuilder::int32();
  b.name(std::string(kTimeLogicalName)).version(1);
  return b;
}

SchemaBuilder timestamp_builder() {
  SchemaBuilder b = SchemaBuilder::int64();
  b.name(std::string(kTimestampLogicalName)).version(1);
  return b;
}

Result<int32_t> decimal_scale(const Schema& schema) {
  const std::string* text = schema.parameter(kDecimalScaleParameter);
  if (text == nullptr) return Error{"", "Invalid Decimal schema: scale parameter not found."};
  int32_t scale = 0;
  const char* b = text->data();
  const char* e = b + text->size();
  if (b != e && *b == '+') ++b;  // Integer.parseInt accepts a leading '+'
  auto [p, ec] = std::from_chars(b, e, scale);
  if (ec != std::errc() || p != e || b == e)
    return Error{"", "Invalid scale parameter found in Decimal schema: "};
  return scale;
}

}  // namespace kc::data
