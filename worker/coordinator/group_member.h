#pragma once
// GroupMember: one member of a classic Kafka consumer-protocol group, for a
// caller-defined protocol type (Connect uses "connect"). It is the building
// block of the worker coordinator; it knows nothing of Connect itself: the
// protocol metadata and the assignments are opaque bytes supplied by the
// caller through callbacks.
//
// What it does (the Java AbstractCoordinator's behaviour, see
// ../shared/reference/connect-reference.md 4.2, 4.8 and 9):
//   - FindCoordinator (key type 0 = group, key = group id) on a bootstrap
//     connection, then a separate connection to the coordinator;
//   - JoinGroup (session timeout, rebalance timeout, member id, protocol type,
//     protocols), request timeout = rebalance timeout + 5000 ms;
//     MEMBER_ID_REQUIRED: adopt the id and rejoin at once;
//   - SyncGroup: the leader sends the assignments computed by the caller,
//     followers send an empty list;
//   - Heartbeat every heartbeat interval after JoinGroup succeeded (while the
//     assignment is computed, SyncGroup is in flight, and while stable);
//   - LeaveGroup on leave().
// Errors are handled by action_for() (errors.h): rejoin, reset and rejoin,
// rediscover the coordinator and rejoin, back off and retry, or fatal.
// Responses to a JoinGroup/SyncGroup/Heartbeat of an older join round or
// generation are dropped.
//
// Threading: a GroupMember lives on one io_context, run by one thread.
// start(), request_rejoin(), leave() and stop() may be called from any thread
// (they post to the io_context). The accessors (state(), generation(), ...)
// must be called on the io_context thread. Every callback is invoked on the
// io_context thread. The completion functions handed to callbacks
// (JoinReady, AssignmentReady) may be called from any thread, at most once;
// a completion for a round the member has moved past is ignored.
//
// Room: worker/coordinator (the state machine), over protocol/kafka's
// codecs and Connection. It keeps the kc::kafka namespace: it speaks only the
// generic Kafka group protocol, and its users name its types as before.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <spdlog/common.h>

#include "protocol/kafka/connection.h"
#include "protocol/kafka/errors.h"
#include "protocol/kafka/messages.h"

