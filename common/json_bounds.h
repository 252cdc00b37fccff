#pragma once
// The nesting bound for JSON that comes from outside (REST bodies, internal
// topic records, converter input). The text is scanned before any tree is
// built, so nothing recursive (parse, copy, dump, compare) ever meets a
// deeper tree. Header-only; any thread.

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kc {

/// Deepest nesting of arrays and objects accepted from outside: 64 levels
/// (`[[1]]` is 2). Connect's own entities need 3.
inline constexpr std::size_t kMaxJsonDepth = 64;

/// Thrown by writers (storage's to_compact_json) asked to write JSON deeper
/// than every reader accepts.
class JsonTooDeep : public std::runtime_error {
 public:
  explicit JsonTooDeep(std::size_t limit)
      : std::runtime_error("JSON nests deeper than " + std::to_string(limit) + " levels") {}
};

/// Nesting depth of arrays/objects in `text`, scanning at most until it
/// passes `limit` (then returns limit + 1). Brackets inside strings (with
/// their escapes) do not count. Malformed text gives some number; the
/// parser reports the syntax error afterwards.
inline std::size_t json_nesting_depth(std::string_view text, std::size_t limit = kMaxJsonDepth) {
  std::size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return limit + 1;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace kc
