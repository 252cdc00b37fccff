#pragma once
// The status topic (`status.storage.topic`): `status-connector-<name>` and
// `status-task-<name>-<n>` records and the topic-tracking records
// `status-topic-<topic>:connector-<name>` (5.3). Matches KafkaStatusBackingStore.

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/records.h"
#include "worker/storage/status_table.h"

namespace kc::storage {

/// Status store. Thread-safe. put_*() never block on the network (they queue
/// a record and update the cache at once), so they are safe on the herder's
/// io_context thread and on task threads. flush() and read_to_end() block.
class StatusBackingStore {
 public:
  struct Options {
    ClientProps client;
    std::string topic = "connect-status";
    int partitions = 5;           ///< used only when the topic is created
    int replication_factor = 3;   ///< used only when the topic is created
    std::string client_id;        ///< e.g. "<group.id>-statuses"
    int timeout_ms = 30000;       ///< open(): creation + first read to end
  };

  /// Creates the topic if needed, starts the producer, reads the topic.
  /// Blocking.
  static Result<std::unique_ptr<StatusBackingStore>> open(Options options);
  /// Closes the producer first, while the state its delivery reports use
  /// still exists: records still queued (the broker is gone) are flushed for
  /// up to 2 s, then purged; their reports are logged, never retried.
  /// The owner must have stopped calling put_*() and the other writers.
  ~StatusBackingStore();

  /// Records a connector status. State Destroyed writes a tombstone and
  /// drops the cached entry. Non-blocking; delivery failures are logged and
  /// retried up to 3 times (the store retries itself, like Connect). The
  /// value is made storable first (storable_status: valid UTF-8, trace cut
  /// to kMaxStatusTraceBytes) and cached as written; a status whose key no
  /// worker could read (decode_status_record) is logged and dropped.
  void put_connector(const std::string& connector, const StatusValue& status);
  /// Records a task status (same rules as put_connector).
  void put_task(const connect::ConnectorTaskId& id, const StatusValue& status);
  /// Like put_task, but skipped when the cached value came from another
  /// worker with a newer generation (Connect's putSafe; the check and the
  /// write are one step under the store's lock). Returns whether it was
  /// written.
  bool put_task_safe(const connect::ConnectorTaskId& id, const StatusValue& status);
  /// Like put_connector, with put_task_safe's rule.
  bool put_connector_safe(const std::string& connector, const StatusValue& status);

  /// Waits until every queued status record is acknowledged. Blocking.
  Status flush(int timeout_ms);

  /// Reads the topic up to its end and folds every connector and task
  /// status record into the cache in topic order (StatusTable): a stale stop
  /// report (stale_stop_report: another worker's UNASSIGNED while a RUNNING
  /// of a generation >= its own, or any status of a later generation, is
  /// current) is skipped, anything else replaces the value. This store's own
  /// writes are shown until they are read back, then the folded value is:
  /// every reader of the same records ends with the same statuses. Blocking.
  Status read_to_end(int timeout_ms);

  /// Cached status of one connector / task. Non-blocking.
  std::optional<StatusValue> get_connector(const std::string& connector) const;
  std::optional<StatusValue> get_task(const connect::ConnectorTaskId& id) const;
  /// Cached statuses of all tasks of `connector`, sorted by task id. Non-blocking.
  std::map<int32_t, StatusValue> get_tasks(const std::string& connector) const;
  /// Records that a task used a topic (Connect's put(TopicStatus)); skipped
  /// when the topic is already cached for the connector, so callers may
  /// report every use. Non-blocking.
  void put_topic(const TopicStatus& status);
  /// Writes a tombstone for every cached topic of `connector` and forgets
  /// them (PUT /connectors/{c}/topics/reset). Non-blocking.
  void delete_topics(const std::string& connector);
  /// Cached active topics of `connector`, sorted. Non-blocking.
  std::vector<std::string> get_topics(const std::string& connector) const;

  /// Every cached connector status. Non-blocking.
  std::map<std::string, StatusValue> all_connectors() const;
  /// Every cached task status. Non-blocking.
  std::map<connect::ConnectorTaskId, StatusValue> all_tasks() const;

  /// The topic name.
  const std::string& topic() const { return options_.topic; }

 private:
  explicit StatusBackingStore(Options options);
  /// Applies one record read back (`rec` decoded from `key` and `value`).
  void apply(const std::string& key, const std::optional<std::string>& value, StatusRecord rec);
  /// Applies a topic-tracking record (nullopt = tombstone).
  void apply_topic(const std::string& topic, const std::string& connector, std::optional<TopicStatus> value);
  /// Delivery attempts of one status record (the store retries, like Connect).
  static constexpr int kStatusAttempts = 3;

  /// Writes one connector or task status (`safe`: with putSafe's check).
  /// Returns whether it was written.
  bool put_status(const std::string& key, const StatusSubject& subject, const StatusValue& status, bool safe);
  /// Queues one topic-tracking record (untracked by the status cache).
  void send(const std::string& key, const std::optional<std::string>& value);
  /// Hands one record to the producer. `sequence` is the key's number for
  /// this send (only the latest send of a key may retry); `track`: a
  /// connector or task status whose failure for good ends its pending write
  /// in table_.
  void produce(const std::string& key, const std::optional<std::string>& value, int attempts_left, bool track,
               uint64_t sequence);

  Options options_;
  std::unique_ptr<Producer> producer_;
  SharedReadToEnd shared_read_;  ///< concurrent read_to_end calls share one read
  std::unique_ptr<TopicReader> reader_;
  mutable std::mutex mu_;
  StatusTable table_;  ///< connector and task statuses (guarded by mu_)
  std::map<std::string, std::map<std::string, TopicStatus>> topics_;  ///< connector → topic → status
  std::map<std::string, uint64_t> sequences_;  ///< record key → number of its latest send (guarded by mu_)
  bool closing_ = false;  ///< the destructor began: no more retries (guarded by mu_)
  int retries_in_send_ = 0;  ///< delivery reports inside a retry's producer_->send (guarded by mu_)
  std::condition_variable retries_done_;  ///< signalled when retries_in_send_ drops to 0
};

}  // namespace kc::storage
