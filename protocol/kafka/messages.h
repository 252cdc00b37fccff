#pragma once
// Kafka group-API message structs: one struct per request/response, holding the
// union of the fields of every supported version. Which fields exist at which
// version is described once per message in the schema tables of
// protocol/kafka/schemas.cpp; the encoders and decoders are generated from
// those tables, not written per version.
//
// Supported versions (Kafka protocol message specs, see
// ../shared/reference/connect-reference.md section 9.8):
//   ApiVersions v0-3, FindCoordinator v0-4, JoinGroup v0-9, SyncGroup v0-5,
//   Heartbeat v0-4, LeaveGroup v0-5, SaslHandshake v0-1, SaslAuthenticate v0-2.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common/result.h"
#include "protocol/kafka/errors.h"

namespace kc::kafka {

using Bytes = std::vector<uint8_t>;
using BytesView = std::span<const uint8_t>;

/// Kafka API keys used by the group client.
enum class ApiKey : int16_t {
  FindCoordinator = 10,
  JoinGroup = 11,
  Heartbeat = 12,
  LeaveGroup = 13,
  SyncGroup = 14,
  SaslHandshake = 17,
  ApiVersions = 18,
  SaslAuthenticate = 36,
};

/// Name of an API key ("JoinGroup", ...), for error messages.
const char* api_name(ApiKey key);

/// Inclusive version range [min, max] that we support for an API.
struct VersionRange {
  int16_t min = 0;
  int16_t max = -1;
};

/// Our supported range for each API (ApiVersions 0-3, FindCoordinator 0-4,
/// JoinGroup 0-9, SyncGroup 0-5, Heartbeat 0-4, LeaveGroup 0-5,
/// SaslHandshake 0-1, SaslAuthenticate 0-2).
VersionRange supported_versions(ApiKey key);

/// True when `version` of `key` uses the flexible encoding (compact strings,
/// tagged fields, request header v2 / response header v1).
bool is_flexible(ApiKey key, int16_t version);

// ---------------------------------------------------------------- ApiVersions
/// ApiVersionsRequest (key 18). ClientSoftware* exist from v3.
struct ApiVersionsRequest {
  std::string client_software_name = "kconnectd";
  std::string client_software_version = "0.1.0";

  bool operator==(const ApiVersionsRequest&) const = default;
};
/// One row of ApiVersionsResponse.ApiKeys.
struct ApiVersionRange {
  int16_t api_key = 0;
  int16_t min_version = 0;
  int16_t max_version = 0;

  bool operator==(const ApiVersionRange&) const = default;
};
/// ApiVersionsResponse (key 18). Always read with response header v0.
struct ApiVersionsResponse {
  int16_t error_code = 0;
  std::vector<ApiVersionRange> api_keys;
  int32_t throttle_time_ms = 0;  ///< v1+

  bool operator==(const ApiVersionsResponse&) const = default;
};

// ------------------------------------------------------------ FindCoordinator
/// FindCoordinatorRequest (key 10). `key` is sent as Key (v0-3) or as the
/// single CoordinatorKeys entry (v4+). key_type: 0 = group (v1+).
struct FindCoordinatorRequest {
  std::string key;
  int8_t key_type = 0;

  bool operator==(const FindCoordinatorRequest&) const = default;
};
/// One coordinator of FindCoordinatorResponse. For v0-3 the top-level fields
/// are reported as a single entry whose key equals the request key.
struct Coordinator {
  std::string key;
  int32_t node_id = -1;
  std::string host;
  int32_t port = -1;
  int16_t error_code = 0;
  std::optional<std::string> error_message;

  bool operator==(const Coordinator&) const = default;
};
/// FindCoordinatorResponse (key 10). v0-3 fill `coordinators` with one entry
/// built from the top-level ErrorCode/ErrorMessage/NodeId/Host/Port.
struct FindCoordinatorResponse {
  int32_t throttle_time_ms = 0;  ///< v1+
  std::vector<Coordinator> coordinators;

  bool operator==(const FindCoordinatorResponse&) const = default;
};

// ------------------------------------------------------------------ JoinGroup
/// One protocol offered in JoinGroup: name + opaque metadata bytes.
struct JoinGroupProtocol {
  std::string name;
  Bytes metadata;

  bool operator==(const JoinGroupProtocol&) const = default;
};
/// JoinGroupRequest (key 11).
struct JoinGroupRequest {
  std::string group_id;
  int32_t session_timeout_ms = 10000;
  int32_t rebalance_timeout_ms = -1;  ///< v1+
  std::string member_id;
  std::optional<std::string> group_instance_id;  ///< v5+
  std::string protocol_type;
  std::vector<JoinGroupProtocol> protocols;
  std::optional<std::string> reason;  ///< v8+ (ignorable)

