#pragma once
// The Worker runs connector and task instances on their own threads, the way
// Kafka Connect's Worker / WorkerSourceTask / WorkerSinkTask do:
// * a source task polls its plugin, converts and produces records through
//   librdkafka, and commits source offsets to the OffsetBackingStore every
//   `offset.flush.interval.ms` and when it stops (after every produced record
//   is acknowledged), so the next owner resumes where it stopped;
// * a sink task consumes with group `connect-<connector>` using
//   range assignment (not cooperative-sticky: librdkafka #4312), hands records to its plugin, and commits
//   consumer offsets after the plugin's flush(), every interval, on
//   partition revocation and on stop.
// * a task that misses `task.shutdown.graceful.timeout.ms` is abandoned and
//   cut off from Kafka at once (Connect's KAFKA-15826 fix): its consumer is
//   closed (it leaves group `connect-<connector>`, so the task's next owner
//   gets the partitions without waiting for a session timeout) or its
//   producer purged, and whatever it does when its plugin call finally
//   returns is discarded: no produce, no offset commit, no status, no
//   metrics. Only the observer's on_task_stop still fires when it ends.
// * with `producer.shared=true` (ours, issue 10 item 8 "dense workers") the
//   Worker owns one producer for all its at-least-once source tasks instead
//   of one per task (about 4 librdkafka threads each). Ownership:
//     - the Worker owns the storage::Producer (created at the first source
//       task, destroyed in ~Worker after every task thread was joined) and
//       its one poll thread, which serves every delivery report;
//     - a task thread owns its per-poll batches (shared_ptr) and sends with
//       send_view (rd_kafka_producev is thread-safe); each batch also holds
//       a reference to itself while librdkafka holds records of it, dropped
//       by its last report, so a batch outlives its task when the task
//       ends with records in flight (no use-after-free);
//     - a batch counts down only its own task's records, so a task's
//       offset commits and its final drain wait for its own records only,
//       and a delivery failure fails only the task that sent the record.
//   Cutting one task off never purges the shared producer: the task is
//   marked cancelled (it sends nothing more once cut_off returned) and its
//   records still in flight are delivered but count for nothing (no offset
//   commit). cut_off_all (a frozen worker: every task goes) purges it.
//
// Threads: every public method is thread-safe. Methods marked non-blocking
// only spawn or signal threads and may run on the herder's io_context thread.
// Methods marked blocking wait for a task or connector thread and must run on
// a worker pool thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "common/worker_defaults.h"
#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/runtime/call_watchdog.h"
#include "worker/runtime/client_overrides.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/connectors/connector.h"
#include "worker/plugins/registry.h"
#include "worker/providers/config_provider.h"
#include "worker/runtime/connector_config.h"
#include "worker/runtime/record_pipeline.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/offset_store.h"
#include "worker/storage/records.h"
#include "worker/storage/status_store.h"

