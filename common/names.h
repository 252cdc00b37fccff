#pragma once
// The one rule for connector names, shared by the REST layer (refuse with
// 400 before anything is forwarded or written) and the config-topic writer
// and reader (never write, and skip on read, a key no worker could address).
// Pure, header-only; any thread.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace kc {

/// Longest connector name, in UTF-8 bytes. Chosen so that a forwarded
/// request whose path holds the name percent-encoded three times over
/// (request line, Location header, a query) stays far below the REST
/// header limit (16 KiB), whatever the name's characters.
inline constexpr std::size_t kMaxConnectorNameBytes = 1024;

/// Length in bytes of the valid UTF-8 sequence at `s[i]` (1..4), or 0 when
/// the bytes there are not one (overlong forms, surrogates, code points
/// above U+10FFFF and truncated sequences are all invalid).
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char c = b(i);
  if (c < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;        // overlong
    if (c == 0xED) hi = 0x9F;        // UTF-16 surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;        // overlong
    if (c == 0xF4) hi = 0x8F;        // above U+10FFFF
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

/// True when `s` is well-formed UTF-8 (RFC 3629).
inline bool is_valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// Why `name` cannot be a connector name, or nullopt when it can. The rule:
/// not empty or blank (Connect's "String may not be empty"), not "." or ".."
/// (no URL path can address them), valid UTF-8, no control character (C0,
/// DEL or C1; Connect's NonEmptyStringWithoutControlChars on `name`), at most
/// kMaxConnectorNameBytes bytes. The message names the rule and never quotes
/// the name's bytes (they may be unprintable or huge).
inline std::optional<std::string> connector_name_error(std::string_view name) {
  if (name.find_first_not_of(" \t\r\n\f\v") == std::string_view::npos)
    return std::string("Connector name may not be empty");
  if (name == "." || name == "..") return std::string("Connector name may not be '.' or '..'");
  if (name.size() > kMaxConnectorNameBytes)
    return "Connector name is " + std::to_string(name.size()) + " bytes long; the limit is " +
           std::to_string(kMaxConnectorNameBytes) + " bytes of UTF-8";
  if (!is_valid_utf8(name)) return std::string("Connector name must be valid UTF-8");
  for (std::size_t i = 0; i < name.size();) {
    const auto c = static_cast<unsigned char>(name[i]);
    if (c < 0x20 || c == 0x7F)
      return "Connector name may not contain control characters (found U+00" +
             std::string(1, "0123456789ABCDEF"[c >> 4]) + std::string(1, "0123456789ABCDEF"[c & 15]) +
             " at byte " + std::to_string(i) + ")";
    if (c == 0xC2 && i + 1 < name.size() && static_cast<unsigned char>(name[i + 1]) <= 0x9F)
      return "Connector name may not contain control characters (found a C1 control at byte " +
             std::to_string(i) + ")";
    i += utf8_sequence_length(name, i);
  }
  return std::nullopt;
}

}  // namespace kc
