// Reader tolerance (reference 2.1, 2.6, 2.7), writer errors, random input,
// and the protocol-name helpers.
#include <catch2/catch.hpp>
#include <random>

#include "protocol/connect/codec.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_leniency {

using namespace kc::connect;

namespace {

std::vector<uint8_t> h(const std::string& s) { return *parse_hex(s); }

// V1 assignment, leader "m1", url "u", offset 5, c1:[-1,0], revoked c3:[-1,0], delay 1000.
const std::string kHead = "0001" "0000" "00026d31" "000175" "0000000000000005";
const std::string kAssigned = "00000001" "00026331" "00000002" "ffffffff" "00000000";
const std::string kRevoked = "00000001" "00026333" "00000002" "ffffffff" "00000000";
const std::string kDelay = "000003e8";

Assignment sample() {
  Assignment a;
  a.version = 1;
  a.leader = "m1";
  a.leader_url = "u";
  a.config_offset = 5;
  a.connectors = {"c1"};
  a.tasks = {{"c1", 0}};
  a.revoked_connectors = {"c3"};
  a.revoked_tasks = {{"c3", 0}};
  a.delay_ms = 1000;
  return a;
}

}  // namespace

TEST_CASE("connect codec: sample encodes to the hand-written layout", "[protocol][connect]") {
  auto enc = encode_assignment(sample());
  REQUIRE(enc.ok());
  CHECK(to_hex(*enc) == kHead + kAssigned + kRevoked + kDelay);
  auto dec = decode_assignment(*enc);
  REQUIRE(dec.ok());
  CHECK(*dec == sample());
}

TEST_CASE("connect codec: V1 reader gives defaults at clean field boundaries", "[protocol][connect]") {
  auto a = decode_assignment(h(kHead));
  REQUIRE(a.ok());
  CHECK(a->connectors.empty());
  CHECK(a->revoked_connectors.empty());
  CHECK(a->delay_ms == 0);

  a = decode_assignment(h(kHead + kAssigned));
  REQUIRE(a.ok());
  CHECK(a->connectors == std::vector<std::string>{"c1"});
  CHECK(a->revoked_tasks.empty());

  a = decode_assignment(h(kHead + kAssigned + kRevoked));
  REQUIRE(a.ok());
  CHECK(a->revoked_tasks == std::vector<ConnectorTaskId>{{"c3", 0}});
  CHECK(a->delay_ms == 0);
}

TEST_CASE("connect codec: null arrays read as empty in V1, rejected in V0", "[protocol][connect]") {
  auto a = decode_assignment(h(kHead + "ffffffff" "ffffffff" + kDelay));
  REQUIRE(a.ok());
  CHECK(a->connectors.empty());
  CHECK(a->revoked_connectors.empty());
  CHECK(a->delay_ms == 1000);

  auto a0 = decode_assignment_v0(h(kHead + "ffffffff"));
  REQUIRE_FALSE(a0.ok());
  CHECK(a0.error().field == "assignment.assignment");
}

TEST_CASE("connect codec: any version >= 0 accepted, trailing bytes ignored", "[protocol][connect]") {
  std::string v7 = "0007" + kHead.substr(4) + kAssigned + kRevoked + kDelay + "deadbeef";
  auto a = decode_assignment(h(v7));
  REQUIRE(a.ok());
  CHECK(a->version == 7);
  CHECK(a->delay_ms == 1000);
  auto a0 = decode_assignment_v0(h(v7));
  REQUIRE(a0.ok());
  CHECK(a0->revoked_connectors.empty());
  CHECK(a0->connectors == std::vector<std::string>{"c1"});

  auto md = decode_metadata(h("0005" "000175" "0000000000000001" "ffffffff" "0102"));
  REQUIRE(md.ok());
  CHECK(md->version == 5);
  CHECK_FALSE(md->allocation.has_value());
}

TEST_CASE("connect codec: negative version is an error", "[protocol][connect]") {
  auto a = decode_assignment(h("ffff" + kHead.substr(4)));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.version");
  auto m = decode_metadata(h("8000" "000175" "0000000000000001"));
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().field == "metadata.version");
  CHECK_FALSE(decode_metadata_v0(h("8000" "000175" "0000000000000001")).ok());
  CHECK_FALSE(decode_assignment_v0(h("ffff" + kHead.substr(4) + "00000000")).ok());
}

