#pragma once
// Sample messages for every supported version: each field the version has
// gets a non-default value; fields it lacks keep the value a decoder yields
// for them (the Kafka default), so decode(encode(sample(v))) == sample(v).
// Plus a type-erased table of every codec, for sweeps over all messages.

#include <functional>
#include <string>
#include <vector>

#include "protocol/kafka/messages.h"

namespace kc::kafka::test {

inline Bytes bytes_of(std::initializer_list<int> v) {
  Bytes b;
  for (int x : v) b.push_back(static_cast<uint8_t>(x));
  return b;
}

inline ApiVersionsRequest sample_ApiVersionsRequest(int16_t v) {
  ApiVersionsRequest m;
  m.client_software_name = v >= 3 ? "kconnectd-test" : "";
  m.client_software_version = v >= 3 ? "9.8.7" : "";
  return m;
}

inline ApiVersionsResponse sample_ApiVersionsResponse(int16_t v) {
  ApiVersionsResponse m;
  m.error_code = 35;
  m.api_keys = {{18, 0, 3}, {11, 2, 9}, {-5, 7, -7}};
  m.throttle_time_ms = v >= 1 ? 250 : 0;
  return m;
}

inline FindCoordinatorRequest sample_FindCoordinatorRequest(int16_t v) {
  FindCoordinatorRequest m;
  m.key = "connect-cluster";
  m.key_type = v >= 1 ? 1 : 0;
  return m;
}

inline FindCoordinatorResponse sample_FindCoordinatorResponse(int16_t v) {
  FindCoordinatorResponse m;
  m.throttle_time_ms = v >= 1 ? 17 : 0;
  if (v <= 3) {
    Coordinator c;
    c.key = "";  // v0-3 do not carry the key
    c.node_id = 3;
    c.host = "broker-3.example";
    c.port = 9093;
    c.error_code = 15;
    if (v >= 1) c.error_message = "coordinator not available";
    m.coordinators = {c};
  } else {
    m.coordinators = {{"group-a", 1, "b1", 9092, 0, std::nullopt},
                      {"group-b", -1, "", -1, 15, std::string("not yet")}};
  }
  return m;
}

inline JoinGroupRequest sample_JoinGroupRequest(int16_t v) {
  JoinGroupRequest m;
  m.group_id = "connect-cluster";
  m.session_timeout_ms = 45000;
  m.rebalance_timeout_ms = v >= 1 ? 60000 : -1;
  m.member_id = "worker-1-5c8e";
  if (v >= 5) m.group_instance_id = "instance-1";
  m.protocol_type = "connect";
  m.protocols = {{"sessioned", bytes_of({0, 2, 0, 1, 'x'})},
                 {"compatible", bytes_of({0, 1})},
                 {"default", {}}};
  if (v >= 8) m.reason = "config changed";
  return m;
}

inline JoinGroupResponse sample_JoinGroupResponse(int16_t v) {
  JoinGroupResponse m;
  m.throttle_time_ms = v >= 2 ? 5 : 0;
  m.error_code = 79;
  m.generation_id = 42;
  if (v >= 7) m.protocol_type = "connect";
  m.protocol_name = "sessioned";
  m.leader = "worker-1";
  m.skip_assignment = v >= 9;
  m.member_id = "worker-2";
  m.members = {{"worker-1", std::nullopt, bytes_of({1, 2, 3})},
               {"worker-2", std::nullopt, {}},
               {"worker-3", std::nullopt, Bytes(300, 0xab)}};
  if (v >= 5) {
    m.members[0].group_instance_id = "i1";
    m.members[2].group_instance_id = "";
  }
  return m;
}

inline SyncGroupRequest sample_SyncGroupRequest(int16_t v) {
  SyncGroupRequest m;
  m.group_id = "connect-cluster";
  m.generation_id = 42;
  m.member_id = "worker-1";
  if (v >= 3) m.group_instance_id = "instance-1";
  if (v >= 5) {
    m.protocol_type = "connect";
    m.protocol_name = "sessioned";
  }
  m.assignments = {{"worker-1", bytes_of({0, 1, 0, 0})}, {"worker-2", {}}};
  return m;
}

inline SyncGroupResponse sample_SyncGroupResponse(int16_t v) {
  SyncGroupResponse m;
  m.throttle_time_ms = v >= 1 ? 9 : 0;
  m.error_code = 27;
  if (v >= 5) {
    m.protocol_type = "connect";
    m.protocol_name = "compatible";
  }
  m.assignment = Bytes(200, 0x5a);
  return m;
}

inline HeartbeatRequest sample_HeartbeatRequest(int16_t v) {
  HeartbeatRequest m;
  m.group_id = "connect-cluster";
  m.generation_id = 7;
  m.member_id = "worker-1";
  if (v >= 3) m.group_instance_id = "instance-1";
  return m;
}

inline HeartbeatResponse sample_HeartbeatResponse(int16_t v) {
  HeartbeatResponse m;
  m.throttle_time_ms = v >= 1 ? 1000 : 0;
  m.error_code = 27;
  return m;
}

inline LeaveGroupRequest sample_LeaveGroupRequest(int16_t v) {
  LeaveGroupRequest m;
  m.group_id = "connect-cluster";
  if (v <= 2) {
    m.members = {{"worker-1", std::nullopt, std::nullopt}};
  } else {
    m.members = {{"worker-1", std::nullopt, std::nullopt}, {"", std::string("instance-2"), std::nullopt}};
    if (v >= 5) m.members[0].reason = "shutting down";
  }
  return m;
}

inline LeaveGroupResponse sample_LeaveGroupResponse(int16_t v) {
  LeaveGroupResponse m;
  m.throttle_time_ms = v >= 1 ? 3 : 0;
  m.error_code = 25;
  if (v >= 3) {
    m.members = {{"worker-1", std::nullopt, 0}, {"", std::string("instance-2"), 82}};
  }
  return m;
}

inline SaslHandshakeRequest sample_SaslHandshakeRequest(int16_t) {
  return SaslHandshakeRequest{"SCRAM-SHA-512"};
}

inline SaslHandshakeResponse sample_SaslHandshakeResponse(int16_t) {
  return SaslHandshakeResponse{33, {"PLAIN", "SCRAM-SHA-256"}};
}

inline SaslAuthenticateRequest sample_SaslAuthenticateRequest(int16_t) {
  SaslAuthenticateRequest m;
  const std::string t = "n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL";
  m.auth_bytes.assign(t.begin(), t.end());
  return m;
}

inline SaslAuthenticateResponse sample_SaslAuthenticateResponse(int16_t v) {
  SaslAuthenticateResponse m;
  m.error_code = 58;
  m.error_message = "Authentication failed";
  m.auth_bytes = bytes_of({'v', '=', 'x'});
  m.session_lifetime_ms = v >= 1 ? 3600000 : 0;
  return m;
}

/// One codec, type-erased: encode the sample, decode any bytes, round trip.
struct CodecCase {
  std::string name;
  ApiKey key;
  std::function<Result<Bytes>(int16_t)> sample_bytes;          ///< encode(sample(v), v)
  std::function<Result<Unit>(BytesView, int16_t)> decode;      ///< ok or the Error
  std::function<bool(int16_t)> round_trips;                    ///< decode(encode(s)) == s
  std::function<bool(BytesView, int16_t)> reencode_stable;     ///< decoded -> encode -> same
};

template <class T>
CodecCase make_case(const char* name, ApiKey key, T (*sample)(int16_t),
                    Result<T> (*dec)(BytesView, int16_t)) {
  CodecCase c;
  c.name = name;
  c.key = key;
  c.sample_bytes = [sample](int16_t v) { return encode(sample(v), v); };
  c.decode = [dec](BytesView b, int16_t v) -> Result<Unit> {
    auto r = dec(b, v);
    if (!r.ok()) return r.error();
    return Unit{};
  };
  c.round_trips = [sample, dec](int16_t v) {
    const T m = sample(v);
    auto e = encode(m, v);
    if (!e.ok()) return false;
    auto d = dec(e.value(), v);
    return d.ok() && d.value() == m;
  };
  c.reencode_stable = [dec](BytesView b, int16_t v) {
    auto d = dec(b, v);
    if (!d.ok()) return true;
    auto e = encode(d.value(), v);
    if (!e.ok()) return false;
    auto d2 = dec(e.value(), v);
    return d2.ok() && d2.value() == d.value();
  };
  return c;
}

#define KC_CASE(T, KEY) make_case<T>(#T, ApiKey::KEY, &sample_##T, &decode_##T)

inline std::vector<CodecCase> all_cases() {
  return {
      KC_CASE(ApiVersionsRequest, ApiVersions),
      KC_CASE(ApiVersionsResponse, ApiVersions),
      KC_CASE(FindCoordinatorRequest, FindCoordinator),
      KC_CASE(FindCoordinatorResponse, FindCoordinator),
      KC_CASE(JoinGroupRequest, JoinGroup),
      KC_CASE(JoinGroupResponse, JoinGroup),
      KC_CASE(SyncGroupRequest, SyncGroup),
      KC_CASE(SyncGroupResponse, SyncGroup),
      KC_CASE(HeartbeatRequest, Heartbeat),
      KC_CASE(HeartbeatResponse, Heartbeat),
      KC_CASE(LeaveGroupRequest, LeaveGroup),
      KC_CASE(LeaveGroupResponse, LeaveGroup),
      KC_CASE(SaslHandshakeRequest, SaslHandshake),
      KC_CASE(SaslHandshakeResponse, SaslHandshake),
      KC_CASE(SaslAuthenticateRequest, SaslAuthenticate),
      KC_CASE(SaslAuthenticateResponse, SaslAuthenticate),
  };
}
#undef KC_CASE

}  // namespace kc::kafka::test
