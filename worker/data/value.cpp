#include "worker/data/value.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace kc::data {

namespace {

Error data_error(std::string message) { return Error{"", std::move(message)}; }

// ---- big integers as base-256 magnitudes (big-endian) ----

// Magnitude of a decimal digit string (no sign), big-endian base 256.
std::string magnitude_from_digits(std::string_view digits) {
  std::string mag;  // little-endian while building
  for (char c : digits) {
    unsigned carry = static_cast<unsigned>(c - '0');
    for (auto& byte : mag) {
      unsigned x = static_cast<unsigned char>(byte) * 10u + carry;
      byte = static_cast<char>(x & 0xff);
      carry = x >> 8;
    }
    while (carry) {
      mag.push_back(static_cast<char>(carry & 0xff));
      carry >>= 8;
    }
  }
  std::reverse(mag.begin(), mag.end());
  return mag;
}

// Decimal digits of a big-endian magnitude ("0" for zero).
std::string digits_from_magnitude(std::string mag) {
  std::string out;
  size_t start = 0;
  while (start < mag.size() && mag[start] == 0) ++start;
  while (start < mag.size()) {
    unsigned rem = 0;
    for (size_t i = start; i < mag.size(); ++i) {
      unsigned x = (rem << 8) | static_cast<unsigned char>(mag[i]);
      mag[i] = static_cast<char>(x / 10);
      rem = x % 10;
    }
    out.push_back(static_cast<char>('0' + rem));
    while (start < mag.size() && mag[start] == 0) ++start;
  }
  if (out.empty()) out = "0";
  std::reverse(out.begin(), out.end());
  return out;
}

// Two's complement negation in place (big-endian).
void negate_in_place(std::string& bytes) {
  for (auto& b : bytes) b = static_cast<char>(~static_cast<unsigned char>(b));
  for (size_t i = bytes.size(); i-- > 0;) {
    unsigned char v = static_cast<unsigned char>(bytes[i]);
    bytes[i] = static_cast<char>(v + 1);
    if (v != 0xff) break;
  }
}

// Minimal two's complement encoding, as BigInteger.toByteArray().
std::string minimal_twos(std::string bytes) {
  if (bytes.empty()) return std::string(1, '\0');
  size_t i = 0;
  while (i + 1 < bytes.size()) {
    unsigned char b0 = static_cast<unsigned char>(bytes[i]);
    unsigned char b1 = static_cast<unsigned char>(bytes[i + 1]);
    if ((b0 == 0x00 && !(b1 & 0x80)) || (b0 == 0xff && (b1 & 0x80)))
      ++i;
    else
      break;
  }
  return bytes.substr(i);
}

std::string twos_from_signed_magnitude(bool negative, std::string mag) {
  mag.insert(mag.begin(), '\0');  // room for the sign bit
  if (negative) negate_in_place(mag);
  return minimal_twos(std::move(mag));
}

bool float_bits_equal(double a, double b) {
  if (std::isnan(a) && std::isnan(b)) return true;  // Double.equals: canonical NaN
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool float_bits_equal(float a, float b) {
  if (std::isnan(a) && std::isnan(b)) return true;
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

// Java's layout of a shortest round-trip decimal: digits d1d2..dn and a
// decimal exponent e such that the value is 0.d1d2..dn * 10^e.
std::string java_float_layout(const std::string& shortest_sci) {
  // shortest_sci is what std::to_chars(scientific) gives: "-1.2345e+07".
  std::string_view s = shortest_sci;
  std::string out;
  if (!s.empty() && s[0] == '-') {
    out.push_back('-');
    s.remove_prefix(1);
  }
  size_t epos = s.find('e');
  std::string_view mant = s.substr(0, epos);
  int exp10 = std::atoi(std::string(s.substr(epos + 1)).c_str());
  std::string digits;
  for (char c : mant)
    if (c != '.') digits.push_back(c);
  // value = d1.d2d3... * 10^exp10
  if (digits == "0") return out + "0.0";
  if (exp10 >= -3 && exp10 < 7) {
    if (exp10 >= 0) {
      std::string intpart = digits.substr(0, std::min<size_t>(digits.size(), exp10 + 1));
      while (intpart.size() < static_cast<size_t>(exp10 + 1)) intpart.push_back('0');
      std::string frac = digits.size() > static_cast<size_t>(exp10 + 1) ? digits.substr(exp10 + 1) : "0";
      return out + intpart + "." + frac;
    }
    return out + "0." + std::string(static_cast<size_t>(-exp10 - 1), '0') + digits;
  }
  std::string frac = digits.size() > 1 ? digits.substr(1) : "0";
  return out + digits.substr(0, 1) + "." + frac + "E" + std::to_string(exp10);
}

const char* kWeekdays[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
const char* kMonths[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};

}  // namespace

// ---------------------------------------------------------------- BigDecimal

Result<BigDecimal> BigDecimal::parse(std::string_view text) {
  auto bad = [&] { return data_error("Invalid BigDecimal: " + std::string(text)); };
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) negative = text[i++] == '-';
  std::string digits;
  int64_t frac_digits = 0;
  bool seen_point = false;
  bool any_digit = false;
  for (; i < text.size(); ++i) {
    char c = text[i];
    if (c >= '0' && c <= '9') {
      digits.push_back(c);
      any_digit = true;
      if (seen_point) ++frac_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!any_digit) return bad();
  int64_t exponent = 0;
  if (i < text.size()) {
    if (text[i] != 'e' && text[i] != 'E') return bad();
    ++i;
    bool eneg = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) eneg = text[i++] == '-';
    if (i == text.size()) return bad();
    for (; i < text.size(); ++i) {
      if (text[i] < '0' || text[i] > '9') return bad();
      exponent = exponent * 10 + (text[i] - '0');
      if (exponent > 4000000000LL) return bad();
    }
    if (eneg) exponent = -exponent;
  }
  int64_t scale = frac_digits - exponent;
  if (scale > INT32_MAX || scale < INT32_MIN) return bad();
  BigDecimal d;
  d.scale = static_cast<int32_t>(scale);
  d.unscaled = twos_from_signed_magnitude(negative, magnitude_from_digits(digits));
  return d;
}

BigDecimal BigDecimal::from_unscaled_bytes(std::string_view bytes, int32_t scale) {
  BigDecimal d;
  d.unscaled = minimal_twos(std::string(bytes));
  d.scale = scale;
  return d;
}

BigDecimal BigDecimal::from_int64(int64_t unscaled, int32_t scale) {
  std::string bytes(8, '\0');
  auto u = static_cast<uint64_t>(unscaled);
  for (int i = 7; i >= 0; --i) {
    bytes[i] = static_cast<char>(u & 0xff);
    u >>= 8;
  }
  return from_unscaled_bytes(bytes, scale);
}

std::string BigDecimal::unscaled_decimal() const {
  std::string mag = unscaled;
  bool neg = is_negative();
  if (neg) negate_in_place(mag);
  std::string digits = digits_from_magnitude(mag);
  return neg ? "-" + digits : digits;
}

std::string BigDecimal::to_string() const {
  std::string coeff = unscaled_decimal();
  bool neg = !coeff.empty() && coeff[0] == '-';
  std::string digits = neg ? coeff.substr(1) : coeff;
  std::string sign = neg ? "-" : "";
  if (scale == 0) return coeff;
  int64_t adjusted = -static_cast<int64_t>(scale) + static_cast<int64_t>(digits.size() - 1);
  if (scale > 0 && adjusted >= -6) {
    // Plain notation.
    auto s = static_cast<size_t>(scale);
    if (digits.size() > s) return sign + digits.substr(0, digits.size() - s) + "." + digits.substr(digits.size() - s);
    return sign + "0." + std::string(s - digits.size(), '0') + digits;
  }
  std::string out = sign + digits.substr(0, 1);
  if (digits.size() > 1) out += "." + digits.substr(1);
  out += "E";
  if (adjusted >= 0) out += "+";
  out += std::to_string(adjusted);
  return out;
}

double BigDecimal::to_double() const {
  std::string text = unscaled_decimal() + "E" + std::to_string(-static_cast<int64_t>(scale));
  return std::strtod(text.c_str(), nullptr);
}

// ---------------------------------------------------------------- Value

bool operator==(const Value& a, const Value& b) {
  if (a.v.index() != b.v.index()) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        const T& y = std::get<T>(b.v);
        if constexpr (std::is_same_v<T, std::monostate>) {
          return true;
        } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
          return float_bits_equal(x, y);
        } else if constexpr (std::is_same_v<T, Map>) {
          if (x.size() != y.size()) return false;
          for (const auto& [k, v] : x) {
            auto it = std::find_if(y.begin(), y.end(), [&k = k](const auto& e) { return e.first == k; });
            if (it == y.end() || !(it->second == v)) return false;
          }
          return true;
        } else {
          return x == y;
        }
      },
      a.v);
}

