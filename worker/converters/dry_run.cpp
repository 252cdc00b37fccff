#include "worker/converters/dry_run.h"

namespace kc::converters {

namespace nt = data::notation;

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

Result<ConvertDryRun> ConvertDryRun::create(const std::string& cls, Direction dir, const ConverterConfig& config,
                                            bool is_key) {
  auto c = make_converter(cls, config, is_key);
  if (!c) return c.error();
  ConvertDryRun d;
  d.conv_ = std::shared_ptr<Converter>(std::move(*c));
  d.dir_ = dir;
  return d;
}

Json ConvertDryRun::process(const Json& line) const {
  if (!line.is_object()) return nt::error_line("input", "each line must be a JSON object");
  std::string topic = line.contains("topic") && line["topic"].is_string() ? line["topic"].get<std::string>() : "";
  if (dir_ == Direction::kFromConnect) {
    auto schema = nt::schema_from_json(line.contains("schema") ? line["schema"] : Json());
    if (!schema) return nt::error_line("input", schema.error().to_string());
    auto value = nt::value_from_json(*schema, line.contains("value") ? line["value"] : Json());
    if (!value) return nt::error_line("input", value.error().to_string());
    auto bytes = conv_->from_connect(topic, *schema, *value);
    if (!bytes) return nt::error_line("fromConnectData", bytes.error().message);
    Json out = Json::object();
    out["topic"] = topic;
    out["bytes_hex"] = bytes->has_value() ? Json(to_hex(**bytes)) : Json();
    return out;
  }
  std::optional<std::string> bytes;
  if (line.contains("bytes_hex") && !line["bytes_hex"].is_null()) {
    if (!line["bytes_hex"].is_string()) return nt::error_line("input", "bytes_hex must be a string or null");
    bytes = from_hex(line["bytes_hex"].get<std::string>());
    if (!bytes) return nt::error_line("input", "bytes_hex is not valid hex");
  }
  auto sv = conv_->to_connect(topic, bytes);
  if (!sv) return nt::error_line("toConnectData", sv.error().message);
  Json out = Json::object();
  out["topic"] = topic;
  out["schema"] = nt::schema_to_json(sv->schema);
  out["value"] = nt::value_to_json(sv->schema, sv->value);
  return out;
}

}  // namespace kc::converters