namespace kc::runtime {

using connect::ConnectorTaskId;
using storage::ConfigMap;
using storage::StatusState;
using storage::TargetState;

/// Test hook: told about every task start and stop on a worker, to check
/// the at-most-one-owner invariant across workers. Called on the task's
/// thread: on_task_start just before the plugin's start(), on_task_stop
/// after the plugin's stop() returned and its offsets were committed (also
/// when the task failed, or was abandoned and cut off from Kafka after the
/// graceful timeout and then finally ended; such a task committed nothing
/// after the cut-off). Implementations must be thread-safe and quick.
class TaskObserver {
 public:
  virtual ~TaskObserver() = default;
  virtual void on_task_start(const std::string& worker_id, const ConnectorTaskId& id) = 0;
  virtual void on_task_stop(const std::string& worker_id, const ConnectorTaskId& id) = 0;
};

/// Receives connector and task state changes (Connect's ConnectorStatus /
/// TaskStatus listeners). States: RUNNING after a successful start, PAUSED
/// on pause, FAILED (with `trace`) when a plugin method throws or a
/// produce/commit fails, UNASSIGNED after a stop. Called on connector/task
/// threads; implementations must be thread-safe and must not block long.
class StatusListener {
 public:
  virtual ~StatusListener() = default;
  virtual void on_connector_status(const std::string& connector, StatusState state,
                                   const std::optional<std::string>& trace) = 0;
  virtual void on_task_status(const ConnectorTaskId& id, StatusState state,
                              const std::optional<std::string>& trace) = 0;
  /// Topic tracking (KIP-558): task `id` produced to or consumed from
  /// `topic`. Called on the task thread, once per task and topic.
  virtual void on_topic_active(const ConnectorTaskId& /*id*/, const std::string& /*topic*/) {}
};

/// A StatusListener that writes to the status topic with this worker's id
/// and the current group generation (set by the herder after each
/// rebalance). UNASSIGNED and FAILED go through the store's put*_safe
/// (Connect's putSafe: skipped when another worker wrote a newer
/// generation); the other states are plain puts. Non-blocking.
class StatusStoreListener : public StatusListener {
 public:
  StatusStoreListener(storage::StatusBackingStore& store, std::string worker_id);
  /// Sets the generation written with later statuses. Thread-safe.
  void set_generation(int32_t generation) { generation_.store(generation); }
  void on_connector_status(const std::string& connector, StatusState state,
                           const std::optional<std::string>& trace) override;
  void on_task_status(const ConnectorTaskId& id, StatusState state,
                      const std::optional<std::string>& trace) override;
  /// Writes `status-topic-<topic>:connector-<name>` unless already known.
  void on_topic_active(const ConnectorTaskId& id, const std::string& topic) override;

