// The one description of every group-API message we speak (field names in
// snake_case, wire order, versions each field exists in), and the public
// encode/decode functions generated from it. Facts from the Kafka message
// specs, see connect-reference.md 9.8; flexible-from versions in kApis below.

#include <array>
#include <limits>

#include "protocol/kafka/messages.h"
#include "protocol/kafka/schema.h"
#include "protocol/kafka/wire.h"

namespace kc::kafka {
namespace {

using namespace kc::kafka::schema;  // NOLINT: the table DSL reads better unqualified

// ------------------------------------------------------------------ APIs
struct ApiInfo {
  ApiKey key;
  const char* name;
  VersionRange range;
  int16_t flexible_from;
};

constexpr std::array<ApiInfo, 8> kApis{{
    {ApiKey::ApiVersions, "ApiVersions", {0, 3}, 3},
    {ApiKey::FindCoordinator, "FindCoordinator", {0, 4}, 3},
    {ApiKey::JoinGroup, "JoinGroup", {0, 9}, 6},
    {ApiKey::SyncGroup, "SyncGroup", {0, 5}, 4},
    {ApiKey::Heartbeat, "Heartbeat", {0, 4}, 4},
    {ApiKey::LeaveGroup, "LeaveGroup", {0, 5}, 4},
    {ApiKey::SaslHandshake, "SaslHandshake", {0, 1}, Versions::kOpen},  // never flexible
    {ApiKey::SaslAuthenticate, "SaslAuthenticate", {0, 2}, 2},
}};

const ApiInfo* find_api(ApiKey key) {
  for (const auto& a : kApis) {
    if (a.key == key) return &a;
  }
  return nullptr;
}

// ------------------------------------------------------------------ tables
// ApiVersions (key 18): request v3+ names the client; the response's
// tagged fields (SupportedFeatures, FinalizedFeatures...) are skipped.
constexpr auto kApiVersionsRequest = message<ApiVersionsRequest>(
    "ApiVersionsRequest",
    Str("client_software_name", &ApiVersionsRequest::client_software_name, since(3), kIgnorable),
    Str("client_software_version", &ApiVersionsRequest::client_software_version, since(3),
        kIgnorable));

constexpr auto kApiVersionsResponse = message<ApiVersionsResponse>(
    "ApiVersionsResponse",
    Int("error_code", &ApiVersionsResponse::error_code, since(0)),
    Array("api_keys", &ApiVersionsResponse::api_keys, since(0),
          message<ApiVersionRange>("ApiVersion",
                                   Int("api_key", &ApiVersionRange::api_key, since(0)),
                                   Int("min_version", &ApiVersionRange::min_version, since(0)),
                                   Int("max_version", &ApiVersionRange::max_version, since(0)))),
    Int("throttle_time_ms", &ApiVersionsResponse::throttle_time_ms, since(1), kIgnorable));

// FindCoordinator (key 10): v0-3 carry one Key, v4+ a CoordinatorKeys array
// (we send exactly one). Responses v0-3 carry one coordinator at top level,
// which maps to coordinators[0].
using FCReq = FindCoordinatorRequest;
constexpr auto kFindCoordinatorRequest = message<FCReq>(
    "FindCoordinatorRequest",
    Str("key", &FCReq::key, upto(0, 3), kMapped),
    Int("key_type", &FCReq::key_type, since(1)),
    StrArray("coordinator_keys",
             conv<FCReq, std::vector<std::string>>(
                 [](const FCReq& m) { return std::vector<std::string>{m.key}; },
                 [](FCReq& m, std::vector<std::string>&& keys) -> std::optional<std::string> {
                   if (keys.size() > 1) {
                     return std::to_string(keys.size()) + " keys; only one is supported";
                   }
                   m.key = keys.empty() ? std::string() : std::move(keys.front());
                   return std::nullopt;
                 }),
             since(4), kMapped));

using FCResp = FindCoordinatorResponse;
constexpr auto kFindCoordinatorResponse = message<FCResp>(
    "FindCoordinatorResponse",
    Constraint<FCResp>("coordinators", upto(0, 3),
                       [](const FCResp& m) -> const char* {
                         return m.coordinators.size() > 1 ? "more than one coordinator" : nullptr;
                       }),
    Int("throttle_time_ms", &FCResp::throttle_time_ms, since(1), kIgnorable),
    Int("error_code", via<FCResp>([](auto& m) -> auto& { return slot0(m.coordinators).error_code; }),
        upto(0, 3), kMapped),
    NStr("error_message",
         via<FCResp>([](auto& m) -> auto& { return slot0(m.coordinators).error_message; }),
         upto(1, 3), 1, kMapped | kIgnorable),
    Int("node_id", via<FCResp>([](auto& m) -> auto& { return slot0(m.coordinators).node_id; }),
        upto(0, 3), kMapped),
    Str("host", via<FCResp>([](auto& m) -> auto& { return slot0(m.coordinators).host; }),
        upto(0, 3), kMapped),
    Int("port", via<FCResp>([](auto& m) -> auto& { return slot0(m.coordinators).port; }),
        upto(0, 3), kMapped),
    Array("coordinators", &FCResp::coordinators, since(4),
          message<Coordinator>("Coordinator", Str("key", &Coordinator::key, since(0)),
                               Int("node_id", &Coordinator::node_id, since(0)),
                               Str("host", &Coordinator::host, since(0)),
                               Int("port", &Coordinator::port, since(0)),
                               Int("error_code", &Coordinator::error_code, since(0)),
                               NStr("error_message", &Coordinator::error_message, since(0), 0)),
          kMapped));

// JoinGroup (key 11).
using JGReq = JoinGroupRequest;
constexpr auto kJoinGroupRequest = message<JGReq>(
    "JoinGroupRequest",
    Str("group_id", &JGReq::group_id, since(0)),
    Int("session_timeout_ms", &JGReq::session_timeout_ms, since(0)),
    Int("rebalance_timeout_ms", &JGReq::rebalance_timeout_ms, since(1), kIgnorable, -1),
    Str("member_id", &JGReq::member_id, since(0)),
    NStr("group_instance_id", &JGReq::group_instance_id, since(5), 5),
    Str("protocol_type", &JGReq::protocol_type, since(0)),
    Array("protocols", &JGReq::protocols, since(0),
          message<JoinGroupProtocol>("JoinGroupProtocol",
                                     Str("name", &JoinGroupProtocol::name, since(0)),
                                     Blob("metadata", &JoinGroupProtocol::metadata, since(0)))),
    NStr("reason", &JGReq::reason, since(8), 8, kIgnorable));

using JGResp = JoinGroupResponse;
constexpr auto kJoinGroupResponse = message<JGResp>(
    "JoinGroupResponse",
    Int("throttle_time_ms", &JGResp::throttle_time_ms, since(2), kIgnorable),
    Int("error_code", &JGResp::error_code, since(0)),
    Int("generation_id", &JGResp::generation_id, since(0), 0, -1),
    NStr("protocol_type", &JGResp::protocol_type, since(7), 7, kIgnorable),
    NStr("protocol_name", &JGResp::protocol_name, since(0), 7),
    Str("leader", &JGResp::leader, since(0)),
    Bool("skip_assignment", &JGResp::skip_assignment, since(9)),
    Str("member_id", &JGResp::member_id, since(0)),
    Array("members", &JGResp::members, since(0),
          message<JoinGroupMember>(
              "JoinGroupMember", Str("member_id", &JoinGroupMember::member_id, since(0)),
              NStr("group_instance_id", &JoinGroupMember::group_instance_id, since(5), 5),
              Blob("metadata", &JoinGroupMember::metadata, since(0)))));

// SyncGroup (key 14).
using SGReq = SyncGroupRequest;
constexpr auto kSyncGroupRequest = message<SGReq>(
    "SyncGroupRequest",
    Str("group_id", &SGReq::group_id, since(0)),
    Int("generation_id", &SGReq::generation_id, since(0), 0, -1),
    Str("member_id", &SGReq::member_id, since(0)),
    NStr("group_instance_id", &SGReq::group_instance_id, since(3), 3),
    NStr("protocol_type", &SGReq::protocol_type, since(5), 5, kIgnorable),
    NStr("protocol_name", &SGReq::protocol_name, since(5), 5, kIgnorable),
    Array("assignments", &SGReq::assignments, since(0),
          message<SyncGroupAssignment>(
              "SyncGroupAssignment", Str("member_id", &SyncGroupAssignment::member_id, since(0)),
              Blob("assignment", &SyncGroupAssignment::assignment, since(0)))));

using SGResp = SyncGroupResponse;
constexpr auto kSyncGroupResponse = message<SGResp>(
    "SyncGroupResponse",
    Int("throttle_time_ms", &SGResp::throttle_time_ms, since(1), kIgnorable),
    Int("error_code", &SGResp::error_code, since(0)),
    NStr("protocol_type", &SGResp::protocol_type, since(5), 5, kIgnorable),
    NStr("protocol_name", &SGResp::protocol_name, since(5), 5, kIgnorable),
    Blob("assignment", &SGResp::assignment, since(0)));

// Heartbeat (key 12).
constexpr auto kHeartbeatRequest = message<HeartbeatRequest>(
    "HeartbeatRequest",
    Str("group_id", &HeartbeatRequest::group_id, since(0)),
    Int("generation_id", &HeartbeatRequest::generation_id, since(0), 0, -1),
    Str("member_id", &HeartbeatRequest::member_id, since(0)),
    NStr("group_instance_id", &HeartbeatRequest::group_instance_id, since(3), 3));

constexpr auto kHeartbeatResponse = message<HeartbeatResponse>(
    "HeartbeatResponse",
    Int("throttle_time_ms", &HeartbeatResponse::throttle_time_ms, since(1), kIgnorable),
    Int("error_code", &HeartbeatResponse::error_code, since(0)));

// LeaveGroup (key 13): v0-2 carry one MemberId, which maps to
// members[0].member_id; v3+ carry the Members batch.
using LGReq = LeaveGroupRequest;
constexpr auto kLeaveGroupRequest = message<LGReq>(
    "LeaveGroupRequest",
    Constraint<LGReq>("members", upto(0, 2),
                      [](const LGReq& m) -> const char* {
                        if (m.members.size() > 1) return "more than one member";
                        if (!m.members.empty() && m.members.front().group_instance_id) {
                          return "group_instance_id cannot be sent";
                        }
                        return nullptr;
                      }),
    Str("group_id", &LGReq::group_id, since(0)),
    Str("member_id", via<LGReq>([](auto& m) -> auto& { return slot0(m.members).member_id; }),
        upto(0, 2), kMapped),
    Array("members", &LGReq::members, since(3),
          message<LeaveGroupMember>(
              "LeaveGroupMember", Str("member_id", &LeaveGroupMember::member_id, since(0)),
              NStr("group_instance_id", &LeaveGroupMember::group_instance_id, since(0), 0),
              NStr("reason", &LeaveGroupMember::reason, since(5), 5, kIgnorable)),
          kMapped));

using LGResp = LeaveGroupResponse;
constexpr auto kLeaveGroupResponse = message<LGResp>(
    "LeaveGroupResponse",
    Int("throttle_time_ms", &LGResp::throttle_time_ms, since(1), kIgnorable),
    Int("error_code", &LGResp::error_code, since(0)),
    Array("members", &LGResp::members, since(3),
          message<LeaveGroupMemberResponse>(
              "LeaveGroupMemberResponse",
              Str("member_id", &LeaveGroupMemberResponse::member_id, since(0)),
              NStr("group_instance_id", &LeaveGroupMemberResponse::group_instance_id, since(0), 0),
              Int("error_code", &LeaveGroupMemberResponse::error_code, since(0)))));

// SaslHandshake (key 17): same fields at v0 and v1; v1 only changes what
// follows (SaslAuthenticate framing instead of raw tokens).
constexpr auto kSaslHandshakeRequest = message<SaslHandshakeRequest>(
    "SaslHandshakeRequest", Str("mechanism", &SaslHandshakeRequest::mechanism, since(0)));

constexpr auto kSaslHandshakeResponse = message<SaslHandshakeResponse>(
    "SaslHandshakeResponse", Int("error_code", &SaslHandshakeResponse::error_code, since(0)),
    StrArray("mechanisms", &SaslHandshakeResponse::mechanisms, since(0)));

// SaslAuthenticate (key 36): v1 adds SessionLifetimeMs (KIP-368), v2 is the
// flexible form.
constexpr auto kSaslAuthenticateRequest = message<SaslAuthenticateRequest>(
    "SaslAuthenticateRequest", Blob("auth_bytes", &SaslAuthenticateRequest::auth_bytes, since(0)));

using SAResp = SaslAuthenticateResponse;
constexpr auto kSaslAuthenticateResponse = message<SAResp>(
    "SaslAuthenticateResponse", Int("error_code", &SAResp::error_code, since(0)),
    NStr("error_message", &SAResp::error_message, since(0), 0),
    Blob("auth_bytes", &SAResp::auth_bytes, since(0)),
    Int("session_lifetime_ms", &SAResp::session_lifetime_ms, since(1), kIgnorable));

// ------------------------------------------------------------------ drivers
std::optional<Error> version_error(ApiKey key, int16_t version, const char* what) {
  const ApiInfo* api = find_api(key);
  if (api == nullptr) {
    return Error{what, "unknown API key " + std::to_string(static_cast<int>(key))};
  }
  if (version < api->range.min || version > api->range.max) {
    return Error{what, std::string(api->name) + " version " + std::to_string(version) +
                           " is not supported (supported " + std::to_string(api->range.min) +
                           "-" + std::to_string(api->range.max) + ")"};
  }
  return std::nullopt;
}

template <class Sch>
Result<Bytes> encode_with(ApiKey key, const Sch& sch, const typename Sch::struct_type& msg,
                          int16_t version) {
  if (auto e = version_error(key, version, sch.name)) return *e;
  const Ctx c{api_name(key), version, is_flexible(key, version)};
  Bytes out;
  out.reserve(64);
  wire::Writer w(out);
  Error err;
  const Path root{nullptr, sch.name};
  if (!encode_struct(w, c, sch, msg, root, err)) return err;
  return out;
}

template <class Sch>
Result<typename Sch::struct_type> decode_with(ApiKey key, const Sch& sch, BytesView body,
                                              int16_t version) {
  if (auto e = version_error(key, version, sch.name)) return *e;
  const Ctx c{api_name(key), version, is_flexible(key, version)};
  typename Sch::struct_type msg{};
  wire::Reader r(body);
  Error err;
  const Path root{nullptr, sch.name};
  if (!decode_struct(r, c, sch, msg, root, err)) return err;
  if (r.remaining() != 0) {
    return Error{sch.name, std::to_string(r.remaining()) + " trailing bytes after " +
                               api_name(key) + " v" + std::to_string(version)};
  }
  return msg;
}

}  // namespace

const char* api_name(ApiKey key) {
  const ApiInfo* api = find_api(key);
  return api ? api->name : "Unknown";
}

VersionRange supported_versions(ApiKey key) {
  const ApiInfo* api = find_api(key);
  return api ? api->range : VersionRange{};
}

bool is_flexible(ApiKey key, int16_t version) {
  const ApiInfo* api = find_api(key);
  return api != nullptr && version >= api->flexible_from;
}

#define KC_KAFKA_DEFINE_CODEC(T, KEY, SCHEMA)                        \
  Result<Bytes> encode(const T& msg, int16_t version) {              \
    return encode_with(ApiKey::KEY, SCHEMA, msg, version);           \
  }                                                                  \
  Result<T> decode_##T(BytesView body, int16_t version) {            \
    return decode_with(ApiKey::KEY, SCHEMA, body, version);          \
  }

