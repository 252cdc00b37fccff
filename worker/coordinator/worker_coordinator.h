#pragma once
// WorkerCoordinator: the Connect-specific half of group membership (Kafka
// Connect's WorkerCoordinator), built on the generic kafka::GroupMember.
//
// What it adds to GroupMember (connect-reference.md 1, 4.2, 4.3):
//   * offers the protocols `connect.protocol` allows, most preferred first
//     (sessioned: [sessioned V2, compatible V1, default V0]; compatible:
//     [compatible V1, default V0]; eager: [default V0]), each with its own
//     metadata: advertised URL, the config offset of the current snapshot and
//     (V1+) the current local assignment embedded with header = entry version
//     (null when there is none);
//   * follows the protocol the broker selected: under `default` (eager) it
//     asks its owner to stop everything before every new JoinGroup; under
//     `compatible`/`sessioned` everything keeps running;
//   * before any JoinGroup it waits for its owner's `before_join` gate, so
//     revocations still in progress finish first (the per-task
//     happens-before of KIP-415);
//   * leader: decodes every member's metadata (V0 reader under `default`, V1
//     reader otherwise) and hands a LeaderRound to its owner, which returns
//     one Assignment per member; the coordinator encodes them (V0 / V1 / V2
//     layout by protocol);
//   * decodes the received assignment with the V1 reader and merges it into
//     the local snapshot (4.3): under cooperative protocols the new snapshot
//     is old − revoked + newly assigned; under eager it is the new assignment;
//   * rejoin bookkeeping: CONFIG_MISMATCH and an undecodable assignment set
//     "rejoin needed" (the owner still decides when, after reading configs);
//     request_rejoin() for herder triggers;
//   * coordinator-loss safety (4.2, Connect-specific): when the coordinator
//     is lost and not found again within heartbeat.interval.ms, the whole
//     local assignment is revoked (on_revoke_all) and the snapshot dropped, so
//     nothing runs while this worker may no longer be a member;
//   * leave() sends LeaveGroup (clean shutdown);
//   * static membership (KIP-345, group.instance.id in `group`): keeps the
//     last assignment in `static_assignment_file` (static_assignment.h) and,
//     when a restarted worker gets its identity back in the same generation
//     with the same SyncGroup bytes (no rebalance), resumes that whole
//     snapshot: on_assigned then carries everything it owned, and the herder
//     starts it at once. When it joined another generation whose
//     assignment holds everything it kept (a round that saw its JoinGroup:
//     a broker that rebalances on a static rejoin, or a rebalance under way
//     as it returned, and a leader that gave its work back), that
//     assignment is all it owns and the leader knows it: no rebalance.
//     Otherwise (the generation moved on and the bytes do not hold what it
//     kept, or nothing was kept and it did not lead the round itself), it
//     takes the received assignment as it is and requests one rebalance, so
//     the leader learns what it really runs.
//
// Threading: one io_context, run by one thread (the herder's). Every
// callback runs on that thread and must not block; the completions handed
// to callbacks may be called from any thread, at most once. Public methods
// marked "any thread" post to the io_context; the rest are io-thread only.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocol/connect/types.h"
#include "worker/coordinator/group_member.h"
#include "worker/coordinator/static_assignment.h"

