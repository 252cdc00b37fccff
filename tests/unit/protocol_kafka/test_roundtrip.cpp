// Round trips of every message at every supported version, and the encode-side
// version rules (ignorable fields dropped, non-ignorable ones rejected,
// unsupported versions rejected, the v0-3 / v0-2 single-entry mappings).

#include <catch2/catch.hpp>

#include "protocol/kafka/messages.h"
#include "samples.h"

using namespace kc::kafka;        // NOLINT
using namespace kc::kafka::test;  // NOLINT

TEST_CASE("every message round-trips at every supported version", "[kafka][roundtrip]") {
  int checked = 0;
  for (const auto& c : all_cases()) {
    const auto range = supported_versions(c.key);
    REQUIRE(range.min == 0);
    REQUIRE(range.max > 0);
    for (int16_t v = range.min; v <= range.max; ++v) {
      INFO(c.name << " v" << v);
      const auto b = c.sample_bytes(v);
      REQUIRE(b.ok());
      // Only ApiVersionsRequest v0-2 has an empty body.
      CHECK(b.value().empty() == (c.key == ApiKey::ApiVersions && v < 3 && c.name == "ApiVersionsRequest"));
      CHECK(c.round_trips(v));
      ++checked;
    }
  }
  // 4 + 5 + 10 + 6 + 5 + 6 group versions, 2 SaslHandshake, 3
  // SaslAuthenticate; request and response each.
  CHECK(checked == 2 * (4 + 5 + 10 + 6 + 5 + 6 + 2 + 3));
}

TEST_CASE("supported versions, names and flexible-from", "[kafka][versions]") {
  CHECK(std::string(api_name(ApiKey::JoinGroup)) == "JoinGroup");
  CHECK(std::string(api_name(static_cast<ApiKey>(99))) == "Unknown");
  CHECK(supported_versions(ApiKey::ApiVersions).max == 3);
  CHECK(supported_versions(ApiKey::FindCoordinator).max == 4);
  CHECK(supported_versions(ApiKey::JoinGroup).max == 9);
  CHECK(supported_versions(ApiKey::SyncGroup).max == 5);
  CHECK(supported_versions(ApiKey::Heartbeat).max == 4);
  CHECK(supported_versions(ApiKey::LeaveGroup).max == 5);
  CHECK(supported_versions(static_cast<ApiKey>(99)).max == -1);
  CHECK_FALSE(is_flexible(ApiKey::ApiVersions, 2));
  CHECK(is_flexible(ApiKey::ApiVersions, 3));
  CHECK_FALSE(is_flexible(ApiKey::FindCoordinator, 2));
  CHECK(is_flexible(ApiKey::FindCoordinator, 3));
  CHECK_FALSE(is_flexible(ApiKey::JoinGroup, 5));
  CHECK(is_flexible(ApiKey::JoinGroup, 6));
  CHECK_FALSE(is_flexible(ApiKey::SyncGroup, 3));
  CHECK(is_flexible(ApiKey::SyncGroup, 4));
  CHECK_FALSE(is_flexible(ApiKey::Heartbeat, 3));
  CHECK(is_flexible(ApiKey::Heartbeat, 4));
  CHECK_FALSE(is_flexible(ApiKey::LeaveGroup, 3));
  CHECK(is_flexible(ApiKey::LeaveGroup, 4));
}

TEST_CASE("unsupported versions are errors naming the API and version", "[kafka][versions]") {
  auto e = encode(JoinGroupRequest{}, 10);
  REQUIRE_FALSE(e.ok());
  CHECK(e.error().to_string().find("JoinGroup version 10") != std::string::npos);
  auto n = encode(HeartbeatRequest{}, -1);
  REQUIRE_FALSE(n.ok());
  CHECK(n.error().message.find("Heartbeat version -1") != std::string::npos);
  auto d = decode_SyncGroupResponse(Bytes{}, 6);
  REQUIRE_FALSE(d.ok());
  CHECK(d.error().message.find("SyncGroup version 6") != std::string::npos);
  CHECK_FALSE(decode_ApiVersionsResponse(Bytes{}, 4).ok());
  CHECK_FALSE(decode_FindCoordinatorResponse(Bytes{}, 5).ok());
  CHECK_FALSE(decode_LeaveGroupRequest(Bytes{}, 6).ok());
}

