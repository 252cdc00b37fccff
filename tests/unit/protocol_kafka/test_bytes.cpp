// Byte-exact checks against encodings derived by hand from the layouts in
// connect-reference.md 9.8 (classic: int16/int32 lengths; flexible: uvarint
// length+1 and a tagged-field section after every struct).

#include <catch2/catch.hpp>

#include "protocol/kafka/messages.h"
#include "protocol/kafka/wire.h"
#include "samples.h"

using namespace kc::kafka;        // NOLINT
using namespace kc::kafka::test;  // NOLINT

TEST_CASE("HeartbeatRequest v0 and v4 bytes", "[kafka][bytes]") {
  HeartbeatRequest m{"g", 5, "m", std::nullopt};
  // v0: group_id int16 len, generation int32, member_id int16 len.
  const Bytes v0 = bytes_of({0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 'm'});
  CHECK(encode(m, 0).value() == v0);
  CHECK(decode_HeartbeatRequest(v0, 0).value() == m);
  // v4: compact strings (len+1), null instance id = 0, empty tagged section.
  const Bytes v4 =
      bytes_of({0x02, 'g', 0x00, 0x00, 0x00, 0x05, 0x02, 'm', 0x00, 0x00});
  CHECK(encode(m, 4).value() == v4);
  CHECK(decode_HeartbeatRequest(v4, 4).value() == m);
  // v3: the nullable instance id as an int16 -1.
  const Bytes v3 = bytes_of({0x00, 0x01, 'g', 0x00, 0x00, 0x00, 0x05, 0x00, 0x01, 'm', 0xff, 0xff});
  CHECK(encode(m, 3).value() == v3);
}

TEST_CASE("HeartbeatResponse v0 and v4 bytes", "[kafka][bytes]") {
  HeartbeatResponse m{100, 27};
  CHECK(encode(m, 0).value() == bytes_of({0x00, 0x1b}));  // throttle dropped (ignorable)
  CHECK(encode(m, 1).value() == bytes_of({0x00, 0x00, 0x00, 0x64, 0x00, 0x1b}));
  CHECK(encode(m, 4).value() == bytes_of({0x00, 0x00, 0x00, 0x64, 0x00, 0x1b, 0x00}));
}

TEST_CASE("JoinGroupRequest v0 and v6 bytes", "[kafka][bytes]") {
  JoinGroupRequest m;
  m.group_id = "g";
  m.session_timeout_ms = 10000;
  m.rebalance_timeout_ms = 60000;
  m.member_id = "";
  m.protocol_type = "connect";
  m.protocols = {{"default", bytes_of({1, 2})}};
  const Bytes v0 = bytes_of({
      0x00, 0x01, 'g',                                   // group_id
      0x00, 0x00, 0x27, 0x10,                            // session_timeout_ms 10000
      0x00, 0x00,                                        // member_id ""
      0x00, 0x07, 'c', 'o', 'n', 'n', 'e', 'c', 't',     // protocol_type
      0x00, 0x00, 0x00, 0x01,                            // 1 protocol
      0x00, 0x07, 'd', 'e', 'f', 'a', 'u', 'l', 't',     // name
      0x00, 0x00, 0x00, 0x02, 0x01, 0x02,                // metadata
  });
  CHECK(encode(m, 0).value() == v0);  // rebalance timeout is ignorable at v0
  const Bytes v6 = bytes_of({
      0x02, 'g',                                         // compact group_id
      0x00, 0x00, 0x27, 0x10,                            // session_timeout_ms
      0x00, 0x00, 0xea, 0x60,                            // rebalance_timeout_ms 60000
      0x01,                                              // member_id "" (0+1)
      0x00,                                              // group_instance_id null
      0x08, 'c', 'o', 'n', 'n', 'e', 'c', 't',           // protocol_type
      0x02,                                              // 1 protocol (1+1)
      0x08, 'd', 'e', 'f', 'a', 'u', 'l', 't',           // name
      0x03, 0x01, 0x02,                                  // metadata (2+1)
      0x00,                                              // protocol tagged fields
      0x00,                                              // message tagged fields
  });
  CHECK(encode(m, 6).value() == v6);
  auto d = decode_JoinGroupRequest(v6, 6);
  REQUIRE(d.ok());
  CHECK(d.value() == m);
  auto d0 = decode_JoinGroupRequest(v0, 0);
  REQUIRE(d0.ok());
  CHECK(d0->rebalance_timeout_ms == -1);  // absent at v0: the Kafka default
}

