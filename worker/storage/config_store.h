#pragma once
// The config topic (`config.storage.topic`): connector configs, task configs,
// task-count commits and target states, in Kafka Connect's key and JSON
// formats (connect-reference.md 5.1). Matches KafkaConfigBackingStore.

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
#include "protocol/connect/types.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/records.h"
#include "worker/storage/transactional_producer.h"

namespace kc::storage {

/// An immutable view of everything read from the config topic so far
/// (Connect's ClusterConfigState). Plain value; copy freely across threads.
struct ClusterConfigState {
  /// Next offset to read = offset of the last consumed record + 1; -1 before
  /// any record was read. This is the `config-offset` of the Connect
  /// subprotocol.
  int64_t offset = -1;
  /// Connector name -> its config (as in `connector-<name>`).
  std::map<std::string, ConfigMap> connector_configs;
  /// Connector name -> task count of its last good commit.
  std::map<std::string, int32_t> task_counts;
  /// Committed task configs of consistent connectors.
  std::map<connect::ConnectorTaskId, ConfigMap> task_configs;
  /// Connector name -> target state (STARTED when no record exists).
  std::map<std::string, TargetState> target_states;
  /// Connectors whose last commit lacked some task ids 0..N-1 (e.g. a
  /// foreign `{"tasks":2147483647}`); they have no tasks, and `task_counts`
  /// keeps their last good count, until a good commit arrives (Connect's
  /// inconsistent connectors).
  std::set<std::string> inconsistent;
  /// The last good `session-key` record (KIP-507), nullopt before any.
  std::optional<SessionKeyRecord> session_key;
  /// Connector name -> its last `tasks-fencing-<name>` task count
  /// (KIP-618): how many exactly-once task producers of its latest fenced
  /// generation may still exist (Connect's taskCountRecord).
  std::map<std::string, int32_t> task_count_records;
  /// Connector name -> how many good task-config commits were read for it
  /// (Connect's taskConfigGeneration): changes whenever its tasks change.
  std::map<std::string, int32_t> task_config_generations;
  /// Connectors whose latest task configs were committed after their
  /// latest task-count record: their older task generations must be fenced
  /// out before these tasks may start under exactly-once support
  /// (Connect's pendingFencing).
  std::set<std::string> pending_fencing;

  /// True if `connector` has a config.
  bool contains(const std::string& connector) const { return connector_configs.count(connector) != 0; }
  /// Sorted connector names.
  std::vector<std::string> connectors() const;
  /// Task ids 0..N-1 of `connector` (empty if unknown or inconsistent).
  std::vector<connect::ConnectorTaskId> tasks(const std::string& connector) const;
  /// Committed task config, if any.
  std::optional<ConfigMap> task_config(const connect::ConnectorTaskId& id) const;
  /// Target state (STARTED if none recorded).
  TargetState target_state(const std::string& connector) const;
};

/// A change seen while reading the config topic, reported in topic order to
/// the update listener. These are the herder's rebalance triggers (4.4).
struct ConfigUpdate {
  enum class Kind {
    ConnectorConfig,  ///< a connector config was written (new or changed)
    ConnectorRemoved, ///< `connector-<name>` tombstone
    TasksCommitted,   ///< a `commit-<name>` record was applied (good or inconsistent)
    TargetState,      ///< target state changed
    RestartRequested, ///< a `restart-connector-<name>` record (KIP-745); see `restart`
    SessionKey,       ///< a good `session-key` record (KIP-507); the key is in the snapshot
  };
  Kind kind;
  std::string connector;
  RestartFlags restart;  ///< the request's flags (RestartRequested only)
};

/// Config topic reader/writer. Thread-safe: every method may be called from
/// any thread; reads and writes are serialised internally. The reader skips
/// each record that breaks the read rules (config_record_error's) with one
/// log line (log_skipped_record); every writer checks its records with the
/// same rules first and, when one breaks them, sends nothing and fails with
/// an Error whose field is kUnreadableRecordField. Blocking methods
/// (marked so) must run on a worker pool thread, never the herder's
/// io_context thread; `snapshot()` never blocks on the network.
///
/// Privileged writes (KIP-618; Connect's sendPrivileged): connector
/// configs, connector removal, task configs and commits, task-count
/// records, restart requests and session keys. With
/// Options::transactional_id set, each batch of records one of them sends
/// is one transaction of the fencable producer (claim_write_privileges
/// first; without it they fail). A failed transaction releases the
/// privileges and the write returns an Error whose field is
/// kPrivilegedWriteField. Without a transactional_id they use the plain
/// producer, like target states always do.
class ConfigBackingStore {
 public:
  struct Options {
    ClientProps client;              ///< librdkafka props (bootstrap.servers, security ...)
    std::string topic = "connect-configs";
    int replication_factor = 3;      ///< used only when the topic is created; -1 = broker default
    std::string client_id;           ///< e.g. "<group.id>-configs"; empty = librdkafka default
    int timeout_ms = 30000;          ///< open(): topic creation + first read to end
    /// KIP-618's transactional leader: non-empty when
    /// exactly.once.source.support is `preparing` or `enabled` (Connect's
    /// transactionalLeaderEnabled), the transactional.id of the fencable
    /// writer, "connect-cluster-<group.id>" (config_topic_transactional_id).
    /// Empty: every write goes through the plain producer.
    std::string transactional_id;
    /// Reader isolation.level: read_committed when true (Connect sets it
    /// for exactly.once.source.support=enabled only), else
    /// read_uncommitted (the Java consumer's default) unless `client`
    /// names an isolation.level itself.
    bool read_committed = false;
  };

