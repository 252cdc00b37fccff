#pragma once
// StandaloneHerder: one worker with no group (Kafka Connect's
// StandaloneHerder, `connect-standalone`). No group membership, no config
// or status topics: connector configs live in memory (from the files given
// on the command line, then the REST API; gone on restart, as in Connect),
// statuses in memory (Connect's MemoryStatusBackingStore), and source
// offsets in a local file (storage::FileOffsetBackingStore,
// `offset.storage.file.filename`). Sink offsets are committed to Kafka by
// the sink tasks' consumers, as in distributed mode.
//
// It drives the same runtime as the DistributedHerder: one runtime::Worker
// (built by worker_options_from, herder_common.h) runs the connectors and
// tasks with the same converters, transforms, error handling, DLQ and
// config providers; the same pure reconcile() (reconciler.h) turns the
// desired state (every configured connector and task, all "assigned" here)
// and what runs into start/stop/restart/pause actions; connector configs
// are parsed once into the same ConnectorConfigCache; validate() is the
// same bounded call. Only where configs, statuses and offsets are kept
// differs.
//
// Task configs: after a connector starts (or restarts) with target
// STARTED, and when a running connector asks (requestTaskReconfiguration),
// the herder asks the running connector for its task configs
// (Worker::connector_task_configs, Connect's standalone
// updateConnectorTasks) and, when they changed, the reconciler restarts the
// tasks whose config changed and stops the ids that went away.
//
// Requests that need a group answer as Connect's StandaloneHerder:
//   * POST /connectors/{c}/tasks (putTaskConfigs): 500 "Kafka Connect in
//     standalone mode does not support externally setting task
//     configurations.";
//   * PUT /connectors/{c}/fence (fenceZombieSourceTasks): 500 "Kafka
//     Connect in standalone mode does not support exactly-once source
//     connectors.";
//   * PUT /admin/loggers/{l}?scope=cluster: "this single worker is the
//     entire cluster": the level is set on this worker, 204;
//   * POST /admin/drain/members (ours): 501, there is no group to drain to.
//
// Threads: one io thread owns every piece of herder state (connector
// configs, target states, task configs, pending restarts, generations in
// flight); every HerderApi method posts to it and it never blocks. Work
// that blocks (starting and stopping connectors and tasks, asking a
// connector for task configs, reading and writing offsets) runs on a small
// pool; the reconcile passes run in order on a strand of it. The runtime's
// own threads report statuses into a mutex-guarded in-memory table.

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"
#include "worker/api/herder_api.h"
#include "worker/herder/distributed_herder.h"

namespace kc::herder {

/// Everything the standalone herder needs. `herder` is the same mapping of
/// the worker properties as in distributed mode (herder_config_from); its
/// group, config-topic and status-topic fields are not used.
struct StandaloneConfig {
  HerderConfig herder;
  /// offset.storage.file.filename: the source offset file (required).
  std::string offset_file;
};

/// The standalone herder. Construct, start(), add connectors
/// (put_connector_config), ..., stop(). HerderApi methods may be called
/// from any thread once start() succeeded (before, they answer 503).
class StandaloneHerder : public rest::HerderApi {
 public:
  /// Nothing is opened yet. `registry` null = the built-in plugins.
  explicit StandaloneHerder(StandaloneConfig config, const connectors::PluginRegistry* registry = nullptr);
  /// Calls stop() if still running.
  ~StandaloneHerder() override;
  StandaloneHerder(const StandaloneHerder&) = delete;
  StandaloneHerder& operator=(const StandaloneHerder&) = delete;

  /// Opens the offset file (FileOffsetBackingStore::open: a corrupt or
  /// truncated file, or a directory that takes no new file, is an error
  /// naming the path), creates the runtime Worker and starts the threads.
  /// Blocking; call once, from a non-herder thread.
  Status start();

  /// From now on REST writes answer 503 "Worker is shutting down".
  /// Thread-safe.
  void stop_admitting_writes();

  /// Clean shutdown (Connect's StandaloneHerder.stop): stops admitting
  /// writes, stops every task and connector within
  /// task.shutdown.graceful.timeout.ms (source offsets committed to the
  /// file), joins the threads. Blocking; idempotent.
  void stop();

  /// Threads still inside plugin code that nobody will join in time (the
  /// runtime's abandoned connectors and tasks). Any thread.
  size_t stuck_plugin_threads() const;

  /// Source offsets written to the file since start() (tests).
  uint64_t offset_file_writes() const;