TEST_CASE("ApiVersionsResponse v3 skips unknown tagged fields", "[kafka][bytes]") {
  Bytes b = bytes_of({
      0x00, 0x00,                          // error_code
      0x03,                                // 2 api keys
      0x00, 0x12, 0x00, 0x00, 0x00, 0x03,  // ApiVersions 0-3
      0x01, 0x07, 0x01, 0xee,              // element tags: 1 field, tag 7, size 1, data
      0x00, 0x0b, 0x00, 0x02, 0x00, 0x09,  // JoinGroup 2-9
      0x00,                                // no element tags
      0x00, 0x00, 0x00, 0x0a,              // throttle_time_ms 10
      0x03,                                // 3 top-level tagged fields:
      0x00, 0x05, 0x02, 0x02, 'x', 0x00, 0x01,  //  tag 0 SupportedFeatures-ish, size 5
      0x01, 0x08, 0, 0, 0, 0, 0, 0, 0, 0x04,    //  tag 1 FinalizedFeaturesEpoch = 4
  });
  // tag 3, size 130 (two-byte uvarint 0x82 0x01), 130 bytes of data.
  b.push_back(0x03);
  b.push_back(0x82);
  b.push_back(0x01);
  b.insert(b.end(), 130, 0x77);
  auto d = decode_ApiVersionsResponse(b, 3);
  REQUIRE(d.ok());
  CHECK(d->error_code == 0);
  REQUIRE(d->api_keys.size() == 2);
  CHECK(d->api_keys[0].api_key == 18);
  CHECK(d->api_keys[0].max_version == 3);
  CHECK(d->api_keys[1].api_key == 11);
  CHECK(d->api_keys[1].min_version == 2);
  CHECK(d->api_keys[1].max_version == 9);
  CHECK(d->throttle_time_ms == 10);
  // Re-encoding writes no tagged fields.
  auto e = encode(d.value(), 3);
  REQUIRE(e.ok());
  CHECK(e.value().size() == 2 + 1 + 7 + 7 + 4 + 1);

  // A tagged field whose size runs past the end is an error.
  Bytes cut(b.begin(), b.end() - 1);
  auto bad = decode_ApiVersionsResponse(cut, 3);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "ApiVersionsResponse.tagged_fields");
}

TEST_CASE("ApiVersionsRequest v3 and SyncGroupResponse v5 bytes", "[kafka][bytes]") {
  ApiVersionsRequest a{"kc", "1"};
  CHECK(encode(a, 3).value() == bytes_of({0x03, 'k', 'c', 0x02, '1', 0x00}));
  CHECK(encode(a, 2).value().empty());
  SyncGroupResponse s{0, 0, std::nullopt, std::string("p"), bytes_of({9})};
  CHECK(encode(s, 5).value() ==
        bytes_of({0, 0, 0, 0, 0, 0, 0x00, 0x02, 'p', 0x02, 9, 0x00}));
  CHECK(encode(s, 3).value() == bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 9}));
}

