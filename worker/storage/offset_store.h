#pragma once
// Source connector offsets keyed by `["<connector>",{partition}]` with JSON
// offset values (5.2): the OffsetBackingStore interface, and its offsets-topic
// implementation (`offset.storage.topic`, KafkaOffsetBackingStore plus the
// flush half of OffsetStorageWriter; defined in offset_store.cpp).

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

/// Where source tasks read and commit their offsets (Connect's
/// OffsetBackingStore interface). Two implementations: the offsets topic
/// (open(), distributed mode: KafkaOffsetBackingStore in Connect) and a
/// local file (FileOffsetBackingStore, file_offset_store.h, standalone
/// mode). The runtime Worker and the offsets API see only this interface.
/// Thread-safe: get() / get_all() never block; read_to_end() and commit()
/// may block and must run on a task or worker pool thread.
class OffsetBackingStore {
 public:
  /// The Kafka-topic store's settings (open()).
  struct Options {
    ClientProps client;
    std::string topic = "connect-offsets";
    int partitions = 25;          ///< used only when the topic is created
    int replication_factor = 3;   ///< used only when the topic is created
    std::string client_id;        ///< e.g. "<group.id>-offsets"
    int timeout_ms = 30000;       ///< open(): creation + first read to end
  };

  /// The offsets-topic store: creates the topic if needed (compacted),
  /// starts the producer and reads the whole topic. Blocking.
  static Result<std::unique_ptr<OffsetBackingStore>> open(Options options);
  virtual ~OffsetBackingStore() = default;

  /// Reads records written before this call (e.g. by other workers).
  /// Blocking, up to `timeout_ms`. Concurrent callers (tasks starting at
  /// once) share one read (SharedReadToEnd). A file store has nothing to
  /// read: it is the only writer of its file.
  virtual Status read_to_end(int timeout_ms) = 0;

  /// The last known offset of (connector, partition); nullopt if none or
  /// deleted. Non-blocking (cache lookup by the exact key bytes).
  virtual std::optional<SourceOffset> get(const std::string& connector, const SourcePartition& partition) const = 0;

  /// All known (partition, offset) pairs of `connector`. Non-blocking.
  virtual std::vector<std::pair<SourcePartition, SourceOffset>> get_all(const std::string& connector) const = 0;

  /// Writes a batch of offsets of one connector and waits until it is
  /// durable (the broker's acks, or the file renamed into place); a
  /// nullopt offset writes a tombstone (deletes it). The cache is updated
  /// only once the whole batch is durable. Blocking, up to `timeout_ms`
  /// (offset.flush.timeout.ms, 5000 in Connect). Nothing is written when
  /// one offset fails encode_offset_record (too deep, too big, invalid
  /// UTF-8, a partition that is not an object): the error's field is
  /// kUnreadableRecordField and names the rule.
  virtual Status commit(const std::string& connector,
                        const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                        int timeout_ms) = 0;

  /// Records offsets that another producer of this process wrote to the
  /// topic and committed (an exactly-once source task's transaction,
  /// KIP-618): (offset key bytes, offset JSON) pairs, as in the topic. get()
  /// then sees them without a read. Non-blocking.
  virtual void remember(const std::vector<std::pair<std::string, std::string>>& records) = 0;

  /// Where the offsets live: the topic name, or the file's path.
  virtual const std::string& topic() const = 0;

  /// The same for messages: "the offsets topic <topic>" or "the offset
  /// file <path>" (GET /connectors/{c}/offsets' "Failed to read ...").
  virtual std::string description() const = 0;
};

/// The offsets-topic records (key bytes, value bytes; nullopt = tombstone)
/// of a commit batch of `connector`, or the first offset's
/// encode_offset_record error: the whole batch is refused when one offset
/// could not be read back, as Connect fails a flush whose offsets do not
/// serialise. Pure.
Result<std::vector<std::pair<std::string, std::optional<std::string>>>> encode_offset_batch(
    const std::string& connector, const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets);

/// Offsets cache keyed by the offset-topic key bytes, shared by both stores:
/// decodes records and applies them (a tombstone or a null offset deletes).
/// Thread-safe.
class OffsetCache {
 public:
  /// Caches one record (key bytes, value bytes; nullopt = tombstone).
  /// Returns why it was skipped (bad key or value), or nullopt.
  std::optional<std::string> apply(const std::string& key, const std::optional<std::string>& value);
  /// See OffsetBackingStore::get.
  std::optional<SourceOffset> get(const std::string& connector, const SourcePartition& partition) const;
  /// See OffsetBackingStore::get_all.
  std::vector<std::pair<SourcePartition, SourceOffset>> get_all(const std::string& connector) const;
  /// Every cached record as (key bytes, value bytes as applied), in key order.
  std::vector<std::pair<std::string, std::string>> records() const;

 private:
  struct Entry {
    std::string connector;
    SourcePartition partition;
    SourceOffset offset;
    std::string value;  ///< the value bytes it was read from
  };
  mutable std::mutex mu_;
  std::map<std::string, Entry> cache_;  ///< key bytes -> entry
};

}  // namespace kc::storage
