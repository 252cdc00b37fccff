#pragma once
// The offsets topic (`offset.storage.topic`): source connector offsets keyed
// by `["<connector>",{partition}]` with JSON offset values (5.2). Matches
// KafkaOffsetBackingStore plus the flush half of OffsetStorageWriter.

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "worker/storage/json_compact.h"
#include "worker/storage/kafka_client.h"

namespace kc::storage {

/// A source partition (e.g. {"filename":"/tmp/in.txt"}) or source offset
/// (e.g. {"position":30}): a JSON object whose member order is kept.
using SourcePartition = OrderedJson;
using SourceOffset = OrderedJson;

/// Offset store. Thread-safe: get() never touches the network; read_to_end()
/// and commit() block and must run on a task or worker pool thread.
class OffsetBackingStore {
 public:
  struct Options {
    ClientProps client;
    std::string topic = "connect-offsets";
    int partitions = 25;          ///< used only when the topic is created
    int replication_factor = 3;   ///< used only when the topic is created
    std::string client_id;        ///< e.g. "<group.id>-offsets"
    int timeout_ms = 30000;       ///< open(): creation + first read to end
  };

  /// Creates the topic if needed (compacted), starts the producer and reads
  /// the whole topic. Blocking.
  static Result<std::unique_ptr<OffsetBackingStore>> open(Options options);
  ~OffsetBackingStore();

  /// Reads records written before this call (e.g. by other workers).
  /// Blocking, up to `timeout_ms`. Concurrent callers (tasks starting at
  /// once) share one read (SharedReadToEnd).
  Status read_to_end(int timeout_ms);

  /// The last known offset of (connector, partition); nullopt if none or
  /// deleted. Non-blocking (cache lookup by the exact key bytes).
  std::optional<SourceOffset> get(const std::string& connector, const SourcePartition& partition) const;

  /// All known (partition, offset) pairs of `connector`. Non-blocking.
  std::vector<std::pair<SourcePartition, SourceOffset>> get_all(const std::string& connector) const;

  /// Writes a batch of offsets of one connector and waits for the broker's
  /// acks; a nullopt offset writes a tombstone (deletes it). The cache is
  /// updated only once the whole batch is acknowledged. Blocking, up to
  /// `timeout_ms` (offset.flush.timeout.ms, 5000 in Connect). Nothing is
  /// sent when one offset fails encode_offset_record (too deep, too big,
  /// invalid UTF-8, a partition that is not an object): the error's field
  /// is kUnreadableRecordField and names the rule.
  Status commit(const std::string& connector,
                const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                int timeout_ms);

  /// Records offsets that another producer of this process wrote to the
  /// topic and committed (an exactly-once source task's transaction,
  /// KIP-618): (offset key bytes, offset JSON) pairs, as in the topic. get()
  /// then sees them without a read. Non-blocking.
  void remember(const std::vector<std::pair<std::string, std::string>>& records);

  /// The topic name.
  const std::string& topic() const { return options_.topic; }

 private:
  explicit OffsetBackingStore(Options options);
  /// Caches one record (tombstone or null offset: deletes). Returns why it
  /// was skipped (bad key or value), or nullopt.
  std::optional<std::string> apply(const std::string& key, const std::optional<std::string>& value);

  struct Entry {
    std::string connector;
    SourcePartition partition;
    SourceOffset offset;
  };
  Options options_;
  std::unique_ptr<Producer> producer_;
  SharedReadToEnd shared_read_;  ///< concurrent read_to_end calls share one read
  std::unique_ptr<TopicReader> reader_;
  mutable std::mutex mu_;
  std::map<std::string, Entry> cache_;  ///< key bytes -> entry
};

}  // namespace kc::storage
