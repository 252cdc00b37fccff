#include "worker/runtime/converter.h"

#include <algorithm>
#include <cctype>

#include "worker/storage/json_compact.h"

namespace kc::runtime {

using connectors::Data;
using connectors::Schema;
using connectors::SchemaType;

namespace {

const char* type_name(SchemaType t) {
  switch (t) {
    case SchemaType::Int8: return "int8";
    case SchemaType::Int16: return "int16";
    case SchemaType::Int32: return "int32";
    case SchemaType::Int64: return "int64";
    case SchemaType::Float32: return "float";
    case SchemaType::Float64: return "double";
    case SchemaType::Boolean: return "boolean";
    case SchemaType::String: return "string";
    case SchemaType::Bytes: return "bytes";
  }
  return "string";
}

std::optional<SchemaType> type_from_name(const std::string& s) {
  for (auto t : {SchemaType::Int8, SchemaType::Int16, SchemaType::Int32, SchemaType::Int64, SchemaType::Float32,
                 SchemaType::Float64, SchemaType::Boolean, SchemaType::String, SchemaType::Bytes})
    if (s == type_name(t)) return t;
  return std::nullopt;
}

std::string binary_to_string(const nlohmann::json& v) {
  const auto& b = v.get_binary();
  return std::string(b.begin(), b.end());
}

std::string_view binary_view(const nlohmann::json& v) {
  const auto& b = v.get_binary();
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

class StringConverter : public Converter {
 public:
  Result<std::optional<std::string>> from_connect(const std::string&, const Data& d) const override {
    if (d.value.is_null()) return std::optional<std::string>();
    if (d.value.is_string()) return std::optional<std::string>(d.value.get<std::string>());
    if (d.value.is_binary()) return std::optional<std::string>(binary_to_string(d.value));
    return std::optional<std::string>(storage::to_compact_json(d.value));
  }
  Result<Data> to_connect(const std::string&, const std::optional<std::string>& bytes) const override {
    Data d;
    d.schema = Schema{SchemaType::String, true};
    d.value = bytes ? nlohmann::json(*bytes) : nlohmann::json(nullptr);
    return d;
  }
  bool from_connect_view(const Data& d, std::optional<std::string_view>& out) const override {
    if (d.value.is_null()) out.reset();
    else if (d.value.is_string()) out = std::string_view(d.value.get_ref<const std::string&>());
    else if (d.value.is_binary()) out = binary_view(d.value);
    else return false;
    return true;
  }
  Result<Data> to_connect_owned(const std::string&, std::optional<std::string>&& bytes) const override {
    Data d;
    d.schema = Schema{SchemaType::String, true};
    d.value = bytes ? nlohmann::json(std::move(*bytes)) : nlohmann::json(nullptr);
    return d;
  }
};

class ByteArrayConverter : public Converter {
 public:
  Result<std::optional<std::string>> from_connect(const std::string& topic, const Data& d) const override {
    if (d.schema && d.schema->type != SchemaType::Bytes)
      return Error{topic, "Invalid schema type for ByteArrayConverter: " + std::string(type_name(d.schema->type))};
    if (d.value.is_null()) return std::optional<std::string>();
    if (!d.value.is_binary())
      return Error{topic, std::string("ByteArrayConverter is not compatible with objects of type ") + d.value.type_name()};
    return std::optional<std::string>(binary_to_string(d.value));
  }
  bool from_connect_view(const Data& d, std::optional<std::string_view>& out) const override {
    if (d.schema && d.schema->type != SchemaType::Bytes) return false;  // from_connect reports it
    if (d.value.is_null()) out.reset();
    else if (d.value.is_binary()) out = binary_view(d.value);
    else return false;
    return true;
  }
  Result<Data> to_connect(const std::string&, const std::optional<std::string>& bytes) const override {
    Data d;
    d.schema = Schema{SchemaType::Bytes, true};
    if (bytes) d.value = nlohmann::json::binary(std::vector<uint8_t>(bytes->begin(), bytes->end()));
    return d;
  }
};

class JsonConverter : public Converter {
 public:
  explicit JsonConverter(bool schemas) : schemas_(schemas) {}

  Result<std::optional<std::string>> from_connect(const std::string& topic, const Data& d) const override {
    if (!d.schema && d.value.is_null()) return std::optional<std::string>();
    auto payload = to_json(topic, d);
    if (!payload) return payload.error();
    if (!schemas_) return std::optional<std::string>(storage::to_compact_json(*payload));
    storage::OrderedJson env = storage::OrderedJson::object();
    if (d.schema) {
      env["schema"] = storage::OrderedJson{{"type", type_name(d.schema->type)}, {"optional", d.schema->optional}};
    } else {
      env["schema"] = nullptr;
    }
    env["payload"] = std::move(*payload);
    return std::optional<std::string>(storage::to_compact_json(env));
  }

  Result<Data> to_connect(const std::string& topic, const std::optional<std::string>& bytes) const override {
    if (!bytes) return Data{};
    auto j = nlohmann::json::parse(*bytes, nullptr, false);
    if (j.is_discarded()) return Error{topic, "Converting byte[] to Kafka Connect data failed due to serialization error"};
    if (!schemas_) return Data{std::nullopt, std::move(j)};
    if (!j.is_object() || j.size() != 2 || !j.contains("schema") || !j.contains("payload"))
      return Error{topic,
                   "JsonConverter with schemas.enable requires \"schema\" and \"payload\" fields and may not contain "
                   "additional fields. If you are trying to deserialize plain JSON data, set schemas.enable=false "
                   "in your converter configuration."};
    const auto& sj = j["schema"];
    auto payload = j["payload"];
    if (sj.is_null()) return Data{std::nullopt, std::move(payload)};
    if (!sj.is_object() || !sj.contains("type") || !sj["type"].is_string())
      return Error{topic, "Schema must contain 'type' field"};
    auto t = type_from_name(sj["type"].get<std::string>());
    if (!t) return Error{topic, "Unsupported schema type " + sj["type"].get<std::string>()};
    Schema s{*t, sj.contains("optional") && sj["optional"].is_boolean() && sj["optional"].get<bool>()};
    if (payload.is_null()) {
      if (!s.optional) return Error{topic, "Invalid null value for required " + std::string(type_name(*t)) + " field"};
      return Data{s, nullptr};
    }
    if (*t == SchemaType::Bytes) {
      if (!payload.is_string()) return Error{topic, "Invalid bytes payload"};
      auto raw = base64_decode(payload.get<std::string>());
      if (!raw) return raw.error();
      return Data{s, nlohmann::json::binary(std::vector<uint8_t>(raw->begin(), raw->end()))};
    }
    return Data{s, std::move(payload)};
  }

 private:
  Result<storage::OrderedJson> to_json(const std::string& topic, const Data& d) const {
    if (d.value.is_binary()) return storage::OrderedJson(base64_encode(binary_to_string(d.value)));
    if (d.schema && d.value.is_null() && !d.schema->optional)
      return Error{topic, "Conversion error: null value for field that is required and has no default value"};
    return storage::OrderedJson::parse(d.value.dump());
  }
  bool schemas_;
};

std::string simple_name(const std::string& cls) {
  auto dot = cls.rfind('.');
  return dot == std::string::npos ? cls : cls.substr(dot + 1);
}

}  // namespace

Result<std::unique_ptr<Converter>> make_converter(const std::string& class_name,
                                                  const std::map<std::string, std::string>& config, bool) {
  auto name = simple_name(class_name);
  if (name == "StringConverter") return std::unique_ptr<Converter>(new StringConverter());
  if (name == "ByteArrayConverter") return std::unique_ptr<Converter>(new ByteArrayConverter());
  if (name == "JsonConverter") {
    bool schemas = true;
    auto it = config.find("schemas.enable");
    if (it != config.end()) {
      std::string v = it->second;
      std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
      if (v == "true") schemas = true;
      else if (v == "false") schemas = false;
      else return Error{"schemas.enable", "Invalid value " + it->second + ": expected true or false"};
    }
    return std::unique_ptr<Converter>(new JsonConverter(schemas));
  }
  return Error{"converter", "Class " + class_name + " could not be found (known: " + kStringConverterClass + ", " +
                                kByteArrayConverterClass + ", " + kJsonConverterClass + ")"};
}

std::string base64_encode(const std::string& in) {
  static const char* tbl = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    uint32_t n = (uint32_t(uint8_t(in[i])) << 16) | (uint32_t(uint8_t(in[i + 1])) << 8) | uint8_t(in[i + 2]);
    out += tbl[(n >> 18) & 63];
    out += tbl[(n >> 12) & 63];
    out += tbl[(n >> 6) & 63];
    out += tbl[n & 63];
  }
  if (i < in.size()) {
    uint32_t n = uint32_t(uint8_t(in[i])) << 16;
    if (i + 1 < in.size()) n |= uint32_t(uint8_t(in[i + 1])) << 8;
    out += tbl[(n >> 18) & 63];
    out += tbl[(n >> 12) & 63];
    out += i + 1 < in.size() ? tbl[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

Result<std::string> base64_decode(const std::string& text) {
  auto val = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  std::string out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    if (c == '=') break;
    int v = val(c);
    if (v < 0) return Error{"base64", "invalid character"};
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

}  // namespace kc::runtime