 private:
  storage::StatusBackingStore& store_;
  std::string worker_id_;
  std::atomic<int32_t> generation_{-1};
};

/// Worker settings (names follow Connect's WorkerConfig).
struct WorkerOptions {
  std::string worker_id;                        ///< e.g. "host:8083"; in statuses and observer calls
  storage::ClientProps client;                  ///< base librdkafka props (bootstrap.servers, security)
  storage::ClientProps producer_overrides;      ///< `producer.*` with the prefix stripped
  storage::ClientProps consumer_overrides;      ///< `consumer.*` with the prefix stripped
  /// connector.client.config.override.policy: which `consumer.override.*`
  /// keys of a sink connector reach its task consumers (KIP-458).
  ClientOverridePolicy client_override_policy = ClientOverridePolicy::All;
  int64_t offset_flush_interval_ms = kOffsetFlushIntervalMsDefault;  ///< offset.flush.interval.ms
  int offset_flush_timeout_ms = kOffsetFlushTimeoutMsDefault;  ///< offset.flush.timeout.ms
  int task_shutdown_graceful_timeout_ms = kTaskShutdownGracefulTimeoutMsDefault;  ///< task.shutdown.graceful.timeout.ms
  int32_t tasks_max_limit = kTasksMaxLimitDefault;               ///< tasks.max.limit: highest tasks.max (ours)
  /// connector.call.timeout.ms (ours): a connector's start() / task_configs()
  /// or a task's poll() / put() still running after it marks the connector
  /// or task FAILED, naming the call.
  int connector_call_timeout_ms = kConnectorCallTimeoutMsDefault;
  std::string key_converter = "org.apache.kafka.connect.json.JsonConverter";    ///< key.converter
  std::string value_converter = "org.apache.kafka.connect.json.JsonConverter";  ///< value.converter
  ConfigMap key_converter_config;               ///< `key.converter.*` with the prefix stripped
  ConfigMap value_converter_config;             ///< `value.converter.*` with the prefix stripped
  std::string header_converter = "org.apache.kafka.connect.storage.SimpleHeaderConverter";  ///< header.converter
  ConfigMap header_converter_config;            ///< `header.converter.*` with the prefix stripped
  int sink_max_batch = 500;                     ///< max records per SinkTask::put
  /// Resolves `${provider:path:key}` in connector and task configs when
  /// they start (KIP-297/421); null = no config providers.
  std::shared_ptr<const providers::ConfigTransformer> config_transformer;
  /// producer.shared (ours): one producer, owned by the Worker, for every
  /// at-least-once source task (see the file comment); false = one
  /// producer per source task, served by the task thread.
  bool producer_shared = false;
  /// exactly.once.source.support=enabled (KIP-618): every source task runs
  /// exactly once (run_exactly_once_source_task in worker.cpp): its own
  /// transactional producer (transactional.id `<group.id>-<connector>-<task>`),
  /// records and source offsets committed in one transaction per boundary
  /// (`transaction.boundary` poll = each poll's records, interval = every
  /// `transaction.boundary.interval.ms`, default offset.flush.interval.ms),
  /// never the shared producer.
  bool exactly_once_source = false;
  /// group.id: the first part of exactly-once tasks' transactional ids.
  std::string group_id;
  /// Partitions and replication factor of a connector's own
  /// `offsets.storage.topic` when this Worker creates it (the worker's
  /// offsets topic settings, as Connect does); -1 = broker default.
  int offset_topic_partitions = 25;
  int offset_topic_replication_factor = -1;
  /// Metrics sink (startup outcomes, running counts, per-task status,
  /// records and offset commits); null = no metrics.
  std::shared_ptr<metrics::WorkerMetrics> metrics;
  /// Called (on the connector's thread) when a running connector asks for
  /// new task configs (ConnectorContext::request_task_reconfiguration), with
  /// its name; null = such requests are logged and dropped.
  std::function<void(const std::string& connector)> on_task_reconfiguration;
};

/// What the herder checks around the start of an exactly-once source task
/// (KIP-618; Connect's preProducerCheck / postProducerCheck). Both run on
/// the task thread and may block; an error fails the task with its message.
struct ExactlyOnceTaskChecks {
  /// Before the producer exists: the previous generation of the connector's
  /// tasks is fenced out and the task-count record written (zombie fencing,
  /// done or forwarded to the leader). It returns early, with an error,
  /// once a stop is requested on `stop` (the task's stop token; its waits
  /// end on the request). Empty = nothing to wait for.
  std::function<Status(std::stop_token stop)> before_producer;
  /// After init_transactions: the connector's task configs are still those
  /// this task was started with and the task is still assigned here.
  /// Empty = no check.
  std::function<Status()> after_producer;
};

/// A task's thread and the state it shares with the Worker (worker_internal.h).
struct TaskRunner;
/// A connector's thread and its job queue (worker_internal.h).
struct ConnectorRunner;

/// Runs connectors and tasks. See the file comment for threads.
class Worker {
 public:
  /// `offsets` (source offsets) must outlive the Worker; `status` and
  /// `registry` may be null (no status reports / the built-in registry).
  Worker(WorkerOptions options, storage::OffsetBackingStore* offsets, StatusListener* status,
         const connectors::PluginRegistry* registry = nullptr);
  /// Stops everything (blocking, up to the graceful timeout) and joins all threads.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  /// Installs the test observer (nullptr removes it). Set it before starting tasks.
  void set_observer(TaskObserver* observer);

  const std::string& worker_id() const { return options_.worker_id; }

  // ------------------------------------------------------------ connectors

  /// Starts connector `config->name` on its own thread from its parsed
  /// config (read_connector_config, or the herder's cache of it; never
  /// null). Its values must hold `connector.class`. Non-blocking (no
  /// provider is read here): an unknown class or a duplicate name is
  /// reported at once as an error; a plugin start() failure is reported as
  /// FAILED through the status listener.
  Status start_connector(ConnectorConfigPtr config, TargetState target);

