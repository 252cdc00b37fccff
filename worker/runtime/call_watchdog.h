#pragma once
// Deadlines on plugin calls (connector.call.timeout.ms): a connector's
// start() / task_configs() and a task's poll() / put() may stall or run
// for ever in plugin code, and nothing can interrupt a C++ or C call. So a
// call is watched, not killed: CallWatchdog's one thread fires a callback
// (the connector or task is reported FAILED, naming the call) when a
// watched call is still running at its deadline, and the thread is left
// to the usual stop path (abandoned after task.shutdown.graceful.timeout.ms).
// run_with_deadline is for callers that must get their thread back (the
// herder's pool): the call runs on a thread of its own that is detached
// when the deadline passes.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

namespace kc::runtime {

/// One thread that fires a callback for each watched call still under way
/// at its deadline. Thread-safe. The destructor joins the thread; guards
/// that outlive it do nothing.
class CallWatchdog {
  struct State;

 public:
  CallWatchdog();
  ~CallWatchdog();
  CallWatchdog(const CallWatchdog&) = delete;
  CallWatchdog& operator=(const CallWatchdog&) = delete;

  /// Watches one call while it lives (RAII, on the calling thread).
  class Guard {
   public:
    Guard() = default;
    Guard(Guard&& o) noexcept;
    Guard& operator=(Guard&&) = delete;
    /// Stops watching; waits for the callback if it is running right now.
    ~Guard();
    /// Whether the deadline passed (the callback ran or runs).
    bool fired() const;

   private:
    friend class CallWatchdog;
    Guard(std::shared_ptr<State> state, uint64_t id) : state_(std::move(state)), id_(id) {}
    std::shared_ptr<State> state_;
    uint64_t id_ = 0;
  };

  /// Calls `on_timeout` once, on the watchdog thread, if the returned guard
  /// still lives `timeout_ms` from now (at most 50 ms late). `on_timeout`
  /// must not block. Cheap enough for every poll(): no thread wake-up.
  [[nodiscard]] Guard watch(int timeout_ms, std::function<void()> on_timeout);

 private:
  void run();
  std::shared_ptr<State> state_;
  std::thread thread_;
};

/// Runs `fn` on a new thread and waits up to `timeout_ms` for it. Returns
/// true when it returned in time; on false the thread is detached and `fn`
/// (and whatever it captured by value) lives on until it returns, so it
/// must capture nothing by reference. Blocking, bounded by `timeout_ms`.
bool run_with_deadline(std::function<void()> fn, int timeout_ms);

}  // namespace kc::runtime
