#pragma once
// DistributedHerder::Impl: the herder's state and the declarations of its
// steps. The steps are defined by room: startup.cpp, config_log.cpp,
// membership.cpp, reconcile_act.cpp, leader_duties.cpp, fencing.cpp,
// requests.cpp, drain.cpp (see README.md). Internal to worker/herder.
//
// Thread ownership (all of these files):
//   * `io_*` members and every method named on_* / io_* run on the io thread;
//   * methods named job_* run on the pool (blocking allowed), the apply
//     sequence on `apply_strand`, job_reconfigure (the leader's task-config
//     generation, which waits for plugin code) on `generation_io`;
//   * `mu` guards `pub` and `history`, read by other threads.
#include "worker/herder/distributed_herder.h"

#include "worker/converters/converters.h"

#include "common/json_bounds.h"
#include "common/strings.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <set>
#include <stop_token>
#include <string_view>
#include <thread>
#include <utility>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "assignor/assignor.h"
#include "worker/plugins/registry.h"
#include "worker/herder/connector_config_cache.h"
#include "worker/herder/herder_common.h"
#include "worker/herder/internal_client.h"
#include "worker/herder/lifecycle.h"
#include "worker/storage/transactional_producer.h"
#include "worker/herder/plugin_config.h"
#include "worker/herder/id_lists.h"
#include "worker/herder/rebalance_plan.h"
#include "worker/herder/reconciler.h"
#include "worker/herder/sink_offsets.h"
#include "worker/herder/source_offsets.h"
#include "worker/herder/stop_pool.h"
#include "worker/storage/group_admin.h"
#include "worker/storage/kafka_security.h"
#include "worker/metrics/log_context.h"
#include "worker/api/url.h"
#include "worker/runtime/call_watchdog.h"
#include "worker/coordinator/worker_coordinator.h"
#include "worker/storage/config_store.h"
#include "worker/storage/offset_store.h"
#include "worker/storage/status_store.h"

namespace kc::herder {

namespace asio = boost::asio;
using connect::Assignment;
using storage::ClusterConfigState;
using storage::ConfigMap;
using storage::StatusState;
using storage::StatusValue;

inline constexpr size_t kMaxHistory = 256;

inline int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}
inline int64_t mono_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The status listener when topic.tracking.enable=false: task and connector
/// statuses as usual, no `status-topic-` records (Connect's WorkerConfig).
class UntrackedStatusListener : public runtime::StatusStoreListener {
 public:
  using StatusStoreListener::StatusStoreListener;
  void on_topic_active(const ConnectorTaskId&, const std::string&) override {}
};

/// "w1:8083" → "http://w1:8083/" (owner URL from a status record's worker id).
inline std::string url_of_worker_id(const std::string& worker_id) {
  if (worker_id.empty()) return {};
  return "http://" + worker_id + "/";
}

/// The REST answer to a failed config-topic write: a failed privileged
/// write of the transactional leader (KIP-618) is a 500 with Connect's
/// "Failed to write to config topic; this may be due to a transient error
/// and the request can be safely retried: <cause>"; anything else
/// RestError::write_timeout(what, ...).
inline rest::RestError config_write_error(const std::string& what, const Error& e) {
  if (storage::is_privileged_write_error(e)) return rest::RestError::internal(e.message);
  if (storage::is_unreadable_record_error(e)) return rest::RestError::bad_request(e.message);  // nothing was sent
  return rest::RestError::write_timeout(what, e.to_string());
}

// ----------------------------------------------------------------------------
// Impl
// ----------------------------------------------------------------------------
struct DistributedHerder::Impl : std::enable_shared_from_this<Impl> {
  explicit Impl(HerderConfig c, const connectors::PluginRegistry* reg)
      : cfg(std::move(c)),
        registry(reg ? reg : &connectors::PluginRegistry::builtin()),
        work(asio::make_work_guard(io)),
        pool_work(asio::make_work_guard(pool)),
        apply_strand(asio::make_strand(pool)),
        generation_work(asio::make_work_guard(generation_io)),
        scheduled_timer(io),
        config_poll_timer(io),
        status_poll_timer(io),
        retry_timer(io),
        drain_timer(io),
        key_timer(io),
        claim_timer(io),
        hand_over_retry_timer(io) {
    if (!cfg.metrics) cfg.metrics = std::make_shared<metrics::WorkerMetrics>();
    io_protocol = cfg.protocol;  // until the first assignment names the group's (Connect's currentProtocolVersion)
    log_ctx->worker_id = cfg.worker_id;
  }