  /// Counters of the fencable writer, for tests and diagnostics. Plain
  /// value.
  struct WriterStats {
    bool transactional = false;       ///< Options::transactional_id is set
    bool write_privileges = false;    ///< the fencable producer is claimed and usable now
    int64_t claims = 0;               ///< successful claim_write_privileges that created a producer
    int64_t transactions = 0;         ///< committed privileged writes (one transaction each)
    int64_t failed_writes = 0;        ///< privileged writes that failed and released the privileges
  };

  /// Called for each change applied by read_to_end, in topic order, on the
  /// thread that called read_to_end, after the snapshot holding the change
  /// is published (snapshot() may be called; the store's read lock is held,
  /// so do not call read_to_end or a put_* from it).
  using UpdateListener = std::function<void(const ConfigUpdate&)>;

  /// Creates the topic if needed (1 partition, compacted), refuses a topic
  /// with more than one partition ("config topic X has N partitions; it must
  /// have exactly 1"), starts the producer and reads the topic to the end.
  /// Blocking, up to options.timeout_ms.
  static Result<std::unique_ptr<ConfigBackingStore>> open(Options options, UpdateListener listener = {});
  ~ConfigBackingStore();

  /// Consumes the topic up to its current end and returns the resulting
  /// snapshot. Blocking, up to `timeout_ms` (worker.sync.timeout.ms, 3000 by
  /// default in Connect). On timeout the records read so far stay applied.
  Result<ClusterConfigState> read_to_end(int timeout_ms);

  /// The last snapshot built by read_to_end. Non-blocking.
  ClusterConfigState snapshot() const;

  /// Writes `connector-<name>` = {"properties":config}; if `initial_state`
  /// is given, writes `target-state-<name>` first (Connect's order), then
  /// reads to the end. Blocking. Leader-only in Connect; privileged. Refused
  /// (kUnreadableRecordField) when the connector is new and its name fails
  /// kc::connector_name_error, or a key or value is not valid UTF-8.
  Status put_connector_config(const std::string& connector, const ConfigMap& config,
                              std::optional<TargetState> initial_state, int timeout_ms);

  /// Writes tombstones for `connector-<name>` and `target-state-<name>`,
  /// then reads to the end. Blocking; privileged.
  Status remove_connector(const std::string& connector, int timeout_ms);

  /// Reads to the end, writes `task-<name>-0..N-1`, reads to the end, writes
  /// `commit-<name>` = {"tasks":N}, reads to the end (5.1). Blocking;
  /// privileged (two transactions, as Connect: the task configs, then the
  /// commit). Refused (kUnreadableRecordField, nothing sent) when a key or
  /// value of any config is not valid UTF-8. A good commit clears the
  /// connector's `inconsistent` mark.
  Status put_task_configs(const std::string& connector, const std::vector<ConfigMap>& configs,
                          int timeout_ms);

  /// Writes `tasks-fencing-<name>` = {"task-count":N} (KIP-618; leader-only,
  /// after fencing the previous generation) and reads to the end, so the
  /// connector is no longer pending fencing in the snapshot. Blocking;
  /// privileged.
  Status put_task_count_record(const std::string& connector, int32_t task_count, int timeout_ms);

  /// Writes `restart-connector-<name>` (KIP-745; leader-only in Connect) and
  /// reads to the end, so every worker that reads it restarts what it owns.
  /// Blocking; privileged.
  Status put_restart_request(const std::string& connector, const RestartFlags& flags, int timeout_ms);

  /// Writes `session-key` (KIP-507; leader-only in Connect) and reads to the
  /// end, so the snapshot holds the new key on return. Blocking; privileged.
  Status put_session_key(const SessionKeyRecord& key, int timeout_ms);