std::string java_class_name(const Value& v) {
  switch (v.v.index()) {
    case 0: return "";
    case 1: return "java.lang.Byte";
    case 2: return "java.lang.Short";
    case 3: return "java.lang.Integer";
    case 4: return "java.lang.Long";
    case 5: return "java.lang.Float";
    case 6: return "java.lang.Double";
    case 7: return "java.lang.Boolean";
    case 8: return "java.lang.String";
    case 9: return "[B";
    case 10: return "java.util.ArrayList";
    case 11: return "java.util.HashMap";
    case 12: return "org.apache.kafka.connect.data.Struct";
    case 13: return "java.math.BigDecimal";
    case 14: return "java.util.Date";
    default: return "java.lang.Object";
  }
}

std::optional<Type> schemaless_type(const Value& v) {
  switch (v.v.index()) {
    case 1: return Type::INT8;
    case 2: return Type::INT16;
    case 3: return Type::INT32;
    case 4: return Type::INT64;
    case 5: return Type::FLOAT32;
    case 6: return Type::FLOAT64;
    case 7: return Type::BOOLEAN;
    case 8: return Type::STRING;
    case 9: return Type::BYTES;
    case 10: return Type::ARRAY;
    case 11: return Type::MAP;
    case 12: return Type::STRUCT;
    default: return std::nullopt;
  }
}