  HerderConfig cfg;
  const connectors::PluginRegistry* registry;

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::thread io_thread;
  // The blocking pool: kPoolThreads threads of our own running `pool`, so
  // that each carries this worker's log context ([worker gen N] prefix).
  static constexpr int kPoolThreads = 4;
  asio::io_context pool;
  asio::executor_work_guard<asio::io_context::executor_type> pool_work;
  std::vector<std::thread> pool_threads;
  asio::strand<asio::io_context::executor_type> apply_strand;
  // The leader's task-config generations (job_reconfigure): the plugin
  // runs on a thread of its own per generation (generate_async); these
  // threads only prepare, look at it every 50 ms and write the configs,
  // so a stuck plugin delays no other connector's generation.
  static constexpr int kGenerationThreads = 2;
  asio::io_context generation_io;
  asio::executor_work_guard<asio::io_context::executor_type> generation_work;
  std::vector<std::thread> generation_threads;

  std::unique_ptr<storage::ConfigBackingStore> config_store;
  std::unique_ptr<storage::OffsetBackingStore> offset_store;
  std::unique_ptr<storage::StatusBackingStore> status_store;
  std::unique_ptr<runtime::StatusStoreListener> status_listener;
  std::unique_ptr<runtime::Worker> worker;
  /// This worker's parsed connector configs (connector_config_cache.h):
  /// filled on the pool when a connector-config record is read, dropped on
  /// removal and before an explicit restart; read by the starts, the
  /// leader's task-config generation and the offsets API. Its reader uses
  /// `worker`, which start() creates before any config is read.
  ConnectorConfigCache config_cache{[this](const std::string& name, const ConfigMap& raw) {
    return worker->read_connector_config(name, raw);
  }};
  std::shared_ptr<coordinator::WorkerCoordinator> coord;

  std::atomic<bool> started{false};
  std::atomic<bool> stopping{false};
  /// Requested by shutdown() right after `stopping` is set: waits that run on
  /// other threads (a task's await_fencing) end on it as on their own stop.
  std::stop_source herder_stop;
  std::atomic<bool> admitting{false};
  std::atomic<bool> rebalance_pending{false};  // a config change waits for a rebalance
  std::atomic<runtime::TaskObserver*> observer{nullptr};
  // The newest assignment's apply sequence number (io_apply_seq, published
  // for the apply strand): an apply that a newer assignment superseded only
  // stops what it must, and leaves config catch-up, offsets read and starts
  // to the newest one, so a queue of applies never holds the JoinGroup gate.
  std::atomic<uint64_t> latest_apply_seq{0};

  // ---- io-thread state
  bool io_accept_updates = false;
  std::string kafka_cluster_id;  ///< set by start(), read-only afterwards (GET /)
  std::set<std::string> io_known_connectors;
  int32_t io_generation = -1;
  bool io_is_leader = false;
  bool io_was_leader = false;  // leader of the last completed generation
  std::string io_leader_url;
  ConnectProtocol io_protocol = ConnectProtocol::Sessioned;
  std::optional<Assignment> io_assignment;  // merged snapshot
  assignor::LeaderState io_leader_state;
  // Bumped by every leader round and every JoinGroup: a leader job that
  // comes back with an older number is dropped (see on_leader).
  uint64_t io_leader_round = 0;
  asio::steady_timer scheduled_timer;
  asio::steady_timer config_poll_timer;
  asio::steady_timer status_poll_timer;
  asio::steady_timer retry_timer;
  bool io_config_polling = false;
  int64_t io_rebalance_started_ms = 0;
  /// The last round's length, from the decision to join to the assignment
  /// (ms; 0 = none yet): how early a scheduled rebalance rejoins.
  int64_t io_last_round_ms = 0;
  std::string io_rebalance_reason;  // why the current rebalance started (GET /rebalances)
  // Worker id + generation printed in every log line of the io thread (issue 5).
  std::shared_ptr<metrics::LogContext> log_ctx = std::make_shared<metrics::LogContext>();
  bool coord_lost = false;          // guarded by mu: coordinator-loss revocation, not yet reassigned
  std::string config_read_error;    // guarded by mu: last config poll failure, "" when fine
  uint64_t io_apply_seq = 0;  // bumped per assignment; stale apply completions are ignored
  // Revocation stops queued or running; JoinGroup waits until it is 0.
  int io_pending_stops = 0;
  std::vector<std::function<void()>> io_join_waiters;
  std::set<std::string> io_reconfiguring;  // leader: task-config generation in flight
  std::set<std::string> io_reconfigure_again;  // leader: asked again while in flight
  std::set<std::string> io_reconfigure_unsent;  // follower: forwarding failed, resend after the next assignment
  // Leader (KIP-618): connectors whose zombie fencing runs, with who waits for it.
  std::map<std::string, std::vector<std::function<void(int, std::string)>>> io_fencings;
  assignor::ConnectorsAndTasks io_revoked_before_join;  // stopped by a revoke-all JoinGroup, for the history
  // ---- drain (io thread): this worker's own drain, and as leader the
  // members draining and the members of the last round it assigned.
  bool io_draining = false;
  std::optional<std::pair<bool, std::string>> io_drain_result;  // set once the drain ended
  std::vector<DistributedHerder::DrainDone> io_drain_done;
  asio::steady_timer drain_timer;
  std::set<std::string> io_drain_members;
  std::vector<std::string> io_round_members;
  std::atomic<bool> draining_flag{false};