namespace kc::kafka {

/// Settings of a GroupMember. Durations are milliseconds.
struct GroupMemberConfig {
  /// `group.id`: the group to join (also the FindCoordinator key).
  std::string group_id;
  /// Bootstrap brokers as "host:port" (tried in order, round robin on failure).
  std::vector<std::string> bootstrap_servers;
  /// client.id sent in every request header; the broker derives member ids
  /// from it ("<client.id>-<uuid>").
  std::string client_id = "kconnectd";
  /// JoinGroup ProtocolType ("connect" for Connect workers).
  std::string protocol_type = "connect";
  /// `session.timeout.ms`: JoinGroup SessionTimeoutMs; also the timeout of
  /// each Heartbeat request (no answer within it = coordinator lost).
  std::chrono::milliseconds session_timeout{10000};
  /// `rebalance.timeout.ms`: JoinGroup RebalanceTimeoutMs (v1+). The
  /// JoinGroup request timeout is max(request_timeout, this + 5000 ms).
  std::chrono::milliseconds rebalance_timeout{60000};
  /// `heartbeat.interval.ms`: time between Heartbeat requests.
  std::chrono::milliseconds heartbeat_interval{3000};
  /// `request.timeout.ms`: timeout of FindCoordinator, SyncGroup, LeaveGroup
  /// and ApiVersions requests.
  std::chrono::milliseconds request_timeout{40000};
  /// `retry.backoff.ms`: wait before retrying after a retriable error or a
  /// failed coordinator lookup/connect.
  std::chrono::milliseconds retry_backoff{100};
  /// Upper bound for resolve + TCP connect (+ TLS handshake) of each connection.
  std::chrono::milliseconds connect_timeout{10000};
  /// SASL credentials for every connection (bootstrap and coordinator);
  /// nullopt = none. An Authentication failure stops the member (fatal
  /// GroupError with net == NetErrorKind::Authentication), with no reconnect.
  std::optional<SaslSettings> sasl;
  /// TLS for every connection (security.protocol SSL or SASL_SSL);
  /// nullopt = plaintext. The context is built once, in create().
  std::optional<TlsOptions> tls;
  /// `group.instance.id` (KIP-345 static membership); nullopt = dynamic
  /// member. When set it goes out in JoinGroup (v5+), SyncGroup (v3+) and
  /// Heartbeat (v3+), and a coordinator below those versions is a fatal
  /// UNSUPPORTED_VERSION (never a silent fall-back to dynamic membership).
  /// LeaveGroup carries it from v3; below that the member id alone names
  /// the member (librdkafka's mock speaks only LeaveGroup v0-1).
  /// FENCED_INSTANCE_ID (another process took the id) is fatal. Checked by
  /// create() (non-empty).
  std::optional<std::string> group_instance_id;
};

/// Lowest version a static member needs (KIP-345, Kafka 2.3+): JoinGroup
/// v5, SyncGroup v3, Heartbeat v3, the first versions that carry
/// GroupInstanceId. -1 for other APIs (LeaveGroup carries it from v3 when
/// the coordinator has it, but works without it).
int16_t static_membership_min_version(ApiKey key);

/// SyncGroup answers of INVALID_REQUEST in a row that the member meets with a
/// rejoin before it gives up (fatal). Matches librdkafka's consumer, which
/// rejoins on any SyncGroup error; the mock broker answers a follower's late
/// SyncGroup with INVALID_REQUEST once the leader's SyncGroup closed the round.
inline constexpr int kMaxSyncInvalidRequestRejoins = 3;

/// The member's state. Transitions are checked by a single set_state(),
/// which logs "from X to Y".
enum class GroupState {
  Unjoined,            ///< created; start() not yet processed
  Discovering,         ///< looking up the coordinator and connecting to it (or backing off)
  PreparingJoin,       ///< waiting for the caller's on_prepare_join to hand over the protocols
  Joining,             ///< JoinGroup in flight (or backing off before resending it)
  AwaitingAssignment,  ///< leader only: waiting for the caller's on_assign result
  Syncing,             ///< SyncGroup in flight
  Stable,              ///< member of a stable generation with an assignment; heartbeating
  Leaving,             ///< LeaveGroup in flight
  Closed,              ///< terminal: left, stopped, or stopped by a fatal error
};

/// Decodes a JoinGroupResponse body of `version`. When the body does not
/// decode but carries a non-zero ErrorCode (librdkafka's mock writes null
/// strings into error responses), returns a response holding just that code.
/// Connection errors in `raw` are passed through; other decode failures are
/// NetErrorKind::Protocol. Exposed for tests.
NetResult<JoinGroupResponse> group_decode_join_response(const NetResult<Bytes>& raw, int16_t version);
/// The same for a SyncGroupResponse body (the mock writes null Assignment
/// bytes into error responses).
NetResult<SyncGroupResponse> group_decode_sync_response(const NetResult<Bytes>& raw, int16_t version);

/// Name of a state ("Stable", ...), for logs.
const char* group_state_name(GroupState s);

/// Whether set_state() accepts from → to. Pure; exposed for tests.
bool group_transition_allowed(GroupState from, GroupState to);

/// An error the member met, as a typed value. `code` is the Kafka error code
/// of the response (NONE when the failure was on the connection: then `net`
/// says which), `action` is action_for(code) or the action taken for the
/// connection error (RediscoverCoordinator / Retry), `fatal` is true when the
/// member stopped (state Closed) because of it.
struct GroupError {
  ApiKey api = ApiKey::JoinGroup;          ///< request that failed
  ErrorCode code = ErrorCode::NONE;        ///< Kafka error code from the response
  ErrorAction action = ErrorAction::None;  ///< what the member does about it
  std::optional<NetErrorKind> net;         ///< set for connection-level failures
  std::string message;                     ///< human-readable detail
  bool fatal = false;                      ///< the member is Closed