KC_KAFKA_DEFINE_CODEC(ApiVersionsRequest, ApiVersions, kApiVersionsRequest)
KC_KAFKA_DEFINE_CODEC(ApiVersionsResponse, ApiVersions, kApiVersionsResponse)
KC_KAFKA_DEFINE_CODEC(FindCoordinatorRequest, FindCoordinator, kFindCoordinatorRequest)
KC_KAFKA_DEFINE_CODEC(FindCoordinatorResponse, FindCoordinator, kFindCoordinatorResponse)
KC_KAFKA_DEFINE_CODEC(JoinGroupRequest, JoinGroup, kJoinGroupRequest)
KC_KAFKA_DEFINE_CODEC(JoinGroupResponse, JoinGroup, kJoinGroupResponse)
KC_KAFKA_DEFINE_CODEC(SyncGroupRequest, SyncGroup, kSyncGroupRequest)
KC_KAFKA_DEFINE_CODEC(SyncGroupResponse, SyncGroup, kSyncGroupResponse)
KC_KAFKA_DEFINE_CODEC(HeartbeatRequest, Heartbeat, kHeartbeatRequest)
KC_KAFKA_DEFINE_CODEC(HeartbeatResponse, Heartbeat, kHeartbeatResponse)
KC_KAFKA_DEFINE_CODEC(LeaveGroupRequest, LeaveGroup, kLeaveGroupRequest)
KC_KAFKA_DEFINE_CODEC(LeaveGroupResponse, LeaveGroup, kLeaveGroupResponse)
KC_KAFKA_DEFINE_CODEC(SaslHandshakeRequest, SaslHandshake, kSaslHandshakeRequest)
KC_KAFKA_DEFINE_CODEC(SaslHandshakeResponse, SaslHandshake, kSaslHandshakeResponse)
KC_KAFKA_DEFINE_CODEC(SaslAuthenticateRequest, SaslAuthenticate, kSaslAuthenticateRequest)
KC_KAFKA_DEFINE_CODEC(SaslAuthenticateResponse, SaslAuthenticate, kSaslAuthenticateResponse)
#undef KC_KAFKA_DEFINE_CODEC

