#pragma once
// The pure parts of MirrorMaker 2's MirrorSourceConnector: its settings,
// replication policies (remote topic names), topic filtering (include /
// exclude regexes, internal topics, cycles) and the split of source
// partitions over tasks. No I/O, so unit tests cover them directly.
// Written against the plugin contract (kconnectd::Config in,
// kconnectd::Error out), as the connector itself (mirror_source.cpp).

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <kconnectd/plugin.hpp>
#include <nlohmann/json.hpp>

#include "worker/transforms/java_regex.h"

namespace kc::connectors::mirror {

/// Replication policy class names, as MM2 spells them (the short names are
/// accepted too).
inline constexpr const char* kDefaultPolicyClass = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy";
inline constexpr const char* kIdentityPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy";

/// MM2's defaults for `topics` and `topics.exclude`.
inline constexpr const char* kDefaultTopics = ".*";
inline constexpr const char* kDefaultTopicsExclude = ".*[\\-\\.]internal, .*\\.replica, __.*";
/// MM2's default `refresh.topics.interval.ms` (10 minutes).
inline constexpr int64_t kDefaultRefreshMs = 600000;

/// Task config key listing a task's source partitions, "topic-partition"
/// comma list as MM2's `task.assigned.partitions`.
inline constexpr const char* kTaskPartitionsKey = "task.assigned.partitions";

/// Maps source topic names to target (remote) topic names
/// (MM2's ReplicationPolicy).
class ReplicationPolicy {
 public:
  virtual ~ReplicationPolicy() = default;
  /// The name of `topic` of cluster `source_alias` on the target cluster.
  virtual std::string format_remote_topic(const std::string& source_alias, const std::string& topic) const = 0;
  /// The alias of the cluster `topic` was replicated from, or nullopt when
  /// it is not a remote topic (ReplicationPolicy.topicSource).
  virtual std::optional<std::string> topic_source(const std::string& topic) const = 0;
  /// The name `topic` had on its source cluster, or nullopt when it is not
  /// a remote topic (ReplicationPolicy.upstreamTopic).
  virtual std::optional<std::string> upstream_topic(const std::string& topic) const = 0;
  /// MM2's isInternalTopic: names starting with "__" or "." or ending with
  /// ".internal" / "-internal" are never mirrored.
  virtual bool is_internal_topic(const std::string& topic) const;
};

/// DefaultReplicationPolicy: "<alias><separator><topic>" (separator "."
/// by default, `replication.policy.separator`).
class DefaultReplicationPolicy : public ReplicationPolicy {
 public:
  explicit DefaultReplicationPolicy(std::string separator = ".") : sep_(std::move(separator)) {}
  std::string format_remote_topic(const std::string& source_alias, const std::string& topic) const override;
  std::optional<std::string> topic_source(const std::string& topic) const override;
  std::optional<std::string> upstream_topic(const std::string& topic) const override;

 private:
  std::string sep_;
};

/// IdentityReplicationPolicy: keeps the topic name, so it cannot tell
/// remote topics (topic_source is always nullopt) and cannot stop cycles.
class IdentityReplicationPolicy : public ReplicationPolicy {
 public:
  std::string format_remote_topic(const std::string&, const std::string& topic) const override { return topic; }
  std::optional<std::string> topic_source(const std::string&) const override { return std::nullopt; }
  std::optional<std::string> upstream_topic(const std::string&) const override { return std::nullopt; }
};

/// The policy named by `class_name` (full or simple name). Throws
/// kconnectd::Error "Invalid value X for configuration replication.policy.class:
/// ..." for an unknown name.
std::unique_ptr<ReplicationPolicy> make_replication_policy(const std::string& class_name,
                                                           const std::string& separator);

/// A comma list of regexes, each matched against the whole topic name
/// (Java's Pattern.matches).
class RegexList {
 public:
  /// Compiles `list` (blanks around items ignored, empty items skipped).
  /// Throws kconnectd::Error naming `key` and the bad regex.
  RegexList(const std::string& key, const std::string& list);
  bool matches(const std::string& topic) const;
  bool empty() const { return regexes_.empty(); }

