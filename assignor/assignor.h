#pragma once
// Leader-side assignors of the Connect group protocol.
//
//  * EagerAssignor: protocol `default` (V0). Every round hands out the full
//    set; members stop everything before they join.
//  * IncrementalCooperativeAssignor: protocols `compatible` (V1) and
//    `sessioned` (V2), KIP-415. Revoke first, assign in the next round, wait
//    `scheduled.rebalance.max.delay.ms` for lost work to come back.
//
// Both are pure functions: all inputs are arguments, the new leader state is
// part of the result, nothing reads a clock, a socket or a global. The herder
// keeps the LeaderState between rounds (only while its worker stays leader)
// and passes `now` in. See assignor/README.md and
// ../shared/reference/connect-reference.md section 3 for the behaviour and the
// documented deviations from Kafka Connect.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/labels.h"
#include "common/worker_defaults.h"
#include "protocol/connect/types.h"

namespace kc::assignor {

using connect::Assignment;
using connect::ConnectorTaskId;

/// A set of connectors and tasks (Connect's ConnectorsAndTasks). Used for a
/// member's current assignment and for the leader's bookkeeping. Order is
/// irrelevant on input; every set the assignors produce is sorted
/// (connectors by name, tasks by (connector, task number)) and free of
/// duplicates.
struct ConnectorsAndTasks {
  std::vector<std::string> connectors;  ///< connector names
  std::vector<ConnectorTaskId> tasks;   ///< task ids

  /// True when it holds no connector and no task.
  [[nodiscard]] bool empty() const { return connectors.empty() && tasks.empty(); }
  bool operator==(const ConnectorsAndTasks&) const = default;
};

/// One member's JoinGroup metadata as the leader sees it (Connect's
/// ExtendedWorkerState): member id, advertised URL, config offset and, for
/// V1/V2, what the member runs now. The eager assignor ignores `owned`.
struct MemberReport {
  std::string member_id;        ///< group member id, unique in the round
  std::string url;              ///< advertised REST URL
  int64_t config_offset = -1;   ///< config-topic offset the member has read up to
  ConnectorsAndTasks owned;     ///< V1+: the member's current assignment
  /// `group.instance.id` (KIP-345 static membership) from the JoinGroup
  /// response; empty for a dynamic member. Only read with
  /// RoundContext::return_lost_to_owner or no_delay_for_expired_static (see
  /// worker_identity()).
  std::string group_instance_id;
  /// The member's `worker.labels` from its metadata (kconnectd, not in
  /// Connect; issue 29). Empty for an unlabelled worker and for a member of
  /// an older build (the two send the same bytes): such a member is
  /// ineligible for every connector with `placement.labels`.
  Labels labels;
};

/// The worker a member is, across member ids (kconnectd, not in Connect; used
/// by RoundContext::return_lost_to_owner): "instance:" + group.instance.id for
/// a static member, else "url:" + its advertised URL (kconnectd's worker id is
/// the advertised host:port, which the URL contains), else "" (no identity: its
/// lost work is never given back early).
std::string worker_identity(const MemberReport& m);

/// How worker_identity() starts for a static member (group.instance.id).
inline constexpr std::string_view kStaticIdentityPrefix = "instance:";

/// How a constrained connector's tasks are laid out over its eligible workers
/// (`placement.tasks`, kconnectd, not in Connect).
enum class PlacementTasks {
  Spread,  ///< default: tasks balanced over the eligible workers, as for any connector
  Pack,    ///< every task on the worker that runs the connector (filled before the next is used)
};

/// A connector's placement constraint (connector configs `placement.labels`
/// and `placement.tasks`; kconnectd, not in Connect; issue 29).
struct ConnectorPlacement {
  /// The worker must carry every one of these labels with the same value
  /// (labels_match()). Empty: every worker is eligible.
  Labels labels;
  PlacementTasks tasks = PlacementTasks::Spread;  ///< layout of the tasks

