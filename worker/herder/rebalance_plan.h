#pragma once
// The herder's rebalance and leader decisions as pure functions, beside
// reconcile() (reconciler.h): revocation stops, hand-over holds, drain,
// hand-over moves, the leader's task-config generation and the statuses of
// failed generations. Each takes plain values (times as ms inputs, never a
// clock read) and returns a plan; the DistributedHerder only carries plans
// out. No I/O, no threads. Tested by tables (tests/unit/herder).
//
// The before-join gate (eager revoke-all, drain hand-over, pending stops),
// the coordinator-lost revoke-all, the config catch-up of an assignment, the
// leader's task-config write retries and stale leader rounds are decided
// here too; the herder's executors (reconcile_act.cpp) only carry them out.
//
// kconnectd's drain and hand-over are not in Connect: a draining worker, or
// the leader moving a revoked task in the same round, writes a hand-over mark
// (the task's RUNNING/PAUSED status with storage::kHandOverTrace), and the
// new owner starts the task only once the old owner's stop replaced the mark,
// or after a bound.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "assignor/assignor.h"
#include "protocol/connect/types.h"
#include "worker/herder/lifecycle.h"
#include "worker/storage/config_store.h"
#include "worker/storage/records.h"

namespace kc::herder {

using connect::ConnectorTaskId;
using storage::ClusterConfigState;
using storage::ConfigMap;
using storage::StatusState;
using storage::StatusValue;
using storage::TargetState;

/// A task status to write: hand-over marks, FAILED statuses.
using TaskMark = std::pair<ConnectorTaskId, StatusValue>;

// ------------------------------------------------------------------ revocation

/// What this worker stops when an assignment arrives: every connector and
/// task it runs that the assignment does not give it (revoked, or left over),
/// sorted. Connect's onRevoked/onAssigned stop exactly the revoked set; this
/// also stops strays, so that no instance runs twice.
struct RevocationPlan {
  std::vector<std::string> stop_connectors;
  std::vector<ConnectorTaskId> stop_tasks;

  [[nodiscard]] bool empty() const { return stop_connectors.empty() && stop_tasks.empty(); }
  bool operator==(const RevocationPlan&) const = default;
};

/// The revocation stops for an assignment that owns `owned_c`/`owned_t`
/// while this worker runs `running_c`/`running_t`.
RevocationPlan plan_revocation(const std::set<std::string>& owned_c, const std::set<ConnectorTaskId>& owned_t,
                               const std::set<std::string>& running_c, const std::set<ConnectorTaskId>& running_t);

/// "stop connectors [a] tasks [a-0]" or "nothing to stop".
std::string to_string(const RevocationPlan& p);

/// Everything stops: an eager round or a generation reset (before the
/// JoinGroup, BeforeJoinStep::RevokeAll), or the coordinator was lost (out
/// of the group: before the next JoinGroup). `known_c`/`known_t`: every
/// instance the reconciler's actual state holds, running or whose start
/// failed (so that a failed start is tried again once assigned again). The
/// plan stops and forgets each of them; the executor then cuts off tasks
/// abandoned earlier and flushes the statuses (Worker::stop_all's promise:
/// nothing runs here any more that could produce or commit). Sorted; the
/// statuses of the stopped instances are kept (the runtime writes
/// UNASSIGNED), unlike a deleted connector's.
RevocationPlan plan_revoke_all(const std::set<std::string>& known_c, const std::set<ConnectorTaskId>& known_t);

// ------------------------------------------------------------------ before JoinGroup

/// What this worker does at the coordinator's before-join gate
/// (WorkerCoordinator's BeforeJoin, Connect's onRevoked before a JoinGroup).
enum class BeforeJoinStep {
  RevokeAll,   ///< eager round or generation reset: everything stops (plan_revoke_all), then JoinGroup
  HandOver,    ///< kconnectd's drain: connectors stop, tasks are marked (plan_drain_hand_over), then JoinGroup
  AwaitStops,  ///< revocation stops of earlier assignments still run: JoinGroup waits until the last ends
  Join,        ///< nothing to stop: JoinGroup now
};

/// The gate's plan. `state`/`why`: the lifecycle move when the gate opens
/// (Revoking while something must stop first, else Joining); `then` /
/// `then_why`: the move once the step is done, right before JoinGroup
/// (none for Join).
struct BeforeJoinPlan {
  BeforeJoinStep step = BeforeJoinStep::Join;
  bool give_up_assignment = false;  ///< RevokeAll: the whole assignment goes (listed as revoked in GET /rebalances)
  bool give_up_connectors = false;  ///< HandOver: the connectors go; the tasks run on until the next assignment
  bool holds_join_gate = false;     ///< HandOver: counts as a pending stop until its step is done
  WorkerState state = WorkerState::Joining;
  std::string why;
  std::optional<WorkerState> then;
  std::string then_why;