Status validate_value(const char* field, const Schema& schema, const Value& value) {
  if (value.is_null()) {
    if (!schema.optional())
      return data_error(std::string("Invalid value: null used for required field: \"") + (field ? field : "null") +
                        "\", schema type: " + std::string(type_name(schema.type())));
    return ok_status();
  }
  bool match = false;
  const auto& name = schema.name();
  if (name && *name == kDecimalLogicalName) {
    match = value.is<BigDecimal>();
  } else if (name && (*name == kDateLogicalName || *name == kTimeLogicalName || *name == kTimestampLogicalName)) {
    match = value.is<JavaDate>();
  } else {
    auto t = schemaless_type(value);
    match = t && *t == schema.type();
  }
  if (!match) {
    std::string msg = "Invalid Java object for schema";
    if (name) msg += " \"" + *name + "\"";
    msg += " with type " + std::string(type_name(schema.type())) + ": class " + java_class_name(value);
    if (field) msg += std::string(" for field: \"") + field + "\"";
    return data_error(std::move(msg));
  }
  switch (schema.type()) {
    case Type::STRUCT: {
      const auto& s = value.as<Struct>();
      if (!(*s.schema() == schema))
        return data_error("Struct schemas do not match.");
      return s.validate();
    }
    case Type::ARRAY:
      if (!schema.value_schema()) return ok_status();
      for (const auto& e : value.as<Array>()) {
        auto st = validate_value(*schema.value_schema(), e);
        if (!st) return st;
      }
      return ok_status();
    case Type::MAP:
      for (const auto& [k, v] : value.as<Map>()) {
        auto st = validate_value(*schema.key_schema(), k);
        if (!st) return st;
        st = validate_value(*schema.value_schema(), v);
        if (!st) return st;
      }
      return ok_status();
    default:
      return ok_status();
  }
}

std::string java_double_to_string(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  return java_float_layout(std::string(buf, r.ptr));
}

std::string java_float_to_string(float f) {
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "Infinity" : "-Infinity";
  if (f == 0) return std::signbit(f) ? "-0.0" : "0.0";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  return java_float_layout(std::string(buf, r.ptr));
}