  /// True when it restricts or changes anything (labels, or pack).
  [[nodiscard]] bool constrains() const { return !labels.empty() || tasks == PlacementTasks::Pack; }
  bool operator==(const ConnectorPlacement&) const = default;
};

/// The leader's view of the config topic (Connect's ClusterConfigState, reduced
/// to what the assignor needs).
struct ConfigSnapshot {
  /// Offset of the snapshot in the config topic. The herder must refresh its
  /// snapshot when it is below the largest offset any member reports
  /// (max_config_offset()); if it is still below, the assignors answer every
  /// member with CONFIG_MISMATCH (reference 3.2).
  int64_t offset = -1;
  /// Configured connectors and their task counts (the count of the last
  /// committed task configs). A connector whose task configs are
  /// inconsistent contributes 0 tasks. Task ids are 0..count-1.
  std::map<std::string, int32_t> connectors;
  /// Placement constraints by connector name (kconnectd, not in Connect;
  /// issue 29); only connectors that set `placement.labels` or
  /// `placement.tasks=pack` need an entry, others (and entries that constrain
  /// nothing) are unconstrained. With no constraining entry the round is
  /// exactly the one without placement, byte for byte.
  std::map<std::string, ConnectorPlacement> placement;
};

/// Everything about the round that is not a member report or the snapshot.
struct RoundContext {
  std::string leader_id;   ///< the leader's member id (must be among the reports)
  /// The leader's URL. Empty: taken from the leader's own report, as Connect does.
  std::string leader_url;
  int32_t generation = -1;                 ///< generation of the JoinGroup being handled
  int32_t last_completed_generation = -1;  ///< the leader's own last completed generation
  int64_t now_ms = 0;                      ///< current time, ms (any monotonic origin)
  /// Negotiated protocol: decides the version written (Eager→0, Compatible→1,
  /// Sessioned→2). The incremental assignor treats Eager like Compatible.
  connect::ConnectProtocol protocol = connect::ConnectProtocol::Sessioned;
  /// Member ids of members that are draining (kconnectd's zero-downtime
  /// drain, not in Connect): they are handed no new work, a draining member
  /// that still runs work is told to revoke all of it in this round (a
  /// balance revocation: the work is placed on the others in the follow-up
  /// round, with no scheduled delay), and one that runs nothing is left out
  /// of the round. Ignored when every member is draining.
  std::vector<std::string> draining_members;
  /// Hand-over placement (kconnectd's `rebalance.hand.over.enable`, not in
  /// Connect; incremental assignor only): also place the tasks this round
  /// revokes as the follow-up round would, and report them in
  /// AssignmentResult::moved. Off: the result is exactly Connect's round.
  bool hand_over_placement = false;
  /// Return lost work to its owner (kconnectd's
  /// `scheduled.rebalance.return.to.owner.enable`, not in Connect;
  /// incremental assignor only): when a member with the worker_identity() of
  /// a worker whose work was lost is in the round while the scheduled delay
  /// runs, it is given back exactly those lost connectors and tasks (still
  /// configured, run by nobody) in this round; the delay keeps running for
  /// the lost work of workers that did not return, and ends when none is
  /// left. A given-back item that the round's load balancing takes off the
  /// worker again is placed on another worker in this round (nobody runs
  /// it), not revoked. Off: the result and the state are exactly Connect's
  /// round.
  bool return_lost_to_owner = false;
  /// No scheduled delay for an expired static member (kconnectd's
  /// `scheduled.rebalance.static.expiry.immediate`, not in Connect;
  /// incremental assignor only): lost connectors and tasks whose last owner
  /// was a static member (KIP-345, non-empty MemberReport::group_instance_id)
  /// are placed in this round like new work. The broker keeps a static member
  /// through `session.timeout.ms`, so by the time its work is lost that grace
  /// period has been waited once. Lost work of dynamic members, and lost work
  /// whose owner this leader does not know (it became leader after the loss),
  /// still waits the delay. Uses the owner bookkeeping of LeaderState
  /// (owners_by_identity, lost_by_identity), kept whenever this or
  /// return_lost_to_owner is on; with both on a static owner that is back
  /// gets its own work first. Off: the result and the state are exactly
  /// Connect's round (or return_lost_to_owner's).
  bool no_delay_for_expired_static = false;
};

struct PlacementGroupState;

/// What the incremental assignor remembers between rounds while its worker is
/// leader (Connect keeps these as fields of the assignor object). A worker that
/// becomes leader starts from a default-constructed LeaderState. Times are ms
/// on the same clock as RoundContext::now_ms.
struct LeaderState {
  /// What the leader believes is assigned after its last round: everything
  /// placed, minus what it revoked, plus everything lost (so that lost work is
  /// detected as lost again while a delay runs).
  ConnectorsAndTasks previous_assignment;
  /// What was revoked last round; if any of it is still running next round the
  /// revocation failed and previous_assignment is rebuilt from the reports.
  ConnectorsAndTasks previous_revocation;
  int32_t previous_generation = -1;          ///< generation of the last round this leader assigned
  std::vector<std::string> previous_members; ///< member ids of that round, sorted
  int64_t scheduled_rebalance_ms = 0;        ///< absolute time of the scheduled rebalance; 0 = none
  int32_t delay_ms = 0;                      ///< delay handed out in the last round, ms
  /// Candidate workers for lost work: members seen empty while a delay runs,
  /// in the order they were first seen.
  std::vector<std::string> candidate_workers;
  /// Members that stayed through the loss that started the pending delay
  /// (in the round before it and still there), sorted: a candidate not among
  /// them has arrived since (most likely the lost worker coming back) and is
  /// preferred over an idle one at expiry.
  std::vector<std::string> members_before_delay;
  bool revoked_in_previous = false;          ///< the last round revoked for load balancing
  int32_t num_successive_revoking_rebalances = 0;  ///< n for the successive-revocation backoff
  /// Only with RoundContext::return_lost_to_owner or
  /// no_delay_for_expired_static (else empty). Per worker_identity() of the last round's members: what it runs or was
  /// given after that round (revoked items left out).
  std::map<std::string, ConnectorsAndTasks> owners_by_identity;
  /// Only with RoundContext::return_lost_to_owner or
  /// no_delay_for_expired_static (else empty). The lost
  /// work held for the pending delay, per worker_identity() of the worker
  /// that ran it (lost work whose owner is unknown is not listed and waits
  /// the delay).
  std::map<std::string, ConnectorsAndTasks> lost_by_identity;
  /// With placement constraints (ConfigSnapshot::placement; kconnectd, not in
  /// Connect): the fields above are the unconstrained group's, and each
  /// placement group (connectors with the same `placement.labels`) keeps its
  /// own state here, sorted by selector. Empty without constraints.
  std::vector<PlacementGroupState> placement_groups;

