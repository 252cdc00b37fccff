#pragma once
// DistributedHerder: one Connect worker in distributed mode (Kafka Connect's
// DistributedHerder). It owns the group coordinator, the three internal
// topic stores and the runtime Worker, applies every assignment (revoke
// first, then catch up configs, then start), performs the leader's duties
// (assignor, config-topic writes) and implements the REST layer's HerderApi.
//
// Threads (see worker/herder/README.md):
//   * the io thread runs one io_context: the WorkerCoordinator, all herder
//     state (current assignment, leader flag, rejoin timers, LeaderState of
//     the assignor) and every HerderApi entry point's first step. Nothing on
//     it blocks;
//   * a small thread pool (4 threads) runs every blocking step: config
//     read_to_end, config/offset/status writes and reads, task and connector
//     stops, task-config generation. Assignment application runs in order on
//     a strand of that pool;
//   * the runtime Worker's own task and connector threads.
// Results are posted back to the io thread; callers on other threads only
// use the thread-safe accessors (assignment_state(), rebalance_history(),
// health) or the HerderApi methods.
//
// Task configs (reference 5.1, 4.5): only the **leader** generates task
// configs. It does so with a transient instance of the connector plugin
// (start(config) → task_configs(tasks.max) → stop(), on the pool) whenever a
// connector config appears or changes and whenever it becomes leader and
// finds a connector without committed task configs; it writes them (task
// records + commit) only when they differ from the committed ones. A running
// connector may ask for new task configs at run time
// (ConnectorContext::request_task_reconfiguration, e.g. a mirror source that
// found new topics): on the leader that schedules a generation; a follower
// forwards the request to the leader with POST /connectors/{c}/tasks, as
// Connect does. Deviation: Connect's follower sends the task configs its
// running connector generated; kconnectd's sends an empty body and the
// leader generates them with its transient instance, as for every other
// generation (so the body of a forwarded request is ignored).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/result.h"
#include "common/worker_defaults.h"
#include "config/jaas.h"
#include "protocol/connect/types.h"
#include "worker/herder/request_signature.h"
#include "protocol/kafka/tls_options.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/api/herder_api.h"
#include "worker/runtime/worker.h"
#include "worker/storage/kafka_client.h"

namespace kc::rest {
class TlsContext;  // worker/api/rest_tls.h
}