  bool operator==(const BeforeJoinPlan&) const = default;
};

/// From the coordinator's BeforeJoin (`revoke_all`, `hand_over`) and the
/// revocation stops still queued or running (`pending_stops`): revoke-all
/// wins over a hand-over (a drainer whose generation was reset stops
/// everything), which wins over waiting for pending stops.
BeforeJoinPlan plan_before_join(bool revoke_all, bool hand_over, int pending_stops);

/// "revoke all: Revoking, then Joining", "join: Joining", ...
std::string to_string(const BeforeJoinPlan& p);

// ------------------------------------------------------------------ config catch-up

/// Step 2 of applying an assignment: the config topic read up to the
/// assignment's offset. `apply`: it ends exactly there, go on. Otherwise
/// start nothing and rejoin, after `delay_ms` (0: at once) with `reason`:
/// a lagging read (`lagging`) after 10 × retry.backoff.ms (Connect leaves
/// the group and backs off; we only delay the rejoin), an overshooting one
/// at once.
struct ConfigCatchUpPlan {
  bool apply = true;
  bool lagging = false;
  int delay_ms = 0;
  std::string reason;

  bool operator==(const ConfigCatchUpPlan&) const = default;
};

ConfigCatchUpPlan plan_config_catch_up(int64_t snapshot_offset, int64_t assignment_offset, int retry_backoff_ms);

// ------------------------------------------------------------------ the leader's round result

/// Whether the assignment the leader computed for round `round_seq` (on
/// its pool) still goes out when it comes back to the io thread, where
/// `current_round` counts the rounds and JoinGroups begun since: only when
/// no newer one began. A stale one is dropped with its leader state (the
/// coordinator has moved past that round too and drops a late assignment;
/// its state must not become the next round's input).
bool leader_round_is_current(uint64_t round_seq, uint64_t current_round);

// ------------------------------------------------------------------ hand-over hold

/// What to do with a task assigned here that is not running yet.
enum class HoldVerdict {
  Start,   ///< no hand-over mark of another worker: start it
  Wait,    ///< its old owner's mark is there: wait (re-check in a while)
  GiveUp,  ///< waited `bound_ms` already: start it anyway
};

/// One hold decision. `first` is true on the first Wait (log it once);
/// `waited_ms` is how long it has been held (GiveUp: for the log).
struct HoldDecision {
  HoldVerdict verdict = HoldVerdict::Start;
  bool first = false;
  int64_t waited_ms = 0;

