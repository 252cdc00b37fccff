#include "worker/data/notation.h"

#include <cmath>
#include <limits>

#include "worker/data/base64.h"

namespace kc::data::notation {

namespace {

Error err(std::string msg) { return Error{"notation", std::move(msg)}; }

bool is_logical_date(const Schema& s) {
  return s.name() && (*s.name() == kDateLogicalName || *s.name() == kTimeLogicalName ||
                      *s.name() == kTimestampLogicalName);
}
bool is_logical_decimal(const Schema& s) { return s.name() && *s.name() == kDecimalLogicalName; }

Result<double> number_or_special(const Json& j) {
  if (j.is_number()) return j.get<double>();
  if (j.is_string()) {
    auto s = j.get<std::string>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return err("expected a number, got " + j.dump());
}

Json float_json(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "Infinity" : "-Infinity";
  return d;
}

int64_t as_int(const Json& j) { return j.is_number_unsigned() ? static_cast<int64_t>(j.get<uint64_t>()) : j.get<int64_t>(); }

// Whether the value's Java class is what ConnectSchema.validateValue accepts
// for `s` (shallow; a Struct must also carry an equal schema).
bool accepted(const Schema& s, const Value& v) {
  if (is_logical_decimal(s)) return v.is<BigDecimal>();
  if (is_logical_date(s)) return v.is<JavaDate>();
  auto t = schemaless_type(v);
  if (!t || *t != s.type()) return false;
  if (const auto* st = v.get_if<Struct>()) return *st->schema() == s;
  return true;
}

}  // namespace

Result<SchemaPtr> schema_from_json(const Json& j) {
  if (j.is_null()) return SchemaPtr();
  if (!j.is_object() || !j.contains("type") || !j["type"].is_string()) return err("schema without type: " + j.dump());
  auto type = type_from_lower_name(j["type"].get<std::string>());
  if (!type) return err("unknown type " + j["type"].dump());
  std::optional<SchemaBuilder> b;
  if (*type == Type::ARRAY) {
    auto vs = schema_from_json(j.value("valueSchema", Json()));
    if (!vs) return vs.error();
    b.emplace(*vs ? SchemaBuilder::array(*vs) : SchemaBuilder::array_without_element_schema());
  } else if (*type == Type::MAP) {
    auto ks = schema_from_json(j.value("keySchema", Json()));
    if (!ks) return ks.error();
    auto vs = schema_from_json(j.value("valueSchema", Json()));
    if (!vs) return vs.error();
    b.emplace(SchemaBuilder::map(*ks, *vs));
  } else {
    b.emplace(*type);
  }
  if (j.value("optional", false)) b->optional();
  if (j.contains("name")) b->name(j["name"].get<std::string>());
  if (j.contains("version")) b->version(static_cast<int32_t>(as_int(j["version"])));
  if (j.contains("doc")) b->doc(j["doc"].get<std::string>());
  if (j.contains("parameters")) {
    Parameters ps;
    for (const auto& [k, v] : j["parameters"].items()) ps.emplace_back(k, v.get<std::string>());
    b->parameters(ps);
  }
  if (j.contains("fields")) {
    for (const auto& f : j["fields"]) {
      auto fs = schema_from_json(f["schema"]);
      if (!fs) return fs.error();
      b->field(f["name"].get<std::string>(), *fs);
    }
  }
  if (j.contains("default") && !j["default"].is_null()) {
    auto so_far = b->build();
    if (!so_far) return so_far.error();
    auto v = value_from_json(*so_far, j["default"]);
    if (!v) return v.error();
    // The default is stored as given (the notation's inputs are valid).
    b->default_value(std::move(*v));
  }
  return b->build();
}

Result<Value> tagged_from_json(const Json& j) {
  if (j.is_null()) return Value();
  if (j.is_boolean()) return Value(j.get<bool>());
  if (j.is_string()) return Value(j.get<std::string>());
  if (!j.is_object() || j.size() != 1) return err("not a tagged value: " + j.dump());
  auto first = j.begin();
  const std::string tag = first.key();
  const Json& x = first.value();
  if (tag == "int8") return Value(static_cast<int8_t>(as_int(x)));
  if (tag == "int16") return Value(static_cast<int16_t>(as_int(x)));
  if (tag == "int32") return Value(static_cast<int32_t>(as_int(x)));
  if (tag == "int64") return Value(as_int(x));
  if (tag == "float32") {
    auto d = number_or_special(x);
    if (!d) return d.error();
    return Value(static_cast<float>(*d));
  }
  if (tag == "float64") {
    auto d = number_or_special(x);
    if (!d) return d.error();
    return Value(*d);
  }
  if (tag == "bytes") {
    auto b = base64_decode(x.get<std::string>());
    if (!b) return err("bad base64");
    return Value(Bytes{*b});
  }
  if (tag == "decimal") {
    auto d = BigDecimal::parse(x.get<std::string>());
    if (!d) return d.error();
    return Value(*d);
  }
  if (tag == "date") return Value(JavaDate{as_int(x)});
  if (tag == "array") {
    Array a;
    for (const auto& e : x) {
      auto v = tagged_from_json(e);
      if (!v) return v.error();
      a.push_back(std::move(*v));
    }
    return Value(std::move(a));
  }
  if (tag == "map") {
    Map m;
    for (const auto& e : x) {
      auto k = tagged_from_json(e.at(0));
      if (!k) return k.error();
      auto v = tagged_from_json(e.at(1));
      if (!v) return v.error();
      m.emplace_back(std::move(*k), std::move(*v));
    }
    return Value(std::move(m));
  }
  if (tag == "struct") {
    auto s = schema_from_json(x.at("schema"));
    if (!s) return s.error();
    return value_from_json(*s, x.at("value"));
  }
  return err("unknown tag " + tag);
}

Result<Value> value_from_json(const SchemaPtr& schema, const Json& j) {
  if (!schema) return tagged_from_json(j);
  if (j.is_null()) return Value();
  if (j.is_object() && j.size() == 1 && j.contains("$invalid")) return tagged_from_json(j["$invalid"]);
  const Schema& s = *schema;
  if (is_logical_decimal(s)) {
    auto d = BigDecimal::parse(j.get<std::string>());
    if (!d) return d.error();
    return Value(*d);
  }
  if (is_logical_date(s)) return Value(JavaDate{as_int(j)});
  switch (s.type()) {
    case Type::INT8: return Value(static_cast<int8_t>(as_int(j)));
    case Type::INT16: return Value(static_cast<int16_t>(as_int(j)));
    case Type::INT32: return Value(static_cast<int32_t>(as_int(j)));
    case Type::INT64: return Value(as_int(j));
    case Type::FLOAT32: {
      auto d = number_or_special(j);
      if (!d) return d.error();
      return Value(static_cast<float>(*d));
    }
    case Type::FLOAT64: {
      auto d = number_or_special(j);
      if (!d) return d.error();
      return Value(*d);
    }
    case Type::BOOLEAN: return Value(j.get<bool>());
    case Type::STRING: return Value(j.get<std::string>());
    case Type::BYTES: {
      auto b = base64_decode(j.get<std::string>());
      if (!b) return err("bad base64");
      return Value(Bytes{*b});
    }
    case Type::ARRAY: {
      Array a;
      for (const auto& e : j) {
        auto v = value_from_json(s.value_schema(), e);
        if (!v) return v.error();
        a.push_back(std::move(*v));
      }
      return Value(std::move(a));
    }
    case Type::MAP: {
      Map m;
      for (const auto& e : j) {
        auto k = value_from_json(s.key_schema(), e.at(0));
        if (!k) return k.error();
        auto v = value_from_json(s.value_schema(), e.at(1));
        if (!v) return v.error();
        m.emplace_back(std::move(*k), std::move(*v));
      }
      return Value(std::move(m));
    }
    case Type::STRUCT: {
      Struct st(schema);
      for (const auto& f : s.fields()) {
        if (!j.contains(f.name)) continue;
        auto v = value_from_json(f.schema, j[f.name]);
        if (!v) return v.error();
        st.put_unchecked(static_cast<size_t>(f.index), std::move(*v));
      }
      return Value(std::move(st));
    }
  }
  return err("unreachable");
}

Json schema_to_json(const SchemaPtr& schema) {
  if (!schema) return nullptr;
  const Schema& s = *schema;
  Json j = Json::object();
  j["type"] = std::string(type_lower_name(s.type()));
  j["optional"] = s.optional();
  if (s.name()) j["name"] = *s.name();
  if (s.version()) j["version"] = *s.version();
  if (s.doc()) j["doc"] = *s.doc();
  if (s.parameters()) {
    Json p = Json::object();
    for (const auto& [k, v] : *s.parameters()) p[k] = v;
    j["parameters"] = p;
  }
  if (s.type() == Type::MAP) j["keySchema"] = schema_to_json(s.key_schema());
  if (s.type() == Type::ARRAY || s.type() == Type::MAP) j["valueSchema"] = schema_to_json(s.value_schema());
  if (s.type() == Type::STRUCT) {
    Json fs = Json::array();
    for (const auto& f : s.fields()) fs.push_back(Json{{"name", f.name}, {"schema", schema_to_json(f.schema)}});
    j["fields"] = fs;
  }
  if (s.default_value()) j["default"] = value_to_json(schema, *s.default_value());
  return j;
}

Json tagged_to_json(const Value& v) {
  return std::visit(
      [&](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else if constexpr (std::is_same_v<T, bool>) return x;
        else if constexpr (std::is_same_v<T, std::string>) return x;
        else if constexpr (std::is_same_v<T, int8_t>) return Json{{"int8", x}};
        else if constexpr (std::is_same_v<T, int16_t>) return Json{{"int16", x}};
        else if constexpr (std::is_same_v<T, int32_t>) return Json{{"int32", x}};
        else if constexpr (std::is_same_v<T, int64_t>) return Json{{"int64", x}};
        else if constexpr (std::is_same_v<T, float>) return Json{{"float32", float_json(x)}};
        else if constexpr (std::is_same_v<T, double>) return Json{{"float64", float_json(x)}};
        else if constexpr (std::is_same_v<T, Bytes>) return Json{{"bytes", base64_encode(x.data)}};
        else if constexpr (std::is_same_v<T, BigDecimal>) return Json{{"decimal", x.to_string()}};
        else if constexpr (std::is_same_v<T, JavaDate>) return Json{{"date", x.epoch_ms}};
        else if constexpr (std::is_same_v<T, Array>) {
          Json a = Json::array();
          for (const auto& e : x) a.push_back(tagged_to_json(e));
          return Json{{"array", a}};
        } else if constexpr (std::is_same_v<T, Map>) {
          Json a = Json::array();
          for (const auto& [k, e] : x) a.push_back(Json::array({tagged_to_json(k), tagged_to_json(e)}));
          return Json{{"map", a}};
        } else {
          return Json{{"struct", Json{{"schema", schema_to_json(x.schema())}, {"value", value_to_json(x.schema(), v)}}}};
        }
      },
      v.v);
}

Json value_to_json(const SchemaPtr& schema, const Value& v) {
  if (!schema) return tagged_to_json(v);
  if (v.is_null()) return nullptr;
  const Schema& s = *schema;
  if (!accepted(s, v)) return Json{{"$invalid", tagged_to_json(v)}};
  if (const auto* d = v.get_if<BigDecimal>()) return d->to_string();
  if (const auto* d = v.get_if<JavaDate>()) return d->epoch_ms;
  return std::visit(
      [&](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return float_json(x);
        else if constexpr (std::is_same_v<T, Bytes>) return base64_encode(x.data);
        else if constexpr (std::is_same_v<T, Array>) {
          Json a = Json::array();
          for (const auto& e : x) a.push_back(value_to_json(s.value_schema(), e));
          return a;
        } else if constexpr (std::is_same_v<T, Map>) {
          Json a = Json::array();
          for (const auto& [k, e] : x)
            a.push_back(Json::array({value_to_json(s.key_schema(), k), value_to_json(s.value_schema(), e)}));
          return a;
        } else if constexpr (std::is_same_v<T, Struct>) {
          Json o = Json::object();
          for (const auto& f : s.fields()) o[f.name] = value_to_json(f.schema, x.at(static_cast<size_t>(f.index)));
          return o;
        } else if constexpr (std::is_same_v<T, BigDecimal> || std::is_same_v<T, JavaDate> ||
                             std::is_same_v<T, std::monostate>) {
          return nullptr;  // handled above
        } else {
          return x;
        }
      },
      v.v);
}

Result<Headers> headers_from_json(const Json& j) {
  Headers h;
  if (j.is_null()) return h;
  for (const auto& e : j) {
    auto s = schema_from_json(e.value("schema", Json()));
    if (!s) return s.error();
    auto v = value_from_json(*s, e.value("value", Json()));
    if (!v) return v.error();
    h.add(e.at("key").get<std::string>(), *s, std::move(*v));
  }
  return h;
}

Json headers_to_json(const Headers& headers) {
  Json a = Json::array();
  for (const auto& h : headers.list())
    a.push_back(Json{{"key", h.key}, {"schema", schema_to_json(h.schema)}, {"value", value_to_json(h.schema, h.value)}});
  return a;
}

Result<AnyRecord> record_from_json(const Json& j) {
  AnyRecord r;
  r.sink = j.value("kind", std::string("sink")) != "source";
  SinkRecord& rec = r.record;
  rec.topic = j.value("topic", std::string());
  if (j.contains("partition") && !j["partition"].is_null()) rec.kafka_partition = static_cast<int32_t>(as_int(j["partition"]));
  if (j.contains("timestamp") && !j["timestamp"].is_null()) rec.timestamp = as_int(j["timestamp"]);
  auto ks = schema_from_json(j.value("keySchema", Json()));
  if (!ks) return ks.error();
  rec.key_schema = *ks;
  auto k = value_from_json(rec.key_schema, j.value("key", Json()));
  if (!k) return k.error();
  rec.key = std::move(*k);
  auto vs = schema_from_json(j.value("valueSchema", Json()));
  if (!vs) return vs.error();
  rec.value_schema = *vs;
  auto v = value_from_json(rec.value_schema, j.value("value", Json()));
  if (!v) return v.error();
  rec.value = std::move(*v);
  auto h = headers_from_json(j.value("headers", Json()));
  if (!h) return h.error();
  rec.headers = std::move(*h);
  if (r.sink) {
    if (j.contains("offset") && !j["offset"].is_null()) rec.kafka_offset = as_int(j["offset"]);
    std::string tt = j.value("timestampType", std::string("NoTimestampType"));
    rec.timestamp_type = tt == "CreateTime"      ? TimestampType::CREATE_TIME
                         : tt == "LogAppendTime" ? TimestampType::LOG_APPEND_TIME
                                                 : TimestampType::NO_TIMESTAMP_TYPE;
    rec.original_topic = j.value("originalTopic", rec.topic);
    if (j.contains("originalPartition") && !j["originalPartition"].is_null())
      rec.original_kafka_partition = static_cast<int32_t>(as_int(j["originalPartition"]));
    else
      rec.original_kafka_partition = rec.kafka_partition;
    rec.original_kafka_offset =
        j.contains("originalOffset") && !j["originalOffset"].is_null() ? as_int(j["originalOffset"]) : rec.kafka_offset;
  }
  return r;
}

Json record_to_json(const AnyRecord& r) {
  const SinkRecord& rec = r.record;
  Json j = Json::object();
  j["kind"] = r.sink ? "sink" : "source";
  j["topic"] = rec.topic;
  j["partition"] = rec.kafka_partition ? Json(*rec.kafka_partition) : Json();
  if (r.sink) j["offset"] = rec.kafka_offset;
  j["timestamp"] = rec.timestamp ? Json(*rec.timestamp) : Json();
  if (r.sink) j["timestampType"] = std::string(timestamp_type_name(rec.timestamp_type));
  j["keySchema"] = schema_to_json(rec.key_schema);
  j["key"] = value_to_json(rec.key_schema, rec.key);
  j["valueSchema"] = schema_to_json(rec.value_schema);
  j["value"] = value_to_json(rec.value_schema, rec.value);
  j["headers"] = headers_to_json(rec.headers);
  if (r.sink) {
    j["originalTopic"] = rec.original_topic;
    j["originalPartition"] = rec.original_kafka_partition ? Json(*rec.original_kafka_partition) : Json();
    j["originalOffset"] = rec.original_kafka_offset;
  }
  return j;
}

Json error_line(const std::string& stage, const std::string& message, const std::string& transform) {
  Json e = Json::object();
  e["stage"] = stage;
  if (!transform.empty()) e["transform"] = transform;
  e["message"] = message;
  Json out = Json::object();
  out["error"] = std::move(e);
  return out;
}

}  // namespace kc::data::notation