 private:
  std::vector<transforms::JavaRegex> regexes_;
};

/// The connector's settings, parsed (see README.md in this folder).
struct MirrorConfig {
  std::string source_alias;       ///< source.cluster.alias (required)
  std::string target_alias;       ///< target.cluster.alias ("" = unknown: no cycle check by alias)
  /// librdkafka settings of the source cluster: every `source.cluster.X`
  /// key except `source.cluster.alias`, as X (bootstrap.servers required).
  std::map<std::string, std::string> source_client;
  /// librdkafka settings of the target cluster (`target.cluster.X`), used
  /// only to create and grow target topics; empty = topics are not created.
  std::map<std::string, std::string> target_client;
  std::string topics = kDefaultTopics;
  std::string topics_exclude = kDefaultTopicsExclude;
  std::string policy_class = kDefaultPolicyClass;
  std::string separator = ".";
  int64_t refresh_ms = kDefaultRefreshMs;  ///< refresh.topics.interval.ms (>= 1)
  bool refresh_enabled = true;             ///< refresh.topics.enabled
  int replication_factor = -1;             ///< replication.factor of created topics (-1 = broker default)
  int poll_batch = 1000;                   ///< max records per task poll (mirror.poll.max.records)
};

/// Parses and checks the connector config. Throws kconnectd::Error with a
/// specific message (missing alias or bootstrap servers, bad number, bad
/// regex, unknown policy).
MirrorConfig parse_mirror_config(const kconnectd::Config& config);

/// Decides which source topics are mirrored (MM2's shouldReplicateTopic):
/// matches `topics`, not `topics.exclude`, not internal, and not a cycle
/// (a remote topic whose source chain reaches the target alias).
class TopicFilter {
 public:
  /// Throws kconnectd::Error on a bad regex or policy.
  explicit TopicFilter(const MirrorConfig& config);
  bool should_replicate(const std::string& topic) const;
  /// True when `topic` came (directly or through other clusters) from the
  /// target cluster, so mirroring it back would loop.
  bool is_cycle(const std::string& topic) const;
  const ReplicationPolicy& policy() const { return *policy_; }

 private:
  RegexList include_, exclude_;
  std::unique_ptr<ReplicationPolicy> policy_;
  std::string target_alias_;
};

/// A source topic-partition.
using TopicPartition = std::pair<std::string, int32_t>;

/// Splits `partitions` over at most `max_tasks` tasks round-robin, in
/// topic then partition order (MM2's taskConfigs: with 3 tasks, t0 of 8
/// partitions and t1 of 2 give task 0 t0-0, t0-3, t0-6, t1-1). Returns
/// min(max_tasks, partitions) non-empty groups; none when there are no
/// partitions. Duplicates are dropped.
std::vector<std::vector<TopicPartition>> split_partitions(std::vector<TopicPartition> partitions, int max_tasks);

/// "t-0,t-1,u-3" for `task.assigned.partitions`.
std::string encode_partitions(const std::vector<TopicPartition>& partitions);
/// Inverse of encode_partitions (the partition follows the last '-').
/// Throws kconnectd::Error on a malformed item.
std::vector<TopicPartition> decode_partitions(const std::string& text);

/// The MM2 source partition {"cluster": alias, "topic": t, "partition": p}.
nlohmann::ordered_json source_partition(const std::string& alias, const std::string& topic, int32_t partition);
/// The offset a task resumes at from a committed MM2 source offset
/// {"offset": o}: o + 1; nullopt when there is none or it is malformed.
std::optional<int64_t> resume_offset(const std::optional<nlohmann::ordered_json>& committed);

}  // namespace kc::connectors::mirror