namespace kc::coordinator {

using connect::Assignment;
using connect::ConnectorTaskId;
using connect::ConnectProtocol;
using connect::WorkerMetadata;

/// Settings of a WorkerCoordinator. Durations are milliseconds.
struct WorkerCoordinatorConfig {
  /// Group settings (group.id, bootstrap servers, session/rebalance/heartbeat
  /// timeouts, client.id = "connect-<workerId>" unless set). protocol_type
  /// is forced to "connect".
  kafka::GroupMemberConfig group;
  /// `connect.protocol`: the most preferred protocol to offer (see file comment).
  ConnectProtocol protocol = ConnectProtocol::Sessioned;
  /// Advertised REST URL with trailing '/', e.g. "http://w1:8083/" (4.1).
  std::string url;
  /// `static.membership.assignment.file` (ours): where this worker keeps
  /// its last assignment; "" = not kept. A static member (group_instance_id
  /// set) resumes it when the coordinator hands back its generation; a
  /// dynamic one may resume it before its first JoinGroup after a crash
  /// (kept_for_early_resume).
  std::string static_assignment_file;
  /// `worker.labels` (kconnectd, not in Connect; issue 29): sent in the V1/V2
  /// metadata's labels trailer (protocol/connect/README.md); empty = none,
  /// and then the metadata bytes are Connect's exactly.
  Labels labels;
};

/// One member's JoinGroup metadata as decoded by the leader.
struct MemberMetadata {
  std::string member_id;    ///< group member id
  WorkerMetadata metadata;  ///< url, config offset, (V1+) what it runs now
  std::string group_instance_id;  ///< its group.instance.id from JoinGroup (KIP-345); "" = dynamic
};

/// Handed to the leader's owner after JoinGroup (Connect's onLeaderElected +
/// performAssignment input).
struct LeaderRound {
  int32_t generation = -1;              ///< the new generation
  std::string leader_id;                ///< our own member id
  std::string leader_url;               ///< our own advertised URL
  ConnectProtocol protocol = ConnectProtocol::Sessioned;  ///< selected by the broker
  std::vector<MemberMetadata> members;  ///< every member, decoded; undecodable ones are left out
  /// Our own last completed generation (-1 if none), for the assignor.
  int32_t last_completed_generation = -1;
};

/// Completion of on_leader: one (member id, assignment) per member. The
/// coordinator sets each assignment's version from the selected protocol
/// and encodes it. Any thread, once.
using AssignmentsReady = std::function<void(std::vector<std::pair<std::string, Assignment>>)>;

/// Delivered to on_assigned after SyncGroup (Connect's onJoinComplete →
/// herder onAssigned).
struct AssignedEvent {
  int32_t generation = -1;     ///< generation of this assignment
  std::string member_id;       ///< our member id
  bool is_leader = false;      ///< we are the group leader
  ConnectProtocol protocol = ConnectProtocol::Sessioned;  ///< selected protocol
  /// The assignment exactly as received (decoded with the V1 reader): newly
  /// assigned items (cooperative) or the full set (eager), revocations,
  /// delay, leader, leader url, config offset, error.
  Assignment received;
  /// The local snapshot after the merge: everything this worker now owns
  /// (connectors/tasks), with `received`'s error, leader, url, offset,
  /// revoked lists and delay.
  Assignment snapshot;
  /// False when the SyncGroup bytes could not be decoded (`received` is then
  /// an empty failed assignment and a rejoin was requested).
  bool decoded = true;
  /// Static membership: this worker restarted and got its identity back in
  /// the generation it last completed, without a rebalance; `snapshot` is
  /// the whole assignment it kept (StaticAssignmentRecord), which the
  /// herder starts now.
  bool resumed = false;
  /// A dynamic member resumed its kept assignment before its first
  /// JoinGroup after a restart (resume_before_join): `generation` and
  /// `member_id` are those of its previous process, and no round ran.
  bool before_join = false;
};

/// Why on_before_join is called.
struct BeforeJoin {
  /// True under the eager protocol on the first JoinGroup of a new
  /// rebalance (Connect's onJoinPrepare revocation), and under cooperative
  /// protocols when the member's generation was reset (it fell out of the
  /// group, so others may own its work now): the owner must stop everything
  /// it runs before calling `proceed`.
  bool revoke_all = false;
  /// The connectors/tasks to stop when revoke_all (the snapshot's lists).
  std::vector<std::string> connectors;
  std::vector<ConnectorTaskId> tasks;
  bool new_rebalance = true;  ///< see kafka::JoinPrepare
  std::string reason;         ///< why the member rejoins
  /// True while this worker drains (set_hand_over_before_join) under a
  /// cooperative protocol: the JoinGroup reports nothing owned, so the leader
  /// places `connectors` and `tasks` on the others in this very round. The
  /// owner stops the connectors before calling `proceed` but keeps the tasks
  /// running until the assignment without them arrives; each new owner waits
  /// for their stop (no task runs twice, and a task is down only for its
  /// stop and start, not for the round).
  bool hand_over = false;
};

/// The owner's (the herder's) hooks. All run on the io_context thread and
/// must not block. Required: config_offset, on_before_join, on_leader,
/// on_assigned.
struct WorkerCoordinatorCallbacks {
  /// Current config snapshot offset (next offset to read, -1 if none), used
  /// in the metadata of every JoinGroup (rebuilt on every send, 4.2).
  std::function<int64_t()> config_offset;
  /// Before every JoinGroup. Call `proceed` (any thread) once pending
  /// revocations have finished (and, when revoke_all, after stopping
  /// everything); the JoinGroup is sent only then.
  std::function<void(const BeforeJoin&, std::function<void()> proceed)> on_before_join;
  /// Leader only: compute the assignments and call `ready`.
  std::function<void(const LeaderRound&, AssignmentsReady ready)> on_leader;
  /// Every member, after SyncGroup.
  std::function<void(const AssignedEvent&)> on_assigned;
  /// Coordinator-loss safety fired: stop all of `connectors`/`tasks` (the
  /// dropped snapshot). Optional.
  std::function<void(std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks)> on_revoke_all;
  /// A rebalance started (heartbeat REBALANCE_IN_PROGRESS or requested). Optional.
  std::function<void(const kafka::RebalanceStarted&)> on_rebalance_started;
  /// Any GroupMember error; `fatal` ones mean the coordinator is Closed. Optional.
  std::function<void(const kafka::GroupError&)> on_error;
  /// Every JoinGroup/SyncGroup/Heartbeat round trip (metrics), passed
  /// through from GroupMember. Optional; must be quick.
  std::function<void(const kafka::RequestTiming&)> on_request_timing;
};

/// A thread-safe copy of the coordinator's view, for health and tests.
struct CoordinatorStatus {
  kafka::GroupState state = kafka::GroupState::Unjoined;  ///< GroupMember state
  int32_t generation = -1;            ///< last completed generation, -1 if none
  std::string member_id;              ///< our member id ("" before the first join)
  std::string leader_id;              ///< leader of the last completed generation
  std::optional<ConnectProtocol> protocol;  ///< selected protocol of the last generation
  bool fatal = false;                 ///< a fatal error closed the member
  std::string fatal_message;          ///< its text
};

/// See the file comment. Create with create(), then start().
class WorkerCoordinator : public std::enable_shared_from_this<WorkerCoordinator> {
 public:
  /// Creates the coordinator (and its GroupMember) on `io`. Throws
  /// std::invalid_argument for a bad group config or a missing required
  /// callback (startup edge).
  static std::shared_ptr<WorkerCoordinator> create(boost::asio::io_context& io, WorkerCoordinatorConfig config,
                                                   WorkerCoordinatorCallbacks callbacks);
  ~WorkerCoordinator();
  WorkerCoordinator(const WorkerCoordinator&) = delete;
  WorkerCoordinator& operator=(const WorkerCoordinator&) = delete;

