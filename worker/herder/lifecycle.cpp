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
      // The coordinator's before-join gate precedes every assignment.
      return to == S::Joining || to == S::Revoking;
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

bool WorkerLifecycle::set(WorkerState to, std::string_view why) {
  std::lock_guard lk(mu_);
  return set_locked(to, why);
}

bool WorkerLifecycle::set_from(WorkerState from, WorkerState to, std::string_view why) {
  std::lock_guard lk(mu_);
  return state_ == from && set_locked(to, why);
}

bool WorkerLifecycle::set_locked(WorkerState to, std::string_view why) {
  const WorkerState from = state_;
  if (from == to) return false;
  if (refused_while_sticky(from, to)) {
    spdlog::debug("worker lifecycle: {} while {}, ignored: {}", worker_state_name(to), worker_state_name(from), why);
    return false;
  }
  if (!worker_transition_allowed(from, to))
    spdlog::error("worker lifecycle: illegal transition from {} to {} ({})", worker_state_name(from),
                  worker_state_name(to), why);
  const auto now = std::chrono::steady_clock::now();
  const auto spent = std::chrono::duration_cast<std::chrono::milliseconds>(now - since_).count();
  spdlog::info("worker lifecycle: from {} to {} (after {} ms): {}", worker_state_name(from), worker_state_name(to),
               spent, why);
  state_ = to;
  since_ = now;
  return true;
}

WorkerState WorkerLifecycle::get() const {
  std::lock_guard lk(mu_);
  return state_;
}

}  // namespace kc::herder
