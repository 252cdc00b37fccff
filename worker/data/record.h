#pragma once
// Connect's records: ConnectRecord (topic, partition, key and value with
// their schemas, timestamp, headers), SourceRecord (plus source partition and
// offset) and SinkRecord (plus the Kafka offset and timestamp type).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "worker/data/value.h"

namespace kc::data {

/// One header (Connect's Header): key, schema (nullptr = none) and value.
struct Header {
  std::string key;
  SchemaPtr schema;
  Value value;
};

/// Connect's Headers (ConnectHeaders): an ordered list; duplicate keys are
/// allowed and kept in order.
class Headers {
 public:
  /// Appends a header (Headers.add).
  void add(std::string key, SchemaPtr schema, Value value) {
    list_.push_back(Header{std::move(key), std::move(schema), std::move(value)});
  }
  /// The last header with `key` (Headers.lastWithName), or nullptr.
  const Header* last_with_name(std::string_view key) const {
    for (auto it = list_.rbegin(); it != list_.rend(); ++it)
      if (it->key == key) return &*it;
    return nullptr;
  }
  /// Removes every header with `key` (Headers.remove).
  void remove(std::string_view key) {
    std::erase_if(list_, [&](const Header& h) { return h.key == key; });
  }
  const std::vector<Header>& list() const { return list_; }
  std::vector<Header>& list() { return list_; }
  size_t size() const { return list_.size(); }
  bool empty() const { return list_.empty(); }

 private:
  std::vector<Header> list_;
};

/// Connect's ConnectRecord: what converters and transforms see.
/// `kafka_partition` is nullopt when unknown (a source record may leave it
/// to the partitioner); `timestamp` is epoch ms, nullopt when absent.
struct ConnectRecord {
  std::string topic;
  std::optional<int32_t> kafka_partition;
  SchemaPtr key_schema;
  Value key;
  SchemaPtr value_schema;
  Value value;
  std::optional<int64_t> timestamp;
  Headers headers;
};

/// Connect's SourceRecord: a ConnectRecord plus the connector-defined source
/// partition and offset (Java Map<String, ?>; here maps of Values, empty
/// when the connector gave none).
struct SourceRecord : ConnectRecord {
  Map source_partition;
  Map source_offset;
};

/// Kafka's TimestampType names as SinkRecord.timestampType().name() prints them.
enum class TimestampType { NO_TIMESTAMP_TYPE, CREATE_TIME, LOG_APPEND_TIME };

/// "NoTimestampType", "CreateTime", "LogAppendTime" (TimestampType.name).
inline std::string_view timestamp_type_name(TimestampType t) {
  switch (t) {
    case TimestampType::NO_TIMESTAMP_TYPE: return "NoTimestampType";
    case TimestampType::CREATE_TIME: return "CreateTime";
    case TimestampType::LOG_APPEND_TIME: return "LogAppendTime";
  }
  return "NoTimestampType";
}

/// Connect's SinkRecord: a ConnectRecord read from Kafka, with its offset,
/// timestamp type and (KIP-793) the original topic/partition/offset, which
/// transforms that rename the topic leave unchanged.
struct SinkRecord : ConnectRecord {
  int64_t kafka_offset = 0;
  TimestampType timestamp_type = TimestampType::NO_TIMESTAMP_TYPE;
  std::string original_topic;
  std::optional<int32_t> original_kafka_partition;
  int64_t original_kafka_offset = 0;
};

}  // namespace kc::data