  bool operator==(const LeaderState&) const;
};

/// The leader state of one placement group (kconnectd, not in Connect): its
/// connectors share the selector `placement.labels` and are balanced over the
/// workers it matches, with their own delay, candidates and backoff.
struct PlacementGroupState {
  std::string selector;  ///< format_labels() of the group's placement.labels ("" = unconstrained)
  LeaderState state;     ///< the group's own state (its placement_groups stay empty)

  bool operator==(const PlacementGroupState&) const = default;
};

inline bool LeaderState::operator==(const LeaderState& o) const {
  return previous_assignment == o.previous_assignment && previous_revocation == o.previous_revocation &&
         previous_generation == o.previous_generation && previous_members == o.previous_members &&
         scheduled_rebalance_ms == o.scheduled_rebalance_ms && delay_ms == o.delay_ms &&
         candidate_workers == o.candidate_workers && members_before_delay == o.members_before_delay &&
         revoked_in_previous == o.revoked_in_previous &&
         num_successive_revoking_rebalances == o.num_successive_revoking_rebalances &&
         owners_by_identity == o.owners_by_identity && lost_by_identity == o.lost_by_identity &&
         placement_groups == o.placement_groups;
}

/// One member's assignment, ready for the protocol/connect encoder.
struct MemberAssignment {
  std::string member_id;   ///< the member it is for
  Assignment assignment;   ///< lists sorted; V1/V2: increments; V0: full set
};

/// A task this round revokes, with the member the follow-up round would
/// give it to (RoundContext::hand_over_placement).
struct TaskMove {
  ConnectorTaskId task;
  std::string to;    ///< member id of its new owner
  std::string from;  ///< member id of the member that stops it in this round