namespace kc::herder {

using connect::ConnectorTaskId;
using connect::ConnectProtocol;

/// Everything the herder needs, already validated (built from
/// config::WorkerConfig by `kconnectd run`; tests fill it directly).
/// Durations are milliseconds; names are Connect's DistributedConfig keys.
struct HerderConfig {
  std::string group_id = "connect-cluster";          ///< group.id
  std::string bootstrap_servers = "localhost:9092";   ///< bootstrap.servers (comma list)
  /// Extra librdkafka properties for every internal client (security.*,
  /// sasl.*, ssl.*); bootstrap.servers is added from the field above.
  storage::ClientProps client_props;
  storage::ClientProps producer_overrides;  ///< producer.* (prefix stripped), for source tasks
  storage::ClientProps consumer_overrides;  ///< consumer.* (prefix stripped), for sink tasks
  /// admin.* (prefix stripped, REST `admin.listeners` excluded): the admin
  /// client of the sink offsets API (KIP-875).
  storage::ClientProps admin_overrides;
  /// connector.client.config.override.policy (KIP-458, Connect's default All).
  runtime::ClientOverridePolicy client_override_policy = runtime::ClientOverridePolicy::All;
  /// TLS of the group client (security.protocol SSL/SASL_SSL with the
  /// ssl.* settings); nullopt = plaintext. Bad certificate or key files make
  /// start() fail; a TLS failure later is fatal for the group (on_fatal).
  std::optional<kafka::TlsOptions> group_tls;
  /// Called once, on the io thread, when group membership fails for good (a
  /// fatal GroupError: a TLS failure such as an untrusted broker certificate
  /// or a host name mismatch, a SASL authentication failure (its message
  /// alone, e.g. "SASL authentication failed with broker ..."), an authorization error, no common API version),
  /// with the error's text. `kconnectd run` then shuts the worker down and
  /// exits 1, as Connect's herder thread exits on an unrecoverable error.
  /// Empty = the herder only reports it on /health (Unhealthy). Must not
  /// block or call stop() inline.
  std::function<void(const std::string& reason)> on_fatal;
  std::string client_id;                    ///< client.id; empty = "connect-<workerId>"
  ConnectProtocol protocol = ConnectProtocol::Sessioned;  ///< connect.protocol
  int session_timeout_ms = kSessionTimeoutMsDefault;  ///< session.timeout.ms
  /// group.instance.id (KIP-345 static membership, ours): nullopt = dynamic.
  std::optional<std::string> group_instance_id;
  /// worker.labels (kconnectd, not in Connect; issue 29): sent in the group
  /// metadata; the leader places connectors with placement.labels only on
  /// workers whose labels match. Empty = none.
  Labels worker_labels;
  /// static.membership.assignment.file (ours): a static member's kept
  /// assignment (coordinator::StaticAssignmentRecord); "" = not kept.
  std::string static_assignment_file;
  /// Whether stop() sends LeaveGroup. Always true for a dynamic member; a
  /// static member leaves only with static.membership.leave.on.shutdown or
  /// `kconnectd run --leave-on-shutdown`, or after a drain (its work is
  /// already on the others), so a restart within session.timeout.ms causes
  /// no rebalance, as for Kafka consumers.
  bool leave_group_on_shutdown = true;
  int heartbeat_interval_ms = kHeartbeatIntervalMsDefault;  ///< heartbeat.interval.ms
  int rebalance_timeout_ms = kRebalanceTimeoutMsDefault;  ///< rebalance.timeout.ms
  int request_timeout_ms = 40000;           ///< request.timeout.ms
  int retry_backoff_ms = 100;               ///< retry.backoff.ms
  int worker_sync_timeout_ms = kWorkerSyncTimeoutMsDefault;  ///< worker.sync.timeout.ms
  int worker_unsync_backoff_ms = kWorkerUnsyncBackoffMsDefault;  ///< worker.unsync.backoff.ms (eager only)
  int scheduled_rebalance_max_delay_ms = kScheduledRebalanceMaxDelayMsDefault;  ///< scheduled.rebalance.max.delay.ms
  std::string config_topic = "connect-configs";    ///< config.storage.topic
  int config_replication_factor = 3;               ///< config.storage.replication.factor
  std::string offset_topic = "connect-offsets";    ///< offset.storage.topic
  int offset_partitions = 25;                      ///< offset.storage.partitions
  int offset_replication_factor = 3;               ///< offset.storage.replication.factor
  std::string status_topic = "connect-status";     ///< status.storage.topic
  int status_partitions = 5;                       ///< status.storage.partitions
  int status_replication_factor = 3;               ///< status.storage.replication.factor
  int64_t offset_flush_interval_ms = kOffsetFlushIntervalMsDefault;  ///< offset.flush.interval.ms
  int offset_flush_timeout_ms = kOffsetFlushTimeoutMsDefault;  ///< offset.flush.timeout.ms
  int task_shutdown_graceful_timeout_ms = kTaskShutdownGracefulTimeoutMsDefault;  ///< task.shutdown.graceful.timeout.ms
  int connector_call_timeout_ms = kConnectorCallTimeoutMsDefault;  ///< connector.call.timeout.ms (plugin call deadline; ours)
  std::string key_converter = "org.apache.kafka.connect.json.JsonConverter";    ///< key.converter
  std::string value_converter = "org.apache.kafka.connect.json.JsonConverter";  ///< value.converter
  storage::ConfigMap key_converter_config;    ///< key.converter.* (prefix stripped)
  storage::ConfigMap value_converter_config;  ///< value.converter.* (prefix stripped)
  std::string header_converter = "org.apache.kafka.connect.storage.SimpleHeaderConverter";  ///< header.converter
  storage::ConfigMap header_converter_config;  ///< header.converter.* (prefix stripped)
  /// config.providers (KIP-297): resolves placeholders where connectors and
  /// tasks start and where the leader generates task configs; null = none.
  std::shared_ptr<const providers::ConfigTransformer> config_transformer;
  /// topic.tracking.enable: when false the herder answers GET
  /// /connectors/{c}/topics and PUT .../topics/reset with
  /// rest::RestError::topic_tracking_disabled() (403, Connect's text).
  bool topic_tracking_enable = true;
  /// topic.tracking.allow.reset: when false PUT /connectors/{c}/topics/reset
  /// answers rest::RestError::topic_tracking_reset_disabled() (403).
  bool topic_tracking_allow_reset = true;
  /// rebalance.hand.over.enable (ours): under a cooperative protocol the
  /// leader also places the tasks it revokes for balance in the same round
  /// (the assignor's follow-up round, computed at once), marking each in the
  /// status topic so that its new owner starts it only once the old owner's
  /// stop is read. Off: KIP-415's two rounds (revoke, then place).
  bool hand_over_moves = true;
  /// scheduled.rebalance.return.to.owner.enable (ours): as leader, give a
  /// worker that rejoins within the scheduled delay its lost work back in
  /// that round (assignor::RoundContext::return_lost_to_owner).
  bool return_lost_to_owner = true;
  /// scheduled.rebalance.static.expiry.immediate (ours): as leader, place
  /// the lost work of an expired static member at once, with no scheduled
  /// delay (assignor::RoundContext::no_delay_for_expired_static).
  bool no_delay_for_expired_static = true;
  /// producer.shared (ours): one producer for all this worker's
  /// at-least-once source tasks (runtime::WorkerOptions::producer_shared).
  bool producer_shared = false;
  /// exactly.once.source.support=enabled: source tasks keep one producer
  /// each, whatever producer.shared says.
  bool exactly_once_source = false;
  /// tasks.max.limit: the highest tasks.max a connector may set; create,
  /// update and validate refuse more (connectors::ValidateContext).
  int32_t tasks_max_limit = kTasksMaxLimitDefault;
  /// exactly.once.source.support=preparing or enabled (Connect's
  /// transactionalLeaderEnabled, KIP-618): the leader writes the config
  /// topic through a transactional producer with transactional.id
  /// "connect-cluster-<group.id>", claimed (init_transactions, which fences
  /// the previous leader's) whenever it is assigned leadership; each
  /// privileged write is one transaction. False: plain producer.
  bool transactional_leader = false;
  /// inter.worker.key.generation.algorithm: the HMAC algorithm of the
  /// session keys the leader generates (KIP-507).
  std::string key_generation_algorithm = "HmacSHA256";
  /// inter.worker.key.size: session key size in bits; nullopt = the
  /// algorithm's default (256 bits for HmacSHA256).
  std::optional<int> key_size_bits;
  /// inter.worker.key.ttl.ms: the leader writes a new session key once the
  /// current one is this old; 0 = never rotate (as Connect).
  int64_t key_ttl_ms = kInterWorkerKeyTtlMsDefault;
  /// inter.worker.signature.algorithm: the HMAC followers sign internal
  /// requests with.
  std::string signature_algorithm = "HmacSHA256";
  /// inter.worker.verification.algorithms: the HMACs the leader accepts.
  std::vector<std::string> verification_algorithms{"HmacSHA256"};
  /// Advertised REST URL with trailing '/', e.g. "http://w1:8083/" (4.1).
  std::string advertised_url = "http://localhost:8083/";
  /// TLS client settings for requests to other workers whose URL is https
  /// (the https listener's trust store and key, as Connect's RestClient);
  /// null = https peers cannot be reached (rest_security.h builds it).
  std::shared_ptr<rest::TlsContext> rest_client_tls;
  /// Worker id, "<advertised host>:<port>" (4.1); written in status records.
  std::string worker_id = "localhost:8083";
  /// How often followers and the leader poll the config topic for changes
  /// made by other workers (Connect's KafkaBasedLog consumes continuously;
  /// our stores read on demand). Not a Connect key.
  int config_poll_interval_ms = 1000;
  /// How often the status topic is re-read (statuses of other workers), ms.
  /// Short, so that a state change shows in every worker's /status within
  /// about a second (Connect's status log is consumed continuously); a read
  /// with nothing new costs one ListOffsets round.
  int status_poll_interval_ms = 300;
  /// Timeout of the blocking opens in start() (topic creation, first reads).
  int startup_timeout_ms = 30000;
  /// Metrics the herder, its coordinator and its runtime update (GET
  /// /metrics renders them). Null = the herder creates its own.
  std::shared_ptr<metrics::WorkerMetrics> metrics;
  /// SASL credentials of the group client (security.protocol SASL_*,
  /// config-provider references resolved); nullopt = no SASL. The librdkafka
  /// clients get the same ones through client_props.
  std::optional<config::SaslClientCredentials> group_sasl;
};

// GET /rebalances's records are HerderApi's value types (worker/api).
using rest::RebalanceRecord;
using rest::TaskStopTime;

/// Thread-safe copy of what this worker currently holds.
struct AssignmentState {
  std::string worker_id;                 ///< this worker's id
  std::string member_id;                 ///< group member id ("" before the first join)
  int32_t generation = -1;               ///< generation of the current assignment
  bool is_leader = false;                ///< this worker is the group leader
  std::string leader_url;                ///< leader's URL from the last assignment
  std::string protocol;                  ///< selected protocol name, "" before the first join
  std::vector<std::string> assigned_connectors;   ///< full owned set (merged snapshot), sorted
  std::vector<ConnectorTaskId> assigned_tasks;    ///< full owned set, sorted
  std::vector<std::string> running_connectors;    ///< what the runtime runs now, sorted
  std::vector<ConnectorTaskId> running_tasks;     ///< what the runtime runs now, sorted
  bool applied = false;                  ///< the latest assignment has been applied
  bool in_group = false;                 ///< the coordinator is a member of a stable generation
};

/// What this worker knows of the KIP-507 session key (never the key bytes).
struct SessionKeyInfo {
  bool present = false;               ///< a key was read from the config topic
  std::string algorithm;              ///< e.g. "HmacSHA256"
  int64_t creation_timestamp_ms = 0;  ///< epoch ms the leader created it
  size_t key_bytes = 0;               ///< key length in bytes
  int64_t expires_at_ms = 0;          ///< creation + inter.worker.key.ttl.ms; 0 = never (ttl 0)
  bool current = false;               ///< present and not expired now
};

/// Counters of KIP-507 internal requests on this worker, since start.
struct InternalRequestStats {
  uint64_t verified = 0;          ///< leader: internal requests accepted (signature good, or not required)
  uint64_t rejected = 0;          ///< leader: refused for their signature (400/403/503)
  int last_rejected_status = 0;   ///< status of the last refusal, 0 = none
  std::string last_rejected_message;  ///< its message
  uint64_t forwarded = 0;         ///< follower: task reconfigurations the leader accepted (2xx)
  uint64_t forward_failures = 0;  ///< follower: forwards that failed or were refused
  uint64_t signed_requests = 0;   ///< follower: requests sent with a signature
};

/// The config topic writer of this worker (KIP-618's transactional leader,
/// HerderConfig::transactional_leader): what ConfigBackingStore counts,
/// plus the herder's fenced flag. Plain value.
struct ConfigWriterInfo {
  bool transactional = false;     ///< privileged writes go through "connect-cluster-<group.id>"
  bool write_privileges = false;  ///< this worker holds them now (claimed, not fenced or released)
  int64_t claims = 0;             ///< successful claims (init_transactions) since start
  int64_t transactions = 0;       ///< privileged writes committed as transactions since start
  int64_t failed_writes = 0;      ///< privileged writes that failed and released the privileges
  bool fenced = false;            ///< Connect's fencedFromConfigTopic: a write or claim failed, not reclaimed yet
  std::string last_error;         ///< the last such failure, "" when none
};

/// The distributed herder. Construct, start(), ..., stop(). HerderApi
/// methods may be called from any thread once start() succeeded (before,
/// they answer 503).
class DistributedHerder : public rest::HerderApi {
 public:
  /// Nothing is opened yet. `registry` null = the built-in plugins.
  explicit DistributedHerder(HerderConfig config, const connectors::PluginRegistry* registry = nullptr);
  /// Calls stop() if still running.
  ~DistributedHerder() override;
  DistributedHerder(const DistributedHerder&) = delete;
  DistributedHerder& operator=(const DistributedHerder&) = delete;

