#pragma once
// URL helpers for the REST layer: listener URLs, percent-decoding of path
// segments and query strings, and building forwarded targets. Pure functions,
// no I/O; safe from any thread.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace kc::rest {

/// A parsed `http://host:port[/base]` URL (listeners, leader URLs).
/// `host` has no brackets for IPv6; an empty host in a listener
/// ("http://:8083") means every interface and is normalised to "0.0.0.0".
struct HttpUrl {
  std::string scheme;     ///< "http" (https is parsed but not served or forwarded to)
  std::string host;       ///< name or address, e.g. "w1", "127.0.0.1", "::1"
  uint16_t port = 0;      ///< 0 = let the OS pick (listeners, tests)
  std::string base_path;  ///< path prefix without trailing '/', usually ""
};

/// Parses "scheme://host[:port][/path]". The port defaults to 80 for http and
/// 443 for https. Errors: missing scheme, bad port (not 0..65535), empty URL.
Result<HttpUrl> parse_http_url(std::string_view url);

/// Decodes %XX escapes. `plus_is_space` turns '+' into ' ' (query strings
/// only; in paths '+' is literal). nullopt on a malformed escape.
std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space);

/// Encodes everything but unreserved characters (A-Z a-z 0-9 - . _ ~) as
/// %XX, for one path segment (e.g. the connector name in a Location header).
std::string percent_encode_segment(std::string_view s);

/// Splits a raw path ("/connectors/my%20conn/config") into decoded segments
/// (["connectors", "my conn", "config"]). Empty segments (double or trailing
/// slashes) are dropped. nullopt on a malformed escape.
std::optional<std::vector<std::string>> split_path(std::string_view raw_path);

/// Parses a raw query string ("a=1&b=x+y&a=2") into decoded pairs in order
/// (repeated keys are kept). A key without '=' has an empty value. nullopt on
/// a malformed escape.
std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view raw_query);

/// Removes every `name=...` parameter from a raw query string, keeping the
/// others byte for byte (used to replace `forward=`).
std::string strip_query_param(std::string_view raw_query, std::string_view name);

}  // namespace kc::rest
