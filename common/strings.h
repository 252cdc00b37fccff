#pragma once
// Small string helpers shared by several layers.

#include <string>
#include <string_view>
#include <vector>

namespace kc {

/// `s` without leading and trailing spaces, tabs, CR and LF (Java's
/// String.trim for the characters configs hold).
inline std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

/// Splits a comma-separated list ("a, b,,c") into trimmed, non-empty items
/// (["a","b","c"]); spaces and tabs around items are dropped. Used for
/// Kafka-style list values such as bootstrap.servers and topics.
inline std::vector<std::string> split_comma_list(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t comma = s.find(',', start);
    if (comma == std::string::npos) comma = s.size();
    const std::string item = s.substr(start, comma - start);
    const auto b = item.find_first_not_of(" \t");
    const auto e = item.find_last_not_of(" \t");
    if (b != std::string::npos) out.push_back(item.substr(b, e - b + 1));
    start = comma + 1;
  }
  return out;
}

}  // namespace kc
