#pragma once
// Connect subprotocol value types shared by the codecs (protocol/connect),
// the assignors (assignor/) and the worker. Source: Kafka Connect's
// ConnectProtocol / IncrementalCooperativeConnectProtocol / ExtendedAssignment
// (see ../shared/reference/connect-reference.md section 2).

#include <compare>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "common/labels.h"

namespace kc::connect {

/// Connect protocol version carried in the int16 header of metadata and
/// assignment blobs: 0 = `default` (eager), 1 = `compatible`, 2 = `sessioned`.
enum class ProtocolVersion : int16_t { V0 = 0, V1 = 1, V2 = 2 };

/// The three `connect.protocol` modes and their wire protocol names.
enum class ConnectProtocol { Eager, Compatible, Sessioned };

/// Wire protocol name for a mode: "default", "compatible" or "sessioned".
const char* protocol_name(ConnectProtocol p);
/// Header version written for a mode (0, 1, 2).
int16_t protocol_version(ConnectProtocol p);
/// Parses a wire protocol name ("default"|"compatible"|"sessioned").
std::optional<ConnectProtocol> protocol_from_name(const std::string& name);
/// Parses a `connect.protocol` config value (eager|compatible|sessioned), case-insensitive.
std::optional<ConnectProtocol> protocol_from_config(const std::string& value);

/// Identifies one task of a connector: ("c1", 0) prints as "c1-0".
/// Ordered by (connector, task), which is the reference's sorted order.
struct ConnectorTaskId {
  std::string connector;
  int32_t task = 0;

  auto operator<=>(const ConnectorTaskId&) const = default;
  bool operator==(const ConnectorTaskId&) const = default;
  /// "<connector>-<task>".
  [[nodiscard]] std::string to_string() const { return connector + "-" + std::to_string(task); }
};

/// Assignment error codes carried in the assignment blob (int16).
enum class AssignmentError : int16_t { None = 0, ConfigMismatch = 1 };

/// A V0/V1/V2 Connect assignment as decoded from (or encoded to) SyncGroup
/// assignment bytes. V0 has no revoked lists and no delay (they stay empty/0).
/// Lists preserve wire order; duplicates are kept (the reference does not
/// de-duplicate).
struct Assignment {
  int16_t version = 1;                 ///< header version as read or to write
  int16_t error = 0;                   ///< AssignmentError value
  std::string leader;                  ///< leader's group member id
  std::string leader_url;              ///< leader's advertised REST URL
  int64_t config_offset = -1;          ///< config offset the assignment was computed for
  std::vector<std::string> connectors; ///< assigned connectors
  std::vector<ConnectorTaskId> tasks;  ///< assigned tasks
  std::vector<std::string> revoked_connectors;  ///< V1+: connectors to stop
  std::vector<ConnectorTaskId> revoked_tasks;   ///< V1+: tasks to stop
  int32_t delay_ms = 0;                ///< V1+: scheduled rebalance delay, ms

  bool operator==(const Assignment&) const = default;
};

/// Worker metadata carried per protocol in JoinGroup (V0: url + offset;
/// V1/V2 add the worker's current assignment as an embedded blob).
struct WorkerMetadata {
  int16_t version = 1;          ///< header version
  std::string url;              ///< advertised REST URL, e.g. "http://w1:8083/"
  int64_t config_offset = -1;   ///< next config-topic offset to read; -1 when none read
  std::optional<Assignment> allocation;  ///< V1+: current assignment; nullopt = null bytes
  /// V1+ only: the worker's `worker.labels` (kconnectd, not in Connect; issue
  /// 29). Carried in a trailer after the allocation that Java's readers and
  /// older kconnectd builds skip; nothing is written when empty, so an
  /// unlabelled worker's bytes are Connect's exactly (protocol/connect/README.md).
  Labels labels;

  bool operator==(const WorkerMetadata&) const = default;
};

}  // namespace kc::connect

template <>
struct std::hash<kc::connect::ConnectorTaskId> {
  size_t operator()(const kc::connect::ConnectorTaskId& id) const noexcept {
    return std::hash<std::string>{}(id.connector) * 31u + static_cast<size_t>(id.task);
  }
};