  bool operator==(const HoldDecision&) const = default;
};

/// How long a new owner waits for a hand-over (ms): the old owner's graceful
/// stop timeout plus session.timeout.ms and two status polls (a task past its
/// graceful timeout is cut off from Kafka; a frozen worker cuts off everything
/// once it notices).
int64_t hand_over_hold_bound_ms(int64_t task_shutdown_graceful_timeout_ms, int64_t session_timeout_ms,
                                int64_t status_poll_interval_ms);

/// Whether a task assigned to `worker_id` must wait for its old owner.
/// `status`: the task's status as this worker reads it (nullopt: none);
/// held when it is another worker's RUNNING or PAUSED kHandOverTrace mark.
/// `waiting_since_ms`: when this worker started waiting (nullopt: not yet;
/// the caller records `now_ms` on a first Wait and forgets it on Start or
/// GiveUp). Monotonic ms.
HoldDecision decide_hand_over_hold(const std::optional<StatusValue>& status, const std::string& worker_id,
                                   std::optional<int64_t> waiting_since_ms, int64_t now_ms, int64_t bound_ms);

/// "start", "wait (first)", "wait 200 ms", "give up after 5000 ms".
std::string to_string(const HoldDecision& d);

// ------------------------------------------------------------------ drain

/// The leader's answer to a member's drain request: an HTTP status
/// (202 accepted, 409 refused) with its message, and whether the member is
/// newly draining (then the leader rebalances). Idempotent: a second request
/// of a draining member is 202 without a rebalance.
struct DrainAcceptance {
  int http_status = 202;
  std::string message;
  bool rebalance = false;

  bool operator==(const DrainAcceptance&) const = default;
};

/// The 409 message when no other member could take the work over.
inline constexpr const char* kNoOtherWorker = "no other worker in the group to take the work over";

/// Leader (`is_leader`, else 409 naming `leader_url` when known): accepts
/// `member_id`'s drain unless no member of `round_members` other than it
/// and the `draining` ones is left to take the work over.
DrainAcceptance decide_drain_request(bool is_leader, const std::string& leader_url, const std::string& member_id,
                                     const std::vector<std::string>& round_members,
                                     const std::set<std::string>& draining);

/// The draining members the leader keeps for a round: those still in it
/// (a member that left is forgotten).
std::set<std::string> draining_members_in_round(const std::set<std::string>& draining,
                                                const std::vector<std::string>& round_members);

/// How a drain goes on after this worker applied an assignment (or when it
/// starts: `applied` false while an assignment is being applied).
enum class DrainProgress {
  Done,            ///< owns nothing: the drain finished
  AskLeader,       ///< still owns work: ask the (maybe new) leader (again)
};

/// Done once an applied assignment owns no connector and no task.
DrainProgress decide_drain_progress(bool applied, bool owns_nothing);

/// The draining worker's hand-over before the JoinGroup that reports
/// nothing owned: it stops every connector it runs, and marks each task of
/// `tasks` (its assignment) that it runs, so that the next owner waits for
/// its stop. A mark keeps this worker's PAUSED state and the generation of
/// its own last status; a task FAILED here gets no mark (nothing to wait for).
struct DrainHandOverPlan {
  std::vector<std::string> stop_connectors;
  std::vector<TaskMark> marks;

