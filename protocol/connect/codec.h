#pragma once
// Encoders and decoders for the Connect subprotocol blobs carried in JoinGroup
// metadata and SyncGroup assignments. Byte-compatible with Apache Kafka
// Connect's ConnectProtocol (V0) and IncrementalCooperativeConnectProtocol
// (V1/V2); layouts in ../shared/reference/connect-reference.md section 2.
//
// All functions are pure and thread-safe: no I/O, no shared state.

#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/connect/types.h"

namespace kc::connect {

/// Task id on the wire that stands for the Connector instance itself
/// (reference 2.4: every -1 in a task array assigns/revokes the connector).
inline constexpr int32_t kConnectorTaskSentinel = -1;

/// Longest STRING the classic Kafka encoding can carry: 32767 UTF-8 bytes
/// (int16 length prefix, Kafka's Type.STRING).
inline constexpr std::size_t kMaxStringBytes = 32767;

/// First 4 bytes of kconnectd's metadata trailer (kconnectd, not in Connect;
/// issue 29): "kcL1" as a big-endian int32. The trailer follows the V1/V2
/// allocation; a reader that finds other bytes there ignores them, as Java does.
inline constexpr int32_t kLabelsTrailerMagic = 0x6B634C31;

/// Encodes worker metadata for one JoinGroup protocol entry.
/// Layout: V0 (version, url, config-offset) when `md.version == 0`; otherwise
/// V1 (adds `allocation` NULLABLE_BYTES). A present allocation is written as a
/// complete V1 assignment blob whose header is `md.version` (not the
/// allocation's own version), as Kafka's ExtendedWorkerState writer does;
/// `nullopt` is written as null (int32 -1). Matches ConnectProtocol /
/// IncrementalCooperativeConnectProtocol.serializeMetadata.
/// Non-empty `md.labels` (V1/V2 only) are appended after the allocation as
/// the labels trailer: int32 kLabelsTrailerMagic, int32 count, then per
/// label (key order) STRING key, STRING value. Empty labels write nothing,
/// so the bytes are exactly Connect's.
/// Errors: negative version, a string longer than 32767 bytes (the Error's
/// field names it, e.g. "metadata.url"), labels in the V0 layout or labels
/// that break common/labels.h's rules ("metadata.labels").
Result<std::vector<uint8_t>> encode_metadata(const WorkerMetadata& md);

/// Decodes worker metadata with the V1 reader (Kafka's
/// IncrementalCooperativeConnectProtocol.deserializeMetadata): any version
/// >= 0, trailing bytes ignored, allocation missing at the clean end of the
/// buffer or null -> `allocation = nullopt` (so V0 bytes decode). A present
/// allocation is decoded with decode_assignment(). After the allocation, the
/// labels trailer is read when the next 4 bytes are kLabelsTrailerMagic;
/// any other trailing bytes are ignored.
/// Errors: negative version, truncated or malformed field (field path in
/// Error::field, e.g. "metadata.allocation.assignment[0].tasks"); a trailer
/// with the magic that is truncated, has more than kMaxLabels labels, a
/// repeated key or a key/value outside common/labels.h's rules
/// ("metadata.labels...").
Result<WorkerMetadata> decode_metadata(std::span<const uint8_t> bytes);

/// Encodes a SyncGroup assignment. V0 layout when `a.version == 0` (Kafka's
/// ConnectProtocol.serializeAssignment), else V1 layout with revoked lists
/// and delay (IncrementalCooperativeConnectProtocol.serializeAssignment).
/// Grouping (reference 2.4/2.6): one entry per distinct connector in first
/// appearance order, each starting with -1; then each task is appended to its
/// connector's entry, creating a new entry for a connector not itself listed.
/// Duplicate tasks are kept. Both arrays are always written (count 0 when
/// empty, never null).
/// Errors: negative version; V0 with non-empty revoked lists or a non-zero
/// delay (the V0 layout cannot carry them); a string longer than 32767 bytes.
Result<std::vector<uint8_t>> encode_assignment(const Assignment& a);

/// Decodes an assignment with the V1 reader (Kafka's
/// IncrementalCooperativeConnectProtocol.deserializeAssignment): any version
/// >= 0, trailing bytes ignored; assignment/revoked/delay missing at the clean
/// end of the buffer (or arrays written as null) -> empty / 0, so V0 bytes
/// decode. Lists keep wire order; duplicates are kept.
/// Errors: negative version, missing error/leader/leader-url/config-offset,
/// any partly present field; Error::field names it, e.g.
/// "assignment.revoked[0].tasks".
Result<Assignment> decode_assignment(std::span<const uint8_t> bytes);

/// Decodes worker metadata with the V0 reader (Kafka's
/// ConnectProtocol.deserializeMetadata): reads version, url and config
/// offset; ignores anything after (e.g. a V1 allocation). The result's
/// allocation is always nullopt. Errors as decode_metadata().
Result<WorkerMetadata> decode_metadata_v0(std::span<const uint8_t> bytes);

/// Decodes an assignment with the V0 reader (Kafka's
/// ConnectProtocol.deserializeAssignment): no tolerance for missing fields,
/// the assignment array is non-nullable, revoked/delay are never read (stay
/// empty/0). Errors as decode_assignment().
Result<Assignment> decode_assignment_v0(std::span<const uint8_t> bytes);

/// One ConnectorAssignment entry exactly as on the wire: a connector name and
/// its task ids in wire order (-1 = the connector itself).
struct WireGroup {
  std::string connector;
  std::vector<int32_t> tasks;
  bool operator==(const WireGroup&) const = default;
};

/// An assignment blob at wire granularity (the per-connector groups), as read
/// by the V1 reader. Used by tests and `kconnectd decode` to show grouping;
/// semantics as decode_assignment().
struct WireAssignment {
  int16_t version = 0;
  int16_t error = 0;
  std::string leader;
  std::string leader_url;
  int64_t config_offset = -1;
  std::vector<WireGroup> assignment;  ///< empty when null or absent
  std::vector<WireGroup> revoked;     ///< empty when null or absent
  int32_t delay_ms = 0;
};

/// Decodes an assignment blob with the V1 reader, keeping wire grouping.
/// Errors as decode_assignment().
Result<WireAssignment> decode_assignment_wire(std::span<const uint8_t> bytes);

/// JSON view of metadata for humans and tests:
/// {"version", "url", "config_offset", "allocation": null | to_json(Assignment)},
/// plus "labels": {key: value} when the worker sends any.
nlohmann::json to_json(const WorkerMetadata& md);

/// JSON view of an assignment: {"version", "error", "leader", "leader_url",
/// "config_offset", "connectors": [..], "tasks": ["c1-0", ..],
/// "revoked_connectors": [..], "revoked_tasks": [..], "delay_ms"}.
nlohmann::json to_json(const Assignment& a);

/// Parses hex text (upper/lower case, optional whitespace, optional "0x"
/// prefix) into bytes. Errors: odd digit count or a non-hex character.
Result<std::vector<uint8_t>> parse_hex(std::string_view hex);

/// Lower-case hex of `bytes`, no separators.
std::string to_hex(std::span<const uint8_t> bytes);

}  // namespace kc::connect