  /// Opens the config, offset and status stores (creating topics when the
  /// broker allows; blocking, up to startup_timeout_ms), creates the runtime
  /// Worker, starts the io thread and the pool and joins the group.
  /// Errors: a store cannot be opened (message names the topic), a bad group
  /// config. Call once, from any non-herder thread.
  Status start();

  /// From now on REST writes answer 503 "Worker is shutting down" (the
  /// first step of stop(), taken at once by a signal handler so that no
  /// write slips in before the stopper thread runs). Thread-safe.
  void stop_admitting_writes();

  /// Clean shutdown (STYLE 8, Connect's stop): stops admitting REST writes
  /// (they answer 503), stops every connector and task within
  /// task.shutdown.graceful.timeout.ms (offsets committed), flushes status,
  /// sends LeaveGroup (a static member only as leave_group_on_shutdown
  /// says, or after a drain), joins the threads. Blocking; idempotent.
  void stop();

  /// Threads still inside plugin code that nobody will join in time: the
  /// runtime's abandoned connectors and tasks (past their graceful stop)
  /// the leader's task-config generations still running (abandoned past
  /// connector.call.timeout.ms, or under way) and the abandoned validate()
  /// calls (detached: exit() must not run while they sit in a plugin's
  /// code). After stop(), a non-zero count means the
  /// destructor would wait for plugin code that may never return; `kconnectd
  /// run` then exits without destroying the herder. Any thread.
  size_t stuck_plugin_threads() const;