TEST_CASE("non-ignorable fields set at a version lacking them are errors", "[kafka][versions]") {
  SECTION("JoinGroup v4 group_instance_id") {
    JoinGroupRequest m = sample_JoinGroupRequest(5);
    auto r = encode(m, 4);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "JoinGroupRequest.group_instance_id");
    CHECK(r.error().message.find("JoinGroup v4") != std::string::npos);
    CHECK(encode(m, 5).ok());
  }
  SECTION("JoinGroupResponse v4 member group_instance_id") {
    JoinGroupResponse m = sample_JoinGroupResponse(5);
    auto r = encode(m, 4);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "JoinGroupResponse.members[0].group_instance_id");
  }
  SECTION("JoinGroupResponse v8 skip_assignment") {
    JoinGroupResponse m = sample_JoinGroupResponse(9);
    auto r = encode(m, 8);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "JoinGroupResponse.skip_assignment");
  }
  SECTION("SyncGroup/Heartbeat v2 group_instance_id") {
    CHECK_FALSE(encode(sample_SyncGroupRequest(3), 2).ok());
    CHECK_FALSE(encode(sample_HeartbeatRequest(3), 2).ok());
  }
  SECTION("FindCoordinator v0 key_type") {
    auto r = encode(sample_FindCoordinatorRequest(1), 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "FindCoordinatorRequest.key_type");
  }
  SECTION("LeaveGroupResponse v2 members") {
    auto r = encode(sample_LeaveGroupResponse(3), 2);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "LeaveGroupResponse.members");
  }
  SECTION("nullable-from: JoinGroupResponse protocol_name null before v7") {
    JoinGroupResponse m = sample_JoinGroupResponse(6);
    m.protocol_name.reset();
    auto r = encode(m, 6);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "JoinGroupResponse.protocol_name");
    auto ok = encode(m, 7);
    REQUIRE(ok.ok());
    auto d = decode_JoinGroupResponse(ok.value(), 7);
    REQUIRE(d.ok());
    CHECK_FALSE(d->protocol_name.has_value());
  }
  SECTION("strings longer than 32767 bytes") {
    HeartbeatRequest m;
    m.group_id = std::string(32768, 'g');
    auto r = encode(m, 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "HeartbeatRequest.group_id");
    m.group_id.pop_back();
    CHECK(encode(m, 0).ok());
    CHECK(encode(m, 4).ok());
  }
}

TEST_CASE("ignorable fields are dropped silently at older versions", "[kafka][versions]") {
  // reason (v8+) and rebalance_timeout_ms (v1+) are ignorable.
  JoinGroupRequest m = sample_JoinGroupRequest(8);
  m.group_instance_id.reset();
  auto v7 = encode(m, 7);
  REQUIRE(v7.ok());
  JoinGroupRequest no_reason = m;
  no_reason.reason.reset();
  CHECK(v7.value() == encode(no_reason, 7).value());
  CHECK(encode(m, 0).ok());

  // SyncGroup protocol_type/name (v5+), ThrottleTimeMs, ApiVersions client software.
  SyncGroupResponse s = sample_SyncGroupResponse(5);
  auto s0 = encode(s, 0);
  REQUIRE(s0.ok());
  auto back = decode_SyncGroupResponse(s0.value(), 0);
  REQUIRE(back.ok());
  CHECK(back->throttle_time_ms == 0);
  CHECK_FALSE(back->protocol_type.has_value());
  CHECK(back->assignment == s.assignment);
  ApiVersionsRequest a;  // defaults "kconnectd" / "0.1.0"
  auto a0 = encode(a, 0);
  REQUIRE(a0.ok());
  CHECK(a0.value().empty());
  auto a0d = decode_ApiVersionsRequest(a0.value(), 0);
  REQUIRE(a0d.ok());
  CHECK(a0d->client_software_name.empty());

  LeaveGroupRequest l = sample_LeaveGroupRequest(0);
  l.members[0].reason = "bye";
  CHECK(encode(l, 0).ok());
}

