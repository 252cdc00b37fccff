// InsertHeader, MaskField, RegexRouter, ReplaceField, SetSchemaMetadata,
// TimestampConverter, TimestampRouter and ValueToKey, following
// org.apache.kafka.connect.transforms.*.
#include <map>
#include <set>

#include "worker/data/converters.h"
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"
#include "worker/transforms/date_format.h"
#include "worker/transforms/java_regex.h"

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

// ---------------------------------------------------------------- InsertHeader

class InsertHeader final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() {
    return {{"header", "STRING", std::nullopt, "HIGH", "The name of the header."},
            {"value.literal", "STRING", std::nullopt, "HIGH",
             "The literal value that is to be set as the header value on all records."}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto h = r.required_string("header");
    if (!h) return h.error();
    auto v = r.required_string("value.literal");
    if (!v) return v.error();
    header_ = *h;
    literal_ = parse_literal(*v);
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    ref.rec.headers.add(header_, literal_.schema, literal_.value);
    return Outcome::kKept;
  }

 private:
  std::string header_;
  data::SchemaAndValue literal_;
};

// ---------------------------------------------------------------- MaskField

class MaskField final : public Transformation {
 public:
  explicit MaskField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    ConfigKeyDef repl{"replacement", "STRING", std::nullopt, "LOW",
                      "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."};
    repl.default_null = true;
    return {{"fields", "LIST", std::nullopt, "HIGH", "Names of fields to mask."}, repl, replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto f = r.list("fields");
    if (!f) return f.error();
    if (f->empty()) return invalid_value("fields", "[]", "Empty list");
    auto rp = r.string("replacement");
    if (!rp) return rp.error();
    if (*rp && (*rp)->empty()) return invalid_value("replacement", "", "String must be non-empty");
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    fields_ = std::set<std::string>(f->begin(), f->end());
    replacement_ = *rp;
    replace_null_ = *rn;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (!op.schema) {
      auto m = require_map(op.value, "mask fields");
      if (!m) return m.error();
      data::Map updated = **m;
      for (const auto& f : fields_) {
        const Value* v = map_get(**m, f);
        auto mv = masked(v ? *v : Value());
        if (!mv) return mv.error();
        map_put(updated, f, std::move(*mv));
      }
      op.value = Value(std::move(updated));
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, "mask fields");
    if (!s) return s.error();
    Struct out((*s)->schema());
    const auto& fields = (*s)->schema()->fields();
    for (size_t i = 0; i < fields.size(); ++i) {
      Value v = field_value(**s, i, replace_null_);
      if (fields_.count(fields[i].name)) {
        auto mv = masked(v);
        if (!mv) return mv.error();
        v = std::move(*mv);
      }
      auto st = out.put(fields[i].name, std::move(v));
      if (!st) return st.error();
    }
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  Result<Value> masked(const Value& v) const {
    if (v.is_null()) return Value();
    std::string cls = "class " + data::java_class_name(v);
    if (!replacement_) {
      switch (v.v.index()) {
        case 1: return Value(int8_t{0});
        case 2: return Value(int16_t{0});
        case 3: return Value(int32_t{0});
        case 4: return Value(int64_t{0});
        case 5: return Value(0.0f);
        case 6: return Value(0.0);
        case 7: return Value(false);
        case 8: return Value(std::string());
        case 10: return Value(data::Array{});
        case 11: return Value(data::Map{});
        case 13: return Value(data::BigDecimal{});
        case 14: return Value(data::JavaDate{0});
        default: return data_error("Cannot mask value of type: " + cls);
      }
    }
    const std::string& r = *replacement_;
    if (v.is<std::string>()) return Value(r);
    if (v.is<data::BigDecimal>()) {
      auto b = data::BigDecimal::parse(r);
      if (!b) return data_error("Unable to convert " + r + " (class java.lang.String) to a number");
      return Value(*b);
    }
    const size_t idx = v.v.index();
    if (idx < 1 || idx > 6) return data_error("Cannot mask value of type " + cls + " with custom replacement.");
    // Values.convertToX: parse the text, then narrow as Java's Number does.
    data::SchemaAndValue p = data::values_parse_string(r);
    const Value& n = p.value;
    double dv;
    int64_t lv;
    if (auto* x = n.get_if<int8_t>()) lv = *x, dv = *x;
    else if (auto* x16 = n.get_if<int16_t>()) lv = *x16, dv = *x16;
    else if (auto* x32 = n.get_if<int32_t>()) lv = *x32, dv = *x32;
    else if (auto* x64 = n.get_if<int64_t>()) lv = *x64, dv = static_cast<double>(*x64);
    else if (auto* f = n.get_if<float>()) dv = *f, lv = static_cast<int64_t>(*f);
    else if (auto* d = n.get_if<double>()) dv = *d, lv = static_cast<int64_t>(*d);
    else if (auto* b = n.get_if<data::BigDecimal>()) dv = b->to_double(), lv = static_cast<int64_t>(dv);
    else return data_error("Unable to convert " + r + " (class java.lang.String) to a number");
    switch (idx) {
      case 1: return Value(static_cast<int8_t>(lv));
      case 2: return Value(static_cast<int16_t>(lv));
      case 3: return Value(static_cast<int32_t>(lv));
      case 4: return Value(lv);
      case 5: return Value(static_cast<float>(dv));
      default: return Value(dv);
    }
  }
  bool key_;
  std::set<std::string> fields_;
  std::optional<std::string> replacement_;
  bool replace_null_ = true;
};

// ---------------------------------------------------------------- RegexRouter

class RegexRouter final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() {
    return {{"regex", "STRING", std::nullopt, "HIGH", "Regular expression to use for matching."},
            {"replacement", "STRING", std::nullopt, "HIGH", "Replacement string."}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto re = r.required_string("regex");
    if (!re) return re.error();
    auto rp = r.required_string("replacement");
    if (!rp) return rp.error();
    auto c = JavaRegex::compile(*re);
    if (!c) return invalid_value("regex", *re, "Invalid regex: " + c.error().message);
    regex_ = std::move(*c);
    replacement_ = *rp;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    if (!regex_->matches(ref.rec.topic)) return Outcome::kKept;
    auto t = regex_->replace_first(ref.rec.topic, replacement_);
    if (!t) return t.error();
    ref.rec.topic = std::move(*t);
    return Outcome::kKept;
  }

