// Beast-style "fail at the n-th byte" sweeps and hostile-input checks: every
// truncation of a valid encoding is an Error; byte mutations, oversized and
// negative lengths and random input give an Error or a valid value, never UB
// (run this suite under -DKC_SANITIZE=ON to have ASan/UBSan check that too).

#include <catch2/catch.hpp>

#include <random>

#include "protocol/kafka/messages.h"
#include "samples.h"

using namespace kc::kafka;        // NOLINT
using namespace kc::kafka::test;  // NOLINT

TEST_CASE("every truncation of every message at every version is an error", "[kafka][sweep]") {
  size_t prefixes = 0;
  for (const auto& c : all_cases()) {
    const auto range = supported_versions(c.key);
    for (int16_t v = range.min; v <= range.max; ++v) {
      const Bytes full = c.sample_bytes(v).value();
      REQUIRE(c.decode(full, v).ok());
      for (size_t n = 0; n < full.size(); ++n) {
        // A fresh copy of exactly n bytes, so ASan would see any over-read.
        const Bytes prefix(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(n));
        auto r = c.decode(prefix, v);
        if (r.ok()) FAIL(c.name << " v" << v << " accepted a " << n << "-byte prefix");
        if (r.error().field.empty()) FAIL(c.name << " v" << v << " error names no field");
        ++prefixes;
      }
      // One extra byte is an error too (trailing data).
      Bytes longer = full;
      longer.push_back(0);
      CHECK_FALSE(c.decode(longer, v).ok());
    }
  }
  CHECK(prefixes > 5000);
}

TEST_CASE("every single-byte mutation decodes or fails cleanly", "[kafka][sweep]") {
  for (const auto& c : all_cases()) {
    const auto range = supported_versions(c.key);
    for (int16_t v = range.min; v <= range.max; ++v) {
      const Bytes full = c.sample_bytes(v).value();
      for (size_t i = 0; i < full.size(); ++i) {
        for (uint8_t x : {0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff}) {
          Bytes m = full;
          m[i] = x;
          (void)c.decode(m, v);
          if (!c.reencode_stable(m, v)) FAIL(c.name << " v" << v << " byte " << i << " = " << int(x));
        }
      }
    }
  }
}

TEST_CASE("random input with fixed seeds", "[kafka][sweep]") {
  std::mt19937 rng(20261129);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_int_distribution<int> len(0, 80);
  const auto cases = all_cases();
  size_t accepted = 0;
  for (int round = 0; round < 300; ++round) {
    for (const auto& c : cases) {
      const auto range = supported_versions(c.key);
      for (int16_t v = range.min; v <= range.max; ++v) {
        // Pure noise.
        Bytes noise(static_cast<size_t>(len(rng)));
        for (auto& b : noise) b = static_cast<uint8_t>(byte(rng));
        if (c.decode(noise, v).ok()) ++accepted;
        REQUIRE(c.reencode_stable(noise, v));
        // A valid encoding with three random bytes overwritten.
        Bytes m = c.sample_bytes(v).value();
        for (int k = 0; k < 3 && !m.empty(); ++k) {
          m[static_cast<size_t>(rng() % m.size())] = static_cast<uint8_t>(byte(rng));
        }
        (void)c.decode(m, v);
        REQUIRE(c.reencode_stable(m, v));
      }
    }
  }
  // Short bodies such as HeartbeatResponse v0 (2 bytes) are sometimes valid.
  CHECK(accepted < 300 * 60);
}

