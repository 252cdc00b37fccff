// The worker's membership lifecycle (worker/herder/lifecycle.h): the
// transition table, row by row, and WorkerLifecycle's handling of moves.
#include <catch2/catch.hpp>

#include "worker/herder/lifecycle.h"

#include <algorithm>
#include <string>
#include <vector>

using kc::herder::worker_state_name;
using kc::herder::worker_transition_allowed;
using kc::herder::WorkerLifecycle;
using kc::herder::WorkerState;

namespace {

const std::vector<WorkerState> kAll = {WorkerState::Starting, WorkerState::Revoking, WorkerState::Joining,
                                       WorkerState::Applying, WorkerState::Running,  WorkerState::Draining,
                                       WorkerState::Fenced,   WorkerState::Leaving,  WorkerState::Stopped};

struct Row {
  WorkerState from;
  std::vector<WorkerState> allowed;  ///< every other target is refused
  const char* why;
};

}  // namespace

TEST_CASE("worker lifecycle: the transition table, every pair") {
  using S = WorkerState;
  const std::vector<Row> rows = {
      {S::Starting, {S::Revoking, S::Joining, S::Applying, S::Draining, S::Fenced, S::Leaving, S::Stopped},
       "first before-join gate, an early resume, a drain, a fence, or stop"},
      {S::Revoking, {S::Joining, S::Applying, S::Draining, S::Fenced, S::Leaving, S::Stopped}, "stops done: JoinGroup"},
      {S::Joining, {S::Revoking, S::Applying, S::Draining, S::Fenced, S::Leaving, S::Stopped},
       "assigned, or coordinator lost"},
      {S::Applying, {S::Revoking, S::Joining, S::Running, S::Draining, S::Fenced, S::Leaving, S::Stopped},
       "applied, or a new round"},
      {S::Running, {S::Revoking, S::Joining, S::Draining, S::Fenced, S::Leaving, S::Stopped},
       "a new round always joins first"},
      {S::Draining, {S::Fenced, S::Leaving, S::Stopped}, "a drain ends in stop(), or the member is fenced"},
      {S::Fenced, {S::Leaving, S::Stopped}, "a fenced worker only stops"},
      {S::Leaving, {S::Stopped}, "stop() ends stopped"},
      {S::Stopped, {}, "terminal"},
  };
  REQUIRE(rows.size() == kAll.size());
  for (const auto& row : rows) {
    for (auto to : kAll) {
      const bool want = std::find(row.allowed.begin(), row.allowed.end(), to) != row.allowed.end();
      INFO(worker_state_name(row.from) << " -> " << worker_state_name(to) << " (" << row.why << ")");
      CHECK(worker_transition_allowed(row.from, to) == want);
    }
  }
}

TEST_CASE("worker lifecycle: a move to the same state is not a transition") {
  for (auto s : kAll) CHECK_FALSE(worker_transition_allowed(s, s));
}

TEST_CASE("worker lifecycle: every state has a name") {
  for (auto s : kAll) CHECK(std::string(worker_state_name(s)) != "?");
  CHECK(std::string(worker_state_name(WorkerState::Running)) == "Running");
}

TEST_CASE("WorkerLifecycle: follows a rebalance, ignores repeats") {
  WorkerLifecycle l;
  CHECK(l.get() == WorkerState::Starting);
  CHECK(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK_FALSE(l.set(WorkerState::Joining, "again"));
  CHECK(l.set(WorkerState::Applying, "assignment"));
  CHECK(l.set_from(WorkerState::Applying, WorkerState::Running, "applied"));
  CHECK(l.get() == WorkerState::Running);
  // A stale "applied" of an older apply does not move a rejoining worker.
  CHECK(l.set(WorkerState::Joining, "rejoin"));
  CHECK_FALSE(l.set_from(WorkerState::Applying, WorkerState::Running, "stale"));
  CHECK(l.get() == WorkerState::Joining);
}

TEST_CASE("WorkerLifecycle: an illegal move is logged and made, not a crash") {
  WorkerLifecycle l;
  CHECK(l.set(WorkerState::Running, "illegal: Starting to Running"));
  CHECK(l.get() == WorkerState::Running);
}

TEST_CASE("WorkerLifecycle: once stopping, late callbacks do not move it back") {
  WorkerLifecycle l;
  CHECK(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK(l.set(WorkerState::Leaving, "stop"));
  CHECK_FALSE(l.set(WorkerState::Applying, "late assignment"));
  CHECK(l.get() == WorkerState::Leaving);
  CHECK(l.set(WorkerState::Stopped, "stopped"));
  CHECK_FALSE(l.set(WorkerState::Joining, "late"));
  CHECK(l.get() == WorkerState::Stopped);
}

TEST_CASE("WorkerLifecycle: a drain is sticky until stop, through its own rebalance") {
  WorkerLifecycle l;
  CHECK(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK(l.set(WorkerState::Applying, "assignment"));
  CHECK(l.set(WorkerState::Running, "applied"));
  CHECK(l.set(WorkerState::Draining, "drain"));
  // The drain's own rebalance steps do not hide that the worker drains.
  CHECK_FALSE(l.set(WorkerState::Revoking, "drain: connectors stop before JoinGroup"));
  CHECK_FALSE(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK_FALSE(l.set_from(WorkerState::Applying, WorkerState::Running, "applied"));
  CHECK(l.get() == WorkerState::Draining);
  CHECK(l.set(WorkerState::Leaving, "stop"));
  CHECK(l.set(WorkerState::Stopped, "stopped"));
}

TEST_CASE("WorkerLifecycle: a fenced worker only stops") {
  WorkerLifecycle l;
  CHECK(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK(l.set(WorkerState::Fenced, "FENCED_INSTANCE_ID"));
  CHECK_FALSE(l.set(WorkerState::Joining, "late JoinGroup"));
  CHECK_FALSE(l.set(WorkerState::Draining, "drain after the fence"));
  CHECK(l.get() == WorkerState::Fenced);
  CHECK(l.set(WorkerState::Stopped, "crash"));
  CHECK(l.get() == WorkerState::Stopped);
}

TEST_CASE("WorkerLifecycle: move_from makes the move now and leaves its log line to the caller") {
  using kc::herder::LifecycleMove;
  WorkerLifecycle l;
  CHECK(l.set(WorkerState::Joining, "JoinGroup"));
  CHECK(l.set(WorkerState::Applying, "assignment"));
  // As post_applied: moved under the herder's lock, logged after it.
  const LifecycleMove m = l.move_from(WorkerState::Applying, WorkerState::Running, "assignment applied");
  CHECK(m.made());
  CHECK(m.from == WorkerState::Applying);
  CHECK(m.to == WorkerState::Running);
  CHECK(m.allowed);
  CHECK(m.why == "assignment applied");
  CHECK(l.get() == WorkerState::Running);  // before log() runs
  WorkerLifecycle::log(m);
  // Not in `from` (a stale apply after a rejoin): nothing moves, nothing to log.
  CHECK(l.set(WorkerState::Joining, "rejoin"));
  const LifecycleMove stale = l.move_from(WorkerState::Applying, WorkerState::Running, "stale");
  CHECK(stale.kind == LifecycleMove::Kind::None);
  CHECK(l.get() == WorkerState::Joining);
  // A sticky state refuses it (a debug line only).
  CHECK(l.set(WorkerState::Draining, "drain"));
  CHECK(l.move_from(WorkerState::Draining, WorkerState::Running, "applied").kind == LifecycleMove::Kind::Refused);
  CHECK(l.get() == WorkerState::Draining);
}