  // ---- KIP-507 (io thread): the session key in force, the leader's
  // rotation timer; `key_mu` guards the published view and the counters.
  std::optional<SessionKey> io_session_key;
  bool io_key_writing = false;  // leader: a new key is being written
  asio::steady_timer key_timer;
  mutable std::mutex key_mu;
  SessionKeyInfo key_info;

  // ---- KIP-618 transactional leader (io thread unless noted): a claim of
  // the config topic's write privileges under way, its retry timer, and
  // Connect's fencedFromConfigTopic (set from pool threads).
  bool io_claiming = false;
  asio::steady_timer claim_timer;
  std::atomic<bool> fenced_from_config_topic{false};
  mutable std::mutex writer_mu;
  std::string writer_last_error;  ///< guarded by writer_mu
  InternalRequestStats key_stats;

  // ---- apply-strand state: the reconciler's actual state (what this worker
  // started, with which configs and target states)
  std::map<std::string, RunningConnector> strand_connectors;
  std::map<ConnectorTaskId, RunningTask> strand_tasks;
  std::set<std::string> strand_failed_c;        // start failed; kept so it is not retried in a loop
  std::set<ConnectorTaskId> strand_failed_t;
  std::vector<RestartRequest> strand_restarts;  // KIP-745 requests not yet reconciled
  // Tasks assigned here that their old owner (draining, or revoked in the
  // same round) still runs: when we first saw that (mono ms). They start
  // once its stop is read, or after the bound.
  std::map<ConnectorTaskId, int64_t> strand_hand_over_since;
  asio::steady_timer hand_over_retry_timer;  // io thread: re-reconciles while a hand-over is pending
  std::atomic<bool> status_reading{false};  // a read_statuses_on_pool read is under way
  std::atomic<bool> reconcile_queued{false};
  // The apply sequence number whose start step was reached: the reconciler
  // starts nothing new while it lags latest_apply_seq.
  std::atomic<uint64_t> applied_apply_seq{0};
  // Set when the freeze watchdog cut everything off; nothing new starts
  // until the next assignment (we are out of the group).
  std::atomic<bool> frozen_hold{false};

  // ---- freeze watchdog (its own thread)
  std::thread watchdog;
  std::mutex watchdog_mu;
  std::condition_variable watchdog_cv;

  // ---- shared with other threads
  /// Where this worker is in its membership (lifecycle.h); moved by the
  /// io thread, the apply strand and shutdown(), each move logged.
  WorkerLifecycle lifecycle;
  mutable std::mutex mu;
  AssignmentState pub;
  /// Leader: the members of its last round (GET /cluster); under `mu`.
  std::vector<rest::GroupMember> pub_round_members;
  std::deque<RebalanceRecord> history;
  bool coord_fatal = false;
  std::string coord_fatal_message;

  // Log lines carry "[worker gen N]" from the log pattern (worker/metrics/log_context.h).

  // ------------------------------------------------------------------ startup
  Status open_stores();
  /// Opens the stores, builds the runtime Worker and the group
  /// coordinator, starts the threads and joins the group. Caller's thread.
  Status start();
  /// start()'s step before the first JoinGroup: a dynamic worker restarted
  /// after a crash resumes what it kept in its assignment file, less what
  /// plan_early_resume() leaves out (kconnectd's; see
  /// WorkerCoordinator::kept_for_early_resume). Posts on_assigned to the io
  /// context; does nothing under exactly-once source support (its task
  /// producers need the leader's fencing first).
  void resume_kept_before_join();
  /// start()'s steps: the runtime Worker's options from the herder config;
  /// the coordinator's (an error when the group's SASL settings are
  /// unusable); the coordinator's callbacks into this herder (each holds a
  /// weak reference); and the pool, generation, io and watchdog threads.
  runtime::WorkerOptions worker_options();
  Result<coordinator::WorkerCoordinatorConfig> coordinator_config() const;
  coordinator::WorkerCoordinatorCallbacks coordinator_callbacks();
  void start_threads();

  // ------------------------------------------------------------------ freeze watchdog
  // A worker frozen (SIGSTOP, VM pause) for longer than session.timeout.ms
  // has lost its group membership, and so have its sink consumers. When its
  // threads run again, librdkafka would rejoin those consumers to their
  // groups and take partitions back from the new owners before the herder
  // learns it is out of the group. So a 200 ms tick that finds a gap longer
  // than the session cuts every task off from Kafka at once (KAFKA-15826),
  // holds starts until the next assignment and rejoins.
  void watchdog_loop();
  void on_frozen(int64_t gap_ms);

