#pragma once
// A scripted Kafka broker for the admin calls librdkafka's mock cluster
// (2.0.2) lacks: DeleteGroups, OffsetDelete, CreateTopics, CreatePartitions.
// One node (id 1) on 127.0.0.1:<ephemeral>, running on its own thread with
// its own io_context, so the blocking admin calls under test can run on the
// test's thread. It is the controller, the leader of every partition and
// the coordinator of every group, backed by in-memory maps:
//   group -> (topic, partition) -> committed offset, plus whether the group
//   has members (and which topics they subscribe to);
//   topic -> partition count.
// It records every request it got (API key, version, and what it named).
//
// Versions: it advertises one non-flexible version per API (see
// kAdminBrokerVersions), so librdkafka 2.0.2 and kconnectd's own client
// negotiate down to exactly the versions implemented here. An ApiVersions
// request above v2 gets UNSUPPORTED_VERSION with ApiVersions 0-2 (KIP-511),
// and the client asks again. Any other API, or an unadvertised version,
// is recorded and the connection is closed.
//
// Error behaviour follows Kafka's GroupCoordinator for what the tests need:
//   OffsetCommit from outside a group with members: UNKNOWN_MEMBER_ID;
//   OffsetDelete: GROUP_ID_NOT_FOUND for an unknown group,
//     GROUP_SUBSCRIBED_TO_TOPIC for a topic its members subscribe to;
//   DeleteGroups: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP while it has members;
//   CreateTopics: TOPIC_ALREADY_EXISTS, INVALID_PARTITIONS (0 or < -1;
//     -1 is the broker default, 1 partition here);
//   CreatePartitions: UNKNOWN_TOPIC_OR_PARTITION, INVALID_PARTITIONS (not
//     more than now);
//   FindCoordinator: GROUP_AUTHORIZATION_FAILED for a group deny_group() named.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace kc::test {

/// Kafka API keys the admin broker knows.
namespace api {
inline constexpr int16_t kOffsetCommit = 8;
inline constexpr int16_t kOffsetFetch = 9;
inline constexpr int16_t kMetadata = 3;
inline constexpr int16_t kFindCoordinator = 10;
inline constexpr int16_t kApiVersions = 18;
inline constexpr int16_t kCreateTopics = 19;
inline constexpr int16_t kCreatePartitions = 37;
inline constexpr int16_t kDeleteGroups = 42;
inline constexpr int16_t kOffsetDelete = 47;
}  // namespace api

/// API key -> the one version implemented (advertised as [v, v]; ApiVersions
/// itself as [0, 2]).
const std::map<int16_t, int16_t>& admin_broker_versions();

/// One request the broker received. `group` is the group it named
/// (OffsetCommit/OffsetFetch/OffsetDelete/FindCoordinator key, or each
/// DeleteGroups name joined by ','); `partitions` the (topic, partition)
/// pairs it named; `counts` the (topic, partition count) pairs of
/// CreateTopics / CreatePartitions; `handled` false when the broker did not
/// implement the API or version and closed the connection.
struct AdminBrokerRequest {
  int16_t api_key = 0;
  int16_t api_version = 0;
  std::string client_id;
  std::string group;
  std::vector<std::pair<std::string, int32_t>> partitions;
  std::vector<std::pair<std::string, int32_t>> counts;
  std::vector<int16_t> replication_factors;  ///< CreateTopics, one per topic
  bool handled = true;
};

/// The scripted broker (see file comment). Thread-safe: setters and getters
/// lock the state the broker thread serves from.
class AdminBroker {
 public:
  using Offsets = std::map<std::pair<std::string, int32_t>, int64_t>;

  /// Starts listening and serving. `advertise` = the API keys listed in
  /// ApiVersions (default: every key of admin_broker_versions()); leave out
  /// kDeleteGroups / kOffsetDelete / ... to play an old broker.
  explicit AdminBroker(std::optional<std::set<int16_t>> advertise = std::nullopt);
  /// Stops the thread and closes every connection.
  ~AdminBroker();
  AdminBroker(const AdminBroker&) = delete;
  AdminBroker& operator=(const AdminBroker&) = delete;

  /// "127.0.0.1:<port>".
  [[nodiscard]] std::string bootstrap() const;

  /// Creates or resizes a topic (no request recorded).
  void set_topic(const std::string& topic, int32_t partitions);
  /// Topic -> partition count.
  [[nodiscard]] std::map<std::string, int32_t> topics() const;
  /// Sets one committed offset, creating the group (empty) if needed.
  void set_offset(const std::string& group, const std::string& topic, int32_t partition, int64_t offset);
  /// Gives the group members subscribed to `topics` (nullopt: no members,
  /// the group is empty). Creates the group if needed.
  void set_members(const std::string& group, std::optional<std::set<std::string>> topics);
  /// Makes FindCoordinator for `group` answer GROUP_AUTHORIZATION_FAILED,
  /// as a broker whose ACLs deny the principal the group.
  void deny_group(const std::string& group);
  /// Makes FindCoordinator name another broker (host, port) as the
  /// coordinator of every group; default: this broker.
  void set_coordinator(const std::string& host, uint16_t port);
  /// The group's committed offsets, or nullopt when the group does not exist.
  [[nodiscard]] std::optional<Offsets> group(const std::string& group) const;
  /// Every request so far, in arrival order (ApiVersions included).
  [[nodiscard]] std::vector<AdminBrokerRequest> requests() const;
  /// The requests of one API.
  [[nodiscard]] std::vector<AdminBrokerRequest> requests(int16_t api_key) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace kc::test