  // ------------------------------------------------------------ HerderApi
  void list_connectors(rest::Callback<std::vector<std::string>> cb) override;
  void connector_info(const std::string& name, rest::Callback<rest::ConnectorInfo> cb) override;
  void connector_config(const std::string& name, rest::Callback<rest::ConnectorConfig> cb) override;
  /// Validates (the bounded validate(), as distributed mode), then stores
  /// the config in memory and starts or restarts the connector; answers
  /// once its first task configs are known (or it could not start, or it
  /// is not STARTED), with the tasks in the body, as Connect's
  /// putConnectorConfig does. 409 already_exists when !allow_replace.
  void put_connector_config(rest::PutConnectorRequest req, rest::Callback<rest::PutConnectorResult> cb) override;
  /// Stops the connector and its tasks, forgets its config and statuses;
  /// answers once they stopped. 404 if unknown.
  void delete_connector(const std::string& name, rest::Callback<rest::Done> cb) override;
  void connector_status(const std::string& name, rest::Callback<rest::ConnectorStateInfo> cb) override;
  void task_configs(const std::string& name, rest::Callback<std::vector<rest::TaskInfo>> cb) override;
  void task_status(const rest::TaskId& id, rest::Callback<rest::TaskStatus> cb) override;
  /// Plain: restarts the connector here (204). With include_tasks /
  /// only_failed (KIP-745): 202 with the plan, the selected instances
  /// shown RESTARTING, then restarts them.
  void restart_connector(const std::string& name, rest::RestartRequest req,
                         rest::Callback<std::optional<rest::ConnectorStateInfo>> cb) override;
  void restart_task(const rest::TaskId& id, rest::Callback<rest::Done> cb) override;
  /// PAUSED / STARTED / STOPPED in memory (STOPPED drops the task configs,
  /// as Connect); answers once recorded.
  void set_target_state(const std::string& name, rest::TargetState state, rest::Callback<rest::Done> cb) override;
  /// Sets the level on this worker: in standalone mode it is the cluster.
  void set_cluster_logger_level(const std::string& logger, const std::string& level,
                                rest::Callback<rest::Done> cb) override;
  void connector_active_topics(const std::string& name, rest::Callback<std::vector<std::string>> cb) override;
  void reset_connector_active_topics(const std::string& name, rest::Callback<rest::Done> cb) override;
  /// Source: the offset file; sink: its consumer group (as distributed).
  void connector_offsets(const std::string& name, rest::Callback<std::vector<rest::ConnectorOffset>> cb) override;
  /// Only for a STOPPED connector (Connect's 400 otherwise). Source: the
  /// offset file is rewritten; sink: its consumer group.
  void modify_connector_offsets(const std::string& name, std::optional<std::vector<rest::ConnectorOffset>> offsets,
                                rest::Callback<std::string> cb) override;
  void connector_plugins(bool connectors_only, rest::Callback<std::vector<rest::PluginInfo>> cb) override;
  void connector_plugin_config(const std::string& plugin,
                               rest::Callback<std::vector<rest::ConfigKeyInfo>> cb) override;
  void validate_connector_config(rest::ConnectorConfig config, rest::Callback<rest::ConfigInfos> cb) override;
  /// Healthy once started ("Worker has completed startup and is ready to
  /// handle requests.", worker_state "Running"); 503 before and while
  /// stopping.
  void health(rest::Callback<rest::Health> cb) override;
  void worker_info(rest::Callback<rest::WorkerInfo> cb) override;
  /// For the web console: generation 1, is_leader, protocol "standalone",
  /// members = this worker, every connector and task owned here.
  void member_view(rest::Callback<rest::MemberView> cb) override;
  /// (501, "...") : no group to drain to.
  void accept_drain_request(const std::string& member_id, rest::SignatureHeaders signature, std::string body,
                            rest::StatusCallback done) override;
  /// (500, Connect's "Kafka Connect in standalone mode does not support
  /// externally setting task configurations.").
  void accept_task_reconfiguration(const std::string& connector, rest::SignatureHeaders signature, std::string body,
                                   rest::StatusCallback done) override;
  /// (500, Connect's "Kafka Connect in standalone mode does not support
  /// exactly-once source connectors.").
  void accept_fence_request(const std::string& connector, rest::SignatureHeaders signature, std::string body,
                            rest::StatusCallback done) override;
  /// Always empty: no rebalances without a group.
  [[nodiscard]] std::vector<rest::RebalanceRecord> rebalance_history() const override;

  /// The configuration in use.
  [[nodiscard]] const StandaloneConfig& config() const { return config_; }

 private:
  struct Impl;
  StandaloneConfig config_;
  std::shared_ptr<Impl> impl_;
};

}  // namespace kc::herder