  // ------------------------------------------------------------------ polls
  void schedule_config_poll();
  void schedule_status_poll();
  /// Reads the status topic to its end on the pool (bounded by
  /// worker.sync.timeout.ms, at most `cap_ms`), one read at a time, then
  /// runs `then` there. Returns false, doing nothing, while a read is
  /// under way. Any thread.
  bool read_statuses_on_pool(int cap_ms, std::function<void(Impl&)> then);

  // ------------------------------------------------------------------ join gate
  // JoinGroup waits only for revocations (stops), not for a whole apply
  // (config catch-up and starts may take long; the mock broker expels a
  // member that does not rejoin within about session.timeout).
  void io_stop_begin();
  void io_stop_end();
  // Called from pool threads when a stop job finished.
  void post_stop_end();

  // ------------------------------------------------------------------ rejoin
  // ------------------------------------------------------------------ drain
  void io_drain_start(int timeout_ms, DistributedHerder::DrainDone done);
  void io_drain_finish(bool drained, const std::string& why);

  // Sends (again) this worker's drain request to the leader.
  void io_ask_leader_to_drain();

  // Leader: marks `member_id` as draining and rebalances (idempotent).
  std::pair<int, std::string> io_accept_drain(const std::string& member_id);
  void io_request_rejoin(const std::string& reason);
  bool io_owns_connector(const std::string& c) const;

  // Config-topic changes, in topic order (reference 4.4 rebalance triggers).
  // Everything else a change implies (restart a changed connector, stop a
  // removed task, apply a target state to every local instance) is the
  // reconciler's job, on every worker alike.
  void on_config_update(const storage::ConfigUpdate& u);
  /// Where a connector config enters this worker: reads connector `c`'s
  /// config from the snapshot into config_cache, on the pool (never here:
  /// providers read files). io thread.
  void io_read_connector_config(const std::string& c);

  // ------------------------------------------------------------------ reconciler
  /// Queues one reconcile pass on the apply strand (coalesced). Any thread.
  void request_reconcile();

  /// Desired state: the config snapshot plus this worker's current assignment.
  DesiredState desired_state(int32_t& generation);

  /// Actual state: what the runtime runs, with what the herder started it
  /// with, plus the status topic's view. Apply strand only.
  ActualState actual_state();
  void forget_connector(const std::string& c);
  void forget_task(const ConnectorTaskId& t);
  StatusValue status_of(StatusState state, int32_t generation, std::optional<std::string> trace = std::nullopt) const;

  /// Starts `c` on this worker from its config `conf` as written, parsed
  /// through config_cache (the entry read when the record arrived, unless
  /// `conf` differs from it); false (and FAILED written) when it cannot.
  bool start_connector_now(const std::string& c, const ConfigMap& conf, TargetState target, int32_t gen);
  /// Starts task `t` the same way: its connector's parsed config from
  /// config_cache, its own config `task_conf`. FAILED written when it cannot.
  void start_task_now(const ConnectorTaskId& t, const ConfigMap& connector_conf, const ConfigMap& task_conf,
                      TargetState target, int32_t gen);

  /// Carries out the reconciler's actions in order. Apply strand only.
  void execute(const std::vector<Action>& actions, const DesiredState& d, int32_t gen);

  /// The one executor of stop plans (the reconciler's stops, revoke-all,
  /// the drain's connector stops): `stops`' connectors (on a StopPool
  /// thread) and tasks in parallel under one graceful deadline, then each
  /// is forgotten. Idempotent: an instance no longer running is a no-op.
  /// Blocking; apply strand only.
  void carry_out_stops(const RevocationPlan& stops);

  /// One reconcile pass (DESIGN "The herder as a reconciler"). Apply strand only.
  void job_reconcile();

  /// Leader only: every connector that should run but has no task configs
  /// (resumed after STOPPED, or inconsistent) gets them generated. Called on
  /// target-state changes, which come after a stop's 0-task commit.
  void io_leader_duties();

  // Plain restarts (REST, on the owner): the same path as the reconciler's.
  void restart_local(Action a, std::function<void()> done = {});

  // ------------------------------------------------------------------ leader: task configs
  // Generates the task configs of `c` with a transient plugin instance and
  // writes them when they differ from the committed ones (reference 5.1).
  // A failed write is retried with back-off (250 ms doubling to 10 s) while
  // this worker is the leader, as Connect's reconfigureConnectorTasksWithRetry.
  /// io thread: carries out decide_task_config_generation (rebalance_plan.h)
  /// for `c` and `trigger`: leader_reconfigure(c), or, while a generation of
  /// `c`'s task configs is in flight, one more after it (two concurrent
  /// writers of one connector's task configs would interleave their task
  /// records and commits), or, on a follower, the forwarded request.
  void io_generate(GenerationTrigger trigger, const std::string& c);
  void leader_reconfigure(const std::string& c, int backoff_ms = kTaskConfigRetryFirstMs);

