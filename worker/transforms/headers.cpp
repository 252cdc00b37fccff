// Header transforms: InsertHeader, DropHeaders, HeaderFrom (fields copied/moved into headers).
#include <set>

#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- InsertHeader

class InsertHeader final : public Transformation {
 public:
  static constexpr std::string_view kName = "InsertHeader";
  static constexpr std::string_view kDoc =
      "Add a header to each record.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"header", "STRING", std::nullopt, "HIGH", "The name of the header."},
            {"value.literal", "STRING", std::nullopt, "HIGH",
             "The literal value that is to be set as the header value on all records."}};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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

// ---------------------------------------------------------------- DropHeaders

class DropHeaders final : public Transformation {
 public:
  static constexpr std::string_view kName = "DropHeaders";
  static constexpr std::string_view kDoc =
      "Removes one or more headers from each record.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"headers", "LIST", std::nullopt, "HIGH", "The name of the headers to be removed."}};
  }
  Status configure(const Config& config) override {
    auto l = ConfigReader(config, defs()).list("headers");
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

// ---------------------------------------------------------------- HeaderFrom

class HeaderFrom final : public Transformation {
 public:
  static constexpr std::string_view kName = "HeaderFrom";
  static constexpr std::string_view kDoc =
      "Moves or copies fields in the key/value of a record into that record's headers.";
  explicit HeaderFrom(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    return {{"fields", "LIST", std::nullopt, "HIGH", "Field names in the record whose values are to be copied or moved to headers."},
            {"headers", "LIST", std::nullopt, "HIGH", "Header names, in the same order as the field names listed in the fields configuration property."},
            {"operation", "STRING", std::nullopt, "HIGH", "Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."},
            replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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

}  // namespace

void add_headers(std::vector<PluginInfo>& out) { add_plugins<DropHeaders, HeaderFrom, InsertHeader>(out); }

}  // namespace kc::transforms::detail
