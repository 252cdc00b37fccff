// WorkerLifecycle: see lifecycle.h.
#include "worker/herder/lifecycle.h"

#include <spdlog/spdlog.h>

namespace kc::herder {

const char* worker_state_name(WorkerState s) {
  switch (s) {
    case WorkerState::Starting: return "Starting";
    case WorkerState::Revoking: return "Revoking";
    case WorkerState::Joining: return "Joining";
    case WorkerState::Applying: return "Applying";
    case WorkerState::Running: return "Running";
    case WorkerState::Draining: return "Draining";
    case WorkerState::Fenced: return "Fenced";
    case WorkerState::Leaving: return "Leaving";
    case WorkerState::Stopped: return "Stopped";
  }
  return "?";
}

bool worker_transition_allowed(WorkerState from, WorkerState to) {
  using S = WorkerState;
  if (from == to) return false;
  if (to == S::Stopped) return true;                     // stop() or crash() from anywhere
  if (to == S::Leaving) return from != S::Stopped;       // stop() from anywhere but the end
  if (from == S::Leaving || from == S::Stopped) return false;  // only to Stopped, handled above
  if (to == S::Fenced) return true;                              // the coordinator closes the member at any point
  if (to == S::Draining) return from != S::Fenced;               // a drain starts at any point
  switch (from) {
    case S::Starting:
      // The coordinator's before-join gate precedes every assignment, but
      // for a restarted dynamic worker's early resume (resume_before_join).
      return to == S::Joining || to == S::Revoking || to == S::Applying;
    case S::Revoking:
      // Stops done: the JoinGroup goes out; a newer round may already
      // assign (coordinator found again).
      return to == S::Joining || to == S::Applying;
    case S::Joining:
      // Assigned; or the coordinator was lost, or a rejoin revokes first.
      return to == S::Applying || to == S::Revoking;
    case S::Applying:
      return to == S::Running || to == S::Joining || to == S::Revoking;
    case S::Running:
      // Every assignment follows a JoinGroup, so never straight to Applying.
      return to == S::Joining || to == S::Revoking;
    case S::Draining:
    case S::Fenced:
    case S::Leaving:
    case S::Stopped:
      return false;  // only to Leaving / Stopped, handled above
  }
  return false;
}

namespace {

// See WorkerLifecycle::set: moves a sticky state refuses.
bool refused_while_sticky(WorkerState from, WorkerState to) {
  using S = WorkerState;
  switch (from) {
    case S::Draining:
    case S::Fenced: return to != S::Leaving && to != S::Stopped;
    case S::Leaving:
    case S::Stopped: return to != S::Stopped;
    default: return false;
  }
}

}  // namespace

// set() and set_from() log under mu_ (only this object's), so that the
// lines of moves made on different threads come out in the order made.
bool WorkerLifecycle::set(WorkerState to, std::string_view why) {
  std::lock_guard lk(mu_);
  const LifecycleMove m = move_locked(to, why);
  log(m);
  return m.made();
}

bool WorkerLifecycle::set_from(WorkerState from, WorkerState to, std::string_view why) {
  std::lock_guard lk(mu_);
  if (state_ != from) return false;
  const LifecycleMove m = move_locked(to, why);
  log(m);
  return m.made();
}

LifecycleMove WorkerLifecycle::move_from(WorkerState from, WorkerState to, std::string_view why) {
  std::lock_guard lk(mu_);
  if (state_ != from) return {};
  return move_locked(to, why);
}

LifecycleMove WorkerLifecycle::move_locked(WorkerState to, std::string_view why) {
  LifecycleMove m;
  m.from = state_;
  m.to = to;
  m.why = std::string(why);
  if (m.from == to) return m;
  if (refused_while_sticky(m.from, to)) {
    m.kind = LifecycleMove::Kind::Refused;
    return m;
  }
  const auto now = std::chrono::steady_clock::now();
  m.kind = LifecycleMove::Kind::Made;
  m.allowed = worker_transition_allowed(m.from, to);
  m.after_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - since_).count();
  state_ = to;
  since_ = now;
  return m;
}

void WorkerLifecycle::log(const LifecycleMove& m) {
  switch (m.kind) {
    case LifecycleMove::Kind::None: return;
    case LifecycleMove::Kind::Refused:
      spdlog::debug("worker lifecycle: {} while {}, ignored: {}", worker_state_name(m.to), worker_state_name(m.from),
                    m.why);
      return;
    case LifecycleMove::Kind::Made:
      if (!m.allowed)
        spdlog::error("worker lifecycle: illegal transition from {} to {} ({})", worker_state_name(m.from),
                      worker_state_name(m.to), m.why);
      spdlog::info("worker lifecycle: from {} to {} (after {} ms): {}", worker_state_name(m.from),
                   worker_state_name(m.to), m.after_ms, m.why);
      return;
  }
}

WorkerState WorkerLifecycle::get() const {
  std::lock_guard lk(mu_);
  return state_;
}

}  // namespace kc::herder