  /// The same from the config as written: read_connector_config (`name`
  /// added if missing, providers resolved), then the overload above. A
  /// provider failure is a failed start (refuse_start). Blocking while a
  /// provider reads.
  Status start_connector(const std::string& name, const ConfigMap& config, TargetState target);

  /// What a refused start was for (its metrics).
  enum class StartKind { Connector, Task };

  /// A start that cannot begin because its connector's config could not be
  /// read (read_connector_config failed: a provider failed). Counts the
  /// startup attempt and its failure in the metrics, as a start that fails
  /// inside start_connector / start_task does, and returns `why`.
  /// Non-blocking.
  Status refuse_start(StartKind kind, Error why);

  /// Asks the connector for up to `tasks.max` task configs (Connect's
  /// connectorTaskConfigs), running task_configs() on the connector's
  /// thread. Blocking (waits for start() and the call, up to `timeout_ms`).
  /// Errors: unknown/failed/paused-stopped connector, plugin exception, timeout.
  Result<std::vector<ConfigMap>> connector_task_configs(const std::string& name, int timeout_ms);

  /// Stops one connector: plugin stop(), status UNASSIGNED, thread joined.
  /// Blocking, up to the graceful timeout. Returns false on timeout (the
  /// thread is left to finish in the background).
  bool stop_connector(const std::string& name);

  /// Stops several connectors in parallel; returns those that timed out. Blocking.
  std::vector<std::string> stop_connectors(const std::vector<std::string>& names);

  /// Pauses or resumes a connector's local instance and tasks (STARTED /
  /// PAUSED; STOPPED is handled by the herder stopping them). Non-blocking.
  void set_target_state(const std::string& connector, TargetState target);

  /// Names of the connectors running (or failed but not stopped) here.
  std::set<std::string> connector_names() const;

  /// The one parse of a connector's config (STYLE 14): `raw` as written,
  /// `resolved` its provider-resolved form, typed with this worker's
  /// converter defaults, tasks.max.limit and client settings, so tasks.max
  /// is read the same way everywhere. read_connector_config calls it; the
  /// herder's offsets API too, for a config whose provider fails (read as
  /// written). Pure (the registry's lookups aside); callable from any
  /// thread.
  ConnectorConfig parse_connector_config(const std::string& name, const ConfigMap& raw,
                                         const providers::ResolvedConfig& resolved) const;

  /// `raw` (connector `name`'s config as written; `name` is added when
  /// missing, as the connector sees it) with its provider placeholders
  /// resolved (resolve_config), then parsed (parse_connector_config): the
  /// config its connector and tasks see. The herder reads each config
  /// through it once, where the config enters (its ConnectorConfigCache),
  /// and hands the result to start_connector, start_task, the leader's
  /// task-config generation and the offsets API. Errors: resolve_config's
  /// (a provider failed, naming the key). Blocking while a provider reads
  /// (files, vault); callable from any thread.
  Result<ConnectorConfigPtr> read_connector_config(const std::string& name, const ConfigMap& raw) const;

  /// `config` with its provider placeholders resolved (unchanged without
  /// a transformer). Errors: a provider failed, naming the key. Blocking
  /// while a provider reads; callable from any thread.
  Result<providers::ResolvedConfig> resolve_config(const ConfigMap& config) const;

  // ------------------------------------------------------------ tasks

  /// Starts a task on its own thread. The connector class, converters,
  /// transforms, error handling and client overrides come from its
  /// connector's parsed config (never null; the one the connector started
  /// from when it is unchanged: nothing of it is read again here); the
  /// plugin gets `task_config` (its own placeholders resolved here).
  /// Non-blocking: an unknown class, a bad converter or a duplicate id is
  /// reported at once as an error; a plugin failure as FAILED. Resolving
  /// the task config's placeholders may read files.
  /// With exactly.once.source.support=enabled a source task runs the
  /// exactly-once loop and `eos_checks` bracket its producer's creation.
  Status start_task(const ConnectorTaskId& id, ConnectorConfigPtr connector_config, const ConfigMap& task_config,
                    TargetState target, ExactlyOnceTaskChecks eos_checks = {});

