// Reshaping a key or value: ExtractField, Flatten, HoistField and ValueToKey.
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"
#include "worker/transforms/field_path.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- ExtractField

class ExtractField final : public Transformation {
 public:
  static constexpr std::string_view kName = "ExtractField";
  static constexpr std::string_view kDoc =
      "Extract the specified field from a Struct when schema present, or a Map in the case of schemaless data.";
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
    ConfigReader r(config, defs());
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
    auto path = parse_field_path(*f, up == "V2" ? FieldSyntaxVersion::kV2 : FieldSyntaxVersion::kV1);
    if (!path) return config_error("field", path.error().message);
    field_ = *f;
    path_ = std::move(*path);
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

// ---------------------------------------------------------------- Flatten

class Flatten final : public Transformation {
 public:
  static constexpr std::string_view kName = "Flatten";
  static constexpr std::string_view kDoc =
      "Flatten a nested data structure, generating names for each field by concatenating the field names at each level with a configurable delimiter character.";
  explicit Flatten(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"delimiter", "STRING", ".", "MEDIUM",
             "Delimiter to insert between field names from the input record when generating field names for the output record"}};
  }
  Status configure(const Config& config) override {
    auto v = ConfigReader(config, defs()).required_string("delimiter");
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

// ---------------------------------------------------------------- HoistField

class HoistField final : public Transformation {
 public:
  static constexpr std::string_view kName = "HoistField";
  static constexpr std::string_view kDoc =
      "Wrap data using the specified field name in a Struct when schema present, or a Map in the case of schemaless data.";
  explicit HoistField(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"field", "STRING", std::nullopt, "MEDIUM",
             "Field name for the single field that will be created in the resulting Struct or Map."}};
  }
  Status configure(const Config& config) override {
    auto f = ConfigReader(config, defs()).required_string("field");
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

// ---------------------------------------------------------------- ValueToKey

class ValueToKey final : public Transformation {
 public:
  static constexpr std::string_view kName = "ValueToKey";
  static constexpr std::string_view kDoc =
      "Replace the record key with a new key formed from a subset of fields in the record value.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"fields", "LIST", std::nullopt, "HIGH", "Field names on the record value to extract as the record key."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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

void add_reshape(std::vector<PluginInfo>& out) { add_plugins<ExtractField, Flatten, HoistField, ValueToKey>(out); }

}  // namespace kc::transforms::detail