  /// Test helper simulating a crash: closes the group connection WITHOUT
  /// LeaveGroup (peers notice only after session.timeout.ms), then stops the
  /// runtime (tasks still commit offsets, which a real crash would not) and
  /// joins the threads. Blocking; idempotent (stop() afterwards is a no-op).
  void crash();

  /// Outcome of a drain: `drained` true once this worker owns nothing and
  /// has stopped everything; false with the reason otherwise.
  using DrainDone = std::function<void(bool drained, const std::string& why)>;

  /// Zero-downtime drain (kconnectd's, not in Connect): hands every
  /// connector and task of this worker to the others before it leaves. It
  /// asks the leader (internal request POST <leader>/admin/drain/members, or
  /// itself when it leads) to revoke all of its work in one round and place
  /// it on the other workers in the follow-up round, with no scheduled
  /// delay; it asks again after any assignment that still gives it work
  /// (e.g. a new leader). `done(true, ..)` runs once it owns nothing and has
  /// stopped it all; `done(false, why)` after `timeout_ms`, or when the
  /// leader refuses (no other worker could take the work). Either way the
  /// caller then calls stop(), which sends LeaveGroup. Runs `done` on the
  /// herder's io thread. Thread-safe; a second call joins the running drain.
  void drain(int timeout_ms, DrainDone done);