// ------------------------------------------------------------------ headers
Result<Bytes> encode_request_frame(const RequestHeader& header, BytesView body) {
  if (auto e = version_error(header.api_key, header.api_version, "RequestHeader")) return *e;
  Bytes out;
  out.reserve(4 + 10 + (header.client_id ? header.client_id->size() : 0) + 1 + body.size());
  wire::Writer w(out);
  w.i32(0);  // size, patched below
  w.i16(static_cast<int16_t>(header.api_key));
  w.i16(header.api_version);
  w.i32(header.correlation_id);
  // client_id keeps its int16 length even in request header v2.
  if (auto e = w.nullable_string(header.client_id, false)) {
    return Error{"RequestHeader.client_id", *e};
  }
  if (is_flexible(header.api_key, header.api_version)) w.empty_tagged_fields();
  w.raw(body);
  if (out.size() - 4 > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Error{"RequestHeader", "frame of " + std::to_string(out.size()) + " bytes is too large"};
  }
  w.patch_i32(0, static_cast<int32_t>(out.size() - 4));
  return out;
}

Result<std::pair<RequestHeader, size_t>> decode_request_header(BytesView frame) {
  wire::Reader r(frame);
  RequestHeader h;
  int16_t key = 0;
  if (!r.i16(key)) return Error{"RequestHeader.api_key", r.error()};
  h.api_key = static_cast<ApiKey>(key);
  if (!r.i16(h.api_version)) return Error{"RequestHeader.api_version", r.error()};
  if (auto e = version_error(h.api_key, h.api_version, "RequestHeader")) return *e;
  if (!r.i32(h.correlation_id)) return Error{"RequestHeader.correlation_id", r.error()};
  if (!r.nullable_string(h.client_id, false, true)) {
    return Error{"RequestHeader.client_id", r.error()};
  }
  if (is_flexible(h.api_key, h.api_version) && !r.skip_tagged_fields()) {
    return Error{"RequestHeader.tagged_fields", r.error()};
  }
  return std::pair<RequestHeader, size_t>{std::move(h), r.position()};
}

Result<std::pair<int32_t, size_t>> decode_response_header(BytesView frame, ApiKey key,
                                                          int16_t version) {
  if (auto e = version_error(key, version, "ResponseHeader")) return *e;
  wire::Reader r(frame);
  int32_t correlation_id = 0;
  if (!r.i32(correlation_id)) return Error{"ResponseHeader.correlation_id", r.error()};
  // ApiVersionsResponse always uses response header v0 (no tagged section).
  if (key != ApiKey::ApiVersions && is_flexible(key, version) && !r.skip_tagged_fields()) {
    return Error{"ResponseHeader.tagged_fields", r.error()};
  }
  return std::pair<int32_t, size_t>{correlation_id, r.position()};
}

}  // namespace kc::kafka
