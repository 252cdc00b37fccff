#pragma once
// Small string helpers shared by several layers.

#include <string>
#include <string_view>
#include <vector>

namespace kc {

/// `s` with ASCII letters upper-cased (Java's toUpperCase(Locale.ROOT) for
/// the ASCII names configs use: "sasl_ssl" -> "SASL_SSL").
inline std::string ascii_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out)
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  return out;
}

/// True when `a` and `b` are equal ignoring ASCII case (HTTP header and
/// scheme names, "Basic", "HmacSHA256").
inline bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    char x = a[i], y = b[i];
    if (x >= 'A' && x <= 'Z') x = static_cast<char>(x - 'A' + 'a');
    if (y >= 'A' && y <= 'Z') y = static_cast<char>(y - 'A' + 'a');
    if (x != y) return false;
  }
  return true;
}

/// `s` without leading and trailing whitespace and control characters
/// (every char <= ' ', as Java's String.trim, which configs are read with).
inline std::string trim(std::string_view s) {
  size_t b = 0, e = s.size();
  while (b < e && static_cast<unsigned char>(s[b]) <= ' ') ++b;
  while (e > b && static_cast<unsigned char>(s[e - 1]) <= ' ') --e;
  return std::string(s.substr(b, e - b));
}

/// The entries of `config` whose keys start with `prefix`, with the prefix
/// removed: Kafka's originalsWithPrefix (e.g. "value.converter." settings,
/// "transforms.<alias>." keys). `config` is any ordered string map.
template <typename Map>
Map with_prefix(const Map& config, const std::string& prefix) {
  Map out;
  for (auto it = config.lower_bound(prefix); it != config.end() && it->first.compare(0, prefix.size(), prefix) == 0;
       ++it)
    out.emplace(it->first.substr(prefix.size()), it->second);
  return out;
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
