// Cast, DropHeaders, ExtractField, Filter, Flatten, HeaderFrom, HoistField
// and InsertField, following org.apache.kafka.connect.transforms.*.
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <set>
#include <sstream>

#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"

namespace kc::transforms::detail {

using data::Schema;
using data::SchemaBuilder;
using data::Type;

namespace {

template <class T>
void add_key_value(std::vector<PluginInfo>& out, const std::string& simple, const std::string& doc) {
  for (bool key : {true, false}) {
    std::string name = simple + (key ? "$Key" : "$Value");
    out.push_back(PluginInfo{std::string(kTransformPackage) + name, PluginKind::kTransformation, {name}, doc,
                             T::defs(), [key] { return std::unique_ptr<Transformation>(new T(key)); }, nullptr});
  }
}
template <class T>
void add_single(std::vector<PluginInfo>& out, const std::string& simple, const std::string& doc) {
  out.push_back(PluginInfo{std::string(kTransformPackage) + simple, PluginKind::kTransformation, {simple}, doc,
                           T::defs(), [] { return std::unique_ptr<Transformation>(new T()); }, nullptr});
}

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
  explicit Cast(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"spec", "LIST", std::nullopt, "HIGH",
             "List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of "
             "Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, "
             "float32, float64, boolean, and string. Note that binary fields can only be cast to string."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto defs_v = defs();
    ConfigReader r(config, defs_v);
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
      auto trim = [](std::string s) {
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.erase(0, 1);
        while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
        return s;
      };
      std::string upper = trim(type_text);
      for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      std::optional<Type> t;
      for (int i = 0; i <= static_cast<int>(Type::STRUCT); ++i)
        if (data::type_name(static_cast<Type>(i)) == upper) t = static_cast<Type>(i);
      if (!t)
        return config_error("spec", "Invalid value java.lang.IllegalArgumentException: No enum constant "
                                    "org.apache.kafka.connect.data.Schema.Type." +
                                        upper + " for configuration Invalid type found in casting spec: " + trim(type_text));
      if (std::find(kCastOutputTypes.begin(), kCastOutputTypes.end(), *t) == kCastOutputTypes.end())
        return config_error("spec", "Cast transformation does not support casting to/from " +
                                        std::string(data::type_name(*t)) + "; supported types are " + supported_list(false));
      if (parts.size() == 1) {
        whole_ = *t;
      } else {
        casts_.emplace_back(trim(parts[0]), *t);
      }
    }
    if (whole_ && spec->size() > 1)
      return config_error("spec", "Cast transformations that specify a type to cast to for the entire value should not "
                                  "include any other cast mappings");
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
        if (auto* b = v.get_if<data::Bytes>()) {
          static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
          std::string out;
          const std::string& s = b->data;
          for (size_t i = 0; i < s.size(); i += 3) {
            uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(s[i])) << 16;
            if (i + 1 < s.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(s[i + 1])) << 8;
            if (i + 2 < s.size()) n |= static_cast<unsigned char>(s[i + 2]);
            out.push_back(tbl[(n >> 18) & 63]);
            out.push_back(tbl[(n >> 12) & 63]);
            out.push_back(i + 1 < s.size() ? tbl[(n >> 6) & 63] : '=');
            out.push_back(i + 2 < s.size() ? tbl[n & 63] : '=');
          }
          return Value(std::move(out));
        }
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

// ---------------------------------------------------------------- DropHeaders

class DropHeaders final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() {
    return {{"headers", "LIST", std::nullopt, "HIGH", "The name of the headers to be removed."}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    auto l = ConfigReader(config, d).list("headers");
    if (!l) return l.error();
    if (l->empty()) return invalid_value("headers", "[]", "Empty list");
    headers_ = std::set<std::string>(l->begin(), l->end());
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    std::erase_if(ref.rec.headers.list(), [&](const data::Header& h) { return headers_.count(h.key) > 0; });
    return Outcome::kKept;
  }