  /// Leader side of a drain request (POST /admin/drain/members): checks the
  /// KIP-507 signature of `body` first (under `sessioned`, as
  /// check_internal_request: 400|403|503 with Connect's messages; under
  /// `eager`/`compatible` nothing is signed, so a request that carries
  /// signature headers anyway gets 403, since they may have let it skip
  /// basic authentication), then marks the member as draining and starts a
  /// rebalance (idempotent). `done` gets (202, "draining"), or (409, reason)
  /// when this worker is not the leader (the reason names the leader) or no
  /// other member could take the work. Thread-safe; `done` runs on the io
  /// thread.
  void accept_drain_request(const std::string& member_id, SignatureHeaders signature, std::string body,
                            std::function<void(int status, std::string)> done) override;

  /// Leader side of a forwarded task reconfiguration (POST
  /// /connectors/{c}/tasks from a follower whose running connector asked
  /// for one): checks the KIP-507 signature of `body` first (as
  /// check_internal_request), then schedules a task-config generation of
  /// `connector`. `done` gets (204, "") when scheduled, the signature
  /// check's (400|403|503, Connect's message), (404, reason) for an unknown
  /// connector, (409, reason) when this worker is not the leader.
  /// Thread-safe; `done` runs on the io thread.
  void accept_task_reconfiguration(const std::string& connector, SignatureHeaders signature, std::string body,
                                   std::function<void(int status, std::string)> done) override;

  /// PUT /connectors/{c}/fence (KIP-618, internal): checks the KIP-507
  /// signature as for the tasks endpoint (400/403/503 as
  /// check_internal_request), then, on the leader, fences out the older
  /// task generations of `connector` if its latest task configs need it and
  /// writes its `tasks-fencing-` record. done(204, "") when the tasks may
  /// start; 409 when this worker is not the leader, 404 unknown connector,
  /// 400 not a source connector, 500 when fencing failed. Non-blocking:
  /// `done` runs on the io thread or the blocking pool.
  void accept_fence_request(const std::string& connector, SignatureHeaders signature, std::string body,
                            std::function<void(int status, std::string)> done) override;