  /// "JoinGroup: REBALANCE_IN_PROGRESS (27): <message>" or similar.
  [[nodiscard]] std::string to_string() const;
};

/// The level GroupMember logs `error` at. A fatal error is `err`. A
/// REBALANCE_IN_PROGRESS is how the coordinator announces an ordinary
/// rebalance (Java's AbstractCoordinator logs it at info, not as a failure):
/// from Heartbeat it is `debug`, because the caller's on_rebalance_started
/// line already says it once at info; from JoinGroup or SyncGroup it is
/// `info`. Every other error is `warn`.
[[nodiscard]] spdlog::level::level_enum group_error_log_level(const GroupError& error);

/// Handed to on_prepare_join before every JoinGroup send.
struct JoinPrepare {
  /// True for the first JoinGroup after start() and after each completed
  /// SyncGroup (whatever caused the rejoin); false when the member joins
  /// again before a SyncGroup completed (JoinGroup/SyncGroup errors,
  /// coordinator move during the rebalance, ...). on_prepare_join is called
  /// before every JoinGroup except the immediate resend after
  /// MEMBER_ID_REQUIRED, which reuses the protocols just given.
  bool new_rebalance = true;
  /// Generation of the last completed sync (-1 if none / reset).
  int32_t generation = -1;
  /// Member id the JoinGroup will carry ("" at first and after a reset).
  std::string member_id;
  /// Why the member (re)joins, e.g. "initial join", "REBALANCE_IN_PROGRESS from Heartbeat".
  std::string reason;
};

/// Handed to the leader's on_assign after JoinGroup.
struct LeaderAssignmentInput {
  int32_t generation = -1;                 ///< the new generation
  std::string member_id;                   ///< our own (the leader's) member id
  std::string protocol;                    ///< protocol name the broker selected
  std::vector<JoinGroupMember> members;    ///< every member's id and metadata for `protocol`
};

/// Delivered to on_joined after SyncGroup succeeded (state is then Stable).
struct JoinedGroup {
  int32_t generation = -1;    ///< generation id from JoinGroup
  std::string member_id;      ///< our member id
  std::string leader_id;      ///< the leader's member id
  std::string protocol;       ///< selected protocol name
  bool is_leader = false;     ///< member_id == leader_id
  Bytes assignment;           ///< our assignment bytes from SyncGroup (may be empty)
};

/// Delivered to on_rebalance_started when the coordinator announced a
/// rebalance (Heartbeat REBALANCE_IN_PROGRESS while Stable) or the caller
/// requested one. The member proceeds to on_prepare_join by itself.
struct RebalanceStarted {
  int32_t generation = -1;  ///< generation that is ending
  std::string reason;       ///< e.g. "REBALANCE_IN_PROGRESS from Heartbeat"
};

/// Completion of on_prepare_join: the protocols to offer in this JoinGroup,
/// in preference order (name + metadata bytes). Thread-safe, call once.
using JoinReady = std::function<void(std::vector<JoinGroupProtocol> protocols)>;
/// Completion of on_assign: one entry per member (member id + assignment
/// bytes); members left out get an empty assignment from the broker.
/// Thread-safe, call once.
using AssignmentReady = std::function<void(std::vector<SyncGroupAssignment> assignments)>;
/// Completion of leave(): nullopt when LeaveGroup succeeded (or there was
/// nothing to leave), else the LeaveGroup failure (Kafka code or connection
/// error). The member is Closed either way.
using LeaveDone = std::function<void(std::optional<GroupError> error)>;

/// One group request round trip, for metrics (join/sync/heartbeat times).
/// Reported for JoinGroup, SyncGroup and Heartbeat when an answer or a
/// connection error arrived, also for responses of an older round.
struct RequestTiming {
  ApiKey api = ApiKey::Heartbeat;           ///< JoinGroup, SyncGroup or Heartbeat
  std::chrono::milliseconds latency{0};     ///< send to answer (or failure)
  bool ok = false;                          ///< an answer with error code NONE arrived
};

/// The caller's hooks. Only on_prepare_join and on_assign are required.
struct GroupMemberCallbacks {
  /// Before every JoinGroup send. Under the eager protocol the caller stops
  /// its work here (new_rebalance == true) before calling `ready`. The
  /// metadata may be rebuilt on every call (reference 4.2).
  std::function<void(const JoinPrepare&, JoinReady ready)> on_prepare_join;
  /// Leader only, after JoinGroup: compute each member's assignment from
  /// their metadata and call `ready` (possibly later, from another thread).
  std::function<void(const LeaderAssignmentInput&, AssignmentReady ready)> on_assign;
  /// After SyncGroup succeeded: the new generation and our assignment.
  std::function<void(const JoinedGroup&)> on_joined;
  /// A Stable member is about to rejoin: Heartbeat said REBALANCE_IN_PROGRESS
  /// (Java: the heartbeat thread saw it), ILLEGAL_GENERATION or
  /// UNKNOWN_MEMBER_ID, or request_rejoin() was called. Not called on
  /// coordinator loss (on_error reports that; on_prepare_join follows).
  std::function<void(const RebalanceStarted&)> on_rebalance_started;
  /// Every error met, recoverable (fatal == false; the member handles it) or
  /// fatal (the member is Closed).
  std::function<void(const GroupError&)> on_error;
  /// After each JoinGroup/SyncGroup/Heartbeat round trip (metrics). Optional;
  /// must be quick.
  std::function<void(const RequestTiming&)> on_request_timing;
};

/// One member of a Kafka group (see file comment). Create with
/// GroupMember::create(), then start().
class GroupMember : public std::enable_shared_from_this<GroupMember> {
 public:
  /// Creates a member in state Unjoined. Throws std::invalid_argument when
  /// group_id or bootstrap_servers is empty, a bootstrap entry is not
  /// "host:port", on_prepare_join/on_assign is missing, or config.tls is set
  /// and its certificates or key cannot be loaded (the message is the Tls
  /// error of make_tls_context: key name, file and OpenSSL's reason) (config
  /// edge). A TLS failure met later (untrusted broker certificate, host name
  /// mismatch, a TLS alert) is fatal: on_error gets it with net == Tls and
  /// fatal == true, and the member is Closed (no reconnect loop).
  static std::shared_ptr<GroupMember> create(boost::asio::io_context& io, GroupMemberConfig config,
                                             GroupMemberCallbacks callbacks);
  ~GroupMember();
  GroupMember(const GroupMember&) = delete;
  GroupMember& operator=(const GroupMember&) = delete;