  /// The same from the connector's config as written: read_connector_config
  /// then the overload above (for callers without a parsed config; a
  /// provider failure is a failed start, refuse_start). Blocking while a
  /// provider reads.
  Status start_task(const ConnectorTaskId& id, const ConfigMap& connector_config, const ConfigMap& task_config,
                    TargetState target, ExactlyOnceTaskChecks eos_checks = {});

  /// Signals a task to stop (finish its poll, commit offsets, stop the
  /// plugin) and returns at once. Non-blocking. Unknown ids are ignored.
  void request_stop_task(const ConnectorTaskId& id);

  /// Waits until the task's thread ended, up to `timeout_ms`. Returns true
  /// when it ended (it is then forgotten). On false the task is abandoned
  /// and, before this returns, cut off from Kafka from the calling thread:
  /// a sink task's consumer is closed (it leaves group
  /// `connect-<connector>`; nothing is committed on the way out) and a
  /// source task's producer has its queued and in-flight records purged
  /// (with producer.shared nothing is purged, since other tasks' records
  /// share the producer: the task sends nothing more once this returned,
  /// and its records still in flight count for nothing).
  /// Its later output is discarded (no produce, no offset commit, no status,
  /// no metrics; the observer's on_task_stop still fires when its thread
  /// ends), and the thread is joined when the Worker is destroyed. One warn
  /// line names the task and what was cut. The cut-off waits only for a
  /// client call under way on the task thread (a consumer poll of at most
  /// 100 ms, issuing an offset commit, or a source offset commit of at most
  /// `offset.flush.timeout.ms` that started before it) and for the
  /// consumer's LeaveGroup. One exception: a partition revocation runs the
  /// plugin's flush() and its commit inside the consumer poll, so a sink
  /// task stuck in flush() during a revocation delays its cut-off until
  /// flush() returns. Unknown ids return true. Blocking.
  bool await_task_stopped(const ConnectorTaskId& id, int timeout_ms);

  /// request_stop_task + await_task_stopped with the graceful timeout.
  /// Returns true when the task stopped and its offsets were committed;
  /// false when the timeout passed, in which case the task has been cut off
  /// from Kafka (see await_task_stopped). Blocking.
  bool stop_task(const ConnectorTaskId& id);

  /// Stops many tasks in parallel (signal all, then await all against one
  /// graceful-timeout deadline, like Connect's stopAndAwaitTasks). Returns
  /// the ids that timed out; each of them has been cut off from Kafka
  /// before this returns. Blocking.
  std::vector<ConnectorTaskId> stop_tasks(const std::vector<ConnectorTaskId>& ids);

  /// Non-blocking form of stop_tasks for the herder's io_context: signals
  /// every task now and calls `done(timed_out_ids)` on a helper thread when
  /// all stopped or the graceful timeout passed (the timed-out ones are cut
  /// off from Kafka before `done` runs). Post back to your executor from
  /// `done`.
  void stop_tasks_async(std::vector<ConnectorTaskId> ids,
                        std::function<void(std::vector<ConnectorTaskId> timed_out)> done);

  /// Ids of the tasks running (or failed but not stopped) here.
  std::set<ConnectorTaskId> task_ids() const;

  /// Abandoned connectors and tasks (past their graceful stop) whose thread
  /// has not ended: the destructor would wait for them. Non-blocking.
  size_t stuck_threads() const;

  /// Stops every task and connector: all are signalled at once and awaited
  /// against one `task.shutdown.graceful.timeout.ms` deadline, so it returns
  /// after about one graceful timeout at most (plus the cut-offs). When it
  /// returns, every task that ran here is either stopped (offsets
  /// committed) or abandoned and cut off from Kafka, including tasks
  /// abandoned earlier by stop_tasks / stop_tasks_async; connectors that
  /// missed the timeout are abandoned (left to finish in the background).
  /// Nothing runs here any more that could produce or commit. The herder
  /// calls it when it finds it has left the group, before it rejoins.
  /// Blocking: call it from a worker pool thread, not the io_context.
  void stop_all();

