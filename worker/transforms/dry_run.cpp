#include "worker/transforms/dry_run.h"

namespace kc::transforms {

namespace nt = data::notation;

Result<Config> connector_config_from_json(const Json& doc) {
  if (!doc.is_object()) return Error{"", "the connector config must be a JSON object"};
  const Json& c = doc.contains("config") && doc["config"].is_object() ? doc["config"] : doc;
  Config out;
  for (const auto& [k, v] : c.items()) out[k] = v.is_string() ? v.get<std::string>() : v.dump();
  if (&c != &doc && doc.contains("name") && doc["name"].is_string()) out["name"] = doc["name"].get<std::string>();
  return out;
}

Result<TransformDryRun> TransformDryRun::create(const Config& config, std::vector<ConfigError>* errors) {
  auto chain = TransformChain::build(config, errors);
  if (!chain) return chain.error();
  TransformDryRun d;
  d.chain_ = std::make_shared<TransformChain>(std::move(*chain));
  return d;
}

namespace {
Json error_json(const std::string& stage, const std::string& message, const std::string& transform = "") {
  Json e = Json::object();
  e["stage"] = stage;
  if (!transform.empty()) e["transform"] = transform;
  e["message"] = message;
  Json out = Json::object();
  out["error"] = std::move(e);
  return out;
}
}  // namespace

Json TransformDryRun::process(const Json& record) {
  if (!record.is_object()) return error_json("input", "each line must be a JSON object (a record)");
  auto r = nt::record_from_json(record);
  if (!r) return error_json("input", r.error().to_string());
  ApplyError err;
  Result<Outcome> out = Outcome::kKept;
  if (r->sink) {
    out = chain_->apply(r->record, &err);
  } else {
    data::SourceRecord src;
    static_cast<data::ConnectRecord&>(src) = static_cast<const data::ConnectRecord&>(r->record);
    out = chain_->apply(src, &err);
    static_cast<data::ConnectRecord&>(r->record) = std::move(static_cast<data::ConnectRecord&>(src));
  }
  if (!out) return error_json("apply", err.message, err.alias);
  if (*out == Outcome::kDropped) return Json();
  return nt::record_to_json(*r);
}

std::string to_hex(std::string_view s) {
  static const char* d = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() * 2);
  for (unsigned char c : s) {
    out.push_back(d[c >> 4]);
    out.push_back(d[c & 15]);
  }
  return out;
}

std::optional<std::string> from_hex(std::string_view h) {
  if (h.size() % 2) return std::nullopt;
  auto nib = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  for (size_t i = 0; i < h.size(); i += 2) {
    int a = nib(h[i]), b = nib(h[i + 1]);
    if (a < 0 || b < 0) return std::nullopt;
    out.push_back(static_cast<char>(a * 16 + b));
  }
  return out;
}

Result<ConvertDryRun> ConvertDryRun::create(const std::string& cls, Direction dir, const data::ConverterConfig& config,
                                            bool is_key) {
  auto c = data::make_converter(cls, config, is_key);
  if (!c) return c.error();
  ConvertDryRun d;
  d.conv_ = std::shared_ptr<data::Converter>(std::move(*c));
  d.dir_ = dir;
  return d;
}

Json ConvertDryRun::process(const Json& line) const {
  if (!line.is_object()) return error_json("input", "each line must be a JSON object");
  std::string topic = line.contains("topic") && line["topic"].is_string() ? line["topic"].get<std::string>() : "";
  if (dir_ == Direction::kFromConnect) {
    auto schema = nt::schema_from_json(line.contains("schema") ? line["schema"] : Json());
    if (!schema) return error_json("input", schema.error().to_string());
    auto value = nt::value_from_json(*schema, line.contains("value") ? line["value"] : Json());
    if (!value) return error_json("input", value.error().to_string());
    auto bytes = conv_->from_connect(topic, *schema, *value);
    if (!bytes) return error_json("fromConnectData", bytes.error().message);
    Json out = Json::object();
    out["topic"] = topic;
    out["bytes_hex"] = bytes->has_value() ? Json(to_hex(**bytes)) : Json();
    return out;
  }
  std::optional<std::string> bytes;
  if (line.contains("bytes_hex") && !line["bytes_hex"].is_null()) {
    if (!line["bytes_hex"].is_string()) return error_json("input", "bytes_hex must be a string or null");
    bytes = from_hex(line["bytes_hex"].get<std::string>());
    if (!bytes) return error_json("input", "bytes_hex is not valid hex");
  }
  auto sv = conv_->to_connect(topic, bytes);
  if (!sv) return error_json("toConnectData", sv.error().message);
  Json out = Json::object();
  out["topic"] = topic;
  out["schema"] = nt::schema_to_json(sv->schema);
  out["value"] = nt::value_to_json(sv->schema, sv->value);
  return out;
}

}  // namespace kc::transforms