  /// After a generation of `c`: the next one if asked meanwhile, or a retry
  /// of a failed write after `backoff_ms`. io thread.
  static void io_reconfigured(const std::weak_ptr<Impl>& w, const std::string& c, int backoff_ms, bool done);

  // ------------------------------------------------------------------ KIP-507
  bool io_validation_enabled() const;
  size_t wanted_key_bytes() const;
  void publish_key_info();

  /// Installs the session key of the config snapshot, if newer than ours
  /// (every worker: followers sign with it, and may become leader). io thread.
  void io_load_session_key();

  /// Leader under `sessioned`: writes a new session key when there is none,
  /// when it expired, or when its algorithm or length differ from this
  /// worker's settings (Connect's checkForKeyRotation); otherwise arms the
  /// timer for its expiry. The write runs on the pool. io thread.
  void io_check_key_rotation();

  /// The two signature headers for `body`, when requests are signed (the
  /// `sessioned` protocol and a key is known); else none, as Connect's
  /// RestClient, which signs only with a key. Counts signed requests. io
  /// thread.
  std::vector<std::pair<std::string, std::string>> io_signature_headers(const std::string& body);

  /// Leader check of an internal request; counts it. io thread.
  VerifyResult io_verify(const SignatureHeaders& headers, const std::string& body);

  // A running connector asked for new task configs (Connect's
  // requestTaskReconfiguration). The leader generates them itself (a
  // request during a generation runs another one after it, since the
  // source may have changed since it listed); a follower forwards the
  // request to the leader (POST /connectors/{c}/tasks, Connect's internal
  // endpoint) from the pool. io thread only.
  void io_task_reconfiguration(const std::string& c);

  // Follower: sends the request, signed under `sessioned`. A failure
  // within a minute of the first attempt is retried with backoff and a
  // fresh signature (the leader may have rotated the key, or not read it
  // yet: Connect's isPossibleExpiredKeyException; or be busy or changing);
  // later ones are sent again after the next assignment. io thread only.
  void io_forward_task_reconfiguration(const std::string& c, int64_t first_ms, int attempt);

  /// Leader side of a forwarded request, after its signature check.
  /// Returns (204, "") when a generation was scheduled, (404, ..) for an
  /// unknown connector, (409, ..) when this worker is not the leader. io
  /// thread only.
  std::pair<int, std::string> io_accept_task_reconfiguration(const std::string& c);

  /// Plugin calls abandoned past their deadline on this worker (validate,
  /// task-config generation): one per key, kMaxAbandonedPluginCalls in all.
  /// Keys: "connector <name>" (generation), kValidateKey + class (validate).
  std::shared_ptr<runtime::AbandonedCalls> abandoned_calls = std::make_shared<runtime::AbandonedCalls>();

  /// herder::validate_bounded (herder_common.h) with this worker's
  /// config, registry and abandoned_calls.
  void validate_bounded(rest::ConnectorConfig config,
                        std::function<void(rest::Reply<connectors::ConfigValidation>)> done);

  /// What a generation reports, once, on generation_io: the task configs,
  /// or why there are none.
  using GenerationDone = std::function<void(Result<std::vector<ConfigMap>>)>;

  /// One generation of `c` under way: the plugin's thread fills it;
  /// generation_tick looks at it every 50 ms on generation_io, which never waits for
  /// plugin code, so a stuck connector delays no other one.
  struct GenerationRun {
    std::mutex mu;
    const char* call = "start";  ///< the plugin call under way
    int64_t call_began_ms = mono_ms();
    bool done = false;
    uint64_t abandoned_token = 0;  ///< abandoned_calls entry, once abandoned
    Result<std::vector<ConfigMap>> out = std::vector<ConfigMap>{};
    connectors::DetachedConnectorContext context;
    std::unique_ptr<connectors::Connector> plugin;
    explicit GenerationRun(const std::string& name) : context(name) {}
    void enter(const char* next) {
      std::lock_guard lk(mu);
      call = next;
      call_began_ms = mono_ms();
    }
  };

  /// The leader's transient instance of `c`: start(conf), task_configs
  /// (generate_task_configs: tasks.max, tasks.max.enforce, the cap) and
  /// stop(), on a thread of its own, so that a stuck or runaway plugin
  /// never holds a herder thread. start() and task_configs() each get
  /// connector.call.timeout.ms, stop() task.shutdown.graceful.timeout.ms;
  /// past one, the thread (and the plugin instance) is abandoned, recorded
  /// in abandoned_calls under "connector <c>" until it returns, and the
  /// error names the call. While it is recorded, a new generation of `c`
  /// (or one past kMaxAbandonedPluginCalls) is refused at once, without a
  /// thread. `done` gets the configs, or: the plugin's exception, the
  /// enforce or cap failure, a deadline, a refusal, the worker stopping (at
  /// once). Returns at once; `done` runs on generation_io.
  void generate_async(const std::string& c, std::unique_ptr<connectors::Connector> p, const ConfigMap& conf,
                      connectors::TasksMax tasks, GenerationDone done);

