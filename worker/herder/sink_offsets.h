#pragma once
// Sink connector offsets in the REST shapes of KIP-875 (Connect's
// SinkUtils): a consumer group offset is
//   {"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}
// Pure functions (no I/O), so the rules are tested without a broker.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worker/rest/herder_api.h"
#include "worker/storage/group_admin.h"

namespace kc::herder {

/// One parsed PATCH entry for a sink: the topic partition and the offset to
/// commit, or nullopt to delete the partition's committed offset.
struct SinkOffsetWrite {
  storage::TopicPartition partition;
  std::optional<int64_t> offset;
};

/// The group's committed offsets as the offsets API shows them, in the
/// order given (list_group_offsets sorts them by topic, then partition).
std::vector<rest::ConnectorOffset> sink_offsets_to_rest(const std::vector<storage::GroupOffset>& offsets);

/// Validates and parses a PATCH body's entries for a sink connector, as
/// Connect's SinkUtils.parseSinkConnectorOffsets: the partition must hold
/// "kafka_topic" and "kafka_partition"; "kafka_partition" an int and
/// "kafka_offset" a long, given as a JSON number or a string of digits
/// ("10" and 10 both); an offset is null (delete) or holds "kafka_offset".
/// Beyond Connect, which leaves them to the Kafka client: a negative
/// partition or offset is refused here. A partition listed twice keeps its
/// last entry (Connect reads the list into a map). Errors: 400 with
/// Connect's messages, e.g. "The partition for a sink connector offset must
/// contain the keys 'kafka_topic' and 'kafka_partition'".
rest::Reply<std::vector<SinkOffsetWrite>> parse_sink_offsets(const std::vector<rest::ConnectorOffset>& entries);

/// Connect's message after a failed alter or reset when the group still has
/// members ("Failed to alter consumer group offsets for connector c either
/// because its tasks haven't stopped completely yet or ..."); `reset` picks
/// the reset wording.
std::string sink_group_busy_message(const std::string& connector, bool reset);

}  // namespace kc::herder