 private:
  std::optional<JavaRegex> regex_;
  std::string replacement_;
};

// ---------------------------------------------------------------- ReplaceField

class ReplaceField final : public Transformation {
 public:
  explicit ReplaceField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"exclude", "LIST", "", "MEDIUM", "Fields to exclude. This takes precedence over the fields to include."},
            {"include", "LIST", "", "MEDIUM", "Fields to include. If specified, only these fields will be used."},
            {"renames", "LIST", "", "MEDIUM", "Field rename mappings."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto ex = r.list("exclude");
    if (!ex) return ex.error();
    auto in = r.list("include");
    if (!in) return in.error();
    auto rn = r.list("renames");
    if (!rn) return rn.error();
    for (const auto& m : *rn) {
      auto colon = m.find(':');
      if (colon == std::string::npos || m.find(':', colon + 1) != std::string::npos)
        return invalid_value("renames", java_list_string(*rn), "Invalid rename mapping: " + m);
      renames_[m.substr(0, colon)] = m.substr(colon + 1);
      reverse_[m.substr(colon + 1)] = m.substr(0, colon);
    }
    auto rnd = r.boolean("replace.null.with.default");
    if (!rnd) return rnd.error();
    exclude_ = std::set<std::string>(ex->begin(), ex->end());
    include_ = std::set<std::string>(in->begin(), in->end());
    replace_null_ = *rnd;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    if (op.value.is_null()) return Outcome::kKept;
    if (!op.schema) {
      auto m = require_map(op.value, "field replacement");
      if (!m) return m.error();
      data::Map updated;
      for (const auto& [k, v] : **m) {
        std::string name = data::java_to_string(k);
        if (keep(name)) map_put(updated, renamed(name), v);
      }
      op.value = Value(std::move(updated));
      return Outcome::kKept;
    }
    auto s = require_struct(op.value, "field replacement");
    if (!s) return s.error();
    const Schema& vs = *(*s)->schema();
    SchemaBuilder b(Type::STRUCT);
    copy_schema_basics(vs, b);
    for (const auto& f : vs.fields())
      if (keep(f.name)) b.field(renamed(f.name), f.schema);
    auto built = b.build();
    if (!built) return built.error();
    Struct out(*built);
    for (const auto& f : (*built)->fields()) {
      auto it = reverse_.find(f.name);
      const std::string& orig = it == reverse_.end() ? f.name : it->second;
      const data::Field* of = vs.field(orig);
      if (!of) return data_error(orig + " is not a valid field name");
      auto st = out.put(f.name, field_value(**s, static_cast<size_t>(of->index), replace_null_));
      if (!st) return st.error();
    }
    op.schema = *built;
    op.value = Value(std::move(out));
    return Outcome::kKept;
  }

 private:
  bool keep(const std::string& n) const { return !exclude_.count(n) && (include_.empty() || include_.count(n)); }
  std::string renamed(const std::string& n) const {
    auto it = renames_.find(n);
    return it == renames_.end() ? n : it->second;
  }
  bool key_;
  std::set<std::string> exclude_, include_;
  std::map<std::string, std::string> renames_, reverse_;
  bool replace_null_ = true;
};

