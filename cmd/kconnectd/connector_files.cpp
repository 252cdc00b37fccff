// Connector files of `kconnectd standalone` (connector_files.h).
#include "cmd/kconnectd/connector_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/json_bounds.h"
#include "common/names.h"
#include "common/strings.h"
#include "config/properties.h"
#include "worker/rest/json_codec.h"

namespace kc::cmd {

Result<rest::PutConnectorRequest> parse_connector_file(std::string_view text) {
  auto fail = [](std::string why) { return Error{"", std::move(why)}; };
  const auto first = text.find_first_not_of(" \t\r\n\f");
  rest::PutConnectorRequest req;
  if (first != std::string_view::npos && text[first] == '{') {
    auto parsed = parse_json_bounded<nlohmann::json>(text);
    if (!parsed) return fail("not valid JSON: " + parsed.error->message);
    const auto& j = parsed.value;
    if (j.contains("config") && j["config"].is_object()) {  // {"name":..,"config":{..}}: a create request
      auto r = rest::parse_create_request(text);
      if (!r) return fail(r.error().message);
      req = std::move(r).value();
    } else {  // a flat map of the config
      auto conf = rest::config_from_json(j);
      if (!conf) return fail(conf.error().message);
      req.config = std::move(conf).value();
      auto n = req.config.find("name");
      if (n == req.config.end()) return fail("no \"name\" in the connector config");
      req.name = trim(n->second);
    }
  } else {
    config::Properties props;
    try {
      props = config::parse_properties(text);
    } catch (const config::ConfigError& e) {
      return fail(e.what());
    }
    auto n = props.find("name");
    if (n == props.end()) return fail("no 'name' property (the connector's name)");
    req.name = trim(n->second);
    req.config.insert(props.begin(), props.end());
  }
  if (auto why = connector_name_error(req.name)) return fail("connector name: " + *why);
  req.config["name"] = req.name;
  if (!req.config.count("connector.class")) return fail("no connector.class in the connector config");
  req.allow_replace = false;
  return req;
}

Result<rest::PutConnectorRequest> load_connector_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return Error{"", path + ": is a directory, not a connector file"};
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{"", path + ": cannot read the connector file: " + std::strerror(errno)};
  std::string text(kMaxConnectorFileBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxConnectorFileBytes)
    return Error{"", path + ": larger than " + std::to_string(kMaxConnectorFileBytes) + " bytes, not a connector file"};
  auto r = parse_connector_file(text);
  if (!r) return Error{"", path + ": " + r.error().message};
  return r;
}

}  // namespace kc::cmd
