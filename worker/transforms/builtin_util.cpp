#include "worker/transforms/builtin_util.h"

#include <cctype>

#include "common/json_bounds.h"
#include "worker/data/values.h"
#include "worker/transforms/date_format.h"

namespace kc::transforms::detail {

std::string null_safe_class_name(const Value& v) { return v.is_null() ? "null" : data::java_class_name(v); }

Result<const Struct*> require_struct(const Value& v, std::string_view purpose) {
  if (auto* s = v.get_if<Struct>()) return s;
  return data_error("Only Struct objects supported for [" + std::string(purpose) + "], found: " + null_safe_class_name(v));
}
Result<const Struct*> require_struct_or_null(const Value& v, std::string_view purpose) {
  if (v.is_null()) return static_cast<const Struct*>(nullptr);
  return require_struct(v, purpose);
}
Result<const data::Map*> require_map(const Value& v, std::string_view purpose) {
  if (auto* m = v.get_if<data::Map>()) return m;
  return data_error("Only Map objects supported in absence of schema for [" + std::string(purpose) +
                    "], found: " + null_safe_class_name(v));
}
Result<const data::Map*> require_map_or_null(const Value& v, std::string_view purpose) {
  if (v.is_null()) return static_cast<const data::Map*>(nullptr);
  return require_map(v, purpose);
}
Status require_schema(const SchemaPtr& s, std::string_view purpose) {
  if (!s) return data_error("Schema required for [" + std::string(purpose) + "]");
  return ok_status();
}

Value field_value(const Struct& s, size_t index, bool replace_null) {
  const Value& v = s.at(index);
  if (v.is_null() && replace_null) {
    const data::Value* d = s.schema()->fields()[index].schema->default_value();
    if (d) return *d;
  }
  return v;
}

const Value* map_get(const data::Map& m, std::string_view key) {
  for (const auto& [k, v] : m)
    if (auto* ks = k.get_if<std::string>(); ks && *ks == key) return &v;
  return nullptr;
}
void map_put(data::Map& m, std::string_view key, Value v) {
  for (auto& [k, old] : m)
    if (auto* ks = k.get_if<std::string>(); ks && *ks == key) {
      old = std::move(v);
      return;
    }
  m.emplace_back(Value(std::string(key)), std::move(v));
}
void map_remove(data::Map& m, std::string_view key) {
  std::erase_if(m, [&](const auto& e) {
    auto* ks = e.first.template get_if<std::string>();
    return ks && *ks == key;
  });
}

data::SchemaBuilder& copy_schema_basics(const data::Schema& source, data::SchemaBuilder& b) {
  if (source.name()) b.name(*source.name());
  if (source.version()) b.version(*source.version());
  if (source.doc()) b.doc(*source.doc());
  if (source.parameters()) b.parameters(*source.parameters());
  return b;
}
data::SchemaBuilder copy_schema_basics(const data::Schema& source) {
  // Connect's copy keeps the element schemas of arrays and maps.
  data::SchemaBuilder b = source.type() == data::Type::ARRAY
                              ? (source.value_schema() ? data::SchemaBuilder::array(source.value_schema())
                                                       : data::SchemaBuilder::array_without_element_schema())
                          : source.type() == data::Type::MAP
                              ? data::SchemaBuilder::map(source.key_schema(), source.value_schema())
                              : data::SchemaBuilder(source.type());
  copy_schema_basics(source, b);
  return b;
}

PluginInfo plugin_info(std::string_view package, std::string simple, std::string_view doc,
                       std::vector<ConfigKeyDef> config,
                       std::function<std::unique_ptr<Transformation>()> make_transformation,
                       std::function<std::unique_ptr<Predicate>()> make_predicate) {
  PluginInfo p;
  p.class_name = std::string(package) + simple;
  p.kind = make_predicate ? PluginKind::kPredicate : PluginKind::kTransformation;
  p.aliases = {std::move(simple)};
  p.doc = std::string(doc);
  p.config = std::move(config);
  p.make_transformation = std::move(make_transformation);
  p.make_predicate = std::move(make_predicate);
  return p;
}

ConfigKeyDef replace_null_key() {
  return {"replace.null.with.default", "BOOLEAN", "true", "MEDIUM",
          "Whether to replace fields that have a default value and that are null to the default value. When set to "
          "true, the default value is used, otherwise null is used."};
}

std::string iso_format_for(int64_t ms) {
  static const auto time_f = SimpleDateFormat::compile("HH:mm:ss.SSS'Z'");
  static const auto date_f = SimpleDateFormat::compile("yyyy-MM-dd");
  static const auto ts_f = SimpleDateFormat::compile("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'");
  if (ms < data::kMillisPerDay) return time_f->format(ms);
  if (ms % data::kMillisPerDay == 0) return date_f->format(ms);
  return ts_f->format(ms);
}

namespace {

// A small recursive reader for Values.parseString's array and map literals.
struct LiteralParser {
  std::string_view s;
  size_t pos = 0;
  void ws() {
    while (pos < s.size() && std::isspace(static_cast<unsigned char>(s[pos]))) ++pos;
  }
  std::size_t open = 0;  // arrays/maps being read
  bool parse(data::SchemaAndValue& out, bool nested);
  bool parse_value(data::SchemaAndValue& out, bool nested);
  bool scalar(data::SchemaAndValue& out) {
    ws();
    if (pos < s.size() && s[pos] == '"') {
      std::string text;
      ++pos;
      while (pos < s.size() && s[pos] != '"') {
        if (s[pos] == '\\' && pos + 1 < s.size()) ++pos;
        text.push_back(s[pos++]);
      }
      if (pos >= s.size()) return false;
      ++pos;
      out = {data::STRING_SCHEMA(), Value(std::move(text))};
      return true;
    }
    size_t start = pos;
    while (pos < s.size() && s[pos] != ',' && s[pos] != ']' && s[pos] != '}' && s[pos] != ':') ++pos;
    std::string_view tok = s.substr(start, pos - start);
    while (!tok.empty() && std::isspace(static_cast<unsigned char>(tok.back()))) tok.remove_suffix(1);
    if (tok.empty()) return false;
    out = data::values_parse_string(tok);
    return true;
  }
};

SchemaPtr common_schema(const std::vector<SchemaPtr>& schemas) {
  if (schemas.empty()) return nullptr;
  for (const auto& s : schemas)
    if (!s || !data::schema_equals(s, schemas[0])) return nullptr;
  return schemas[0];
}

bool LiteralParser::parse(data::SchemaAndValue& out, bool nested) {
  ws();
  const bool container = pos < s.size() && (s[pos] == '[' || s[pos] == '{');
  // Config values are outside bytes: nesting is bounded as for JSON, and a
  // literal deeper than that stays a string (as any unparsable one does).
  if (container && open == kc::kMaxJsonDepth) return false;
  open += container;
  const bool ok = parse_value(out, nested);
  open -= container;
  return ok;
}

bool LiteralParser::parse_value(data::SchemaAndValue& out, bool nested) {
  if (pos < s.size() && s[pos] == '[') {
    ++pos;
    data::Array items;
    std::vector<SchemaPtr> schemas;
    ws();
    if (pos < s.size() && s[pos] == ']') {
      ++pos;
    } else {
      while (true) {
        data::SchemaAndValue e;
        if (!parse(e, true)) return false;
        schemas.push_back(e.schema);
        items.push_back(std::move(e.value));
        ws();
        if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
        if (pos < s.size() && s[pos] == ']') { ++pos; break; }
        return false;
      }
    }
    SchemaPtr elem = common_schema(schemas);
    auto built = elem ? data::SchemaBuilder::array(elem).build() : data::SchemaBuilder::array_without_element_schema().build();
    if (!built) return false;
    out = {*built, Value(std::move(items))};
    return true;
  }
  if (pos < s.size() && s[pos] == '{') {
    ++pos;
    data::Map entries;
    std::vector<SchemaPtr> ks, vs;
    ws();
    if (pos < s.size() && s[pos] == '}') {
      ++pos;
    } else {
      while (true) {
        data::SchemaAndValue k, v;
        if (!parse(k, true)) return false;
        ws();
        if (pos >= s.size() || s[pos] != ':') return false;
        ++pos;
        if (!parse(v, true)) return false;
        ks.push_back(k.schema);
        vs.push_back(v.schema);
        entries.emplace_back(std::move(k.value), std::move(v.value));
        ws();
        if (pos < s.size() && s[pos] == ',') { ++pos; continue; }
        if (pos < s.size() && s[pos] == '}') { ++pos; break; }
        return false;
      }
    }
    SchemaPtr k = common_schema(ks), v = common_schema(vs);
    if (!k || !v) {
      out = {nullptr, Value(std::move(entries))};
      return true;
    }
    auto built = data::SchemaBuilder::map(k, v).build();
    if (!built) return false;
    out = {*built, Value(std::move(entries))};
    return true;
  }
  (void)nested;
  return scalar(out);
}

bool all_digits(std::string_view s) {
  for (char c : s)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

}  // namespace

data::SchemaAndValue parse_literal(std::string_view text) {
  std::string_view t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (!t.empty() && (t.front() == '[' || t.front() == '{')) {
    LiteralParser p{t};
    data::SchemaAndValue out;
    if (p.parse(out, false)) {
      p.ws();
      if (p.pos == t.size()) return out;
    }
    return {data::STRING_SCHEMA(), Value(std::string(text))};
  }
  // ISO 8601 literals (Values' date, time and timestamp patterns).
  auto try_format = [&](std::string_view pattern) -> std::optional<int64_t> {
    auto f = SimpleDateFormat::compile(pattern);
    auto ms = f->parse(t);
    if (!ms) return std::nullopt;
    return *ms;
  };
  if (t.size() == 10 && t[4] == '-' && t[7] == '-' && all_digits(t.substr(0, 4))) {
    if (auto ms = try_format("yyyy-MM-dd")) return {*data::date_builder().build(), Value(data::JavaDate{*ms})};
  }
  if (t.size() == 13 && t[2] == ':' && t[5] == ':' && t.back() == 'Z') {
    if (auto ms = try_format("HH:mm:ss.SSS'Z'")) return {*data::time_builder().build(), Value(data::JavaDate{*ms})};
  }
  if (t.size() == 24 && t[10] == 'T' && t.back() == 'Z') {
    if (auto ms = try_format("yyyy-MM-dd'T'HH:mm:ss.SSS'Z'"))
      return {*data::timestamp_builder().build(), Value(data::JavaDate{*ms})};
  }
  return data::values_parse_string(text);
}

}  // namespace kc::transforms::detail
