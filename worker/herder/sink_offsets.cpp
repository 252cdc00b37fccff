#include "worker/herder/sink_offsets.h"

#include <algorithm>
#include <charconv>
#include <map>

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

}  // namespace kc::herder