  /// Starts discovery and the first join. Any thread.
  void start();

  /// Asks for a new rebalance (Java requestRejoin). While Stable the member
  /// reports on_rebalance_started and goes back to on_prepare_join. While
  /// the assignment is computed or synced the request is kept and carried
  /// out as soon as the assignment arrives (as Java's rejoinNeeded is
  /// checked after SyncGroup): abandoning the round would fail every other
  /// member's SyncGroup with REBALANCE_IN_PROGRESS, so a stream of requests
  /// (config changes) would starve them. Satisfied by any join that starts
  /// meanwhile. Ignored while a join is already being prepared or sent, and
  /// once Leaving/Closed. Any thread.
  void request_rejoin(std::string reason);

  /// Leaves the group: sends LeaveGroup (member id, a static member's
  /// group.instance.id, reason; source:
  /// LeaveGroupRequest, v0-2 MemberId or v3+ single-member batch) when the
  /// member has a member id and a known coordinator, then closes everything
  /// and calls `done` on the io_context thread (see LeaveDone). A JoinGroup
  /// or SyncGroup still in flight is abandoned: the LeaveGroup then goes out
  /// on a fresh coordinator connection, because brokers answer requests of
  /// one connection in order. Bounded by request_timeout. Any thread; `done`
  /// may be empty.
  void leave(std::string reason, LeaveDone done);

  /// Closes the connections without LeaveGroup (peers then wait a session
  /// timeout). State becomes Closed. No callback is invoked afterwards,
  /// except a pending leave()'s `done` (with an error). Any thread.
  void stop();

  /// Current state (io_context thread only).
  [[nodiscard]] GroupState state() const { return state_; }
  /// Generation of the last successful JoinGroup, -1 if none (io thread only).
  [[nodiscard]] int32_t generation() const { return generation_; }
  /// Our member id ("" before the broker assigned one) (io thread only).
  [[nodiscard]] const std::string& member_id() const { return member_id_; }
  /// The configured group.instance.id, nullopt for a dynamic member (any thread).
  [[nodiscard]] const std::optional<std::string>& group_instance_id() const { return config_.group_instance_id; }
  /// Leader's member id from the last JoinGroup (io thread only).
  [[nodiscard]] const std::string& leader_id() const { return leader_id_; }
  /// "host:port" of the current coordinator, "" if unknown (io thread only).
  [[nodiscard]] const std::string& coordinator() const { return coordinator_addr_; }

 private:
  struct Impl;
  GroupMember(boost::asio::io_context& io, GroupMemberConfig config, GroupMemberCallbacks callbacks);

