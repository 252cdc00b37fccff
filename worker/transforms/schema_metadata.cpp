// SetSchemaMetadata: sets the name and/or version of a key's or value's schema.
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- SetSchemaMetadata

class SetSchemaMetadata final : public Transformation {
 public:
  static constexpr std::string_view kName = "SetSchemaMetadata";
  static constexpr std::string_view kDoc =
      "Set the schema name, version or both on the record's key or value schema.";
  explicit SetSchemaMetadata(bool key) : key_(key) {}
  static std::vector<ConfigKeyDef> defs() {
    ConfigKeyDef n{"schema.name", "STRING", std::nullopt, "HIGH", "Schema name to set."};
    n.default_null = true;
    ConfigKeyDef v{"schema.version", "INT", std::nullopt, "HIGH", "Schema version to set."};
    v.default_null = true;
    return {n, v, replace_null_key()};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
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
    // Connect passes a schemaless null (a tombstone value, a null key) through
    // untouched; only a non-null value without a schema is an error.
    if (!op.schema && op.value.is_null()) return Outcome::kKept;
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

}  // namespace

void add_schema_metadata(std::vector<PluginInfo>& out) { add_plugins<SetSchemaMetadata>(out); }

}  // namespace kc::transforms::detail