  /// KIP-507 check of an internal request (Connect's
  /// requestNotSignedProperly) against the session key this worker holds:
  /// under the `sessioned` protocol `done` gets (0, "") for a good
  /// signature, else (400|403|503, Connect's message; see verify_request);
  /// under `eager`/`compatible` always (0, ""). Counts the outcome in
  /// internal_request_stats(). Thread-safe; `done` runs on the io thread.
  void check_internal_request(SignatureHeaders signature, std::string body,
                              std::function<void(int status, std::string)> done);

  /// Thread-safe view of the session key in force here (no key bytes).
  [[nodiscard]] SessionKeyInfo session_key_info() const;

  /// Thread-safe copy of the KIP-507 request counters.
  [[nodiscard]] InternalRequestStats internal_request_stats() const;

  /// Thread-safe view of the config topic writer (KIP-618 transactional
  /// leader); all zero/false before start() opened the stores.
  [[nodiscard]] ConfigWriterInfo config_writer_info() const;

  /// True once drain() was called.
  [[nodiscard]] bool draining() const;

  /// Installs the TaskObserver told about every task start/stop of this
  /// worker (with its worker id). nullptr removes it. Thread-safe; takes
  /// effect at once if the Worker exists, else when start() creates it.
  void set_task_observer(runtime::TaskObserver* observer);

  /// Thread-safe copy of the current assignment and runtime state.
  [[nodiscard]] AssignmentState assignment_state() const;

  /// Thread-safe copy of the rebalance history (oldest first).
  [[nodiscard]] std::vector<RebalanceRecord> rebalance_history() const override;

  /// The configuration in use.
  [[nodiscard]] const HerderConfig& config() const { return config_; }

  // ------------------------------------------------------------ HerderApi
  void list_connectors(rest::Callback<std::vector<std::string>> cb) override;
  void connector_info(const std::string& name, rest::Callback<rest::ConnectorInfo> cb) override;
  void connector_config(const std::string& name, rest::Callback<rest::ConnectorConfig> cb) override;
  void put_connector_config(rest::PutConnectorRequest req, rest::Callback<rest::PutConnectorResult> cb) override;
  void delete_connector(const std::string& name, rest::Callback<rest::Done> cb) override;
  void connector_status(const std::string& name, rest::Callback<rest::ConnectorStateInfo> cb) override;
  void task_configs(const std::string& name, rest::Callback<std::vector<rest::TaskInfo>> cb) override;
  void task_status(const rest::TaskId& id, rest::Callback<rest::TaskStatus> cb) override;
  void restart_connector(const std::string& name, rest::RestartRequest req,
                         rest::Callback<std::optional<rest::ConnectorStateInfo>> cb) override;
  void restart_task(const rest::TaskId& id, rest::Callback<rest::Done> cb) override;
  void set_target_state(const std::string& name, rest::TargetState state, rest::Callback<rest::Done> cb) override;
  void set_cluster_logger_level(const std::string& logger, const std::string& level,
                                rest::Callback<rest::Done> cb) override;
  void connector_active_topics(const std::string& name, rest::Callback<std::vector<std::string>> cb) override;
  void reset_connector_active_topics(const std::string& name, rest::Callback<rest::Done> cb) override;
  void connector_offsets(const std::string& name, rest::Callback<std::vector<rest::ConnectorOffset>> cb) override;
  void modify_connector_offsets(const std::string& name, std::optional<std::vector<rest::ConnectorOffset>> offsets,
                                rest::Callback<std::string> cb) override;
  void connector_plugins(bool connectors_only, rest::Callback<std::vector<rest::PluginInfo>> cb) override;
  void connector_plugin_config(const std::string& plugin,
                               rest::Callback<std::vector<rest::ConfigKeyInfo>> cb) override;
  void validate_connector_config(rest::ConnectorConfig config, rest::Callback<rest::ConfigInfos> cb) override;
  void health(rest::Callback<rest::Health> cb) override;
  void worker_info(rest::Callback<rest::WorkerInfo> cb) override;
  void member_view(rest::Callback<rest::MemberView> cb) override;

 private:
  struct Impl;
  HerderConfig config_;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kc::herder
