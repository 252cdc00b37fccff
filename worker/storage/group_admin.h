#pragma once
// Consumer group offsets through librdkafka's admin API: what the sink
// connector offsets API (KIP-875, Connect's Worker.sinkConnectorOffsets /
// modifySinkConnectorOffsets) needs. Each call creates a short-lived admin
// client from the given properties and blocks until the broker answers or
// the timeout passes: call from a pool thread, never the io_context.

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "worker/storage/kafka_client.h"

namespace kc::storage {

/// One committed offset of a consumer group: topic, partition, and the
/// offset of the next record to consume (>= 0).
struct GroupOffset {
  std::string topic;
  int32_t partition = 0;
  int64_t offset = 0;
  bool operator==(const GroupOffset&) const = default;
};

/// A topic partition (topic, partition).
using TopicPartition = std::pair<std::string, int32_t>;

/// Outcome of an admin call: `code` is the Kafka (or librdkafka local)
/// error, RD_KAFKA_RESP_ERR_NO_ERROR on success; `message` is the broker's
/// or librdkafka's text, naming the partition when one partition failed.
struct AdminStatus {
  rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string message;
  [[nodiscard]] bool ok() const { return code == RD_KAFKA_RESP_ERR_NO_ERROR; }
};

/// The committed offsets of `group` (OffsetFetch through
/// rd_kafka_ListConsumerGroupOffsets). `partitions` empty = every partition
/// the group has an offset for; otherwise only those (partitions without a
/// committed offset are left out). A group that does not exist has none.
/// Sorted by topic, then partition. `timeout_ms` bounds the whole call.
AdminStatus list_group_offsets(const ClientProps& props, const std::string& group,
                               const std::vector<TopicPartition>& partitions, int timeout_ms,
                               std::vector<GroupOffset>& out);

/// Commits `offsets` for `group` (OffsetCommit through
/// rd_kafka_AlterConsumerGroupOffsets). The broker refuses it with
/// UNKNOWN_MEMBER_ID while the group has members. A per-partition error
/// fails the call with that partition's code.
AdminStatus alter_group_offsets(const ClientProps& props, const std::string& group,
                                const std::vector<GroupOffset>& offsets, int timeout_ms);

/// Deletes the committed offsets of `partitions` for `group` (OffsetDelete,
/// KIP-496, brokers >= 2.4, through rd_kafka_DeleteConsumerGroupOffsets).
/// librdkafka 2.0.2 aborts the process when the broker lacks OffsetDelete
/// (librdkafka #3663), so this first asks the group's coordinator with
/// broker_apis() and answers RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE ("OffsetDelete
/// API (KIP-496) not supported by the broker, requires broker version >=
/// 2.4.0") without sending anything when it is missing.
/// GROUP_SUBSCRIBED_TO_TOPIC while members consume the topic,
/// GROUP_ID_NOT_FOUND when the group has no offsets at all.
AdminStatus delete_group_offsets(const ClientProps& props, const std::string& group,
                                 const std::vector<TopicPartition>& partitions, int timeout_ms);

/// Deletes `group` and all its offsets (DeleteGroups through
/// rd_kafka_DeleteGroups). GROUP_ID_NOT_FOUND when it does not exist,
/// NON_EMPTY_GROUP while it has members. Like delete_group_offsets, asks
/// broker_apis() first: librdkafka 2.0.2 also aborts after a DeleteGroups
/// the broker does not support (RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE,
/// "DeleteGroups API (KIP-229) not supported by the broker, requires broker
/// version >= 1.1.0").
AdminStatus delete_group(const ClientProps& props, const std::string& group, int timeout_ms);

/// Every partition of the listed topics that exist, from the cluster's
/// metadata (topics the broker does not know are left out).
AdminStatus topic_partitions(const ClientProps& props, const std::vector<std::string>& topics, int timeout_ms,
                             std::vector<TopicPartition>& out);

/// Kafka API keys the admin calls need, as ApiVersions lists them.
inline constexpr int16_t kApiCreateTopics = 19;
inline constexpr int16_t kApiCreatePartitions = 37;
inline constexpr int16_t kApiDeleteGroups = 42;
inline constexpr int16_t kApiOffsetDelete = 47;

/// A broker's ApiVersions answer: API key -> [min, max] version.
using BrokerApis = std::map<int16_t, std::pair<int16_t, int16_t>>;

/// What the broker that coordinates `group` lists in its ApiVersions answer,
/// asked with kconnectd's own Kafka client (protocol/kafka Connection), not
/// librdkafka: librdkafka has no public API for a broker's versions.
/// Connects to the `bootstrap.servers` in order until one answers, asks it
/// FindCoordinator for `group` (retrying COORDINATOR_NOT_AVAILABLE /
/// LOAD_IN_PROGRESS) and takes the coordinator's own answer; with `group`
/// empty, the bootstrap broker's. Blocks up to `timeout_ms` on the calling
/// thread with a private io_context: call from a pool thread, never the
/// worker's io_context. The connections use the TLS and SASL settings in
/// `props` (security.protocol, ssl.*, sasl.*; see kafka_security.h), as the
/// librdkafka admin client made from the same props does. Errors:
/// __INVALID_ARG for a bad bootstrap list or bad security settings (naming
/// the key); __SSL (TLS handshake or certificate) and __AUTHENTICATION
/// (SASL) naming the broker, at the first broker that fails so; __TRANSPORT
/// when no broker answered (naming each one's failure); __TIMED_OUT when the
/// coordinator was not found in time.
AdminStatus broker_apis(const ClientProps& props, const std::string& group, int timeout_ms, BrokerApis& apis);

}  // namespace kc::storage