  bool operator==(const DrainHandOverPlan&) const = default;
};

/// `task_statuses`: the status topic's view; `generation`: the current one.
DrainHandOverPlan plan_drain_hand_over(const std::set<std::string>& running_c,
                                       const std::set<ConnectorTaskId>& running_t,
                                       const std::vector<ConnectorTaskId>& tasks,
                                       const std::map<ConnectorTaskId, StatusValue>& task_statuses,
                                       const std::string& worker_id, int32_t generation);

/// "stop connectors [c] mark [c-0 RUNNING g3]".
std::string to_string(const DrainHandOverPlan& p);

// ------------------------------------------------------------------ hand-over moves

/// The leader's hand-over moves of one round (rebalance.hand.over.enable,
/// cooperative protocols): the tasks the assignor revokes from live members
/// for balance are placed in the same round where the assignor's follow-up
/// round would place them (the assignor reports those as
/// AssignmentResult::moved, RoundContext::hand_over_placement). `result` is
/// the round's result with the moved tasks added to their new owners'
/// assignments and to the leader state's previous assignment (and out of its
/// previous revocation); `marks` are the hand-over marks to write before the
/// assignment goes out; `moved` the tasks, sorted.
struct HandOverMoves {
  assignor::AssignmentResult result;
  std::vector<TaskMark> marks;
  std::vector<ConnectorTaskId> moved;
};

/// Carries out the assignor's moves of tasks whose old owner's RUNNING or
/// PAUSED status is known (its worker id is in the old owner's URL, from
/// `reports`, one per assignment in the same order); the others keep the
/// two rounds. None on CONFIG_MISMATCH. Pure: no assignor run.
HandOverMoves plan_hand_over_moves(assignor::AssignmentResult res,
                                   const std::vector<assignor::MemberReport>& reports,
                                   const std::map<ConnectorTaskId, StatusValue>& task_statuses);

/// "move [c-1 -> m2]" per new owner, or "no moves".
std::string to_string(const HandOverMoves& m);

// ------------------------------------------------------------------ the leader's round

/// The assignor's view of a config snapshot: every connector with the count
/// of its committed task configs (0 when none are committed or they are
/// inconsistent), at the snapshot's offset.
/// With `placement.labels` / `placement.tasks` (issue 29) it also carries
/// each constrained connector's ConnectorPlacement (connector_placement()).
assignor::ConfigSnapshot assignor_snapshot(const ClusterConfigState& snap);

/// Label key of the selector an unparseable `placement.labels` becomes: no
/// worker can carry it (worker.labels keys are [A-Za-z0-9._/-]).
inline constexpr std::string_view kUnmatchableLabelKey = "!invalid-placement.labels";

/// A connector's placement from its config (kconnectd, not in Connect):
/// `placement.labels` parsed (an unparseable value, which validation
/// refuses, becomes a selector no worker matches) and `placement.tasks`
/// (pack, else spread).
assignor::ConnectorPlacement connector_placement(const ConfigMap& config);

/// A worker's own check of `placement.labels` before it starts a connector
/// or one of its tasks (kconnectd, not in Connect; issue 29). The leader
/// already places constrained work only on matching workers; this check is
/// for a mixed cluster whose leader is an older build that does not know
/// the key: the misplaced work is refused with a reason instead of running
/// on a wrong host. Returns the refusal message (naming the selector, this
/// worker's labels and the likely cause), or nullopt when the work may run
/// here (no placement.labels, or `worker_labels` match it).
std::optional<std::string> placement_refusal(const ConfigMap& connector_config, const Labels& worker_labels);

/// The leader's whole round (Connect's performAssignment) as one pure step:
/// the assignor of `ctx.protocol` (EagerAssignor for eager, else the
/// IncrementalCooperativeAssignor with `scheduled_rebalance_max_delay_ms`,
/// with its hand-over placement when `hand_over_enabled`) from `state`, run
/// once, then plan_hand_over_moves. The herder runs it on its pool,
/// never on the io thread (it can take tens of ms at 1k workers); the
/// result's state is what the leader keeps for its next round.
HandOverMoves plan_leader_round(bool hand_over_enabled, const assignor::LeaderState& state,
                                const std::vector<assignor::MemberReport>& reports,
                                const assignor::ConfigSnapshot& cs, const assignor::RoundContext& ctx,
                                int32_t scheduled_rebalance_max_delay_ms,
                                const std::map<ConnectorTaskId, StatusValue>& task_statuses);

// ------------------------------------------------------------------ task configs (leader)

/// A failed task-config generation of a connector: the stored config it
/// failed for, and the reason (its FAILED trace).
struct GenerationFailure {
  ConfigMap config;
  std::string trace;