  bool operator==(const TaskMove&) const = default;
};

/// A constrained connector that no member of the round may run (kconnectd,
/// not in Connect): it and its tasks stay unassigned, and the herder writes
/// its status UNASSIGNED with placement_trace().
struct UnplacedConnector {
  std::string connector;  ///< connector name
  Labels selector;        ///< its placement.labels

  bool operator==(const UnplacedConnector&) const = default;
};

/// The trace of an UNASSIGNED status for `u` (kconnectd, not in Connect):
/// names the constraint and every member's labels, e.g.
/// "placement.labels=host=a matches no worker of the group; workers' labels:
/// http://w1:8083/ {host=b}, http://w2:8083/ {} (no labels: worker.labels
/// unset or an older build)". Members in member-id order. `draining`:
/// member ids of draining members (RoundContext::draining_members), marked
/// "draining"; when the selector matches only such members the trace says so.
std::string placement_trace(const UnplacedConnector& u, const std::vector<MemberReport>& members,
                            const std::vector<std::string>& draining = {});

/// Output of one assignment round.
struct AssignmentResult {
  /// One entry per member report, in the order of the reports.
  std::vector<MemberAssignment> assignments;
  /// The state to pass to the next round (unchanged on CONFIG_MISMATCH).
  LeaderState state;
  /// True when the round failed the config-offset check (every assignment
  /// carries error CONFIG_MISMATCH = 1).
  bool config_mismatch = false;
  /// With RoundContext::hand_over_placement: the revoked tasks and where
  /// the follow-up round (this round applied, generation + 1, same config)
  /// would place them, sorted by task. Empty unless that round would revoke
  /// nothing and set no delay, and none is pending now. The moves are not in
  /// `assignments` nor `state`: the caller adds those it carries out. Tasks
  /// the follow-up gives back to the member that stops them are left out.
  std::vector<TaskMove> moved;
  /// Constrained connectors no member may run, by name (empty without
  /// ConfigSnapshot::placement).
  std::vector<UnplacedConnector> unplaced;
};

/// True when any entry of config.placement constrains (ConnectorPlacement::constrains()).
bool has_placement(const ConfigSnapshot& config);

/// Largest config offset any member reports; -1 when there are none
/// (reference 3.2 step 1). The herder refreshes its snapshot when it is below.
int64_t max_config_offset(const std::vector<MemberReport>& members);

/// Delay of the successive-revocation backoff (KAFKA-12495): for the n-th
/// consecutive revoking round (n >= 1), min(40^n ms, max_delay_ms); 0 when
/// max_delay_ms is 0. n = 1..4 with the default max give 40, 1600, 64000,
/// 300000. Computed in integers, so the cap is exact (Java's floating-point
/// pow can come out 1 ms below it).
int32_t successive_revocation_backoff_ms(int32_t n, int32_t max_delay_ms);

/// The incremental cooperative assignor (KIP-415, Connect's
/// IncrementalCooperativeAssignor) for protocols `compatible` and `sessioned`.
///
/// Per round (reference 3.3-3.6): computes configured, active, deleted,
/// duplicated, lost and new/created sets; revokes deleted and duplicated work;
/// handles lost work with the scheduled rebalance delay and candidate workers;
/// when no delay is pending, revokes work from over-loaded workers (with the
/// successive-revocation backoff); places new work (and released lost work) on
/// the least-loaded workers. Work is never revoked and reassigned in the same
/// round. The deviations from Connect (deterministic choice of what to revoke,
/// per-connector spreading, revoking running items that are not configured,
/// lost work at expiry placed like new work, and with
/// RoundContext::return_lost_to_owner lost work given back to its returning
/// worker) are listed in assignor/README.md.
class IncrementalCooperativeAssignor {
 public:
  /// `max_delay_ms` is `scheduled.rebalance.max.delay.ms` (default
  /// kScheduledRebalanceMaxDelayMsDefault, 300000; 0 disables the delay and
  /// the backoff).
  explicit IncrementalCooperativeAssignor(int32_t max_delay_ms = kScheduledRebalanceMaxDelayMsDefault)
      : max_delay_ms_(max_delay_ms) {}