 private:
  std::set<std::string> headers_;
};

// ---------------------------------------------------------------- field paths (KIP-821)

// A field path: V1 = the whole name is one field; V2 = dotted steps, with
// backticks quoting a step that contains dots.
std::vector<std::string> parse_path(const std::string& path, bool v2) {
  if (!v2) return {path};
  std::vector<std::string> steps;
  size_t i = 0;
  while (i <= path.size()) {
    if (i < path.size() && path[i] == '`') {
      // A backtick step ends at a backtick followed by '.' or the end.
      size_t j = i + 1;
      size_t close = std::string::npos;
      while (j < path.size()) {
        if (path[j] == '`' && (j + 1 == path.size() || path[j + 1] == '.')) {
          close = j;
          break;
        }
        ++j;
      }
      if (close != std::string::npos) {
        steps.push_back(path.substr(i + 1, close - i - 1));
        i = close + 2;
        continue;
      }
    }
    size_t dot = path.find('.', i);
    if (dot == std::string::npos) {
      steps.push_back(path.substr(i));
      break;
    }
    steps.push_back(path.substr(i, dot - i));
    i = dot + 1;
  }
  return steps;
}

// ---------------------------------------------------------------- ExtractField

class ExtractField final : public Transformation {
 public:
  explicit ExtractField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"field", "STRING", std::nullopt, "MEDIUM",
             "Field name to extract. With field.syntax.version V2, a dotted path to a nested field (backticks quote names with dots)."},
            {"field.syntax.version", "STRING", "V1", "HIGH",
             "Defines the version of the syntax to access fields. If set to `V1`, then the field paths are limited to "
             "access the elements at the root level of the struct or map. If set to `V2`, the syntax will support "
             "accessing nested elements."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto f = r.required_string("field");
    if (!f) return f.error();
    auto v = r.required_string("field.syntax.version");
    if (!v) return v.error();
    std::string up = *v;
    for (char& c : up) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (up != "V1" && up != "V2")
      return invalid_value("field.syntax.version", *v, "String must be one of (case insensitive): V1, V2");
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    field_ = *f;
    path_ = parse_path(*f, up == "V2");
    replace_null_ = *rn;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (!op.schema) {
      auto m = require_map_or_null(op.value, "field extraction");
      if (!m) return m.error();
      if (!*m) {
        op.value = Value();
        return Outcome::kKept;
      }
      const data::Map* cur = *m;
      Value result;
      for (size_t i = 0; i < path_.size(); ++i) {
        const Value* v = map_get(*cur, path_[i]);
        if (!v) break;
        if (i + 1 == path_.size()) {
          result = *v;
          break;
        }
        cur = v->get_if<data::Map>();
        if (!cur) break;
      }
      op.value = std::move(result);
      return Outcome::kKept;
    }
    auto s = require_struct_or_null(op.value, "field extraction");
    if (!s) return s.error();
    // Walk the schema first: an unknown field fails even for a null value.
    const Schema* sch = op.schema.get();
    const data::Field* field = nullptr;
    for (size_t i = 0; i < path_.size(); ++i) {
      field = sch && sch->type() == Type::STRUCT ? sch->field(path_[i]) : nullptr;
      if (!field) break;
      sch = field->schema.get();
    }
    if (!field) return data_error("Unknown field: " + field_);
    SchemaPtr field_schema = field->schema;
    if (!*s) {
      op.schema = field_schema;
      op.value = Value();
      return Outcome::kKept;
    }
    const Struct* cur = *s;
    Value result;
    for (size_t i = 0; i < path_.size(); ++i) {
      const data::Field* f = cur->schema()->field(path_[i]);
      if (i + 1 == path_.size()) {
        result = field_value(*cur, static_cast<size_t>(f->index), replace_null_);
        break;
      }
      cur = cur->at(static_cast<size_t>(f->index)).get_if<Struct>();
      if (!cur) break;
    }
    op.schema = field_schema;
    op.value = std::move(result);
    return Outcome::kKept;
  }