namespace {

/// Appends java_to_string(v) to `out`. One buffer for the whole value, so
/// the cost is linear in the text's length; building each child's text and
/// copying it into its parent's cost length x depth (a fuzzed plugin value
/// nested eight ways took minutes).
void append_java_string(std::string& out, const Value& v) {
  std::visit(
      [&out](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          out += "null";
        } else if constexpr (std::is_same_v<T, bool>) {
          out += x ? "true" : "false";
        } else if constexpr (std::is_same_v<T, float>) {
          out += java_float_to_string(x);
        } else if constexpr (std::is_same_v<T, double>) {
          out += java_double_to_string(x);
        } else if constexpr (std::is_integral_v<T>) {
          out += std::to_string(static_cast<int64_t>(x));
        } else if constexpr (std::is_same_v<T, std::string>) {
          out += x;
        } else if constexpr (std::is_same_v<T, Bytes>) {
          out += x.data;
        } else if constexpr (std::is_same_v<T, Array>) {
          out += '[';
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) out += ", ";
            append_java_string(out, x[i]);
          }
          out += ']';
        } else if constexpr (std::is_same_v<T, Map>) {
          out += '{';
          for (size_t i = 0; i < x.size(); ++i) {
            if (i) out += ", ";
            append_java_string(out, x[i].first);
            out += '=';
            append_java_string(out, x[i].second);
          }
          out += '}';
        } else if constexpr (std::is_same_v<T, Struct>) {
          x.append_to(out);
        } else if constexpr (std::is_same_v<T, BigDecimal>) {
          out += x.to_string();
        } else {
          // java.util.Date.toString() in UTC: "EEE MMM dd HH:mm:ss zzz yyyy".
          int64_t secs = floor_div(x.epoch_ms, 1000);
          std::time_t t = static_cast<std::time_t>(secs);
          std::tm tm{};
          gmtime_r(&t, &tm);
          char buf[64];
          std::snprintf(buf, sizeof buf, "%s %s %02d %02d:%02d:%02d UTC %d", kWeekdays[tm.tm_wday], kMonths[tm.tm_mon],
                        tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, tm.tm_year + 1900);
          out += buf;
        }
      },
      v.v);
}

}  // namespace

std::string java_to_string(const Value& v) {
  std::string out;
  append_java_string(out, v);
  return out;
}

// ---------------------------------------------------------------- Struct

Struct::Struct(SchemaPtr schema) : schema_(std::move(schema)) { values_.resize(schema_->fields().size()); }

Result<Struct> Struct::of(SchemaPtr schema) {
  if (!schema || schema->type() != Type::STRUCT)
    return data_error("Not a struct schema: " + (schema ? schema->to_string() : std::string("null")));
  return Struct(std::move(schema));
}

Status Struct::put(std::string_view field_name, Value value) {
  const Field* f = schema_->field(field_name);
  if (!f) return data_error(std::string(field_name) + " is not a valid field name");
  auto st = validate_value(f->name.c_str(), *f->schema, value);
  if (!st) return st;
  values_[static_cast<size_t>(f->index)] = std::move(value);
  return ok_status();
}

void Struct::put_unchecked(size_t index, Value value) { values_.at(index) = std::move(value); }

Result<const Value*> Struct::get(std::string_view field_name) const {
  const Field* f = schema_->field(field_name);
  if (!f) return data_error(std::string(field_name) + " is not a valid field name");
  const Value& v = values_[static_cast<size_t>(f->index)];
  if (v.is_null() && f->schema->default_value()) return f->schema->default_value();
  return &v;
}

Result<const Value*> Struct::get_without_default(std::string_view field_name) const {
  const Field* f = schema_->field(field_name);
  if (!f) return data_error(std::string(field_name) + " is not a valid field name");
  return &values_[static_cast<size_t>(f->index)];
}

Result<const Value*> Struct::get_checked(std::string_view field_name, Type type) const {
  const Field* f = schema_->field(field_name);
  if (!f) return data_error(std::string(field_name) + " is not a valid field name");
  if (f->schema->type() != type)
    return data_error("Field '" + std::string(field_name) + "' is not of type " + std::string(type_name(type)));
  return &values_[static_cast<size_t>(f->index)];
}