  bool operator==(const JoinGroupRequest&) const = default;
};
/// One member listed in the leader's JoinGroupResponse.
struct JoinGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;  ///< v5+
  Bytes metadata;

  bool operator==(const JoinGroupMember&) const = default;
};
/// JoinGroupResponse (key 11).
struct JoinGroupResponse {
  int32_t throttle_time_ms = 0;  ///< v2+
  int16_t error_code = 0;
  int32_t generation_id = -1;
  std::optional<std::string> protocol_type;  ///< v7+
  std::optional<std::string> protocol_name;  ///< nullable from v7
  std::string leader;
  bool skip_assignment = false;  ///< v9+
  std::string member_id;
  std::vector<JoinGroupMember> members;

  bool operator==(const JoinGroupResponse&) const = default;
};

// ------------------------------------------------------------------ SyncGroup
/// One member's assignment in the leader's SyncGroupRequest.
struct SyncGroupAssignment {
  std::string member_id;
  Bytes assignment;

  bool operator==(const SyncGroupAssignment&) const = default;
};
/// SyncGroupRequest (key 14).
struct SyncGroupRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;  ///< v3+
  std::optional<std::string> protocol_type;      ///< v5+
  std::optional<std::string> protocol_name;      ///< v5+
  std::vector<SyncGroupAssignment> assignments;

  bool operator==(const SyncGroupRequest&) const = default;
};
/// SyncGroupResponse (key 14).
struct SyncGroupResponse {
  int32_t throttle_time_ms = 0;  ///< v1+
  int16_t error_code = 0;
  std::optional<std::string> protocol_type;  ///< v5+
  std::optional<std::string> protocol_name;  ///< v5+
  Bytes assignment;

  bool operator==(const SyncGroupResponse&) const = default;
};

// ------------------------------------------------------------------ Heartbeat
/// HeartbeatRequest (key 12).
struct HeartbeatRequest {
  std::string group_id;
  int32_t generation_id = -1;
  std::string member_id;
  std::optional<std::string> group_instance_id;  ///< v3+

  bool operator==(const HeartbeatRequest&) const = default;
};
/// HeartbeatResponse (key 12).
struct HeartbeatResponse {
  int32_t throttle_time_ms = 0;  ///< v1+
  int16_t error_code = 0;

  bool operator==(const HeartbeatResponse&) const = default;
};

// ----------------------------------------------------------------- LeaveGroup
/// One leaving member (v3+ batch form).
struct LeaveGroupMember {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  std::optional<std::string> reason;  ///< v5+

  bool operator==(const LeaveGroupMember&) const = default;
};
/// LeaveGroupRequest (key 13). v0-2 send members[0].member_id as MemberId.
struct LeaveGroupRequest {
  std::string group_id;
  std::vector<LeaveGroupMember> members;

  bool operator==(const LeaveGroupRequest&) const = default;
};
/// Per-member result of LeaveGroupResponse (v3+).
struct LeaveGroupMemberResponse {
  std::string member_id;
  std::optional<std::string> group_instance_id;
  int16_t error_code = 0;

  bool operator==(const LeaveGroupMemberResponse&) const = default;
};
/// LeaveGroupResponse (key 13).
struct LeaveGroupResponse {
  int32_t throttle_time_ms = 0;  ///< v1+
  int16_t error_code = 0;
  std::vector<LeaveGroupMemberResponse> members;  ///< v3+

  bool operator==(const LeaveGroupResponse&) const = default;
};

// -------------------------------------------------------------- SASL (KIP-43, KIP-152)
/// SaslHandshakeRequest (key 17, v0-1, never flexible): the SASL mechanism
/// the client wants ("PLAIN", "SCRAM-SHA-256", ...). At v1 the SASL tokens
/// that follow travel in SaslAuthenticate requests (KIP-152); at v0 they
/// would be unframed, which kconnectd does not speak.
struct SaslHandshakeRequest {
  std::string mechanism;

  bool operator==(const SaslHandshakeRequest&) const = default;
};
/// SaslHandshakeResponse (key 17): error_code UNSUPPORTED_SASL_MECHANISM (33)
/// when the broker does not enable `mechanism`; `mechanisms` lists the ones
/// it does enable.
struct SaslHandshakeResponse {
  int16_t error_code = 0;
  std::vector<std::string> mechanisms;

  bool operator==(const SaslHandshakeResponse&) const = default;
};
/// SaslAuthenticateRequest (key 36, v0-2, flexible from v2): one SASL token
/// from the client (the mechanism's bytes, opaque to Kafka).
struct SaslAuthenticateRequest {
  Bytes auth_bytes;

