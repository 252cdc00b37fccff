// Field edits in place: InsertField adds, ReplaceField drops/renames, MaskField blanks fields.
#include <cstdio>
#include <map>
#include <set>

#include "worker/data/values.h"
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- InsertField

class InsertField final : public Transformation {
 public:
  static constexpr std::string_view kName = "InsertField";
  static constexpr std::string_view kDoc =
      "Insert field(s) using attributes from the record metadata or a configured static value.";
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
    ConfigReader r(config, defs());
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

// ---------------------------------------------------------------- ReplaceField

class ReplaceField final : public Transformation {
 public:
  static constexpr std::string_view kName = "ReplaceField";
  static constexpr std::string_view kDoc =
      "Filter or rename fields.";
  explicit ReplaceField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"exclude", "LIST", "", "MEDIUM", "Fields to exclude. This takes precedence over the fields to include."},
            {"include", "LIST", "", "MEDIUM", "Fields to include. If specified, only these fields will be used."},
            {"renames", "LIST", "", "MEDIUM", "Field rename mappings."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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

// ---------------------------------------------------------------- MaskField

class MaskField final : public Transformation {
 public:
  static constexpr std::string_view kName = "MaskField";
  static constexpr std::string_view kDoc =
      "Mask specified fields with a valid null value for the field type (i.e. 0, false, empty string, and so on), or with a custom replacement.";
  explicit MaskField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    ConfigKeyDef repl{"replacement", "STRING", std::nullopt, "LOW",
                      "Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."};
    repl.default_null = true;
    return {{"fields", "LIST", std::nullopt, "HIGH", "Names of fields to mask."}, repl, replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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

}  // namespace

void add_field_edits(std::vector<PluginInfo>& out) { add_plugins<InsertField, MaskField, ReplaceField>(out); }

}  // namespace kc::transforms::detail
