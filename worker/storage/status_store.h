#pragma once
// The status topic (`status.storage.topic`): `status-connector-<name>` and
// `status-task-<name>-<n>` records and the topic-tracking records
// `status-topic-<topic>:connector-<name>` (5.3). Matches KafkaStatusBackingStore.

#include <map>
#include <memory>
#include <mutex>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/records.h"

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
  /// worker with a newer generation (Connect's putSafe). Returns whether it
  /// was written.
  bool put_task_safe(const connect::ConnectorTaskId& id, const StatusValue& status);
  /// Like put_connector, with put_task_safe's rule.
  bool put_connector_safe(const std::string& connector, const StatusValue& status);

  /// Waits until every queued status record is acknowledged. Blocking.
  Status flush(int timeout_ms);

  /// Reads records written by other workers (a record of a key whose own
  /// newer write is still unacknowledged is skipped: the cache has it). Applies Connect's rule,
  /// to connectors and tasks alike: an UNASSIGNED status from one worker does
  /// not replace another worker's cached RUNNING of a generation >= its own,
  /// nor another worker's status of any state from a later generation (a late
  /// stop report of the previous owner, e.g. one that was frozen). The same
  /// worker's UNASSIGNED always applies: it stopped the instance after it
  /// reported it running (topic order). Blocking.
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
  /// Writes of one status key by this store: a sequence number (only the
  /// latest send may retry) and the values sent and not yet read back, in
  /// send order (guarded by mu_).
  struct KeyWrites {
    uint64_t sequence = 0;
    std::deque<std::optional<std::string>> unread;
  };
  /// Delivery attempts of one status record (the store retries, like Connect).
  static constexpr int kStatusAttempts = 3;

  /// Queues one record; `track` records it as unread (connector and task
  /// statuses), so older records read meanwhile cannot replace it.
  void send(const std::string& key, const std::optional<std::string>& value, int attempts_left, bool track);
  /// Drops one unread value (its write failed for good). Caller holds mu_.
  static void forget_unread(KeyWrites& w, const std::optional<std::string>& value);
  /// Whether a record read for `key` (raw value and decoded) must not be
  /// applied because this store wrote a newer status of that key that it has
  /// not read back yet. Consumes read-back entries. Caller holds mu_.
  bool own_write_pending(const std::string& key, const StatusValue* cached, const std::optional<std::string>& raw,
                         const std::optional<StatusValue>& read);

  Options options_;
  std::unique_ptr<Producer> producer_;
  SharedReadToEnd shared_read_;  ///< concurrent read_to_end calls share one read
  std::unique_ptr<TopicReader> reader_;
  mutable std::mutex mu_;
  std::map<std::string, StatusValue> connectors_;
  std::map<connect::ConnectorTaskId, StatusValue> tasks_;
  std::map<std::string, std::map<std::string, TopicStatus>> topics_;  ///< connector → topic → status
  std::map<std::string, KeyWrites> writes_;  ///< record key → own writes (guarded by mu_)
};

}  // namespace kc::storage