  /// One look at `run` (see generate_async); again in 50 ms while it runs
  /// within its deadline. generation_io.
  static void generation_tick(std::weak_ptr<Impl> w, const std::string& c, std::shared_ptr<GenerationRun> run,
                              std::shared_ptr<asio::steady_timer> timer, GenerationDone done);

  // Leader: connectors whose task-config generation failed, with the
  // config it failed for and the reason. The status poll writes the
  // connector FAILED with it again whenever its status says otherwise (its
  // owner reports RUNNING after start(), possibly after our FAILED), as long
  // as the stored config is the one that failed. Guarded by gen_fail_mu.
  std::mutex gen_fail_mu;
  std::map<std::string, GenerationFailure> generation_failures;
  /// Task-config generation threads under way (stuck_plugin_threads); shared
  /// with the detached threads, which may outlive the herder.
  std::shared_ptr<std::atomic<int>> generations_running = std::make_shared<std::atomic<int>>(0);

  /// Records the failure of `c`'s generation (config `raw`) and reports
  /// the connector FAILED. Generation thread.
  void leader_generation_failed(const std::string& c, const ConfigMap& raw, const std::string& why);

  void leader_generation_succeeded(const std::string& c);

  /// Writes FAILED (under its owner's worker id) for each recorded failure
  /// whose config is still the stored one and whose status is not that
  /// FAILED yet; forgets the others. Pool thread (status poll).
  void assert_generation_failures();

  /// Generates the task configs of `c` (generate_async, unless it is
  /// STOPPED: none) and writes them when they differ from the committed
  /// ones. `finish` runs once, on generation_io: false when the configs
  /// could not be written (retry). generation_io; never waits for plugin
  /// code.
  void job_reconfigure(const std::string& c, std::function<void(bool)> finish);

  /// Writes `configs` as the task configs of `c` unless they are the
  /// committed ones. Returns false when the write failed (retry).
  /// generation_io (blocking on the config topic, bounded).
  bool write_task_configs(const std::string& c, const std::vector<ConfigMap>& configs);

  // ------------------------------------------------------------------ KIP-618 zombie fencing
  // Before an exactly-once source task starts, the older generations of its
  // connector's tasks must be fenced out (Connect's fenceZombieSourceTasks):
  // the leader runs init_transactions for each transactional id of the
  // last fenced generation (the `tasks-fencing-<c>` count), then writes the
  // new count. A follower's task asks the leader with a signed
  // PUT /connectors/{c}/fence. One fencing per connector at a time; later
  // requests wait for it.

  /// True when `conf` names a source connector class.
  bool is_source(const ConfigMap& conf) const;

  /// The checks around an exactly-once source task's producer (runtime
  /// ExactlyOnceTaskChecks); none unless exactly.once.source.support=enabled
  /// and the task's connector (its parsed config's type) is a source.
  /// Apply strand.
  runtime::ExactlyOnceTaskChecks exactly_once_checks(const ConnectorTaskId& t, const runtime::ConnectorConfig& conf);

  /// Task thread: fences (leader) or asks the leader to fence (follower) the
  /// older generations of `t`'s connector, and waits for the answer. A
  /// follower retries refused or failed forwards (a new leader, a key not
  /// read yet or rotated: Connect's isPossibleExpiredKeyException) with
  /// backoff for up to a minute. Blocking; a stop requested on `stop` (the
  /// task's) or on herder_stop (shutdown) ends its waits at once.
  Status await_fencing(const ConnectorTaskId& t, std::stop_token stop);

  /// Leader side: fences `c` unless already done for its latest task
  /// configs, then done(204, "") or done(status, why): 409 not the leader,
  /// 404 unknown connector, 400 not a source, 500 the fencing failed.
  /// io thread only.
  void io_fence(const std::string& c, std::function<void(int, std::string)> done);

  /// The fencing itself (pool thread): reads the config topic to the end;
  /// if `c` is pending fencing, fences the transactional ids of its last
  /// task-count record (none when there is no record yet, or when both the
  /// old and the new generation have one task: the new task's own
  /// init_transactions fences the old one, as Connect skips that case),
  /// then writes the new task count.
  Status job_fence(const std::string& c);