 private:
  bool key_;
  std::string field_;
  std::vector<std::string> path_;
  bool replace_null_ = true;
};

// ---------------------------------------------------------------- Filter

class Filter final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() { return {}; }
  Status configure(const Config&) override { return ok_status(); }
  Result<Outcome> apply(RecordRef) override { return Outcome::kDropped; }
};

// ---------------------------------------------------------------- Flatten

class Flatten final : public Transformation {
 public:
  explicit Flatten(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"delimiter", "STRING", ".", "MEDIUM",
             "Delimiter to insert between field names from the input record when generating field names for the output record"}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    auto v = ConfigReader(config, d).required_string("delimiter");
    if (!v) return v.error();
    delim_ = *v;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (op.value.is_null()) return Outcome::kKept;
    if (!op.schema) {
      auto m = require_map(op.value, "flattening");
      if (!m) return m.error();
      data::Map out;
      auto st = flatten_map(**m, "", out);
      if (!st) return st.error();
      op.value = Value(std::move(out));
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, "flattening");
    if (!s) return s.error();
    SchemaBuilder b(Type::STRUCT);
    copy_schema_basics(*op.schema, b);
    const Struct* dflt = op.schema->default_value() ? op.schema->default_value()->get_if<Struct>() : nullptr;
    auto st = build_schema(*op.schema, "", b, op.schema->optional(), dflt);
    if (!st) return st.error();
    auto built = b.build();
    if (!built) return built.error();
    Struct out(*built);
    auto vs = build_value(*s, "", out);
    if (!vs) return vs.error();
    op.schema = *built;
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  std::string name(const std::string& prefix, const std::string& field) const {
    return prefix.empty() ? field : prefix + delim_ + field;
  }
  Status flatten_map(const data::Map& in, const std::string& prefix, data::Map& out) const {
    for (const auto& [k, v] : in) {
      std::string fname = name(prefix, data::java_to_string(k));
      if (v.is_null()) {
        map_put(out, fname, Value());
        continue;
      }
      auto t = data::schemaless_type(v);
      if (!t || *t == Type::STRUCT)
        return data_error("Flatten transformation does not support class " + data::java_class_name(v) +
                          " for record without schemas (for field " + fname + ").");
      if (*t == Type::MAP) {
        auto st = flatten_map(v.as<data::Map>(), fname, out);
        if (!st) return st;
      } else {
        map_put(out, fname, v);
      }
    }
    return ok_status();
  }
  Status build_schema(const Schema& s, const std::string& prefix, SchemaBuilder& b, bool optional, const Struct* parent_default) const {
    for (const auto& f : s.fields()) {
      std::string fname = name(prefix, f.name);
      bool opt = optional || f.schema->optional();
      Value fdefault;
      if (f.schema->default_value()) fdefault = *f.schema->default_value();
      else if (parent_default) fdefault = field_value(*parent_default, static_cast<size_t>(f.index), true);
      if (f.schema->type() == Type::STRUCT) {
        auto st = build_schema(*f.schema, fname, b, opt, fdefault.get_if<Struct>());
        if (!st) return st;
      } else if (f.schema->type() == Type::MAP) {
        return data_error("Flatten transformation does not support MAP for record with schemas (for field " + fname + ").");
      } else {
        SchemaBuilder fb = copy_schema_basics(*f.schema);
        if (opt) fb.optional();
        if (!fdefault.is_null()) fb.default_value(fdefault);
        auto built = fb.build();
        if (!built) return built.error();
        b.field(fname, *built);
      }
    }
    return ok_status();
  }
  Status build_value(const Struct* s, const std::string& prefix, Struct& out) const {
    if (!s) return ok_status();
    const auto& fields = s->schema()->fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      std::string fname = name(prefix, fields[i].name);
      if (fields[i].schema->type() == Type::STRUCT) {
        auto st = build_value(s->at(i).get_if<Struct>(), fname, out);
        if (!st) return st;
      } else {
        auto st = out.put(fname, s->at(i));
        if (!st) return st;
      }
    }
    return ok_status();
  }
  bool key_;
  std::string delim_ = ".";
};

