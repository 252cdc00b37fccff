#pragma once
// Sink connector offsets in the REST shapes of KIP-875 (Connect's
// SinkUtils): a consumer group offset is
//   {"partition":{"kafka_topic":"t","kafka_partition":0},"offset":{"kafka_offset":5}}
// parse_sink_offsets / sink_offsets_to_rest / sink_group_busy_message are
// pure (no I/O), so the rules are tested without a broker;
// read_sink_offsets / alter_sink_offsets / reset_sink_offsets call the
// broker through storage/group_admin and block: pool threads only.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "worker/api/herder_api.h"
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

/// Where a sink connector's offsets live: its consumer group
/// (`connect-<name>` or consumer.override.group.id), the admin client's
/// librdkafka properties, the connector's `topics` (GET falls back to their
/// partitions when the all-partitions OffsetFetch answers nothing, as
/// librdkafka's mock does) and the bound of each admin call (ms).
struct SinkGroup {
  std::string connector;
  std::string group;
  storage::ClientProps admin_props;
  std::vector<std::string> topics;
  int timeout_ms = 30000;
};

/// GET /connectors/{c}/offsets of a sink (Connect's
/// Worker.sinkConnectorOffsets): the group's committed offsets, sorted by
/// topic then partition. Errors: 500 "Failed to retrieve consumer group
/// offsets for sink connector <c>: <reason>".
rest::Reply<std::vector<rest::ConnectorOffset>> read_sink_offsets(const SinkGroup& sink);

/// PATCH /connectors/{c}/offsets of a STOPPED sink (Connect's
/// modifySinkConnectorOffsets): entries with an offset are committed
/// (OffsetCommit), entries with a null offset deleted (OffsetDelete,
/// KIP-496), in that order. Errors: 400 for a bad body
/// (parse_sink_offsets); 500 with sink_group_busy_message when the group
/// still has members (UNKNOWN_MEMBER_ID, GROUP_SUBSCRIBED_TO_TOPIC); 500
/// "Failed to alter consumer group offsets for connector <c>: <reason>"
/// otherwise, e.g. a broker without OffsetDelete.
rest::Reply<std::string> alter_sink_offsets(const SinkGroup& sink, const std::vector<rest::ConnectorOffset>& entries);

/// DELETE /connectors/{c}/offsets of a STOPPED sink: deletes the whole
/// group (DeleteGroups); a group that is already gone counts as reset
/// (Connect ignores GroupIdNotFoundException). Errors: 500 with
/// sink_group_busy_message(reset) for NON_EMPTY_GROUP; 500 "Failed to reset
/// consumer group offsets for sink connector <c>: <reason>" otherwise, e.g.
/// a broker without DeleteGroups.
rest::Reply<std::string> reset_sink_offsets(const SinkGroup& sink);

}  // namespace kc::herder
