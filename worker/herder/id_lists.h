#pragma once
// Small list helpers shared by the herder and its pure decision functions:
// log text of names and task ids, and sorted merges. Header-only, no I/O.

#include <set>
#include <string>
#include <vector>

#include "protocol/connect/types.h"

namespace kc::herder {

/// "[a,b,c]" for log lines; `to_text(item)` gives each element's text.
/// Built with append(), not (const char*) + std::string: GCC 12 at -O3 raises a
/// false -Wrestrict on that operator+, an error in Release.
template <typename Items, typename ToText>
std::string bracketed_list(const Items& items, ToText to_text) {
  std::string s = "[";
  for (const auto& item : items) {
    if (s.size() > 1) s += ',';
    s += to_text(item);
  }
  s += ']';
  return s;
}

/// "[c-0,c-1]".
inline std::string ids_to_string(const std::vector<connect::ConnectorTaskId>& ids) {
  return bracketed_list(ids, [](const connect::ConnectorTaskId& id) { return id.to_string(); });
}

/// "[a,b]".
inline std::string names_to_string(const std::vector<std::string>& names) {
  return bracketed_list(names, [](const std::string& n) -> const std::string& { return n; });
}

/// Merges `add` into `to`: sorted, without duplicates.
template <typename T>
void add_sorted(std::vector<T>& to, const std::vector<T>& add) {
  if (add.empty()) return;
  std::set<T> all(to.begin(), to.end());
  all.insert(add.begin(), add.end());
  to.assign(all.begin(), all.end());
}

}  // namespace kc::herder
