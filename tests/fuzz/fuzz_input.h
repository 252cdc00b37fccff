#pragma once
// Helpers shared by the fuzz targets: cutting one input into the pieces a
// target feeds to its parsers. Header-only; used by libFuzzer builds and by
// the replay build alike.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace kc::fuzz {

/// The input as text.
inline std::string_view as_text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

/// Splits `s` at the first `sep`: returns the part before it and leaves the
/// part after it in `s`. Without `sep`, returns `fallback` and leaves `s` whole.
inline std::string_view take_until(std::string_view& s, char sep, std::string_view fallback) {
  auto at = s.find(sep);
  if (at == std::string_view::npos) return fallback;
  auto head = s.substr(0, at);
  s.remove_prefix(at + 1);
  return head;
}

/// A broken invariant: abort, so libFuzzer saves the input and the replay
/// test fails. `what` goes to stderr first.
[[noreturn]] inline void invariant_failed(const char* what) {
  std::fprintf(stderr, "fuzz invariant failed: %s\n", what);
  std::abort();
}

#define KC_FUZZ_CHECK(cond) \
  do {                      \
    if (!(cond)) ::kc::fuzz::invariant_failed(#cond); \
  } while (0)

}  // namespace kc::fuzz