// ---------------------------------------------------------------- HeaderFrom

class HeaderFrom final : public Transformation {
 public:
  explicit HeaderFrom(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"fields", "LIST", std::nullopt, "HIGH", "Field names in the record whose values are to be copied or moved to headers."},
            {"headers", "LIST", std::nullopt, "HIGH", "Header names, in the same order as the field names listed in the fields configuration property."},
            {"operation", "STRING", std::nullopt, "HIGH", "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto f = r.list("fields");
    if (!f) return f.error();
    auto h = r.list("headers");
    if (!h) return h.error();
    auto o = r.required_string("operation");
    if (!o) return o.error();
    if (*o != "move" && *o != "copy") return invalid_value("operation", *o, one_of_message({"move", "copy"}));
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    if (f->size() != h->size())
      return config_error("fields", "'fields' config must have the same number of elements as 'headers' config.");
    fields_ = *f;
    headers_ = *h;
    move_ = *o == "move";
    replace_null_ = *rn;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    const std::string purpose = move_ ? "header move" : "header copy";
    data::Headers headers = ref.rec.headers;
    if (!op.schema) {
      auto m = require_map(op.value, purpose);
      if (!m) return m.error();
      data::Map updated = **m;
      for (size_t i = 0; i < fields_.size(); ++i) {
        const Value* v = map_get(**m, fields_[i]);
        if (move_) map_remove(updated, fields_[i]);
        headers.add(headers_[i], nullptr, v ? *v : Value());
      }
      op.value = Value(std::move(updated));
      ref.rec.headers = std::move(headers);
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, purpose);
    if (!s) return s.error();
    SchemaPtr new_schema = op.schema;
    Value new_value = op.value;
    if (move_) {
      SchemaBuilder b(Type::STRUCT);
      copy_schema_basics(*op.schema, b);
      for (const auto& f : op.schema->fields())
        if (std::find(fields_.begin(), fields_.end(), f.name) == fields_.end()) b.field(f.name, f.schema);
      auto built = b.build();
      if (!built) return built.error();
      Struct out(*built);
      for (const auto& f : (*built)->fields()) {
        auto st = out.put(f.name, field_value(**s, static_cast<size_t>(op.schema->field(f.name)->index), replace_null_));
        if (!st) return st.error();
      }
      new_schema = *built;
      new_value = Value(std::move(out));
    }
    for (size_t i = 0; i < fields_.size(); ++i) {
      const data::Field* f = op.schema->field(fields_[i]);
      if (!f)
        return data_error("Cannot invoke \"org.apache.kafka.connect.data.Field.schema()\" because the return value of "
                          "\"org.apache.kafka.connect.data.Schema.field(String)\" is null");
      headers.add(headers_[i], f->schema, field_value(**s, static_cast<size_t>(f->index), replace_null_));
    }
    op.schema = new_schema;
    op.value = std::move(new_value);
    ref.rec.headers = std::move(headers);
    return Outcome::kKept;
  }

 private:
  bool key_;
  std::vector<std::string> fields_, headers_;
  bool move_ = false;
  bool replace_null_ = true;
};

// ---------------------------------------------------------------- HoistField

