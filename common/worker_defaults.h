#pragma once
// Defaults of worker settings that more than one room needs: config's option
// table, the herder's config struct, the assignor and its simulator. Each
// default is one constant here; the option table's text is made from it at
// compile time (decimal_text), so the two cannot drift apart.

#include <array>
#include <cstddef>
#include <cstdint>

namespace kc {

/// Default of `scheduled.rebalance.max.delay.ms`, ms: 300000 (5 minutes), as
/// in Connect's DistributedConfig. How long lost work waits for its worker
/// to come back, and the cap of the successive-revocation backoff.
inline constexpr int32_t kScheduledRebalanceMaxDelayMsDefault = 300000;

/// Default of `worker.unsync.backoff.ms`, ms: 300000 (5 minutes), as in
/// Connect's DistributedConfig. Backoff after failing to read the config
/// topic to the end (eager protocol).
inline constexpr int32_t kWorkerUnsyncBackoffMsDefault = 300000;

/// The decimal digits of a non-negative V, NUL-terminated, built at compile
/// time (see decimal_text).
template <int64_t V>
inline constexpr auto decimal_text_array = [] {
  static_assert(V >= 0, "decimal_text: non-negative values only");
  constexpr size_t digits = [] {
    size_t d = 1;
    for (int64_t x = V; x >= 10; x /= 10) ++d;
    return d;
  }();
  std::array<char, digits + 1> text{};
  int64_t x = V;
  for (size_t i = digits; i-- > 0; x /= 10) text[i] = static_cast<char>('0' + x % 10);
  return text;
}();

/// `decimal_text<300000>` is "300000": a constant's text for tables that
/// declare defaults as strings (config's option table). Static storage.
template <int64_t V>
inline constexpr const char* decimal_text = decimal_text_array<V>.data();

}  // namespace kc