  // ------------------------------------------------------------------ KIP-618 transactional leader
  // With exactly.once.source.support=preparing|enabled the leader writes
  // the config topic through a fencable (transactional) producer, as
  // Connect's KafkaConfigBackingStore: it claims the write privileges
  // (init_transactions on "connect-cluster-<group.id>", fencing the
  // previous leader's producer) when it is assigned leadership, and a
  // privileged write that fails releases them; the worker claims them again
  // only while it is the leader (Connect's fencedFromConfigTopic).

  /// Pool or generation thread. Connect's writeToConfigTopicAsLeader around one
  /// privileged config write `write` (a ConfigBackingStore call): claims
  /// the write privileges first when they are not held and this worker is
  /// still the leader (Connect's tick claims them before it serves a leader
  /// request), then writes. A
  /// privileged write that failed (fenced by a newer leader, or no
  /// privileges) sets fenced_from_config_topic, asks the io thread to
  /// reclaim while this worker is leader, and returns an Error
  /// (field storage::kPrivilegedWriteField) with Connect's message "Failed
  /// to write to config topic; this may be due to a transient error and the
  /// request can be safely retried: <cause>". Other errors pass through.
  Status leader_config_write(const std::function<Status()>& write);

  /// Pool thread: records a failed privileged write or claim (Connect's
  /// fencedFromConfigTopic = true) and returns the error the caller answers.
  Status note_privileged_failure(const Error& cause);

  /// io thread. Claims the config topic's write privileges on the pool
  /// while this worker is the leader (retrying every 250 ms, Connect's
  /// CONFIG_TOPIC_WRITE_PRIVILEGES_BACKOFF_MS, as long as it stays leader),
  /// or releases them when it is not (Connect keeps a former leader's
  /// producer until a write fails; we close it at once, so the privileges
  /// are held only by the leader). Nothing without a transactional leader.
  void io_reclaim_write_privileges();

  // ------------------------------------------------------------------ coordinator callbacks
  void on_before_join(const coordinator::BeforeJoin& bj, std::function<void()> proceed);
  void on_leader(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready);
  /// One leader round's inputs, copied on the io thread so that the pool
  /// reads no io_* member.
  struct LeaderJob {
    coordinator::LeaderRound round;
    uint64_t seq = 0;             ///< io_leader_round when the round began
    assignor::LeaderState state;  ///< io_leader_state (reset for a new leader)
    assignor::RoundContext ctx;   ///< now_ms is set on the pool, after the config read
  };
  /// Pool: reads the config topic to the end, runs the assignor and the
  /// hand-over moves (plan_leader_round), writes the hand-over marks
  /// (blocking, before any member sees the assignment).
  HandOverMoves job_assign(LeaderJob& job);
  /// io thread: stores the round's leader state and sends its assignments,
  /// unless round `seq` is no longer the newest (then both are dropped).
  void io_assigned(uint64_t seq, int32_t generation, assignor::AssignmentResult res,
                   coordinator::AssignmentsReady ready);

  void record_history(const coordinator::AssignedEvent& ev);
  void on_assigned(const coordinator::AssignedEvent& ev);

  // Apply one assignment: revoke, catch up configs, start (reference 4.4).
  void job_apply(const coordinator::AssignedEvent& ev, uint64_t seq, bool became_leader, bool gates_join);
  /// job_apply's steps. Stops, in parallel under one graceful deadline,
  /// what runs here and `owned` does not hold; records each task's stop
  /// time in the history entry of `generation` and flushes the statuses.
  void stop_revoked(const Assignment& owned, int32_t generation);
  /// Drops the config_cache entry of every connector that starts its
  /// connector or a task here under `owned` (not in `running_tasks` or
  /// running now), so the starts read it once more (Connect resolves
  /// providers at each start).
  void reread_configs_of_starts(const Assignment& owned, const std::set<ConnectorTaskId>& running_tasks);
  /// io thread, posted: a draining worker that owns nothing has drained;
  /// one that still owns work asks the leader again.
  void post_drain_progress(bool owns_nothing);
  /// Reads the config topic up to the assignment's `config_offset`; false
  /// (and a rejoin requested, after a back-off when lagging) when the
  /// snapshot does not end exactly there.
  bool catch_up_configs(int64_t config_offset);
  /// io thread, posted: marks assignment `seq` applied (when still the
  /// newest), does a new leader's task-config generations, resends
  /// unsent reconfiguration requests, and rejoins after revocations.
  void post_applied(uint64_t seq, bool had_revocations, bool became_leader);
  void on_revoke_all(std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks);

  /// Drain hand-over, before the JoinGroup that reports nothing owned: stops
  /// every connector here, and marks each task of `tasks` that runs here
  /// with its state and kHandOverTrace in the status topic (flushed), so that
  /// its next owner waits for our stop. Apply strand only.
  void job_hand_over(const std::vector<ConnectorTaskId>& tasks);