TEST_CASE("FindCoordinator v0-3 top-level fields map to one coordinator", "[kafka][mapping]") {
  FindCoordinatorResponse m;
  m.coordinators = {{"my-group", 5, "host5", 9095, 0, std::nullopt}};
  for (int16_t v = 0; v <= 3; ++v) {
    INFO("v" << v);
    auto e = encode(m, v);
    REQUIRE(e.ok());
    auto d = decode_FindCoordinatorResponse(e.value(), v);
    REQUIRE(d.ok());
    REQUIRE(d->coordinators.size() == 1);
    CHECK(d->coordinators[0].key.empty());  // the key is not on the wire before v4
    CHECK(d->coordinators[0].node_id == 5);
    CHECK(d->coordinators[0].host == "host5");
    CHECK(d->coordinators[0].port == 9095);
  }
  auto v4 = decode_FindCoordinatorResponse(encode(m, 4).value(), 4);
  REQUIRE(v4.ok());
  CHECK(v4->coordinators[0].key == "my-group");

  m.coordinators.push_back(m.coordinators[0]);
  auto two = encode(m, 3);
  REQUIRE_FALSE(two.ok());
  CHECK(two.error().field == "FindCoordinatorResponse.coordinators");
  CHECK(encode(m, 4).ok());

  // An empty list encodes the defaults at v0-3 (node -1, no host).
  m.coordinators.clear();
  auto empty = decode_FindCoordinatorResponse(encode(m, 2).value(), 2);
  REQUIRE(empty.ok());
  REQUIRE(empty->coordinators.size() == 1);
  CHECK(empty->coordinators[0].node_id == -1);

  // The request key is Key at v0-3 and the single CoordinatorKeys entry at v4.
  FindCoordinatorRequest q{"grp", 0};
  CHECK(encode(q, 3).value() == bytes_of({0x04, 'g', 'r', 'p', 0x00, 0x00}));
  CHECK(encode(q, 4).value() == bytes_of({0x00, 0x02, 0x04, 'g', 'r', 'p', 0x00}));
  // Two keys cannot be held by the struct.
  auto multi = decode_FindCoordinatorRequest(bytes_of({0x00, 0x03, 0x02, 'a', 0x02, 'b', 0x00}), 4);
  REQUIRE_FALSE(multi.ok());
  CHECK(multi.error().field == "FindCoordinatorRequest.coordinator_keys");
}

TEST_CASE("LeaveGroup v0-2 MemberId maps to members[0].member_id", "[kafka][mapping]") {
  LeaveGroupRequest m{"g", {{"m1", std::nullopt, std::nullopt}}};
  auto v2 = encode(m, 2);
  REQUIRE(v2.ok());
  CHECK(v2.value() == bytes_of({0, 1, 'g', 0, 2, 'm', '1'}));
  auto d = decode_LeaveGroupRequest(v2.value(), 2);
  REQUIRE(d.ok());
  CHECK(d.value() == m);

  LeaveGroupRequest two = m;
  two.members.push_back({"m2", std::nullopt, std::nullopt});
  auto r = encode(two, 1);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "LeaveGroupRequest.members");
  CHECK(encode(two, 3).ok());

  LeaveGroupRequest stat = m;
  stat.members[0].group_instance_id = "i";
  CHECK_FALSE(encode(stat, 2).ok());
  CHECK(encode(stat, 3).ok());
}
