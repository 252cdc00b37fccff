#pragma once
// Writing JSON string escapes by hand, the one place that does it: the
// writers that must match Jackson byte for byte (JsonConverter, the internal
// topics' compact JSON) and the JSON log format. Pure functions; any thread.

#include <string>

namespace kc {

/// Appends `\uXXXX` for the UTF-16 code unit `unit` (0..0xFFFF), hex digits
/// in upper case as Jackson writes them ("\u001F", "\uD83D").
inline void append_json_u_escape(std::string& out, unsigned unit) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  out += "\\u";
  out.push_back(kHex[(unit >> 12) & 15]);
  out.push_back(kHex[(unit >> 8) & 15]);
  out.push_back(kHex[(unit >> 4) & 15]);
  out.push_back(kHex[unit & 15]);
}

/// Appends the escape of the byte `c` inside a JSON string if it needs one,
/// as Jackson's generators write it: `\"`, `\\`, `\b \t \n \f \r`, other
/// control characters (below 0x20) as `\u00XX`. Returns false, appending
/// nothing, for every other byte (the caller writes it as it is; bytes of
/// 0x80 and up are UTF-8 and the caller's business).
inline bool append_json_escape(std::string& out, unsigned char c) {
  switch (c) {
    case '"': out += "\\\""; return true;
    case '\\': out += "\\\\"; return true;
    case '\b': out += "\\b"; return true;
    case '\t': out += "\\t"; return true;
    case '\n': out += "\\n"; return true;
    case '\f': out += "\\f"; return true;
    case '\r': out += "\\r"; return true;
    default:
      if (c >= 0x20) return false;
      append_json_u_escape(out, c);
      return true;
  }
}

}  // namespace kc