  bool operator==(const GenerationFailure&) const = default;
};

/// What asks for task configs of a connector.
enum class GenerationTrigger {
  ConnectorConfigRecord,  ///< a `connector-<name>` record was read
  TasksCommitted,         ///< a `commit-<name>` record was read
  ConnectorRequest,       ///< the connector asked (requestTaskReconfiguration), or an operator's restart
  BecameLeader,           ///< this worker became leader: every connector once
  GenerationFinished,     ///< a generation of it ended (successfully written or given up)
};

/// What to do about it.
enum class GenerationVerdict {
  None,              ///< nothing
  Generate,          ///< generate now (leader)
  AfterCurrent,      ///< one more generation after the one in flight (leader)
  ForwardToLeader,   ///< follower: ask the leader
};

/// One connector's facts for a generation decision.
struct GenerationFacts {
  bool is_leader = false;
  bool in_flight = false;          ///< a generation of it is under way
  bool again_requested = false;    ///< asked again while in flight (GenerationFinished)
  bool inconsistent = false;       ///< its last commit left it inconsistent (TasksCommitted)
};

/// The leader generates on every connector-config record, on a commit that
/// left the connector inconsistent, on a connector's request, on becoming
/// leader, and once more after a generation when asked meanwhile; two
/// generations of one connector never run at once (their task records
/// would interleave). A follower forwards a connector's request.
GenerationVerdict decide_task_config_generation(GenerationTrigger trigger, const GenerationFacts& facts);

/// Whether `c`'s recorded generation failure is for its config in `snap`.
bool generation_failed_for(const std::string& c, const ClusterConfigState& snap,
                           const std::map<std::string, GenerationFailure>& failures);

/// The leader's sweep (on target-state records, which follow a stop's
/// 0-task commit): the connectors that should run and have no task configs
/// (none committed, 0, or inconsistent), not STOPPED, not generating
/// (`in_flight`), and whose generation did not fail for their current config
/// (a stalling plugin would leave an abandoned thread per retry). Sorted.
std::vector<std::string> connectors_needing_task_configs(const ClusterConfigState& snap,
                                                         const std::set<std::string>& in_flight,
                                                         const std::map<std::string, GenerationFailure>& failures);

/// Where a generation of `c` gets its task configs from.
enum class TaskConfigSource {
  Nothing,     ///< deleted: nothing to write
  WriteEmpty,  ///< STOPPED (KIP-875): zero task configs
  Plugin,      ///< the connector plugin's taskConfigs
};

/// Deleted → Nothing; STOPPED → WriteEmpty; else Plugin.
TaskConfigSource task_config_source(const std::string& c, const ClusterConfigState& snap);

/// Whether the leader writes `generated` as `c`'s task configs: unless they
/// are exactly the committed ones (same count, consistent, each equal).
bool task_configs_need_write(const std::string& c, const std::vector<ConfigMap>& generated,
                             const ClusterConfigState& snap);

/// The status writes for recorded generation failures (leader, each status
/// poll): a failure whose connector is gone, has another config, or is
/// STOPPED is forgotten; otherwise FAILED with its trace is written (under
/// the current status's worker id and generation, else `worker_id` and -1)
/// unless that is the status already.
struct FailureStatusPlan {
  std::vector<std::string> forget;
  std::vector<std::pair<std::string, StatusValue>> writes;

  bool operator==(const FailureStatusPlan&) const = default;
};

FailureStatusPlan plan_generation_failure_statuses(const std::map<std::string, GenerationFailure>& failures,
                                                   const ClusterConfigState& snap,
                                                   const std::map<std::string, StatusValue>& connector_statuses,
                                                   const std::string& worker_id);

/// The leader's task-config write retries (Connect's
/// reconfigureConnectorTasksWithRetry): the first after 250 ms, each next
/// one after twice the last, at most 10 s.
inline constexpr int kTaskConfigRetryFirstMs = 250;
inline constexpr int kTaskConfigRetryMaxMs = 10000;

/// After a generation of a connector's task configs ended: `written` (the
/// configs were written, needed no write, or cannot be retried) ends it;
/// otherwise (a failed write) retry after `delay_ms`, the one after that
/// with `next_backoff_ms`. `backoff_ms`: this generation's back-off
/// (kTaskConfigRetryFirstMs for the first).
struct TaskConfigRetryPlan {
  bool retry = false;
  int delay_ms = 0;
  int next_backoff_ms = 0;