  /// Cuts every task off from Kafka at once, without a graceful stop, and
  /// forgets it, as a task that missed its graceful stop (no commit, no
  /// status, its sink consumer closed, its producer purged; with
  /// producer.shared the shared producer is purged once every task was
  /// marked cancelled). For a worker
  /// that finds it was frozen (SIGSTOP, a VM pause) longer than the group
  /// session: its membership and its consumers' are gone, and their
  /// clients must leave before they rejoin and take partitions back from
  /// the new owners (KAFKA-15826). Connectors are left alone (they hold no
  /// Kafka client). Returns the ids cut off. Blocking (consumer LeaveGroups).
  std::vector<ConnectorTaskId> cut_off_all();

  /// Number of librdkafka producers this Worker has created for source
  /// tasks so far: one per source task run, or with `producer.shared` one
  /// in all (created at the first source task). Thread-safe; for tests and
  /// benchmarks.
  int64_t source_producers_created() const { return producers_created_.load(); }

 private:
  void reap_helpers();
  /// Asks the named connectors' threads to stop. Non-blocking.
  void signal_connectors(const std::vector<std::string>& names);
  /// Waits for the named connectors until `deadline`, forgets them and
  /// abandons those still running. Returns the abandoned names. Blocking.
  std::vector<std::string> await_connectors(const std::vector<std::string>& names,
                                            std::chrono::steady_clock::time_point deadline);
  void update_running_metrics_locked();  ///< running counts → metrics; mu_ held
  /// The task's converters, transforms and error handling from its
  /// connector's typed config (see make_record_pipeline).
  Result<std::unique_ptr<RecordPipeline>> make_task_pipeline(const ConnectorTaskId& id, const ConnectorConfig& config,
                                                             std::stop_token stop) const;

  WorkerOptions options_;
  /// Deadlines of plugin calls (connector.call.timeout.ms); outlives every
  /// thread the destructor joins.
  CallWatchdog watchdog_;
  storage::OffsetBackingStore* offsets_;
  StatusListener* status_;
  const connectors::PluginRegistry* registry_;
  std::atomic<TaskObserver*> observer_{nullptr};

  mutable std::mutex mu_;
  std::map<ConnectorTaskId, std::shared_ptr<TaskRunner>> tasks_;
  std::map<std::string, std::shared_ptr<ConnectorRunner>> connectors_;
  std::map<std::string, std::shared_ptr<connectors::Connector>> connector_instances_;
  std::map<std::string, ConnectorConfigPtr> connector_configs_;  ///< what each connector started from
  std::vector<std::shared_ptr<TaskRunner>> cancelled_tasks_;  ///< abandoned (cut off); joined in ~Worker
  std::vector<std::shared_ptr<ConnectorRunner>> cancelled_connectors_;
  std::vector<std::thread> helpers_;                           ///< stop_tasks_async helpers
  std::vector<std::shared_ptr<std::atomic<bool>>> helper_done_;  ///< parallel to helpers_

  /// The shared producer, created on first use (start_task of a source
  /// task with producer.shared). Errors: librdkafka's (a bad `producer.*`
  /// setting). Non-blocking.
  Result<storage::Producer*> shared_producer();
  std::atomic<int64_t> producers_created_{0};  ///< see source_producers_created()
  mutable std::mutex shared_mu_;                ///< guards shared_producer_
  /// producer.shared: the producer of every at-least-once source task, with
  /// its own poll thread serving all their delivery reports. Set once under
  /// shared_mu_; destroyed after every task thread was joined (~Worker).
  std::unique_ptr<storage::Producer> shared_producer_;
};

}  // namespace kc::runtime