  bool operator==(const SaslAuthenticateRequest&) const = default;
};
/// SaslAuthenticateResponse (key 36): the server's token, or an error
/// (SASL_AUTHENTICATION_FAILED, 58) with the broker's text in error_message.
struct SaslAuthenticateResponse {
  int16_t error_code = 0;
  std::optional<std::string> error_message;
  Bytes auth_bytes;
  /// v1+ (KIP-368): ms until the broker expects re-authentication; 0 = never.
  int64_t session_lifetime_ms = 0;

  bool operator==(const SaslAuthenticateResponse&) const = default;
};

// ------------------------------------------------------------------ codecs
// Body codecs (no size prefix, no header). Encoders fail with an Error when a
// value cannot be written at that version (e.g. a string > 32767 bytes, a
// non-null field that the version lacks and that is not ignorable, or an
// unsupported version). Decoders never read out of bounds: truncated input,
// negative or oversized lengths give an Error naming the field.
//
// Details (implemented in schemas.cpp from one table per message):
// - Error::field is the path of the failing field in snake_case, e.g.
//   "JoinGroupResponse.members[2].metadata"; Error::message says what failed
//   ("length 4000 exceeds remaining 12 bytes").
// - Fields a version lacks decode to Kafka's default (e.g. rebalance_timeout_ms
//   -1 at JoinGroup v0, client_software_name "" at ApiVersions v0-2), except
//   the mapped ones: FindCoordinatorResponse v0-3 -> coordinators[0] (key left
//   empty), LeaveGroupRequest v0-2 -> members[0].member_id.
// - Ignorable fields (throttle times, reason, rebalance_timeout_ms, SyncGroup
//   protocol_type/name, ApiVersions client software) are dropped silently at
//   versions that lack them.
// - Decoders skip unknown tagged fields, reject nulls before a field's
//   nullable-from version, counts/lengths beyond the remaining bytes (before
//   allocating), strings over 32767 bytes, and trailing bytes after the body.
// - Pure functions: safe from any thread.
#define KC_KAFKA_MESSAGE_CODEC(T)                                      \
  Result<Bytes> encode(const T& msg, int16_t version);                 \
  Result<T> decode_##T(BytesView body, int16_t version);

KC_KAFKA_MESSAGE_CODEC(ApiVersionsRequest)
KC_KAFKA_MESSAGE_CODEC(ApiVersionsResponse)
KC_KAFKA_MESSAGE_CODEC(FindCoordinatorRequest)
KC_KAFKA_MESSAGE_CODEC(FindCoordinatorResponse)
KC_KAFKA_MESSAGE_CODEC(JoinGroupRequest)
KC_KAFKA_MESSAGE_CODEC(JoinGroupResponse)
KC_KAFKA_MESSAGE_CODEC(SyncGroupRequest)
KC_KAFKA_MESSAGE_CODEC(SyncGroupResponse)
KC_KAFKA_MESSAGE_CODEC(HeartbeatRequest)
KC_KAFKA_MESSAGE_CODEC(HeartbeatResponse)
KC_KAFKA_MESSAGE_CODEC(LeaveGroupRequest)
KC_KAFKA_MESSAGE_CODEC(LeaveGroupResponse)
KC_KAFKA_MESSAGE_CODEC(SaslHandshakeRequest)
KC_KAFKA_MESSAGE_CODEC(SaslHandshakeResponse)
KC_KAFKA_MESSAGE_CODEC(SaslAuthenticateRequest)
KC_KAFKA_MESSAGE_CODEC(SaslAuthenticateResponse)
#undef KC_KAFKA_MESSAGE_CODEC

/// Request header (v1, or v2 when flexible). client_id is a nullable int16 string.
struct RequestHeader {
  ApiKey api_key{};
  int16_t api_version = 0;
  int32_t correlation_id = 0;
  std::optional<std::string> client_id;

  bool operator==(const RequestHeader&) const = default;
};

/// Encodes header + body into one request frame WITH the int32 size prefix.
/// The header version follows is_flexible(key, version).
Result<Bytes> encode_request_frame(const RequestHeader& header, BytesView body);

/// Reads the request header from a frame body (no size prefix); returns the
/// header and the offset where the message body starts. Used by tests/fuzzers.
Result<std::pair<RequestHeader, size_t>> decode_request_header(BytesView frame);

/// Reads the response header for (key, version) from a response frame
/// (no size prefix): correlation id, plus the tagged section for flexible
/// versions except ApiVersions (always response header v0). Returns the
/// correlation id and the offset where the body starts.
Result<std::pair<int32_t, size_t>> decode_response_header(BytesView frame, ApiKey key,
                                                          int16_t version);

}  // namespace kc::kafka
