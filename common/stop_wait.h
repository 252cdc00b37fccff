#pragma once
// Stop-interruptible waits: a back-off or an idle wait that ends as soon as
// a stop is requested (std::stop_source::request_stop), instead of a sleep
// that a stop has to wait out.

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stop_token>

namespace kc {

/// Waits `duration`, or less when a stop is requested on `stop` (before or
/// during the wait). Returns true when the wait ended on a stop request,
/// false when the full duration passed. A default token (no stop source)
/// never stops: the full duration is waited. Any thread; the wait is a
/// condition variable wait (std::condition_variable_any with the token), so
/// request_stop() wakes it at once.
template <typename Rep, typename Period>
bool wait_for_stop(const std::stop_token& stop, std::chrono::duration<Rep, Period> duration) {
  if (stop.stop_requested()) return true;
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock lk(mu);
  cv.wait_for(lk, stop, duration, [] { return false; });
  return stop.stop_requested();
}

}  // namespace kc