TEST_CASE("connect codec: partly present fields name the field", "[protocol][connect]") {
  auto a = decode_assignment(h(kHead + kAssigned + "00000001" "00026333" "00000002" "ffffffff" "0000"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().to_string().starts_with("assignment.revoked[0].tasks: truncated int32 array"));

  a = decode_assignment(h(kHead + kAssigned + kRevoked + "0000"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.delay");

  a = decode_assignment(h("0001" "0000" "00026d"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.leader");

  // Missing at a clean boundary but without a default: still an error.
  a = decode_assignment(h("0001" "0000"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.leader");

  a = decode_assignment(h("0001" "0000" "fffe"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().message.find("negative string length") != std::string::npos);

  auto m = decode_metadata(h("0001" "000175" "0000000000000001" "00000010" "0001"));
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().field == "metadata.allocation");

  m = decode_metadata(h("0001" "000175" "0000000000000001" "00000004" "00010000"));
  REQUIRE_FALSE(m.ok());
  CHECK(m.error().field == "metadata.allocation.leader");

  CHECK_FALSE(decode_metadata(h("")).ok());
  CHECK_FALSE(decode_assignment(h("00")).ok());
}

TEST_CASE("connect codec: huge counts fail before allocating", "[protocol][connect]") {
  auto a = decode_assignment(h(kHead + "7fffffff"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.assignment");
  a = decode_assignment(h(kHead + "00000001" "00026331" "7fffffff"));
  REQUIRE_FALSE(a.ok());
  CHECK(a.error().field == "assignment.assignment[0].tasks");
  auto m = decode_metadata(h("0001" "000175" "0000000000000001" "7fffffff"));
  CHECK_FALSE(m.ok());
}

TEST_CASE("connect codec: sentinel, duplicates, foreign tasks and negative ids", "[protocol][connect]") {
  // c1:[-1,-1,0,-2] -> connectors [c1,c1], tasks [c1-0, c1--2] (no de-duplication).
  auto a = decode_assignment(h(kHead + "00000001" "00026331" "00000004" "ffffffff" "ffffffff" "00000000" "fffffffe"));
  REQUIRE(a.ok());
  CHECK(a->connectors == std::vector<std::string>{"c1", "c1"});
  CHECK(a->tasks == std::vector<ConnectorTaskId>{{"c1", 0}, {"c1", -2}});

  // The writer groups: distinct connectors first, then tasks per connector.
  Assignment b;
  b.version = 1;
  b.connectors = {"x", "x"};
  b.tasks = {{"y", 1}, {"x", 0}, {"y", 0}};
  auto w = decode_assignment_wire(*encode_assignment(b));
  REQUIRE(w.ok());
  CHECK(w->assignment == std::vector<WireGroup>{{"x", {-1, 0}}, {"y", {1, 0}}});
}

TEST_CASE("connect codec: encode errors", "[protocol][connect]") {
  Assignment a = sample();
  a.leader = std::string(32768, 'l');
  auto r = encode_assignment(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "assignment.leader");

  a = sample();
  a.revoked_tasks = {{std::string(40000, 'c'), 0}};
  r = encode_assignment(a);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().field == "assignment.revoked[1].connector");

  a = sample();
  a.version = 0;
  CHECK_FALSE(encode_assignment(a).ok());
  a.version = -1;
  CHECK_FALSE(encode_assignment(a).ok());

  WorkerMetadata m{1, "u", 1, sample()};
  m.allocation->leader_url = std::string(32768, 'u');
  auto mr = encode_metadata(m);
  REQUIRE_FALSE(mr.ok());
  CHECK(mr.error().field == "metadata.allocation.leader_url");
  CHECK_FALSE(encode_metadata(WorkerMetadata{-2, "u", 1, std::nullopt}).ok());

  a = sample();
  a.leader = std::string(32767, 'l');
  CHECK(encode_assignment(a).ok());
}

TEST_CASE("connect codec: metadata embeds allocation with the outer header", "[protocol][connect]") {
  Assignment alloc = sample();
  alloc.version = 0;  // ignored: the embedded header follows the metadata version
  for (int16_t v : {1, 2}) {
    WorkerMetadata m{v, "http://w1:8083/", 5, alloc};
    auto enc = encode_metadata(m);
    REQUIRE(enc.ok());
    auto dec = decode_metadata(*enc);
    REQUIRE(dec.ok());
    REQUIRE(dec->allocation.has_value());
    CHECK(dec->allocation->version == v);
    CHECK(dec->allocation->revoked_tasks == alloc.revoked_tasks);
  }
  // V0 layout drops the allocation.
  auto enc0 = encode_metadata(WorkerMetadata{0, "u", 3, alloc});
  REQUIRE(enc0.ok());
  CHECK(to_hex(*enc0) == "0000" "000175" "0000000000000003");
}

TEST_CASE("connect codec: random bytes never crash and re-encoding is stable", "[protocol][connect]") {
  for (uint32_t seed : {1u, 2u, 3u, 42u, 1234u, 99991u}) {
    std::mt19937 rng(seed);
    const std::vector<uint8_t> base = *encode_assignment(sample());
    for (int i = 0; i < 3000; ++i) {
      std::vector<uint8_t> buf;
      if (i % 2 == 0) {
        buf.resize(rng() % 96);
        for (auto& b : buf) b = static_cast<uint8_t>(rng());
        if (buf.size() >= 2 && i % 4 == 0) buf[0] = 0;  // mostly valid versions
      } else {
        buf = base;  // mutate a valid blob
        for (int k = 0; k < 1 + static_cast<int>(rng() % 3); ++k) buf[rng() % buf.size()] = static_cast<uint8_t>(rng());
      }
      INFO("seed " << seed << " case " << i << " bytes " << to_hex(buf));
      if (auto a = decode_assignment(buf); a.ok()) {
        if (auto e1 = encode_assignment(*a); e1.ok()) {
          auto a2 = decode_assignment(*e1);
          REQUIRE(a2.ok());
          auto e2 = encode_assignment(*a2);
          REQUIRE(e2.ok());
          CHECK(*e2 == *e1);
        }
      }
      (void)decode_assignment_v0(buf);
      (void)decode_assignment_wire(buf);
      if (auto m = decode_metadata(buf); m.ok()) {
        if (auto e1 = encode_metadata(*m); e1.ok()) {
          auto m2 = decode_metadata(*e1);
          REQUIRE(m2.ok());
          CHECK(*encode_metadata(*m2) == *e1);
        }
      }
      (void)decode_metadata_v0(buf);
    }
  }
}

TEST_CASE("connect protocol names", "[protocol][connect]") {
  CHECK(std::string(protocol_name(ConnectProtocol::Eager)) == "default");
  CHECK(std::string(protocol_name(ConnectProtocol::Compatible)) == "compatible");
  CHECK(std::string(protocol_name(ConnectProtocol::Sessioned)) == "sessioned");
  CHECK(protocol_version(ConnectProtocol::Sessioned) == 2);
  CHECK(protocol_version(ConnectProtocol::Eager) == 0);
  CHECK(protocol_from_name("default") == ConnectProtocol::Eager);
  CHECK_FALSE(protocol_from_name("eager").has_value());
  CHECK(protocol_from_config("SESSIONED") == ConnectProtocol::Sessioned);
  CHECK(protocol_from_config("Eager") == ConnectProtocol::Eager);
  CHECK_FALSE(protocol_from_config("default").has_value());
}

TEST_CASE("connect codec: hex helpers and JSON view", "[protocol][connect]") {
  CHECK_FALSE(parse_hex("abc").ok());
  CHECK_FALSE(parse_hex("zz").ok());
  CHECK(to_hex(*parse_hex("0xAB cd")) == "abcd");
  auto j = to_json(sample());
  CHECK(j["revoked_connectors"] == nlohmann::json::array({"c3"}));
  CHECK(j["revoked_tasks"] == nlohmann::json::array({"c3-0"}));
  auto jm = to_json(WorkerMetadata{1, "u", 1, std::nullopt});
  CHECK(jm["allocation"].is_null());
}

}  // namespace unity_test_leniency
