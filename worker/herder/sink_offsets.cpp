#include "worker/herder/sink_offsets.h"

#include <algorithm>
#include <charconv>
#include <map>

#include <spdlog/spdlog.h>

namespace kc::herder {

namespace {

constexpr const char* kTopicKey = "kafka_topic";
constexpr const char* kPartitionKey = "kafka_partition";
constexpr const char* kOffsetKey = "kafka_offset";

// A JSON value as Java's String.valueOf shows the object Jackson read:
// strings bare, numbers and booleans as their text, null as "null".
std::string java_text(const nlohmann::ordered_json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Integer.parseInt / Long.parseLong of that text: an optional sign, then
// decimal digits only, in range.
template <typename Int>
std::optional<Int> parse_java_integer(std::string text) {
  const bool plus = !text.empty() && text.front() == '+';
  if (plus) text.erase(0, 1);
  if (text.empty() || text.front() == '+' || (plus && text.front() == '-')) return std::nullopt;
  Int out{};
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return out;
}

}  // namespace

std::vector<rest::ConnectorOffset> sink_offsets_to_rest(const std::vector<storage::GroupOffset>& offsets) {
  std::vector<rest::ConnectorOffset> out;
  out.reserve(offsets.size());
  for (const auto& o : offsets) {
    nlohmann::ordered_json partition{{kTopicKey, o.topic}, {kPartitionKey, o.partition}};
    out.push_back({std::move(partition), nlohmann::ordered_json{{kOffsetKey, o.offset}}});
  }
  return out;
}

rest::Reply<std::vector<SinkOffsetWrite>> parse_sink_offsets(const std::vector<rest::ConnectorOffset>& entries) {
  std::vector<SinkOffsetWrite> out;
  std::map<storage::TopicPartition, size_t> index;  // partition → its slot in `out` (last entry wins)
  for (const auto& e : entries) {
    const auto& p = e.partition;
    if (p.is_null()) return rest::RestError::bad_request("The partition for a sink connector offset cannot be null or missing");
    if (!p.is_object() || !p.contains(kTopicKey) || !p.contains(kPartitionKey))
      return rest::RestError::bad_request(
          "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'");
    const std::string topic = java_text(p[kTopicKey]);
    const std::string partition_text = java_text(p[kPartitionKey]);
    auto partition = parse_java_integer<int32_t>(partition_text);
    if (!partition)
      return rest::RestError::bad_request("Failed to parse the following Kafka partition value in the provided offsets: '" +
                                          partition_text + "'. Partition values for sink connectors need to be integers.");
    if (*partition < 0)
      return rest::RestError::bad_request("Invalid Kafka partition value in the provided offsets: '" + partition_text +
                                          "'. Partition values for sink connectors need to be non-negative integers.");
    SinkOffsetWrite w{{topic, *partition}, std::nullopt};
    if (e.offset && !e.offset->is_null()) {
      const auto& o = *e.offset;
      if (!o.is_object() || !o.contains(kOffsetKey))
        return rest::RestError::bad_request(
            "The offset for a sink connector should either be null or contain the key 'kafka_offset'");
      const std::string offset_text = java_text(o[kOffsetKey]);
      auto offset = parse_java_integer<int64_t>(offset_text);
      if (!offset)
        return rest::RestError::bad_request("Failed to parse the following Kafka offset value in the provided offsets: '" +
                                            offset_text + "'. Offset values for sink connectors need to be integers.");
      // Java's OffsetAndMetadata refuses these too ("Invalid negative offset"),
      // but only later, as a 500; here it is the caller's mistake, so 400.
      if (*offset < 0)
        return rest::RestError::bad_request("Invalid negative Kafka offset value in the provided offsets: '" +
                                            offset_text + "'. Offset values for sink connectors need to be non-negative integers.");
      w.offset = *offset;
    }
    if (auto it = index.find(w.partition); it != index.end()) {
      out[it->second] = std::move(w);
    } else {
      index.emplace(w.partition, out.size());
      out.push_back(std::move(w));
    }
  }
  return out;
}

std::string sink_group_busy_message(const std::string& connector, bool reset) {
  const std::string what = reset ? "reset" : "alter";
  return "Failed to " + what + " consumer group offsets for connector " + connector +
         " either because its tasks haven't stopped completely yet or the connector was resumed before the request to " +
         what + " its offsets could be successfully completed. If the connector is in a stopped state, this operation "
         "can be safely retried. If it doesn't eventually succeed, the Connect cluster may need to be restarted to get "
         "rid of the zombie sink tasks.";
}

rest::Reply<std::vector<rest::ConnectorOffset>> read_sink_offsets(const SinkGroup& sink) {
  auto failed = [&](const storage::AdminStatus& st) {
    spdlog::error("Failed to retrieve consumer group offsets for sink connector {} (group {}): {}", sink.connector,
                  sink.group, st.message);
    return rest::RestError::internal("Failed to retrieve consumer group offsets for sink connector " + sink.connector +
                                     ": " + st.message);
  };
  std::vector<storage::GroupOffset> offsets;
  if (auto st = storage::list_group_offsets(sink.admin_props, sink.group, {}, sink.timeout_ms, offsets); !st.ok())
    return failed(st);
  if (offsets.empty() && !sink.topics.empty()) {
    // librdkafka's mock cluster answers the all-partitions form of
    // OffsetFetch with nothing; ask again for the partitions of the
    // connector's `topics`. A real broker answers both alike.
    std::vector<storage::TopicPartition> partitions;
    if (auto st = storage::topic_partitions(sink.admin_props, sink.topics, sink.timeout_ms, partitions); !st.ok())
      return failed(st);
    if (!partitions.empty()) {
      if (auto st = storage::list_group_offsets(sink.admin_props, sink.group, partitions, sink.timeout_ms, offsets);
          !st.ok())
        return failed(st);
    }
  }
  return sink_offsets_to_rest(offsets);
}

rest::Reply<std::string> alter_sink_offsets(const SinkGroup& sink, const std::vector<rest::ConnectorOffset>& entries) {
  auto writes = parse_sink_offsets(entries);
  if (!writes) return writes.error();
  std::vector<storage::GroupOffset> to_alter;
  std::vector<storage::TopicPartition> to_delete;
  for (const auto& w : writes.value()) {
    if (w.offset) to_alter.push_back({w.partition.first, w.partition.second, *w.offset});
    else to_delete.push_back(w.partition);
  }
  auto failed = [&](const storage::AdminStatus& st) {
    spdlog::error("Failed to alter consumer group offsets for connector {} (group {}): {}", sink.connector, sink.group,
                  st.message);
    if (st.code == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID || st.code == RD_KAFKA_RESP_ERR_GROUP_SUBSCRIBED_TO_TOPIC)
      return rest::RestError::internal(sink_group_busy_message(sink.connector, false));
    return rest::RestError::internal("Failed to alter consumer group offsets for connector " + sink.connector + ": " +
                                     st.message);
  };
  if (!to_alter.empty()) {
    if (auto st = storage::alter_group_offsets(sink.admin_props, sink.group, to_alter, sink.timeout_ms); !st.ok())
      return failed(st);
  }
  if (!to_delete.empty()) {
    // Unlike a reset, a group that does not exist is an error here, as in
    // Connect (GroupIdNotFoundException fails the alter).
    if (auto st = storage::delete_group_offsets(sink.admin_props, sink.group, to_delete, sink.timeout_ms); !st.ok())
      return failed(st);
  }
  spdlog::info("leader altered {} and deleted {} offset(s) of sink connector {} (group {})", to_alter.size(),
               to_delete.size(), sink.connector, sink.group);
  // Built-in sinks keep no offsets outside the framework (Connect's
  // FileStreamSinkConnector.alterOffsets answers true): the short message.
  return std::string("The offsets for this connector have been altered successfully");
}

rest::Reply<std::string> reset_sink_offsets(const SinkGroup& sink) {
  auto st = storage::delete_group(sink.admin_props, sink.group, sink.timeout_ms);
  // A group that is gone already is reset already (Connect treats
  // GROUP_ID_NOT_FOUND as success: a reset is idempotent).
  if (!st.ok() && st.code != RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
    spdlog::error("Failed to reset consumer group offsets for sink connector {} (group {}): {}", sink.connector,
                  sink.group, st.message);
    if (st.code == RD_KAFKA_RESP_ERR_NON_EMPTY_GROUP)
      return rest::RestError::internal(sink_group_busy_message(sink.connector, true));
    return rest::RestError::internal("Failed to reset consumer group offsets for sink connector " + sink.connector +
                                     ": " + st.message);
  }
  spdlog::info("leader reset the offsets of sink connector {}: deleted consumer group {}", sink.connector, sink.group);
  return std::string("The offsets for this connector have been reset successfully");
}

}  // namespace kc::herder
