#pragma once
// The worker's membership lifecycle as the herder sees it: one state, moved
// only through WorkerLifecycle::set() (or move_from() then log()), which
// checks the transition against worker_transition_allowed() and logs "from X
// to Y (after N ms)", in the style of the coordinator's GroupMember
// (worker/coordinator/group_member.h).

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace kc::herder {

/// Where this worker is in its group membership.
enum class WorkerState {
  Starting,   ///< start() ran; the first JoinGroup has not been prepared yet
  Revoking,   ///< stopping work before a JoinGroup (revoked, eager round, hand-over) or after losing the coordinator
  Joining,    ///< JoinGroup/SyncGroup under way; no assignment of this round yet
  Applying,   ///< an assignment arrived; the apply strand stops, catches up configs and starts
  Running,    ///< the newest assignment is applied
  Draining,   ///< kconnectd's drain: handing this worker's work to the others before it leaves; sticky until stop()
  Fenced,     ///< another process took over this worker's group.instance.id (FENCED_INSTANCE_ID): the member is closed
  Leaving,    ///< stop(): stopping everything and sending LeaveGroup
  Stopped,    ///< terminal: stopped (or crashed)
};

/// Name of a state ("Running", ...), for logs.
const char* worker_state_name(WorkerState s);

/// Whether WorkerLifecycle::set() accepts from → to (from != to; a move to
/// the same state is not a transition). Pure; exposed for tests.
bool worker_transition_allowed(WorkerState from, WorkerState to);

/// One move asked of WorkerLifecycle, as made (or refused) under its lock,
/// to be logged by WorkerLifecycle::log() once the caller holds no lock.
struct LifecycleMove {
  enum class Kind {
    None,     ///< already in that state, or not in the `from` of set_from/move_from
    Refused,  ///< a sticky state refused it (debug line)
    Made,     ///< the state changed (info line; an error line first when the table does not allow it)
  };
  Kind kind = Kind::None;
  WorkerState from = WorkerState::Starting;
  WorkerState to = WorkerState::Starting;
  int64_t after_ms = 0;  ///< time spent in `from`
  bool allowed = true;   ///< worker_transition_allowed(from, to)
  std::string why;

  [[nodiscard]] bool made() const { return kind == Kind::Made; }
};

/// The current WorkerState of one herder, safe to move and read from any
/// thread (the io thread, the apply strand, stop()'s caller).
class WorkerLifecycle {
 public:
  WorkerLifecycle() : since_(std::chrono::steady_clock::now()) {}

  /// Moves to `to` and logs one info line "worker lifecycle: from X to Y
  /// (after N ms): <why>". A move to the current state does nothing. A move
  /// the table does not allow is logged as an error and made anyway (the
  /// state follows what the herder did; nothing crashes). Returns whether
  /// the state changed.
  /// Sticky states: once Draining or Fenced, only a move to Leaving or
  /// Stopped is made (the drain's own rebalance steps, or callbacks after
  /// the fence, do not move it back); once Leaving or Stopped, only a move
  /// to Stopped. A refused move logs a debug line only.
  bool set(WorkerState to, std::string_view why);

  /// set(to, why) only when the current state is `from`; false otherwise.
  bool set_from(WorkerState from, WorkerState to, std::string_view why);

  /// set_from() without its log line: the move is made now (e.g. under
  /// the herder's `mu`, beside the flags /health reads with the state), and
  /// the caller passes the result to log() once it released its lock.
  LifecycleMove move_from(WorkerState from, WorkerState to, std::string_view why);

  /// The log line(s) of a move (nothing for Kind::None).
  static void log(const LifecycleMove& m);

  /// The current state.
  WorkerState get() const;

 private:
  LifecycleMove move_locked(WorkerState to, std::string_view why);

  mutable std::mutex mu_;
  WorkerState state_ = WorkerState::Starting;
  std::chrono::steady_clock::time_point since_;
};

}  // namespace kc::herder