  bool operator==(const TaskConfigRetryPlan&) const = default;
};

TaskConfigRetryPlan plan_task_config_retry(bool written, int backoff_ms);

/// Whether a retry whose back-off ended still runs: not when its timer was
/// cancelled, the worker is stopping, or it is no longer the leader.
bool task_config_retry_due(bool cancelled, bool stopping, bool is_leader);

/// How early a member rejoins for a scheduled rebalance is bounded below by
/// this much past the expected end of the round (ms): the round's assignment
/// should fall just after scheduled.rebalance.max.delay.ms has run out.
inline constexpr int64_t kScheduledRejoinMarginMs = 250;

/// Ms after receiving an assignment with `delay_ms` > 0 (KIP-415's scheduled
/// rebalance delay) at which this member rejoins. Connect rejoins when the
/// delay ends, so the lost work is placed one whole round later; ours starts
/// the round early by the last round's length (`last_round_ms`: from this
/// worker's decision to join to its assignment; 0 = unknown) less
/// kScheduledRejoinMarginMs, so that on a broker that holds every round
/// (the embedded mock broker holds session.timeout.ms - 1 s) the leader
/// assigns just after the expiry. At most the delay less the margin early
/// (the round may not begin before the assignment that set the delay). The leader
/// still releases lost work only once the delay has run out: a round that
/// ends early gets the rest of the delay and one more round, as today.
int64_t scheduled_rejoin_after_ms(int64_t delay_ms, int64_t last_round_ms);

/// Text of the enums and plans, for logs and test failures.
const char* to_string(HoldVerdict v);
const char* to_string(DrainProgress p);
const char* to_string(GenerationVerdict v);
const char* to_string(TaskConfigSource s);
const char* to_string(BeforeJoinStep s);
std::string to_string(const FailureStatusPlan& p);

/// A dynamic worker's early resume after a crash (kconnectd's, not in
/// Connect; WorkerCoordinator::kept_for_early_resume): which of the kept
/// connectors and tasks it may start before its first JoinGroup.
struct EarlyResumePlan {
  /// Connectors and tasks to start now: the kept assignment's leader and
  /// version, revoked lists empty, config offset = `configs.offset`.
  connect::Assignment resume;
  std::vector<std::string> skipped;  ///< "<id>: <why>" for each kept item left out
};

/// The largest age (ms) of a dynamic member's kept assignment that may be
/// resumed before joining. The file is touched every heartbeat interval,
/// so the dead process's last heartbeat was at most one interval before
/// its last touch, and the group drops it no sooner than session.timeout.ms
/// after that heartbeat. A leader that remembers the previous assignment
/// then holds the lost work for the scheduled delay (the assignor releases
/// it only once the delay has run out, whatever the early rejoin); a new
/// leader (`was_leader`: the dead process led the group) rebuilds the
/// assignment from the members' reports and places it at once. So:
/// session - heartbeat (+ delay / 2, half of it as a margin for a leader
/// change meanwhile, unless it was the leader), at least 0. All in ms.
int64_t early_resume_max_age_ms(int64_t session_timeout_ms, int64_t heartbeat_interval_ms,
                                int64_t scheduled_rebalance_max_delay_ms, bool was_leader);

/// Keeps each kept connector and task that (1) still has a config
/// (`configs`: its connector config, and for a task its task config) and
/// (2) whose latest status was written by this worker (`worker_id`), or
/// has none, and is not a hand-over mark (storage::kHandOverTrace): a
/// status written by another worker, or a mark, means the group may have
/// given it elsewhere. Pure.
EarlyResumePlan plan_early_resume(const connect::Assignment& kept, const ClusterConfigState& configs,
                                  const std::map<std::string, StatusValue>& connector_statuses,
                                  const std::map<ConnectorTaskId, StatusValue>& task_statuses,
                                  const std::string& worker_id);

}  // namespace kc::herder
