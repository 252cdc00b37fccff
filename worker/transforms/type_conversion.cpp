// Type conversion: Cast (numbers, booleans, strings, base64 bytes) and TimestampConverter.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

#include "common/strings.h"
#include "worker/data/base64.h"
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"
#include "worker/transforms/date_format.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- Java numbers

// Java's (long) of a double: NaN -> 0, saturating at the range ends.
int64_t d2l(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 9.2233720368547758e18) return std::numeric_limits<int64_t>::max();
  if (d <= -9.2233720368547758e18) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(d);
}
// Java's (int) of a double.
int32_t d2i(double d) {
  if (std::isnan(d)) return 0;
  if (d >= 2147483647.0) return std::numeric_limits<int32_t>::max();
  if (d <= -2147483648.0) return std::numeric_limits<int32_t>::min();
  return static_cast<int32_t>(d);
}
// BigDecimal.longValue(): the low 64 bits of the truncated integer part.
int64_t big_decimal_long(const data::BigDecimal& b) {
  std::string digits = b.unscaled_decimal();
  bool neg = !digits.empty() && digits[0] == '-';
  if (neg) digits.erase(0, 1);
  if (b.scale > 0)
    digits = static_cast<int32_t>(digits.size()) > b.scale ? digits.substr(0, digits.size() - static_cast<size_t>(b.scale)) : "0";
  else if (b.scale < 0)
    digits.append(static_cast<size_t>(-b.scale), '0');
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  if (neg) v = ~v + 1;
  return static_cast<int64_t>(v);
}

// Number.longValue / intValue / doubleValue / floatValue for Connect's number classes.
bool is_number(const Value& v) {
  return v.is<int8_t>() || v.is<int16_t>() || v.is<int32_t>() || v.is<int64_t>() || v.is<float>() || v.is<double>() ||
         v.is<data::BigDecimal>();
}
int64_t long_value(const Value& v) {
  if (auto* x = v.get_if<int8_t>()) return *x;
  if (auto* x = v.get_if<int16_t>()) return *x;
  if (auto* x = v.get_if<int32_t>()) return *x;
  if (auto* x = v.get_if<int64_t>()) return *x;
  if (auto* x = v.get_if<float>()) return d2l(*x);
  if (auto* x = v.get_if<double>()) return d2l(*x);
  if (auto* x = v.get_if<data::BigDecimal>()) return big_decimal_long(*x);
  return 0;
}
int32_t int_value(const Value& v) {
  if (auto* x = v.get_if<float>()) return d2i(*x);
  if (auto* x = v.get_if<double>()) return d2i(*x);
  return static_cast<int32_t>(static_cast<uint64_t>(long_value(v)));
}
double double_value(const Value& v) {
  if (auto* x = v.get_if<float>()) return *x;
  if (auto* x = v.get_if<double>()) return *x;
  if (auto* x = v.get_if<data::BigDecimal>()) return x->to_double();
  return static_cast<double>(long_value(v));
}
float float_value(const Value& v) {
  if (auto* x = v.get_if<float>()) return *x;
  return static_cast<float>(double_value(v));
}

