// Protocol-name helpers declared in types.h. Source: Kafka Connect's
// ConnectProtocolCompatibility (names "default"/"compatible"/"sessioned",
// config values "eager"/"compatible"/"sessioned", case-insensitive).
#include <algorithm>
#include <cctype>

#include "protocol/connect/types.h"

namespace kc::connect {

const char* protocol_name(ConnectProtocol p) {
  switch (p) {
    case ConnectProtocol::Eager: return "default";
    case ConnectProtocol::Compatible: return "compatible";
    case ConnectProtocol::Sessioned: return "sessioned";
  }
  return "default";  // unreachable for valid enum values
}

int16_t protocol_version(ConnectProtocol p) {
  switch (p) {
    case ConnectProtocol::Eager: return 0;
    case ConnectProtocol::Compatible: return 1;
    case ConnectProtocol::Sessioned: return 2;
  }
  return 0;  // unreachable for valid enum values
}

std::optional<ConnectProtocol> protocol_from_name(const std::string& name) {
  if (name == "default") return ConnectProtocol::Eager;
  if (name == "compatible") return ConnectProtocol::Compatible;
  if (name == "sessioned") return ConnectProtocol::Sessioned;
  return std::nullopt;
}

std::optional<ConnectProtocol> protocol_from_config(const std::string& value) {
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "eager") return ConnectProtocol::Eager;
  if (lower == "compatible") return ConnectProtocol::Compatible;
  if (lower == "sessioned") return ConnectProtocol::Sessioned;
  return std::nullopt;
}

}  // namespace kc::connect