const Value& Struct::at(size_t index) const { return values_.at(index); }

Status Struct::validate() const {
  for (const auto& f : schema_->fields()) {
    const Value& v = values_[static_cast<size_t>(f.index)];
    if (v.is_null() && (f.schema->optional() || f.schema->default_value())) continue;
    auto st = validate_value(f.name.c_str(), *f.schema, v);
    if (!st) return st;
  }
  return ok_status();
}

std::string Struct::to_string() const {
  std::string out;
  append_to(out);
  return out;
}

void Struct::append_to(std::string& out) const {
  out += "Struct{";
  bool first = true;
  for (const auto& f : schema_->fields()) {
    const Value& v = values_[static_cast<size_t>(f.index)];
    if (v.is_null()) continue;
    if (!first) out += ",";
    first = false;
    out += f.name;
    out += '=';
    append_java_string(out, v);
  }
  out += '}';
}

bool operator==(const Struct& a, const Struct& b) {
  return schema_equals(a.schema_, b.schema_) && a.values_ == b.values_;
}

// ---------------------------------------------------------------- logical types

Result<std::string> decimal_from_logical(const Schema& schema, const BigDecimal& value) {
  auto scale = decimal_scale(schema);
  if (!scale) return scale.error();
  if (*scale != value.scale)
    return data_error("Decimal value has mismatching scale for given Decimal schema. Schema has scale " +
                      std::to_string(*scale) + ", value has scale " + std::to_string(value.scale) + ".");
  return value.unscaled;
}

Result<BigDecimal> decimal_to_logical(const Schema& schema, std::string_view bytes) {
  auto scale = decimal_scale(schema);
  if (!scale) return scale.error();
  if (bytes.empty()) return data_error("Invalid Decimal value: zero-length byte array");
  return BigDecimal::from_unscaled_bytes(bytes, *scale);
}

Result<int32_t> date_from_logical(const Schema& schema, JavaDate value) {
  if (!schema.name() || *schema.name() != kDateLogicalName)
    return data_error("Requested conversion of Date object but the schema does not match.");
  if (value.epoch_ms % kMillisPerDay != 0)
    return data_error("Kafka Connect Date type should not have any time fields set to non-zero values.");
  return static_cast<int32_t>(value.epoch_ms / kMillisPerDay);
}

Result<JavaDate> date_to_logical(const Schema& schema, int32_t days) {
  if (!schema.name() || *schema.name() != kDateLogicalName)
    return data_error("Requested conversion of Date object but the schema does not match.");
  return JavaDate{static_cast<int64_t>(days) * kMillisPerDay};
}

Result<int32_t> time_from_logical(const Schema& schema, JavaDate value) {
  if (!schema.name() || *schema.name() != kTimeLogicalName)
    return data_error("Requested conversion of Time object but the schema does not match.");
  if (value.epoch_ms < 0 || value.epoch_ms > kMillisPerDay)
    return data_error("Kafka Connect Time type should not have any date fields set to non-zero values.");
  return static_cast<int32_t>(value.epoch_ms);
}

Result<JavaDate> time_to_logical(const Schema& schema, int32_t millis) {
  if (!schema.name() || *schema.name() != kTimeLogicalName)
    return data_error("Requested conversion of Date object but the schema does not match.");
  if (millis < 0 || millis > kMillisPerDay)
    return data_error("Time values must use number of milliseconds greater than 0 and less than 86400000");
  return JavaDate{millis};
}

Result<int64_t> timestamp_from_logical(const Schema& schema, JavaDate value) {
  if (!schema.name() || *schema.name() != kTimestampLogicalName)
    return data_error("Requested conversion of Timestamp object but the schema does not match.");
  return value.epoch_ms;
}

Result<JavaDate> timestamp_to_logical(const Schema& schema, int64_t millis) {
  if (!schema.name() || *schema.name() != kTimestampLogicalName)
    return data_error("Requested conversion of Timestamp object but the schema does not match.");
  return JavaDate{millis};
}

}  // namespace kc::data