  /// Starts discovery and the first join. Any thread.
  void start();
  /// Asks for a new rebalance (Connect's requestRejoin). Any thread.
  void request_rejoin(std::string reason);

  /// Drain hand-over (kconnectd's zero-downtime drain, not in Connect): while
  /// set, a cooperative member reports nothing owned in each JoinGroup
  /// (BeforeJoin::hand_over), so the leader, which knows it drains, places
  /// that work on the others in the same round instead of revoking it first
  /// and placing it one round later. Set once the leader accepted this
  /// worker's drain request. io thread only.
  void set_hand_over_before_join(bool on) { hand_over_before_join_ = on; }
  /// Sends LeaveGroup and closes; `done` runs on the io thread when finished
  /// (bounded by request.timeout.ms). A static member's kept assignment file
  /// is deleted once LeaveGroup succeeded (the identity is gone). Any
  /// thread; `done` may be empty.
  void leave(std::string reason, std::function<void()> done);
  /// Closes without LeaveGroup (peers wait a session timeout). Any thread.
  void stop();

  /// A dynamic member's early resume after a crash (kconnectd's, not in
  /// Connect): the assignment its previous process kept in the assignment
  /// file, when that file was touched at most `max_age_ms(was_leader)` ago
  /// (the process died less than that long ago; `was_leader`: it led the
  /// group in the kept generation), was kept under a cooperative protocol,
  /// and nothing has been joined yet. nullopt otherwise (static members,
  /// no file, too old). Call before start(), or on the io thread.
  [[nodiscard]] std::optional<Assignment> kept_for_early_resume(
      const std::function<int64_t(bool was_leader)>& max_age_ms) const;
  /// Adopts `owned` (a subset of kept_for_early_resume(), filtered by the
  /// owner: nobody else runs it) as the local snapshot, so that the first
  /// JoinGroup reports it as this member's allocation and the leader does
  /// not count it as lost. Returns the event to hand to the owner's
  /// on_assigned (resumed and before_join set, the previous process's
  /// generation). Call before start(), or on the io thread.
  AssignedEvent resume_before_join(Assignment owned);

