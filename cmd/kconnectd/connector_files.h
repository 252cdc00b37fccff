#pragma once
// The connector files of `kconnectd standalone WORKER.properties
// CONNECTOR...` (Connect's ConnectStandalone arguments): Java properties
// (`name=...`, `connector.class=...`) or JSON, either a create request
// ({"name":..,"config":{..}[,"initial_state":..]}, as POST /connectors) or a
// flat map of the config ({"name":..,"connector.class":..,...}). Parsed
// with the project's bounded parsers (config/properties.h,
// common/json_bounds.h through worker/rest/json_codec.h).

#include <cstddef>
#include <string>
#include <string_view>

#include "common/result.h"
#include "worker/api/herder_api.h"

namespace kc::cmd {

/// Largest connector file read: 1 MiB (a connector config is a few KiB).
inline constexpr std::size_t kMaxConnectorFileBytes = 1024 * 1024;

/// Parses one connector file's text. JSON when the first non-blank byte is
/// `{`, else properties. The result is a create request: name (trimmed,
/// checked by kc::connector_name_error), config with "name" filled in,
/// optional initial_state, allow_replace = false. Errors (the message only;
/// the caller names the file): bad JSON or properties syntax, no "name",
/// a config that is not an object of strings, no connector.class.
Result<rest::PutConnectorRequest> parse_connector_file(std::string_view text);

/// Reads `path` (at most kMaxConnectorFileBytes) and parses it. Errors name
/// the path: "<path>: cannot read the connector file: <why>",
/// "<path>: <parse error>".
Result<rest::PutConnectorRequest> load_connector_file(const std::string& path);

}  // namespace kc::cmd