// Long.parseLong-style integer text: sign and ASCII digits only.
std::optional<int64_t> parse_java_integer(const std::string& s, int64_t lo, int64_t hi) {
  if (s.empty()) return std::nullopt;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return std::nullopt;
  for (size_t j = i; j < s.size(); ++j)
    if (s[j] < '0' || s[j] > '9') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (errno == ERANGE || v < lo || v > hi) return std::nullopt;
  return static_cast<int64_t>(v);
}
// Double.parseDouble-style text: trimmed, optional f/d suffix, NaN/Infinity.
std::optional<double> parse_java_double(const std::string& raw, bool as_float) {
  size_t b = 0, e = raw.size();
  while (b < e && static_cast<unsigned char>(raw[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(raw[e - 1]) <= ' ') --e;
  std::string s = raw.substr(b, e - b);
  if (s.empty()) return std::nullopt;
  std::string body = s;
  bool neg = false;
  if (body[0] == '+' || body[0] == '-') {
    neg = body[0] == '-';
    body.erase(0, 1);
  }
  if (body == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (body == "Infinity") return neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  if (!body.empty() && std::strchr("fFdD", body.back())) body.pop_back();
  bool digit = false;
  for (char c : body) {
    if (std::isdigit(static_cast<unsigned char>(c))) digit = true;
    else if (!std::strchr(".eE+-", c)) return std::nullopt;
  }
  if (!digit) return std::nullopt;
  std::string text = (neg ? "-" : "") + body;
  char* end = nullptr;
  double v = as_float ? static_cast<double>(std::strtof(text.c_str(), &end)) : std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

// ---------------------------------------------------------------- Cast

const std::vector<Type> kCastOutputTypes = {Type::INT8,    Type::INT16,   Type::INT32,   Type::INT64,
                                            Type::FLOAT32, Type::FLOAT64, Type::BOOLEAN, Type::STRING};

std::string supported_list(bool input) {
  std::string s = "[";
  for (size_t i = 0; i < kCastOutputTypes.size(); ++i) s += (i ? ", " : "") + std::string(data::type_name(kCastOutputTypes[i]));
  if (input) s += ", BYTES";
  return s + "]";
}

class Cast final : public Transformation {
 public:
  static constexpr std::string_view kName = "Cast";
  static constexpr std::string_view kDoc =
      "Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a smaller width.";
  explicit Cast(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"spec", "LIST", std::nullopt, "HIGH",
             "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
             "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, "
             "float32, float64, boolean, and string. Note that binary fields can only be cast to string."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
    auto spec = r.list("spec");
    if (!spec) return spec.error();
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    replace_null_ = *rn;
    if (spec->empty()) return config_error("spec", "Must specify at least one field to cast.");
    for (const std::string& mapping : *spec) {
      std::vector<std::string> parts;
      std::stringstream ss(mapping);
      for (std::string p; std::getline(ss, p, ':');) parts.push_back(p);
      if (parts.size() > 2 || parts.empty())
        return config_error("spec", "Invalid value " + java_list_string(*spec) +
                                        " for configuration renames: Invalid rename mapping: " + mapping);
      std::string type_text = parts.back();
      std::string upper = trim(type_text);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::optional<Type> t;
      for (int i = 0; i <= static_cast<int>(Type::STRUCT); ++i)
        if (data::type_name(static_cast<Type>(i)) == upper) t = static_cast<Type>(i);
      if (!t) {
        const std::string no_constant = "No enum constant org.apache.kafka.connect.data.Schema.Type." + upper;
        // Connect wraps a field's bad type in a ConfigException (with its
        // arguments swapped, hence the odd text) but lets the
        // IllegalArgumentException of a whole-value type through as it is.
        if (parts.size() == 1) return config_error("spec", no_constant);
        return config_error("spec", "Invalid value java.lang.IllegalArgumentException: " + no_constant +
                                        " for configuration Invalid type found in casting spec: " + trim(type_text));
      }
      if (std::find(kCastOutputTypes.begin(), kCastOutputTypes.end(), *t) == kCastOutputTypes.end())
        return config_error("spec", "Cast transformation does not support casting to " +
                                        std::string(data::type_name(*t)) + "; supported types are " + supported_list(false));
      if (parts.size() == 1) {
        whole_ = *t;
      } else {
        casts_.emplace_back(trim(parts[0]), *t);
      }
    }
    if (whole_ && spec->size() > 1)
      // Connect's text, misspelling included.
      return config_error("spec", "Cast transformations that specify a type to cast the entire value to may ony "
                                  "specify a single cast in their spec");
    return ok_status();
  }

  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (op.value.is_null()) return Outcome::kKept;
    if (!op.schema) {
      if (whole_) {
        auto v = cast_value(nullptr, op.value, *whole_);
        if (!v) return v.error();
        op.value = std::move(*v);
        return Outcome::kKept;
      }
      auto m = require_map(op.value, "cast types");
      if (!m) return m.error();
      data::Map updated = **m;
      for (const auto& [field, type] : casts_) {
        const Value* orig = map_get(**m, field);
        auto v = cast_value(nullptr, orig ? *orig : Value(), type);
        if (!v) return v.error();
        map_put(updated, field, std::move(*v));
      }
      op.value = Value(std::move(updated));
      return Outcome::kKept;
    }
    auto updated_schema = build_schema(*op.schema);
    if (!updated_schema) return updated_schema.error();
    if (whole_) {
      auto v = cast_value(op.schema.get(), op.value, *whole_);
      if (!v) return v.error();
      op.schema = *updated_schema;
      op.value = std::move(*v);
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, "cast types");
    if (!s) return s.error();
    Struct out(*updated_schema);
    const auto& fields = (*s)->schema()->fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      Value orig = field_value(**s, i, replace_null_);
      const Type* t = target_for(fields[i].name);
      Value nv = orig;
      if (t) {
        auto c = cast_value(fields[i].schema.get(), orig, *t);
        if (!c) return c.error();
        nv = std::move(*c);
      }
      auto st = out.put(fields[i].name, std::move(nv));
      if (!st) return st.error();
    }
    op.schema = *updated_schema;
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  const Type* target_for(const std::string& field) const {
    for (const auto& [f, t] : casts_)
      if (f == field) return &t;
    return nullptr;
  }

  Result<SchemaPtr> build_schema(const Schema& s) {
    if (cache_in_ && *cache_in_ == s) return cache_out_;
    SchemaBuilder b(Type::STRUCT);
    if (whole_) {
      b = SchemaBuilder(*whole_);
      copy_schema_basics(s, b);
    } else {
      if (s.type() != Type::STRUCT) return data_error("Cannot list fields on non-struct type");
      copy_schema_basics(s, b);
      for (const auto& f : s.fields()) {
        const Type* t = target_for(f.name);
        if (!t) {
          b.field(f.name, f.schema);
          continue;
        }
        SchemaBuilder fb(*t);
        if (f.schema->optional()) fb.optional();
        if (f.schema->default_value()) {
          auto d = cast_value(f.schema.get(), *f.schema->default_value(), *t);
          if (!d) return d.error();
          fb.default_value(std::move(*d));
        }
        auto built = fb.build();
        if (!built) return built.error();
        b.field(f.name, *built);
      }
    }
    if (s.optional()) b.optional();
    if (s.default_value()) {
      auto d = cast_value(&s, *s.default_value(), b.type());
      if (!d) return d.error();
      b.default_value(std::move(*d));
    }
    auto built = b.build();
    if (!built) return built.error();
    cache_in_ = std::make_shared<Schema>(s);
    cache_out_ = *built;
    return cache_out_;
  }

  static Result<Value> cast_value(const Schema* schema, const Value& in, Type target) {
    if (in.is_null()) return Value();
    std::optional<Type> inferred = schema ? std::optional<Type>(schema->type()) : data::schemaless_type(in);
    if (!inferred)
      return data_error("Cast transformation was passed a value of type class " + data::java_class_name(in) +
                        " which is not supported by Cast");
    if (*inferred != Type::BYTES &&
        std::find(kCastOutputTypes.begin(), kCastOutputTypes.end(), *inferred) == kCastOutputTypes.end())
      return data_error("Cast transformation does not support casting from " + std::string(data::type_name(*inferred)) +
                        "; supported types are " + supported_list(true));
    Value v = in;
    if (schema && schema->name() && target != Type::STRING) {
      // Logical values are cast from their wire form.
      if (auto* d = v.get_if<data::JavaDate>()) {
        const std::string& n = *schema->name();
        if (n == data::kDateLogicalName) v = Value(static_cast<int32_t>(d->epoch_ms / data::kMillisPerDay));
        else if (n == data::kTimeLogicalName) v = Value(static_cast<int32_t>(d->epoch_ms));
        else if (n == data::kTimestampLogicalName) v = Value(d->epoch_ms);
      }
    }
    auto out_of_range = [&]() {
      return data_error("Value (" + data::java_to_string(v) + ") was out of range for requested data type");
    };
    auto unexpected = [&]() { return data_error("Unexpected type in Cast transformation: class " + data::java_class_name(v)); };
    const bool* bo = v.get_if<bool>();
    const std::string* str = v.get_if<std::string>();
    switch (target) {
      case Type::INT8:
      case Type::INT16:
      case Type::INT32:
      case Type::INT64: {
        if (is_number(v)) {
          if (target == Type::INT64) return Value(long_value(v));
          int32_t i = int_value(v);
          if (target == Type::INT8) return Value(static_cast<int8_t>(i));
          if (target == Type::INT16) return Value(static_cast<int16_t>(i));
          return Value(i);
        }
        if (bo) {
          if (target == Type::INT8) return Value(static_cast<int8_t>(*bo));
          if (target == Type::INT16) return Value(static_cast<int16_t>(*bo));
          if (target == Type::INT32) return Value(static_cast<int32_t>(*bo));
          return Value(static_cast<int64_t>(*bo));
        }
        if (str) {
          int64_t lo = target == Type::INT8    ? -128
                       : target == Type::INT16 ? -32768
                       : target == Type::INT32 ? std::numeric_limits<int32_t>::min()
                                               : std::numeric_limits<int64_t>::min();
          int64_t hi = target == Type::INT8    ? 127
                       : target == Type::INT16 ? 32767
                       : target == Type::INT32 ? std::numeric_limits<int32_t>::max()
                                               : std::numeric_limits<int64_t>::max();
          auto p = parse_java_integer(*str, lo, hi);
          if (!p) return out_of_range();
          if (target == Type::INT8) return Value(static_cast<int8_t>(*p));
          if (target == Type::INT16) return Value(static_cast<int16_t>(*p));
          if (target == Type::INT32) return Value(static_cast<int32_t>(*p));
          return Value(*p);
        }
        return unexpected();
      }
      case Type::FLOAT32:
      case Type::FLOAT64: {
        if (is_number(v)) return target == Type::FLOAT32 ? Value(float_value(v)) : Value(double_value(v));
        if (bo) return target == Type::FLOAT32 ? Value(*bo ? 1.0f : 0.0f) : Value(*bo ? 1.0 : 0.0);
        if (str) {
          auto p = parse_java_double(*str, target == Type::FLOAT32);
          if (!p) return out_of_range();
          return target == Type::FLOAT32 ? Value(static_cast<float>(*p)) : Value(*p);
        }
        return unexpected();
      }
      case Type::BOOLEAN: {
        if (is_number(v)) return Value(long_value(v) != 0);
        if (bo) return Value(*bo);
        if (str) {
          std::string l = *str;
          for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
          return Value(l == "true");
        }
        return unexpected();
      }
      case Type::STRING: {
        if (auto* d = v.get_if<data::JavaDate>()) return Value(iso_format_for(d->epoch_ms));
        if (auto* b = v.get_if<data::Bytes>()) return Value(data::base64_encode(b->data));
        return Value(data::java_to_string(v));
      }
      default: return unexpected();
    }
  }

  bool key_;
  bool replace_null_ = true;
  std::optional<Type> whole_;
  std::vector<std::pair<std::string, Type>> casts_;
  std::shared_ptr<Schema> cache_in_;
  SchemaPtr cache_out_;
};

// ---------------------------------------------------------------- TimestampConverter

enum class TsType { kString, kUnix, kDate, kTime, kTimestamp };

class TimestampConverter final : public Transformation {
 public:
  static constexpr std::string_view kName = "TimestampConverter";
  static constexpr std::string_view kDoc =
      "Convert timestamps between different formats such as Unix epoch, strings, and Connect Date/Timestamp types.";
  explicit TimestampConverter(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"field", "STRING", "", "HIGH", "The field containing the timestamp, or empty if the entire value is a timestamp"},
            {"target.type", "STRING", std::nullopt, "HIGH", "The desired timestamp representation: string, unix, Date, Time, or Timestamp"},
            {"format", "STRING", "", "MEDIUM", "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."},
            {"unix.precision", "STRING", "milliseconds", "LOW", "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
    auto field = r.required_string("field");
    if (!field) return field.error();
    auto type = r.required_string("target.type");
    if (!type) return type.error();
    static const std::vector<std::string> kTypes = {"string", "unix", "Date", "Time", "Timestamp"};
    auto it = std::find(kTypes.begin(), kTypes.end(), *type);
    if (it == kTypes.end()) return invalid_value("target.type", *type, one_of_message(kTypes));
    target_ = static_cast<TsType>(it - kTypes.begin());
    auto fmt = r.required_string("format");
    if (!fmt) return fmt.error();
    auto prec = r.required_string("unix.precision");
    if (!prec) return prec.error();
    static const std::vector<std::string> kPrec = {"nanoseconds", "microseconds", "milliseconds", "seconds"};
    if (std::find(kPrec.begin(), kPrec.end(), *prec) == kPrec.end())
      return invalid_value("unix.precision", *prec, one_of_message(kPrec));
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    if (target_ == TsType::kString && fmt->empty())
      return config_error("format", "TimestampConverter requires format option to be specified when using string timestamps");
    if (!fmt->empty()) {
      auto f = SimpleDateFormat::compile(*fmt);
      // Connect passes (message, exception) to ConfigException(name, value): the text reads inside out.
      if (!f)
        return config_error("format", "Invalid value java.lang.IllegalArgumentException: " + f.error().message +
                                          " for configuration TimestampConverter requires a SimpleDateFormat-compatible "
                                          "pattern for string timestamps: " + *fmt);
      format_ = std::move(*f);
    }
    field_ = *field;
    precision_ = *prec;
    replace_null_ = *rn;
    return ok_status();
  }

  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (!op.schema) {
      if (op.value.is_null() || field_.empty()) {
        auto v = convert(op.value, std::nullopt);
        if (!v) return v.error();
        op.value = std::move(*v);
        return Outcome::kKept;
      }
      auto m = require_map(op.value, "converting timestamp formats");
      if (!m) return m.error();
      data::Map updated = **m;
      const Value* orig = map_get(**m, field_);
      auto v = convert(orig ? *orig : Value(), std::nullopt);
      if (!v) return v.error();
      map_put(updated, field_, std::move(*v));
      op.value = Value(std::move(updated));
      return Outcome::kKept;
    }
    if (field_.empty()) {
      auto from = type_from_schema(*op.schema);
      if (!from) return from.error();
      auto v = convert(op.value, *from);
      if (!v) return v.error();
      op.schema = target_schema(op.schema->optional());
      op.value = std::move(*v);
      return Outcome::kKept;
    }
    auto s = require_struct_or_null(op.value, "converting timestamp formats");
    if (!s) return s.error();
    const Schema& vs = *op.schema;
    if (vs.type() != Type::STRUCT) return data_error("Cannot list fields on non-struct type");
    SchemaBuilder b(Type::STRUCT);
    copy_schema_basics(vs, b);
    for (const auto& f : vs.fields()) b.field(f.name, f.name == field_ ? target_schema(f.schema->optional()) : f.schema);
    if (vs.optional()) b.optional();
    if (vs.default_value()) {
      if (auto* ds = vs.default_value()->get_if<Struct>()) {
        auto peek = b.build();
        if (!peek) return peek.error();
        auto dv = convert_struct(*ds, *peek);
        if (!dv) return dv.error();
        b.default_value(Value(std::move(*dv)));
      }
    }
    auto built = b.build();
    if (!built) return built.error();
    if (*s) {
      auto out = convert_struct(**s, *built);
      if (!out) return out.error();
      op.value = Value(std::move(*out));
    }
    op.schema = *built;
    return Outcome::kKept;
  }

 private:
  Result<Struct> convert_struct(const Struct& in, const SchemaPtr& schema) const {
    Struct out(schema);
    const auto& fields = in.schema()->fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      Value v = field_value(in, i, replace_null_);
      if (fields[i].name == field_) {
        auto from = type_from_schema(*fields[i].schema);
        if (!from) return from.error();
        auto c = convert(v, *from);
        if (!c) return c.error();
        v = std::move(*c);
      }
      auto st = out.put(fields[i].name, std::move(v));
      if (!st) return st.error();
    }
    return out;
  }
  static Result<TsType> type_from_schema(const Schema& s) {
    if (s.name()) {
      if (*s.name() == data::kTimestampLogicalName) return TsType::kTimestamp;
      if (*s.name() == data::kDateLogicalName) return TsType::kDate;
      if (*s.name() == data::kTimeLogicalName) return TsType::kTime;
    }
    if (s.type() == Type::STRING) return TsType::kString;
    if (s.type() == Type::INT64) return TsType::kUnix;
    return data_error("Schema " + s.to_string() + " does not correspond to a known timestamp type format");
  }
  SchemaPtr target_schema(bool optional) const {
    switch (target_) {
      case TsType::kString: return optional ? data::OPTIONAL_STRING_SCHEMA() : data::STRING_SCHEMA();
      case TsType::kUnix: return optional ? data::OPTIONAL_INT64_SCHEMA() : data::INT64_SCHEMA();
      case TsType::kDate: {
        auto b = data::date_builder();
        if (optional) b.optional();
        return *b.build();
      }
      case TsType::kTime: {
        auto b = data::time_builder();
        if (optional) b.optional();
        return *b.build();
      }
      case TsType::kTimestamp: {
        auto b = data::timestamp_builder();
        if (optional) b.optional();
        return *b.build();
      }
    }
    return nullptr;
  }
  static int64_t sat_mul(int64_t a, int64_t b) {
    int64_t r;
    if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
    return r;
  }
  Result<Value> convert(const Value& v, std::optional<TsType> from) const {
    if (v.is_null()) return Value();
    if (!from) {
      if (v.is<data::JavaDate>()) from = TsType::kTimestamp;
      else if (v.is<int64_t>()) from = TsType::kUnix;
      else if (v.is<std::string>()) from = TsType::kString;
      else
        return data_error("TimestampConverter does not support class " + data::java_class_name(v) + " objects as timestamps");
    }
    int64_t raw = 0;
    switch (*from) {
      case TsType::kString: {
        auto* s = v.get_if<std::string>();
        if (!s) return data_error("Expected string timestamp to be a String, but found class " + data::java_class_name(v));
        auto p = format_->parse(*s);
        if (!p)
          return data_error("Could not parse timestamp: value (" + *s + ") does not match pattern (" + format_->pattern() + ")");
        raw = *p;
        break;
      }
      case TsType::kUnix: {
        auto* l = v.get_if<int64_t>();
        if (!l) return data_error("Expected Unix timestamp to be a Long, but found class " + data::java_class_name(v));
        if (precision_ == "seconds") raw = sat_mul(*l, 1000);
        else if (precision_ == "microseconds") raw = *l / 1000;
        else if (precision_ == "nanoseconds") raw = *l / 1000000;
        else raw = *l;
        break;
      }
      default: {
        auto* d = v.get_if<data::JavaDate>();
        static const char* kNames[] = {"", "", "Date", "Time", "Timestamp"};
        if (!d)
          return data_error(std::string("Expected ") + kNames[static_cast<int>(*from)] +
                            " to be a java.util.Date, but found class " + data::java_class_name(v));
        raw = d->epoch_ms;
      }
    }
    auto fmod_day = [](int64_t ms) { int64_t r = ms % data::kMillisPerDay; return r < 0 ? r + data::kMillisPerDay : r; };
    switch (target_) {
      case TsType::kString: return Value(format_->format(raw));
      case TsType::kUnix:
        if (precision_ == "seconds") return Value(raw / 1000);
        if (precision_ == "microseconds") return Value(sat_mul(raw, 1000));
        if (precision_ == "nanoseconds") return Value(sat_mul(raw, 1000000));
        return Value(raw);
      case TsType::kDate: return Value(data::JavaDate{raw - fmod_day(raw)});
      case TsType::kTime: return Value(data::JavaDate{fmod_day(raw)});
      case TsType::kTimestamp: return Value(data::JavaDate{raw});
    }
    return Value();
  }

  bool key_;
  std::string field_;
  TsType target_ = TsType::kTimestamp;
  std::optional<SimpleDateFormat> format_;
  std::string precision_ = "milliseconds";
  bool replace_null_ = true;
};

}  // namespace

void add_type_conversion(std::vector<PluginInfo>& out) { add_plugins<Cast, TimestampConverter>(out); }

}  // namespace kc::transforms::detail