class HoistField final : public Transformation {
 public:
  explicit HoistField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"field", "STRING", std::nullopt, "MEDIUM",
             "Field name for the single field that will be created in the resulting Struct or Map."}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    auto f = ConfigReader(config, d).required_string("field");
    if (!f) return f.error();
    field_ = *f;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (!op.schema) {
      data::Map m;
      m.emplace_back(Value(field_), std::move(op.value));
      op.value = Value(std::move(m));
      return Outcome::kKept;
    }
    auto built = SchemaBuilder::struct_().field(field_, op.schema).build();
    if (!built) return built.error();
    Struct out(*built);
    auto st = out.put(field_, op.value);
    if (!st) return st.error();
    op.schema = *built;
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  bool key_;
  std::string field_;
};

// ---------------------------------------------------------------- InsertField

class InsertField final : public Transformation {
 public:
  explicit InsertField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    auto k = [](std::string name, std::string doc) {
      ConfigKeyDef d{std::move(name), "STRING", std::nullopt, "MEDIUM", std::move(doc)};
      d.default_null = true;
      return d;
    };
    return {k("topic.field", "Field name for Kafka topic. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
            k("partition.field", "Field name for Kafka partition. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
            k("offset.field", "Field name for Kafka offset - only applicable to sink connectors.<br/>Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
            k("timestamp.field", "Field name for record timestamp. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
            k("static.field", "Field name for static data field. Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."),
            k("static.value", "Static field value, if field name configured."),
            replace_null_key()};
  }
  struct Spec {
    std::string name;
    bool optional = true;
  };
  static std::optional<Spec> spec(const std::optional<std::string>& v) {
    if (!v || v->empty()) return std::nullopt;
    Spec s{*v, true};
    if (s.name.back() == '!') {
      s.name.pop_back();
      s.optional = false;
    } else if (s.name.back() == '?') {
      s.name.pop_back();
    }
    return s;
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    std::optional<std::string> vals[6];
    const char* keys[6] = {"topic.field", "partition.field", "offset.field", "timestamp.field", "static.field", "static.value"};
    for (int i = 0; i < 6; ++i) {
      auto v = r.string(keys[i]);
      if (!v) return v.error();
      vals[i] = *v;
    }
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    replace_null_ = *rn;
    topic_ = spec(vals[0]);
    partition_ = spec(vals[1]);
    offset_ = spec(vals[2]);
    timestamp_ = spec(vals[3]);
    static_ = spec(vals[4]);
    static_value_ = vals[5];
    if (static_ && !static_value_) {
      char hash[32];
      std::snprintf(hash, sizeof hash, "%x", static_cast<unsigned>(reinterpret_cast<uintptr_t>(this) >> 4));
      return invalid_value("static.value", "null",
                           std::string("No value specified for static field: org.apache.kafka.connect.transforms.InsertField$InsertionSpec@") + hash);
    }
    if (!topic_ && !partition_ && !offset_ && !timestamp_ && !static_)
      return config_error("", "No field insertion configured");
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (op.value.is_null()) return Outcome::kKept;
    const char* purpose = "field insertion";
    auto need_sink = [&]() -> Status {
      if (!ref.sink) return data_error(std::string("Only SinkRecord supported for [") + purpose +
                                       "], found: org.apache.kafka.connect.source.SourceRecord");
      return ok_status();
    };
    const auto& rec = ref.rec;
    if (!op.schema) {
      auto m = require_map(op.value, purpose);
      if (!m) return m.error();
      data::Map updated = **m;
      if (topic_) map_put(updated, topic_->name, Value(rec.topic));
      if (partition_ && rec.kafka_partition) map_put(updated, partition_->name, Value(*rec.kafka_partition));
      if (offset_) {
        auto st = need_sink();
        if (!st) return st.error();
        map_put(updated, offset_->name, Value(ref.sink->kafka_offset));
      }
      if (timestamp_ && rec.timestamp) map_put(updated, timestamp_->name, Value(*rec.timestamp));
      if (static_ && static_value_) map_put(updated, static_->name, Value(*static_value_));
      op.value = Value(std::move(updated));
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, purpose);
    if (!s) return s.error();
    const Schema& vs = *(*s)->schema();
    SchemaPtr updated_schema;
    if (cache_in_ && *cache_in_ == vs) {
      updated_schema = cache_out_;
    } else {
      SchemaBuilder b(Type::STRUCT);
      copy_schema_basics(vs, b);
      for (const auto& f : vs.fields()) b.field(f.name, f.schema);
      if (topic_) b.field(topic_->name, topic_->optional ? data::OPTIONAL_STRING_SCHEMA() : data::STRING_SCHEMA());
      if (partition_) b.field(partition_->name, partition_->optional ? data::OPTIONAL_INT32_SCHEMA() : data::INT32_SCHEMA());
      if (offset_) b.field(offset_->name, offset_->optional ? data::OPTIONAL_INT64_SCHEMA() : data::INT64_SCHEMA());
      if (timestamp_) {
        auto tb = data::timestamp_builder();
        if (timestamp_->optional) tb.optional();
        b.field(timestamp_->name, *tb.build());
      }
      if (static_) b.field(static_->name, static_->optional ? data::OPTIONAL_STRING_SCHEMA() : data::STRING_SCHEMA());
      auto built = b.build();
      if (!built) return built.error();
      updated_schema = *built;
      cache_in_ = std::make_shared<Schema>(vs);
      cache_out_ = updated_schema;
    }
    Struct out(updated_schema);
    for (size_t i = 0; i < vs.fields().size(); ++i) {
      auto st = out.put(vs.fields()[i].name, field_value(**s, i, replace_null_));
      if (!st) return st.error();
    }
    auto put = [&](const std::string& n, Value v) { return out.put(n, std::move(v)); };
    if (topic_) { auto st = put(topic_->name, Value(rec.topic)); if (!st) return st.error(); }
    if (partition_ && rec.kafka_partition) { auto st = put(partition_->name, Value(*rec.kafka_partition)); if (!st) return st.error(); }
    if (offset_) {
      auto st = need_sink();
      if (!st) return st.error();
      auto st2 = put(offset_->name, Value(ref.sink->kafka_offset));
      if (!st2) return st2.error();
    }
    if (timestamp_ && rec.timestamp) { auto st = put(timestamp_->name, Value(data::JavaDate{*rec.timestamp})); if (!st) return st.error(); }
    if (static_ && static_value_) { auto st = put(static_->name, Value(*static_value_)); if (!st) return st.error(); }
    op.schema = updated_schema;
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  bool key_;
  bool replace_null_ = true;
  std::optional<Spec> topic_, partition_, offset_, timestamp_, static_;
  std::optional<std::string> static_value_;
  std::shared_ptr<Schema> cache_in_;
  SchemaPtr cache_out_;
};

}  // namespace

void add_transforms_a(std::vector<PluginInfo>& out) {
  add_key_value<Cast>(out, "Cast", "Cast fields or the entire key or value to a specific type, e.g. to force an integer field to a smaller width.");
  add_single<DropHeaders>(out, "DropHeaders", "Removes one or more headers from each record.");
  add_key_value<ExtractField>(out, "ExtractField", "Extract the specified field from a Struct when schema present, or a Map in the case of schemaless data.");
  add_single<Filter>(out, "Filter", "Drops all records, filtering them from subsequent transformations in the chain. This is intended to be used conditionally to filter out records matching (or not matching) a particular Predicate.");
  add_key_value<Flatten>(out, "Flatten", "Flatten a nested data structure, generating names for each field by concatenating the field names at each level with a configurable delimiter character.");
  add_key_value<HeaderFrom>(out, "HeaderFrom", "Moves or copies fields in the key/value of a record into that record's headers.");
  add_key_value<HoistField>(out, "HoistField", "Wrap data using the specified field name in a Struct when schema present, or a Map in the case of schemaless data.");
  add_key_value<InsertField>(out, "InsertField", "Insert field(s) using attributes from the record metadata or a configured static value.");
}

}  // namespace kc::transforms::detail