  // State machine.
  void set_state(GroupState to);
  // Coordinator discovery.
  void discover(const std::string& reason);
  void find_coordinator(uint64_t epoch);
  void on_find_coordinator(uint64_t epoch, NetResult<FindCoordinatorResponse> r);
  void connect_coordinator(uint64_t epoch, const std::string& host, uint16_t port);
  void coordinator_lost(ApiKey api, const NetError& error);
  // Join / sync.
  void prepare_join(const std::string& reason);
  void send_join(uint64_t round, std::vector<JoinGroupProtocol> protocols);
  void on_join_response(uint64_t round, NetResult<JoinGroupResponse> r);
  void send_sync(uint64_t round, std::vector<SyncGroupAssignment> assignments);
  void on_sync_response(uint64_t round, NetResult<SyncGroupResponse> r);
  void rejoin_after_error(ApiKey api, int16_t code, ErrorAction action);
  // Shared by the JoinGroup and SyncGroup responses: false (and handled)
  // when the response belongs to an older round or the transport failed.
  bool response_usable(ApiKey api, GroupState expected, uint64_t round, const NetError* failure);
  // A group error code in a JoinGroup/SyncGroup response: reported unless
  // fatal, then the rejoin (or fatal stop) its action calls for.
  void response_error(ApiKey api, int16_t code, ErrorAction action);
  // Heartbeat.
  void schedule_heartbeat();
  void send_heartbeat();
  bool heartbeat_allowed() const;  // Stable/AwaitingAssignment/Syncing, or PreparingJoin with a generation
  void report_timing(ApiKey api, std::chrono::steady_clock::time_point sent, bool ok);
  void on_heartbeat_response(uint64_t epoch, int32_t generation, NetResult<HeartbeatResponse> r);
  // Public entry points, on the io_context thread.
  void do_start();
  void do_request_rejoin(const std::string& reason);
  void do_leave(const std::string& reason, LeaveDone done);
  void do_stop();
  void send_leave(const std::string& reason);
  void finish_leave(std::optional<GroupError> error);
  // A failed connect (bootstrap or coordinator) or FindCoordinator: a SASL
  // authentication failure (when `check_auth`) or a TLS failure is fatal at
  // once; anything else is reported with `action` (message prefixed by
  // `where`), then an unsupported version is fatal too. Authentication and
  // version failures name `fatal_api`. True when fatal (the caller stops),
  // false when the caller retries.
  bool discovery_failed(const NetError& error, const std::string& where, ErrorAction action, ApiKey fatal_api,
                        bool check_auth);
  // Sends the JoinGroup or SyncGroup `body` (encoded at `v`) on the
  // coordinator connection; its decoded response goes to `on_response` with
  // `round` after its round trip is reported (on_request_timing). A body
  // that could not be encoded is fatal ("cannot encode <api> v<v>: ...").
  template <typename Response>
  void send_round_request(ApiKey api, int16_t v, Result<Bytes> body, uint64_t round,
                          NetResult<Response> (*decode)(const NetResult<Bytes>&, int16_t),
                          void (GroupMember::*on_response)(uint64_t, NetResult<Response>),
                          std::chrono::milliseconds timeout);
  // Helpers.
  void report(GroupError error);
  void fatal(GroupError error);
  // The fatal message for `code`: FENCED_INSTANCE_ID names the instance id
  // and what it means; other codes keep `why`.
  [[nodiscard]] std::string fatal_detail(int16_t code, const std::string& why) const;
  void close_all(const std::string& reason);
  void retry_later(std::function<void()> fn);
  [[nodiscard]] int16_t version_of(ApiKey key) const;
  [[nodiscard]] ConnectionOptions connection_options() const;

  boost::asio::io_context& io_;
  GroupMemberConfig config_;
  GroupMemberCallbacks callbacks_;
  std::unique_ptr<Impl> impl_;
  GroupState state_ = GroupState::Unjoined;
  int32_t generation_ = -1;
  std::string member_id_;
  std::string leader_id_;
  std::string protocol_;
  std::string coordinator_addr_;
  // Join round: bumped on every JoinGroup send and whenever the member resets
  // or gives up a round; JoinGroup/SyncGroup/on_assign results of another
  // round are dropped.
  uint64_t round_ = 0;
  // Coordinator epoch: bumped whenever the coordinator connection is given
  // up; discovery and heartbeat results of another epoch are dropped.
  uint64_t coord_epoch_ = 0;
  // The next on_prepare_join starts a new rebalance (JoinPrepare::new_rebalance).
  bool rebalance_pending_ = true;
  // Reason of the current join (JoinGroup Reason, v8+).
  std::string prep_reason_;
  // A rejoin requested while the assignment was computed or synced: carried
  // out once the assignment arrives; cleared by any join that starts.
  std::optional<std::string> rejoin_after_sync_;
  // SyncGroup answers of INVALID_REQUEST in a row. librdkafka's mock answers
  // a follower whose SyncGroup lands after the leader's with it (Kafka would
  // hand back the stored assignment); like librdkafka's own consumer we rejoin,
  // up to kMaxSyncInvalidRequestRejoins times, then it is fatal.
  int sync_invalid_streak_ = 0;
};

}  // namespace kc::kafka