  /// The local snapshot (what this worker owns), nullopt if none. io thread.
  [[nodiscard]] const std::optional<Assignment>& snapshot() const { return snapshot_; }
  /// Selected protocol of the last completed generation (initially the
  /// configured one). io thread.
  [[nodiscard]] ConnectProtocol current_protocol() const { return current_protocol_; }
  /// Status copy. io thread.
  [[nodiscard]] CoordinatorStatus status() const;
  /// Builds the protocols this worker offers, in preference order, with
  /// metadata from `snapshot` and `config_offset`; `labels` go into the V1/V2
  /// entries only (V0 has no room for them). Pure; exposed for tests.
  static std::vector<kafka::JoinGroupProtocol> build_protocols(ConnectProtocol mode, const std::string& url,
                                                               int64_t config_offset,
                                                               const std::optional<Assignment>& snapshot,
                                                               const Labels& labels = {});
  /// The 4.3 merge: under cooperative protocols `old` − revoked + `received`
  /// (connectors and tasks de-duplicated, `received`'s other fields kept);
  /// under eager just `received`. Pure; exposed for tests.
  static Assignment merge_assignment(const std::optional<Assignment>& old, const Assignment& received,
                                     ConnectProtocol protocol);

 private:
  WorkerCoordinator(boost::asio::io_context& io, WorkerCoordinatorConfig config,
                    WorkerCoordinatorCallbacks callbacks);
  void on_prepare_join(const kafka::JoinPrepare& prep, kafka::JoinReady ready);
  void on_assign(const kafka::LeaderAssignmentInput& in, kafka::AssignmentReady ready);
  void on_joined(const kafka::JoinedGroup& joined);
  void on_error(const kafka::GroupError& error);
  void check_coordinator_lost(uint64_t epoch);
  // Static membership: whether the file is in use, and its upkeep.
  [[nodiscard]] bool keeps_static_assignment() const;
  void keep_static_assignment(const kafka::JoinedGroup& joined, const AssignedEvent& ev);
  void drop_static_assignment(const char* why);
  // Restores the kept snapshot when `joined` is the generation it came from
  // (sets ev.resumed); true when a rejoin is needed instead.
  bool resume_static_assignment(const kafka::JoinedGroup& joined, AssignedEvent& ev);

  boost::asio::io_context& io_;
  WorkerCoordinatorConfig config_;
  WorkerCoordinatorCallbacks callbacks_;
  std::shared_ptr<kafka::GroupMember> member_;
  std::optional<Assignment> snapshot_;
  ConnectProtocol current_protocol_;
  int32_t last_completed_generation_ = -1;
  bool hand_over_before_join_ = false;  ///< see set_hand_over_before_join
  std::string member_id_;
  std::string leader_id_;
  std::optional<ConnectProtocol> selected_;
  bool fatal_ = false;
  std::string fatal_message_;
  boost::asio::steady_timer loss_timer_;
  // Touches a dynamic member's assignment file every heartbeat interval
  // while it owns work (the file's age = time since this process was alive).
  boost::asio::steady_timer alive_timer_;
  void schedule_alive_touch();
  // Age (ms) of the kept file at create(); nullopt if none.
  std::optional<int64_t> kept_age_ms_;
  uint64_t loss_epoch_ = 0;
  // The kept assignment read at create(), until the first SyncGroup decides
  // whether it still holds.
  std::optional<StaticAssignmentRecord> kept_;
  // Generation of the last leader round this member ran (on_assign), -1 if none.
  int32_t led_generation_ = -1;
};

}  // namespace kc::coordinator
