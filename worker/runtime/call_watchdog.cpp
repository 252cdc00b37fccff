#include "worker/runtime/call_watchdog.h"

#include <future>
#include <string_view>
#include <vector>

namespace kc::runtime {

namespace {
/// How often the watchdog looks at its watches: deadlines fire up to this late.
constexpr auto kTick = std::chrono::milliseconds(50);
}  // namespace

struct CallWatchdog::State {
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;
  uint64_t next_id = 1;
  struct Watch {
    std::chrono::steady_clock::time_point deadline;
    std::function<void()> on_timeout;
  };
  std::map<uint64_t, Watch> watches;
  std::map<uint64_t, bool> fired;  ///< ids whose deadline passed: true while the callback runs
};

CallWatchdog::CallWatchdog() : state_(std::make_shared<State>()) { thread_ = std::thread([this] { run(); }); }

CallWatchdog::~CallWatchdog() {
  {
    std::lock_guard lk(state_->mu);
    state_->stopping = true;
  }
  state_->cv.notify_all();
  if (thread_.joinable()) thread_.join();
}

CallWatchdog::Guard CallWatchdog::watch(int timeout_ms, std::function<void()> on_timeout) {
  std::lock_guard lk(state_->mu);
  const uint64_t id = state_->next_id++;
  // No wake-up here: a watch per poll() must stay cheap; the thread looks
  // every kTick instead.
  state_->watches[id] = {std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms),
                         std::move(on_timeout)};
  return Guard(state_, id);
}

void CallWatchdog::run() {
  std::unique_lock lk(state_->mu);
  while (!state_->stopping) {
    const auto now = std::chrono::steady_clock::now();
    auto next = now + kTick;
    std::vector<std::pair<uint64_t, std::function<void()>>> due;
    for (auto it = state_->watches.begin(); it != state_->watches.end();) {
      if (it->second.deadline <= now) {
        due.emplace_back(it->first, std::move(it->second.on_timeout));
        state_->fired[it->first] = true;
        it = state_->watches.erase(it);
      } else {
        next = std::min(next, it->second.deadline);
        ++it;
      }
    }
    if (!due.empty()) {
      lk.unlock();
      for (auto& [id, fn] : due)
        if (fn) fn();
      lk.lock();
      for (auto& [id, fn] : due)
        if (auto f = state_->fired.find(id); f != state_->fired.end()) f->second = false;
      state_->cv.notify_all();
      continue;
    }
    state_->cv.wait_until(lk, next);
  }
}

CallWatchdog::Guard::Guard(Guard&& o) noexcept : state_(std::move(o.state_)), id_(o.id_) { o.id_ = 0; }

CallWatchdog::Guard::~Guard() {
  if (!state_ || id_ == 0) return;
  std::unique_lock lk(state_->mu);
  state_->watches.erase(id_);
  // A callback under way uses what the watched call's owner owns: wait for it.
  state_->cv.wait(lk, [&] {
    auto f = state_->fired.find(id_);
    return f == state_->fired.end() || !f->second || state_->stopping;
  });
  state_->fired.erase(id_);
}

bool CallWatchdog::Guard::fired() const {
  if (!state_ || id_ == 0) return false;
  std::lock_guard lk(state_->mu);
  return state_->fired.count(id_) != 0;
}

std::optional<std::string> AbandonedCalls::refusal(const std::string& key, const std::string& what) const {
  std::lock_guard lk(mu_);
  for (const auto& [_, e] : calls_)
    if (e.key == key)
      return what + " was not started: the previous call (" + e.what +
             ") was abandoned past its deadline and has not returned yet";
  if (calls_.size() >= max_)
    return what + " was not started: " + std::to_string(calls_.size()) +
           " plugin calls abandoned past their deadline have not returned yet on this worker (the cap is " +
           std::to_string(max_) + ")";
  return std::nullopt;
}

uint64_t AbandonedCalls::abandoned(const std::string& key, std::string what) {
  std::lock_guard lk(mu_);
  const uint64_t token = next_++;
  calls_[token] = Entry{key, std::move(what)};
  return token;
}

void AbandonedCalls::returned(uint64_t token) {
  std::lock_guard lk(mu_);
  calls_.erase(token);
}

size_t AbandonedCalls::count(std::string_view key_prefix) const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (const auto& [_, e] : calls_) n += std::string_view(e.key).substr(0, key_prefix.size()) == key_prefix;
  return n;
}

void call_with_deadline(CallWatchdog& dog, const std::shared_ptr<AbandonedCalls>& calls, const std::string& key,
                        const std::string& what, int timeout_ms, std::function<void()> fn, CallDone done) {
  if (auto no = calls->refusal(key, what)) return done(std::move(no));
  struct Shared {
    std::mutex mu;
    bool reported = false;  ///< done() was handed out
    uint64_t token = 0;     ///< the AbandonedCalls entry, once abandoned
    CallDone done;
  };
  auto sh = std::make_shared<Shared>();
  sh->done = std::move(done);
  std::optional<CallWatchdog::Guard> guard(dog.watch(timeout_ms, [sh, calls, key, what, timeout_ms] {
    CallDone report;
    {
      std::lock_guard lk(sh->mu);
      if (sh->reported) return;
      sh->reported = true;
      sh->token = calls->abandoned(key, what);
      report = std::move(sh->done);
    }
    report(what + " did not return within " + std::to_string(timeout_ms) +
           " ms (connector.call.timeout.ms); its thread is abandoned");
  }));
  std::thread([fn = std::move(fn), sh, calls, guard = std::move(guard)]() mutable {
    fn();
    fn = nullptr;
    guard.reset();  // waits for a deadline callback under way
    CallDone report;
    {
      std::lock_guard lk(sh->mu);
      if (sh->reported) {
        if (sh->token) calls->returned(sh->token);
        return;
      }
      sh->reported = true;
      report = std::move(sh->done);
    }
    report(std::nullopt);
  }).detach();
}

bool run_with_deadline(std::function<void()> fn, int timeout_ms) {
  auto done = std::make_shared<std::promise<void>>();
  auto fut = done->get_future();
  std::thread t([fn = std::move(fn), done]() mutable {
    fn();
    done->set_value();
  });
  if (fut.wait_for(std::chrono::milliseconds(timeout_ms)) == std::future_status::ready) {
    t.join();
    return true;
  }
  t.detach();
  return false;
}

}  // namespace kc::runtime