// ---------------------------------------------------------------- SetSchemaMetadata

class SetSchemaMetadata final : public Transformation {
 public:
  explicit SetSchemaMetadata(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    ConfigKeyDef n{"schema.name", "STRING", std::nullopt, "HIGH", "Schema name to set."};
    n.default_null = true;
    ConfigKeyDef v{"schema.version", "INT", std::nullopt, "HIGH", "Schema version to set."};
    v.default_null = true;
    return {n, v, replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto n = r.string("schema.name");
    if (!n) return n.error();
    auto v = r.int32("schema.version");
    if (!v) return v.error();
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    if (!*n && !*v) return config_error("", "Neither schema name nor version configured");
    name_ = *n;
    version_ = *v;
    replace_null_ = *rn;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    Operand op = operand(ref.rec, key_);
    auto rs = require_schema(op.schema, "updating schema metadata");
    if (!rs) return rs.error();
    const Schema& s = *op.schema;
    // Connect's ConnectSchema copy lists the fields, which fails on non-structs.
    auto fields = s.fields_checked();
    if (!fields) return fields.error();
    SchemaBuilder b(Type::STRUCT);
    if (s.optional()) b.optional();
    if (name_) b.name(*name_);
    else if (s.name()) b.name(*s.name());
    if (version_) b.version(*version_);
    else if (s.version()) b.version(*s.version());
    if (s.doc()) b.doc(*s.doc());
    if (s.parameters()) b.parameters(*s.parameters());
    for (const auto& f : **fields) b.field(f.name, f.schema);
    auto built = b.build();
    if (!built) return built.error();
    if (auto* st = op.value.get_if<Struct>()) {
      Struct out(*built);
      for (size_t i = 0; i < (*built)->fields().size(); ++i) out.put_unchecked(i, field_value(*st, i, replace_null_));
      op.value = Value(std::move(out));
    }
    op.schema = *built;
    return Outcome::kKept;
  }

 private:
  bool key_;
  std::optional<std::string> name_;
  std::optional<int32_t> version_;
  bool replace_null_ = true;
};

// ---------------------------------------------------------------- TimestampConverter

enum class TsType { kString, kUnix, kDate, kTime, kTimestamp };

class TimestampConverter final : public Transformation {
 public:
  explicit TimestampConverter(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"field", "STRING", "", "HIGH", "The field containing the timestamp, or empty if the entire value is a timestamp"},
            {"target.type", "STRING", std::nullopt, "HIGH", "The desired timestamp representation: string, unix, Date, Time, or Timestamp"},
            {"format", "STRING", "", "MEDIUM", "A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."},
            {"unix.precision", "STRING", "milliseconds", "LOW", "The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
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

// ---------------------------------------------------------------- TimestampRouter

std::string headers_to_string(const data::Headers& h) {
  if (h.empty()) return "ConnectHeaders(headers=)";
  std::string out = "ConnectHeaders(headers=[";
  for (size_t i = 0; i < h.list().size(); ++i) {
    const auto& x = h.list()[i];
    out += (i ? ", " : "") + std::string("ConnectHeader(key=") + x.key + ", value=" + data::java_to_string(x.value) +
           ", schema=" + (x.schema ? x.schema->to_string() : "null") + ")";
  }
  return out + "])";
}

// ConnectRecord.toString with the SinkRecord / SourceRecord prefix.
std::string record_to_string(const RecordRef& ref) {
  const auto& r = ref.rec;
  std::string prefix;
  if (ref.sink) {
    const auto& s = *ref.sink;
    prefix = "SinkRecord{kafkaOffset=" + std::to_string(s.kafka_offset) + ", timestampType=" +
             std::string(data::timestamp_type_name(s.timestamp_type)) + ", originalTopic=" + s.original_topic +
             ", originalKafkaPartition=" + (s.original_kafka_partition ? std::to_string(*s.original_kafka_partition) : "null") +
             ", originalKafkaOffset=" + std::to_string(s.original_kafka_offset) + "} ";
  } else {
    auto map_text = [](const data::Map& m) { return m.empty() ? std::string("null") : data::java_to_string(Value(m)); };
    prefix = "SourceRecord{sourcePartition=" + map_text(ref.source ? ref.source->source_partition : data::Map{}) +
             ", sourceOffset=" + map_text(ref.source ? ref.source->source_offset : data::Map{}) + "} ";
  }
  auto schema_text = [](const SchemaPtr& s) { return s ? s->to_string() : std::string("null"); };
  return prefix + "ConnectRecord{topic='" + r.topic + "', kafkaPartition=" +
         (r.kafka_partition ? std::to_string(*r.kafka_partition) : "null") + ", key=" + data::java_to_string(r.key) +
         ", keySchema=" + schema_text(r.key_schema) + ", value=" + data::java_to_string(r.value) +
         ", valueSchema=" + schema_text(r.value_schema) + ", timestamp=" +
         (r.timestamp ? std::to_string(*r.timestamp) : "null") + ", headers=" + headers_to_string(r.headers) + "}";
}

class TimestampRouter final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() {
    return {{"topic.format", "STRING", "${topic}-${timestamp}", "HIGH",
             "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."},
            {"timestamp.format", "STRING", "yyyyMMdd", "HIGH",
             "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."}};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto t = r.required_string("topic.format");
    if (!t) return t.error();
    auto f = r.required_string("timestamp.format");
    if (!f) return f.error();
    auto c = SimpleDateFormat::compile(*f);
    if (!c) return invalid_value("timestamp.format", *f, c.error().message);
    topic_format_ = *t;
    format_ = std::move(*c);
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    if (!ref.rec.timestamp) return data_error("Timestamp missing on record: " + record_to_string(ref));
    std::string ts = format_->format(*ref.rec.timestamp);
    std::string out = replace_all(topic_format_, "${topic}", ref.rec.topic);
    ref.rec.topic = replace_all(out, "${timestamp}", ts);
    return Outcome::kKept;
  }

 private:
  static std::string replace_all(const std::string& s, std::string_view from, const std::string& to) {
    std::string out;
    size_t pos = 0;
    while (true) {
      size_t hit = s.find(from, pos);
      if (hit == std::string::npos) break;
      out.append(s, pos, hit - pos);
      out += to;
      pos = hit + from.size();
    }
    out.append(s, pos);
    return out;
  }
  std::string topic_format_;
  std::optional<SimpleDateFormat> format_;
};

// ---------------------------------------------------------------- ValueToKey

class ValueToKey final : public Transformation {
 public:
  static std::vector<ConfigKeyDef> defs() {
    return {{"fields", "LIST", std::nullopt, "HIGH", "Field names on the record value to extract as the record key."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    auto d = defs();
    ConfigReader r(config, d);
    auto f = r.list("fields");
    if (!f) return f.error();
    if (f->empty()) return invalid_value("fields", "[]", "Empty list");
    auto rn = r.boolean("replace.null.with.default");
    if (!rn) return rn.error();
    fields_ = *f;
    replace_null_ = *rn;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    auto& rec = ref.rec;
    const char* purpose = "copying fields from value to key";
    if (!rec.value_schema) {
      auto m = require_map(rec.value, purpose);
      if (!m) return m.error();
      data::Map key;
      for (const auto& f : fields_) {
        const Value* v = map_get(**m, f);
        map_put(key, f, v ? *v : Value());
      }
      rec.key_schema = nullptr;
      rec.key = Value(std::move(key));
      return Outcome::kKept;
    }
    auto s = require_struct(rec.value, purpose);
    if (!s) return s.error();
    SchemaBuilder b = SchemaBuilder::struct_();
    for (const auto& f : fields_) {
      const data::Field* vf = rec.value_schema->field(f);
      if (!vf) return data_error("Field does not exist: " + f);
      b.field(f, vf->schema);
    }
    auto built = b.build();
    if (!built) return built.error();
    Struct key(*built);
    for (const auto& f : fields_) {
      auto st = key.put(f, field_value(**s, static_cast<size_t>((*s)->schema()->field(f)->index), replace_null_));
      if (!st) return st.error();
    }
    rec.key_schema = *built;
    rec.key = Value(std::move(key));
    return Outcome::kKept;
  }

 private:
  std::vector<std::string> fields_;
  bool replace_null_ = true;
};

}  // namespace

void add_transforms_b(std::vector<PluginInfo>& out) {
  add_single<InsertHeader>(out, "InsertHeader", "Add a header to each record.");
  add_key_value<MaskField>(out, "MaskField", "Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string, and so on), or with a custom replacement.");
  add_single<RegexRouter>(out, "RegexRouter", "Update the record topic using the configured regular expression and replacement string.");
  add_key_value<ReplaceField>(out, "ReplaceField", "Filter or rename fields.");
  add_key_value<SetSchemaMetadata>(out, "SetSchemaMetadata", "Set the schema name, version or both on the record's key or value schema.");
  add_key_value<TimestampConverter>(out, "TimestampConverter", "Convert timestamps between different formats such as Unix epoch, strings, and Connect Date/Timestamp types.");
  add_single<TimestampRouter>(out, "TimestampRouter", "Update the record's topic field as a function of the original topic value and the record timestamp.");
  add_single<ValueToKey>(out, "ValueToKey", "Replace the record key with a new key formed from a subset of fields in the record value.");
}

}  // namespace kc::transforms::detail
