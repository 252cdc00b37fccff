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
// when the deadline passes. AbandonedCalls bounds those detached threads:
// one per key (a connector, a plugin's validate) and kMaxAbandonedPluginCalls
// per worker; past either a new call is refused, not started.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
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

/// Worker-wide cap on plugin calls abandoned past their deadline that have
/// not returned yet (each holds a thread, and whatever the plugin holds,
/// until the process exits). Ours; Connect has no such cap.
inline constexpr size_t kMaxAbandonedPluginCalls = 16;

/// The plugin calls abandoned past their deadline that still run, by key
/// (e.g. "connector X", "plugin P"). Thread-safe; shared (shared_ptr) with
/// the abandoned threads, which forget their entry when the call returns.
class AbandonedCalls {
 public:
  /// `max_calls`: the cap (kMaxAbandonedPluginCalls for a worker).
  explicit AbandonedCalls(size_t max_calls = kMaxAbandonedPluginCalls) : max_(max_calls) {}

  /// Why a new call `what` (e.g. "taskConfigs() of connector X") under
  /// `key` must not start: a call under the same key was abandoned and has
  /// not returned, or the cap is reached. nullopt: it may start.
  std::optional<std::string> refusal(const std::string& key, const std::string& what) const;
  /// Records an abandoned call `what` under `key`; returns the token for
  /// returned(). Counts even past the cap (the thread exists already).
  uint64_t abandoned(const std::string& key, std::string what);
  /// The abandoned call of `token` returned at last: forgets it.
  void returned(uint64_t token);
  /// Abandoned calls still running whose key starts with `key_prefix`
  /// (all of them by default).
  size_t count(std::string_view key_prefix = {}) const;
  /// The cap given to the constructor.
  size_t max_calls() const { return max_; }

 private:
  struct Entry {
    std::string key;
    std::string what;
  };
  mutable std::mutex mu_;
  const size_t max_;
  uint64_t next_ = 1;
  std::map<uint64_t, Entry> calls_;
};

/// What call_with_deadline reports once: nullopt when the call returned
/// in time, else the message for the caller.
using CallDone = std::function<void(std::optional<std::string>)>;

/// Starts `fn` on a thread of its own as one call `what` under `key` of
/// `calls`, watched by `dog` for `timeout_ms`, and returns at once. `done`
/// runs once: with nullopt on fn's thread when it returns in time; with the
/// refusal (AbandonedCalls::refusal) right here, no thread started; or with
/// "<what> did not return within N ms (connector.call.timeout.ms); its
/// thread is abandoned" on the watchdog thread, the call then recorded in
/// `calls` until it returns. `done` must not block; `fn` must capture
/// nothing by reference (it may outlive the caller).
void call_with_deadline(CallWatchdog& dog, const std::shared_ptr<AbandonedCalls>& calls, const std::string& key,
                        const std::string& what, int timeout_ms, std::function<void()> fn, CallDone done);

/// Runs `fn` on a new thread and waits up to `timeout_ms` for it. Returns
/// true when it returned in time; on false the thread is detached and `fn`
/// (and whatever it captured by value) lives on until it returns, so it
/// must capture nothing by reference. Blocking, bounded by `timeout_ms`.
bool run_with_deadline(std::function<void()> fn, int timeout_ms);

}  // namespace kc::runtime
