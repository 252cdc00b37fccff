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

/// Defaults of the group timings, ms, as in Connect's DistributedConfig:
/// `session.timeout.ms` 10000, `heartbeat.interval.ms` 3000,
/// `rebalance.timeout.ms` 60000, `worker.sync.timeout.ms` 3000.
inline constexpr int32_t kSessionTimeoutMsDefault = 10000;
inline constexpr int32_t kHeartbeatIntervalMsDefault = 3000;
inline constexpr int32_t kRebalanceTimeoutMsDefault = 60000;
inline constexpr int32_t kWorkerSyncTimeoutMsDefault = 3000;

/// Defaults of the task timings, ms, as in Connect's WorkerConfig:
/// `offset.flush.interval.ms` 60000, `offset.flush.timeout.ms` 5000,
/// `task.shutdown.graceful.timeout.ms` 5000.
inline constexpr int64_t kOffsetFlushIntervalMsDefault = 60000;
inline constexpr int32_t kOffsetFlushTimeoutMsDefault = 5000;
inline constexpr int32_t kTaskShutdownGracefulTimeoutMsDefault = 5000;

/// Default of `connector.call.timeout.ms`, ms (ours): the deadline of one
/// plugin call before the instance is reported stuck.
inline constexpr int32_t kConnectorCallTimeoutMsDefault = 60000;

/// Default of `inter.worker.key.ttl.ms`, ms: 3600000 (1 hour), as in
/// Connect's DistributedConfig (KIP-507 session key rotation).
inline constexpr int32_t kInterWorkerKeyTtlMsDefault = 3600000;

/// Default of `tasks.max.limit` (ours): the highest `tasks.max` a connector
/// may ask for, so one config cannot make the leader generate a billion
/// task configs.
inline constexpr int32_t kTasksMaxLimitDefault = 1000;

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