TEST_CASE("oversized and negative lengths are errors naming the field", "[kafka][sweep]") {
  SECTION("metadata length beyond the end") {
    JoinGroupResponse m = sample_JoinGroupResponse(0);
    m.members[2].metadata = Bytes(12, 0x11);
    Bytes b = encode(m, 0).value();
    // members[2].metadata is last: int32 length then 12 bytes.
    const size_t at = b.size() - 16;
    REQUIRE(b[at + 3] == 12);
    b[at + 2] = 0x0f;
    b[at + 3] = 0xa0;  // 4000
    auto r = decode_JoinGroupResponse(b, 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().to_string() ==
          "JoinGroupResponse.members[2].metadata: length 4000 exceeds remaining 12 bytes");
  }
  SECTION("huge array count is refused before allocating") {
    // JoinGroupResponse v0 with members count 0x7fffffff and nothing after it.
    Bytes b = bytes_of({0, 0, 0, 0, 0, 1, 0, 1, 'p', 0, 1, 'l', 0, 1, 'm', 0x7f, 0xff, 0xff, 0xff});
    auto r = decode_JoinGroupResponse(b, 0);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "JoinGroupResponse.members");
    CHECK(r.error().message.find("count 2147483647 exceeds remaining 0 bytes") != std::string::npos);
    // Flexible: uvarint count 0xffffffff (count+1) at v6.
    Bytes f = bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x02, 'p', 0x02, 'l', 0x02, 'm',
                        0xff, 0xff, 0xff, 0xff, 0x0f});
    auto rf = decode_JoinGroupResponse(f, 6);
    REQUIRE_FALSE(rf.ok());
    CHECK(rf.error().field == "JoinGroupResponse.members");
  }
  SECTION("negative lengths") {
    // group_id length -2.
    auto s = decode_HeartbeatRequest(bytes_of({0xff, 0xfe, 0, 0, 0, 1, 0, 0}), 0);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().to_string() == "HeartbeatRequest.group_id: negative length -2");
    // group_id null (-1) for a non-nullable string.
    auto n = decode_HeartbeatRequest(bytes_of({0xff, 0xff, 0, 0, 0, 1, 0, 0}), 0);
    REQUIRE_FALSE(n.ok());
    CHECK(n.error().field == "HeartbeatRequest.group_id");
    // assignment bytes length -1 / -7.
    auto b1 = decode_SyncGroupResponse(bytes_of({0, 0, 0xff, 0xff, 0xff, 0xff}), 0);
    REQUIRE_FALSE(b1.ok());
    CHECK(b1.error().field == "SyncGroupResponse.assignment");
    auto b7 = decode_SyncGroupResponse(bytes_of({0, 0, 0xff, 0xff, 0xff, 0xf9}), 0);
    REQUIRE_FALSE(b7.ok());
    CHECK(b7.error().message == "negative length -7");
    // Array count -1 (null) and -2.
    CHECK_FALSE(decode_ApiVersionsResponse(bytes_of({0, 0, 0xff, 0xff, 0xff, 0xff}), 0).ok());
    CHECK_FALSE(decode_ApiVersionsResponse(bytes_of({0, 0, 0xff, 0xff, 0xff, 0xfe}), 0).ok());
    // Compact null (0) for non-nullable compact bytes.
    auto c0 = decode_SyncGroupResponse(bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00}), 5);
    REQUIRE_FALSE(c0.ok());
    CHECK(c0.error().field == "SyncGroupResponse.assignment");
  }
  SECTION("nullable-from is enforced on decode") {
    // JoinGroupResponse v6 with protocol_name null (compact 0).
    Bytes b = bytes_of({0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0x00, 0x01, 0x01, 0x01, 0x00});
    auto r6 = decode_JoinGroupResponse(b, 6);
    REQUIRE_FALSE(r6.ok());
    CHECK(r6.error().field == "JoinGroupResponse.protocol_name");
  }
  SECTION("strings longer than 32767 in compact form") {
    Bytes b = bytes_of({0x81, 0x80, 0x02});  // compact length 32769 -> 32768 bytes
    b.insert(b.end(), 32768, 'x');
    b.insert(b.end(), {0, 0, 0, 1, 0x01, 0x00, 0x00});
    auto r = decode_HeartbeatRequest(b, 4);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "HeartbeatRequest.group_id");
  }
}