  /// One round. `members` must have unique member ids and contain
  /// ctx.leader_id. Returns one V1/V2 assignment per member (newly assigned
  /// and newly revoked items, the delay in ms, leader id and URL, config
  /// offset) and the new leader state. If `config.offset` is below
  /// max_config_offset(members), every member gets error CONFIG_MISMATCH with
  /// that max offset and empty lists, and the state is returned unchanged.
  /// Complexity: O(W log W + N log N) for W members and N connectors + tasks.
  /// With ctx.draining_members, see RoundContext::draining_members.
  /// With config.placement (kconnectd, not in Connect; assignor/README.md
  /// "Placement labels"): one round per placement group over the workers it
  /// matches, merged; AssignmentResult::unplaced lists what no member may run.
  [[nodiscard]] AssignmentResult assign(const LeaderState& state, const std::vector<MemberReport>& members,
                                        const ConfigSnapshot& config, const RoundContext& ctx) const;

  /// The configured `scheduled.rebalance.max.delay.ms`.
  [[nodiscard]] int32_t max_delay_ms() const { return max_delay_ms_; }

 private:
  /// Connect's round, without draining members. `leaving`: member ids
  /// (draining, still running work) that revoke everything and are not in
  /// the follow-up round (for the hand-over placement).
  /// The round without placement constraints (config.placement ignored).
  [[nodiscard]] AssignmentResult assign_plain(const LeaderState& state, const std::vector<MemberReport>& members,
                                              const ConfigSnapshot& config, const RoundContext& ctx) const;
  /// One assign_plain() per placement group, merged (placement.cpp).
  [[nodiscard]] AssignmentResult assign_placed(const LeaderState& state, const std::vector<MemberReport>& members,
                                               const ConfigSnapshot& config, const RoundContext& ctx) const;
  [[nodiscard]] AssignmentResult assign_core(const LeaderState& state, const std::vector<MemberReport>& members,
                                             const ConfigSnapshot& config, const RoundContext& ctx,
                                             const std::vector<std::string>& leaving = {}) const;
  int32_t max_delay_ms_;
};

/// The eager assignor (Connect's EagerAssignor, protocol `default`, V0).
/// After the config-offset check it ignores what members run: connectors sorted
/// by name, then each connector's tasks in order, are dealt over the members
/// sorted by member id with one circular iterator that is not reset between
/// connectors and tasks (reference 3.8). Every member gets its full set in a V0
/// assignment (no revocations, delay 0). The leader state is returned
/// unchanged: the eager protocol keeps none.
class EagerAssignor {
 public:
  /// One round; same inputs and CONFIG_MISMATCH rule as the incremental one.
  /// Draining members (ctx.draining_members) get an empty assignment: under
  /// eager every member stops everything before it rejoins, so leaving them
  /// out hands their work over in this one round. With config.placement, a
  /// constrained connector is dealt to the next eligible member (the
  /// circular iterator skips the others), its tasks too (pack: to the
  /// connector's member); one no member may run stays unassigned
  /// (AssignmentResult::unplaced). V0 metadata carries no labels, so under
  /// eager every labelled constraint is unplaced.
  [[nodiscard]] AssignmentResult assign(const LeaderState& state, const std::vector<MemberReport>& members,
                                        const ConfigSnapshot& config, const RoundContext& ctx) const;
};

}  // namespace kc::assignor