TEST_CASE("uvarint encodings", "[kafka][bytes][wire]") {
  const std::vector<std::pair<uint32_t, Bytes>> cases = {
      {0, bytes_of({0x00})},
      {1, bytes_of({0x01})},
      {127, bytes_of({0x7f})},
      {128, bytes_of({0x80, 0x01})},
      {300, bytes_of({0xac, 0x02})},
      {16384, bytes_of({0x80, 0x80, 0x01})},
      {0xffffffffu, bytes_of({0xff, 0xff, 0xff, 0xff, 0x0f})},
  };
  for (const auto& [v, enc] : cases) {
    Bytes out;
    wire::Writer w(out);
    w.uvarint(v);
    CHECK(out == enc);
    wire::Reader r(enc);
    uint32_t back = 0;
    REQUIRE(r.uvarint(back));
    CHECK(back == v);
    CHECK(r.remaining() == 0);
  }
  // Too long / too large.
  for (const Bytes& bad : {bytes_of({0xff, 0xff, 0xff, 0xff, 0x1f}),
                           bytes_of({0x80, 0x80, 0x80, 0x80, 0x80, 0x01}), bytes_of({0x80})}) {
    wire::Reader r(bad);
    uint32_t x = 0;
    CHECK_FALSE(r.uvarint(x));
    CHECK_FALSE(r.error().empty());
  }
}

TEST_CASE("request frames and headers", "[kafka][bytes][header]") {
  const Bytes body = bytes_of({0xaa, 0xbb});
  SECTION("header v1 (Heartbeat v3)") {
    RequestHeader h{ApiKey::Heartbeat, 3, 0x01020304, std::string("c")};
    auto f = encode_request_frame(h, body);
    REQUIRE(f.ok());
    CHECK(f.value() == bytes_of({0, 0, 0, 13, 0x00, 0x0c, 0x00, 0x03, 1, 2, 3, 4, 0x00, 0x01,
                                 'c', 0xaa, 0xbb}));
    auto d = decode_request_header(BytesView(f.value()).subspan(4));
    REQUIRE(d.ok());
    CHECK(d->first == h);
    CHECK(d->second == 11);
  }
  SECTION("header v2 (Heartbeat v4): int16 client id, then tagged fields") {
    RequestHeader h{ApiKey::Heartbeat, 4, 7, std::nullopt};
    auto f = encode_request_frame(h, body);
    REQUIRE(f.ok());
    CHECK(f.value() == bytes_of({0, 0, 0, 13, 0x00, 0x0c, 0x00, 0x04, 0, 0, 0, 7, 0xff, 0xff,
                                 0x00, 0xaa, 0xbb}));
    auto d = decode_request_header(BytesView(f.value()).subspan(4));
    REQUIRE(d.ok());
    CHECK(d->first == h);
    CHECK(d->second == 11);
  }
  SECTION("unsupported version or unknown key") {
    CHECK_FALSE(encode_request_frame({ApiKey::JoinGroup, 10, 1, std::nullopt}, body).ok());
    CHECK_FALSE(decode_request_header(bytes_of({0x00, 0x63, 0, 0, 0, 0, 0, 1, 0xff, 0xff})).ok());
    CHECK_FALSE(decode_request_header(bytes_of({0x00, 0x0b, 0, 10, 0, 0, 0, 1, 0xff, 0xff})).ok());
  }
  SECTION("response headers") {
    const Bytes v0 = bytes_of({0, 0, 0, 9, 0xaa});
    auto r0 = decode_response_header(v0, ApiKey::JoinGroup, 5);
    REQUIRE(r0.ok());
    CHECK(r0->first == 9);
    CHECK(r0->second == 4);
    const Bytes v1 = bytes_of({0, 0, 0, 9, 0x00, 0xaa});
    auto r1 = decode_response_header(v1, ApiKey::JoinGroup, 6);
    REQUIRE(r1.ok());
    CHECK(r1->second == 5);
    // ApiVersions v3 still uses response header v0.
    auto ra = decode_response_header(v0, ApiKey::ApiVersions, 3);
    REQUIRE(ra.ok());
    CHECK(ra->second == 4);
    CHECK_FALSE(decode_response_header(bytes_of({0, 0, 0}), ApiKey::Heartbeat, 0).ok());
    CHECK_FALSE(decode_response_header(bytes_of({0, 0, 0, 1}), ApiKey::Heartbeat, 4).ok());
  }
}