  /// KIP-618 (Connect's claimWritePrivileges): with a transactional_id,
  /// creates the fencable producer (client.id "<client_id>-leader",
  /// transactional.id, acks=all, idempotence) and runs init_transactions,
  /// which fences out every older producer of that id (a previous leader)
  /// and aborts its open transaction. Nothing to do without a
  /// transactional_id or while the privileges are held. Blocking, up to
  /// `timeout_ms`. Errors: "Failed to create and initialize fencable
  /// producer for config topic: <cause>"; the privileges stay released.
  Status claim_write_privileges(int timeout_ms);

  /// Closes the fencable producer, if any (Connect's
  /// relinquishWritePrivileges); the next privileged write fails until
  /// claim_write_privileges succeeds again. Blocking (producer close).
  void release_write_privileges();

  /// The writer's counters. Non-blocking: never waits for a claim or a
  /// transaction under way (they hold txn_mu_ across their broker I/O).
  WriterStats writer_stats() const;

  /// Writes `target-state-<name>` and reads to the end. Not a privileged
  /// write: any worker may write it, without write privileges, through
  /// the plain producer (as Connect's putTargetState). Blocking.
  Status put_target_state(const std::string& connector, TargetState state, int timeout_ms);

  /// Writes `logger-cluster-<namespace>` = {"level":"<level>"} (KIP-976;
  /// Connect's putLoggerLevel) and reads to the end; every worker applies
  /// the level when it reads the record (this one included, before
  /// return). Not privileged: any worker may write it. `level` must be a
  /// log4j level name (the REST layer checks it). Blocking.
  Status put_logger_level(const std::string& logger_namespace, const std::string& level, int timeout_ms);

  /// The topic name.
  const std::string& topic() const { return options_.topic; }

  /// The id of the Kafka cluster this store talks to (GET / reports it), or
  /// "" when the broker does not say within `timeout_ms`. Blocking.
  std::string kafka_cluster_id(int timeout_ms) const;

 private:
  ConfigBackingStore(Options options, UpdateListener listener);
  using Records = std::vector<std::pair<std::string, std::optional<std::string>>>;
  /// Writes `records` (key, value; no value = tombstone) with the plain
  /// producer. Blocking, at most `timeout_ms`.
  Status write(const Records& records, int timeout_ms);
  /// Connect's sendPrivileged: the plain producer without a
  /// transactional_id, else one transaction of the fencable producer.
  Status write_privileged(const Records& records, int timeout_ms);
  /// write_privileged (or write, when not `privileged`), then reads the
  /// topic to the end, so the snapshot holds the records on success.
  /// Blocking, at most about 2 x `timeout_ms`.
  Status write_and_read(const Records& records, int timeout_ms, bool privileged = true);
  void apply(const TopicReader::Record& r);

  Options options_;
  UpdateListener listener_;
  std::unique_ptr<Producer> producer_;
  /// Serialises the fencable producer's claim, release and transactions
  /// (held across their broker I/O: they share the one producer).
  std::mutex txn_mu_;
  std::unique_ptr<TransactionalProducer> txn_;  ///< guarded by txn_mu_; null = no write privileges
  /// Guards stats_ only, never held across I/O, so writer_stats() does not
  /// wait behind txn_mu_. Taken after txn_mu_ when both are held.
  mutable std::mutex stats_mu_;
  WriterStats stats_;  ///< guarded by stats_mu_; write_privileges mirrors txn_ != nullptr
  /// Updates stats_ under stats_mu_.
  template <typename F>
  void update_stats(F&& f) {
    std::lock_guard lk(stats_mu_);
    f(stats_);
  }
  std::mutex read_mu_;  ///< serialises reader_ use and state building
  std::unique_ptr<TopicReader> reader_;
  // Built state (guarded by read_mu_), published to snapshot_ under snap_mu_.
  ClusterConfigState state_;
  std::map<std::string, std::map<int32_t, ConfigMap>> pending_tasks_;
  std::vector<ConfigUpdate> unpublished_updates_;  ///< applied, snapshot not yet published
  /// A read to the end succeeded once: KIP-976 logger records read after it
  /// are applied, older ones (the read at startup) are not, as Connect.
  bool caught_up_once_ = false;
  mutable std::mutex snap_mu_;
  ClusterConfigState snapshot_;
};

/// Connect's transactional id of the config topic's fencable writer:
/// "connect-cluster-<group.id>" (DistributedConfig.transactionalProducerId).
std::string config_topic_transactional_id(const std::string& group_id);

/// The Error::field of a failed privileged write (Connect's
/// PrivilegedWriteException): the fencable producer could not commit, most
/// likely because a newer leader fenced it, and the privileges were
/// released. Also used when no privileges are held.
inline constexpr const char* kPrivilegedWriteField = "config topic leader write";

/// True if `e` came from a privileged write of the config store (see
/// kPrivilegedWriteField).
inline bool is_privileged_write_error(const Error& e) { return e.field == kPrivilegedWriteField; }

}  // namespace kc::storage