  /// Writes hand-over marks (kHandOverTrace statuses) and waits until they
  /// are acknowledged (at most 5 s), so that they precede the old owner's
  /// stop in the status topic. Blocking: pool or apply strand only.
  void write_hand_over_marks(const std::vector<std::pair<ConnectorTaskId, StatusValue>>& marks);

  /// Whether `t`, assigned here, must not start yet because its old owner
  /// (draining, or revoked in this round) still runs it: its status is that
  /// owner's kHandOverTrace mark. Gives up waiting after the old owner's
  /// graceful stop timeout plus session.timeout.ms and two status polls (a
  /// task past its graceful timeout is cut off from Kafka, a frozen worker
  /// cuts off everything once it notices). Apply strand only.
  bool hand_over_pending(const ConnectorTaskId& t);

  /// Re-runs the reconciler shortly, while a hand-over is pending. Any thread.
  void retry_reconcile_soon();

  /// Carries out plan_revoke_all over the reconciler's actual state
  /// (carry_out_stops), then Worker::stop_all as an idempotent sweep (it
  /// ends the cut-off of tasks abandoned earlier), and flushes the status
  /// store. Apply strand only.
  void job_revoke_all();

  // ------------------------------------------------------------------ shutdown
  void wait_strand_idle();
  void shutdown(bool leave);

  // ------------------------------------------------------------------ REST helpers
  std::optional<rest::RestError> not_ready() const;
  rest::ConnectorType type_of(const ConfigMap& conf) const;
  rest::ConnectorInfo info_of(const ClusterConfigState& snap, const std::string& name) const;

  /// GET /connectors/{c}/status from the status cache; nullopt when the
  /// connector has no status record.
  std::optional<rest::ConnectorStateInfo> status_info(const std::string& name) const;

  // Preconditions of the offsets API, in Connect's order: 404 unknown, then
  // (writes only) 400 unless STOPPED.
  std::optional<rest::RestError> offsets_precondition(const ClusterConfigState& snap, const std::string& name,
                                                      bool modify) const;

  // ---- the offsets API (KIP-875). Every call below blocks (providers,
  // the broker): pool threads only.

  // Connector `name`'s snapshot config `raw` typed as its connector and
  // tasks see it (from config_cache: ${provider:...} placeholders
  // resolved, so a group.id override may come from a provider). A config
  // whose provider fails is read as written, as the offsets API always did:
  // the request then fails on the broker, if at all.
  runtime::ConnectorConfigPtr offsets_config(const std::string& name, const ConfigMap& raw);

  // ---- sink connector offsets: the connector's consumer group.

  // Where the sink's offsets live: its group, the admin client and topics.
  SinkGroup sink_group(const runtime::ConnectorConfig& conf) const;

  // GET for a sink: the committed offsets of its consumer group.
  rest::Reply<std::vector<rest::ConnectorOffset>> sink_offsets(const runtime::ConnectorConfig& conf) const;

  // PATCH (offsets set) or DELETE (nullopt) for a STOPPED sink.
  rest::Reply<std::string> modify_sink_offsets(const runtime::ConnectorConfig& conf,
                                               const std::optional<std::vector<rest::ConnectorOffset>>& offsets) const;

  // ---- source connector offsets: the worker's topic, and the connector's
  // own offsets.storage.topic ahead of it when its tasks use one.

  // The stores the connector's tasks read, in their order. The connector's
  // own topic is opened into `own` for this request only (created if
  // missing, with the worker's offsets-topic settings, as the task does).
  // Errors: 500 when that topic cannot be opened. Blocking: pool only.
  rest::Reply<SourceOffsetStores> source_offset_stores(const runtime::ConnectorConfig& conf,
                                                       std::unique_ptr<storage::OffsetBackingStore>& own) const;

  // Runs `fn` on the io thread after the leader checks of a write
  // (reference 4.5, 6.3): 503 while stopping, not_leader(url) on followers
  // or before the first assignment, 409 stale_config while a config change
  // waits for a rebalance. `fn` then runs on the pool.
  template <typename T>
  void leader_write(rest::Callback<T> cb, std::function<rest::Reply<T>()> fn) {
    if (auto e = not_ready()) return cb(*e);
    asio::post(io, [w = weak_from_this(), cb = std::move(cb), fn = std::move(fn)]() mutable {
      auto s = w.lock();
      if (!s) return cb(rest::RestError::unavailable("Worker is shutting down"));
      if (!s->admitting) return cb(rest::RestError::unavailable("Worker is shutting down"));
      if (!s->io_assignment || !s->io_is_leader) return cb(rest::RestError::not_leader(s->io_leader_url));
      if (s->rebalance_pending) return cb(rest::RestError::stale_config());
      asio::post(s->pool, [cb = std::move(cb), fn = std::move(fn)]() mutable { cb(fn()); });
    });
  }
};

}  // namespace kc::herder
