#pragma once
// Placement labels (kconnectd, not in Connect; issue 29): a worker's
// `worker.labels=host=a,zone=z1` and a connector's `placement.labels=host=a`
// share one syntax, parsed here once. Header-only, pure, thread-safe; used by
// config/ (worker option), the herder (connector config), protocol/connect
// (the metadata extension's bounds) and the assignor (matching).

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "common/result.h"

namespace kc {

/// Label key -> value, sorted by key, keys unique. Empty = no labels.
using Labels = std::map<std::string, std::string, std::less<>>;

/// Most labels one worker or one selector may carry.
inline constexpr std::size_t kMaxLabels = 64;
/// Longest label key, bytes.
inline constexpr std::size_t kMaxLabelKeyBytes = 63;
/// Longest label value, bytes.
inline constexpr std::size_t kMaxLabelValueBytes = 255;

/// True for a byte allowed in a label key: ASCII letters, digits, '.', '_',
/// '-', '/'.
inline bool is_label_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
         c == '-' || c == '/';
}

/// True for a byte allowed in a label value: a key byte, or ':'.
inline bool is_label_value_char(char c) { return is_label_key_char(c) || c == ':'; }

/// Why `key`=`value` is not a valid label, or "" when it is.
inline std::string label_problem(std::string_view key, std::string_view value) {
  if (key.empty()) return "empty label key";
  if (key.size() > kMaxLabelKeyBytes)
    return "label key '" + std::string(key.substr(0, 16)) + "...' is longer than " +
           std::to_string(kMaxLabelKeyBytes) + " bytes";
  for (char c : key)
    if (!is_label_key_char(c))
      return "label key '" + std::string(key) + "' has a character outside [A-Za-z0-9._/-]";
  if (value.empty()) return "label '" + std::string(key) + "' has an empty value";
  if (value.size() > kMaxLabelValueBytes)
    return "label '" + std::string(key) + "' has a value longer than " + std::to_string(kMaxLabelValueBytes) + " bytes";
  for (char c : value)
    if (!is_label_value_char(c))
      return "label '" + std::string(key) + "' has a value with a character outside [A-Za-z0-9._:/-]";
  return {};
}

/// Parses "k1=v1,k2=v2" (spaces around items, keys and values ignored; an
/// empty or all-blank text gives no labels). Errors (Error::field is empty,
/// the caller names the key): an item without '=', a bad key or value (see
/// label_problem()), a key given twice, more than kMaxLabels labels.
inline Result<Labels> parse_labels(std::string_view text) {
  auto trim = [](std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
    return s;
  };
  Labels out;
  if (trim(text).empty()) return out;
  while (true) {
    const size_t comma = text.find(',');
    const std::string_view item = trim(text.substr(0, comma));
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      // Appended, not "'" + std::string(item): GCC 12 at -O3 raises a false
      // -Wrestrict on that operator+ (it failed the container's Release build).
      std::string message{"'"};
      message.append(item).append("' is not key=value (expected e.g. host=a,zone=z1)");
      return Error{"", std::move(message)};
    }
    const std::string_view key = trim(item.substr(0, eq)), value = trim(item.substr(eq + 1));
    if (auto p = label_problem(key, value); !p.empty()) return Error{"", p};
    if (!out.emplace(std::string(key), std::string(value)).second)
      return Error{"", "label key '" + std::string(key) + "' is given twice"};
    if (out.size() > kMaxLabels) return Error{"", "more than " + std::to_string(kMaxLabels) + " labels"};
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

/// "k1=v1,k2=v2" in key order; "" for no labels. parse_labels() reads it back.
inline std::string format_labels(const Labels& labels) {
  std::string s;
  for (const auto& [k, v] : labels) {
    if (!s.empty()) s += ',';
    s += k;
    s += '=';
    s += v;
  }
  return s;
}

/// True when `worker` carries every label of `selector` with the same value
/// (an empty selector matches every worker, an unlabelled one too).
inline bool labels_match(const Labels& selector, const Labels& worker) {
  for (const auto& [k, v] : selector) {
    auto it = worker.find(k);
    if (it == worker.end() || it->second != v) return false;
  }
  return true;
}

}  // namespace kc
