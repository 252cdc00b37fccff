// Checks the Connect codecs against the vectors produced by Apache Kafka
// Connect's own serializers (../shared/testdata/connect-protocol-vectors.json),
// following the rules in ../shared/testdata/README.md.
#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "protocol/connect/codec.h"

using namespace kc::connect;
using nlohmann::json;

namespace {

const json& vectors() {
  static const json v = [] {
    std::ifstream in(KC_SHARED_DIR "/testdata/connect-protocol-vectors.json");
    REQUIRE(in.good());
    return json::parse(in);
  }();
  return v;
}

std::vector<uint8_t> hex(const std::string& h) {
  auto r = parse_hex(h);
  REQUIRE(r.ok());
  return *r;
}

int16_t kind_version(const std::string& kind) { return static_cast<int16_t>(kind.back() - '0'); }

/// "<connector>-<task>": split on the last '-' (connector names may contain '-').
ConnectorTaskId task_from_string(const std::string& s) {
  auto pos = s.rfind('-');
  REQUIRE(pos != std::string::npos);
  return ConnectorTaskId{s.substr(0, pos), std::stoi(s.substr(pos + 1))};
}

std::vector<ConnectorTaskId> tasks_from_strings(const json& arr) {
  std::vector<ConnectorTaskId> out;
  for (const auto& s : arr) out.push_back(task_from_string(s.get<std::string>()));
  return out;
}

std::vector<ConnectorTaskId> tasks_from_objects(const json& arr) {
  std::vector<ConnectorTaskId> out;
  for (const auto& t : arr) out.push_back(ConnectorTaskId{t.at("connector"), t.at("task").get<int32_t>()});
  return out;
}

std::vector<WireGroup> groups_from_json(const json& arr) {
  std::vector<WireGroup> out;
  for (const auto& g : arr) out.push_back(WireGroup{g.at("connector"), g.at("tasks").get<std::vector<int32_t>>()});
  return out;
}

/// Compares a decoded assignment with a `decoded_fields` object.
void check_fields(const Assignment& a, const json& df, int16_t version) {
  CHECK(a.version == df.value("version", version));
  CHECK(a.error == df.at("error").get<int16_t>());
  CHECK(a.leader == df.at("leader").get<std::string>());
  CHECK(a.leader_url == df.at("leaderUrl").get<std::string>());
  CHECK(a.config_offset == df.at("configOffset").get<int64_t>());
  CHECK(a.connectors == df.at("connectors").get<std::vector<std::string>>());
  CHECK(a.tasks == tasks_from_strings(df.at("tasks_str")));
  CHECK(a.revoked_connectors == df.value("revokedConnectors", std::vector<std::string>{}));
  CHECK(a.revoked_tasks == tasks_from_strings(df.value("revokedTasks_str", json::array())));
  CHECK(a.delay_ms == df.value("delay", 0));
}

/// Compares a wire-level decode with a `wire` object.
void check_wire(const WireAssignment& w, const json& wire) {
  CHECK(w.version == wire.at("version").get<int16_t>());
  CHECK(w.error == wire.at("error").get<int16_t>());
  CHECK(w.leader == wire.at("leader").get<std::string>());
  CHECK(w.leader_url == wire.at("leaderUrl").get<std::string>());
  CHECK(w.config_offset == wire.at("configOffset").get<int64_t>());
  CHECK(w.assignment == groups_from_json(wire.at("assignment")));
  CHECK(w.revoked == groups_from_json(wire.value("revoked", json::array())));
  CHECK(w.delay_ms == wire.value("delay", 0));
}

Assignment assignment_from_input(const json& in, int16_t version) {
  Assignment a;
  a.version = version;
  a.error = in.at("error").get<int16_t>();
  a.leader = in.at("leader").get<std::string>();
  a.leader_url = in.at("leaderUrl").get<std::string>();
  a.config_offset = in.at("configOffset").get<int64_t>();
  a.connectors = in.at("connectors").get<std::vector<std::string>>();
  a.tasks = tasks_from_objects(in.at("tasks"));
  a.revoked_connectors = in.value("revokedConnectors", std::vector<std::string>{});
  a.revoked_tasks = tasks_from_objects(in.value("revokedTasks", json::array()));
  a.delay_ms = in.value("delay", 0);
  return a;
}

std::vector<WireGroup> sorted(std::vector<WireGroup> g) {
  std::sort(g.begin(), g.end(), [](const WireGroup& x, const WireGroup& y) { return x.connector < y.connector; });
  return g;
}

void check_assignment_vector(const json& v) {
  const int16_t version = kind_version(v.at("kind"));
  const auto bytes = hex(v.at("hex"));

  // Decoding with the V1 reader.
  auto a = decode_assignment(bytes);
  REQUIRE(a.ok());
  check_fields(*a, v.at("decoded_fields"), version);
  auto w = decode_assignment_wire(bytes);
  REQUIRE(w.ok());
  check_wire(*w, v.at("wire"));

  // Decoding with the V0 reader: same V0 fields, no revocations.
  auto a0 = decode_assignment_v0(bytes);
  REQUIRE(a0.ok());
  CHECK(a0->connectors == a->connectors);
  CHECK(a0->tasks == a->tasks);
  CHECK(a0->revoked_connectors.empty());
  CHECK(a0->delay_ms == 0);

  // Encoding.
  const Assignment input = assignment_from_input(v.at("input"), version);
  auto enc = encode_assignment(input);
  REQUIRE(enc.ok());
  std::set<std::string> distinct(input.connectors.begin(), input.connectors.end());
  if (distinct.size() <= 1) {
    CHECK(to_hex(*enc) == v.at("hex").get<std::string>());
  } else {
    // Several assigned connectors: the reference's order is HashSet order.
    // Same size, same scalars, same groups as a set, revoked groups exact.
    CHECK(enc->size() == bytes.size());
    auto mine = decode_assignment_wire(*enc);
    REQUIRE(mine.ok());
    CHECK(sorted(mine->assignment) == sorted(w->assignment));
    CHECK(mine->revoked == w->revoked);
    CHECK(mine->delay_ms == w->delay_ms);
    CHECK(mine->leader == w->leader);
    // The revoked section (everything after the assigned array) is byte-exact.
    const std::size_t tail = bytes.size() - [&] {
      std::size_t n = 4;
      for (const auto& g : w->assignment) n += 2 + g.connector.size() + 4 + 4 * g.tasks.size();
      return n + 2 + 2 + w->leader.size() + 2 + w->leader_url.size() + 8;
    }();
    CHECK(std::equal(enc->end() - static_cast<std::ptrdiff_t>(tail), enc->end(),
                     bytes.end() - static_cast<std::ptrdiff_t>(tail)));
  }
}

void check_metadata_vector(const json& v) {
  const int16_t version = kind_version(v.at("kind"));
  const auto bytes = hex(v.at("hex"));
  const json& df = v.at("decoded_fields");

  auto md = decode_metadata(bytes);
  REQUIRE(md.ok());
  CHECK(md->version == version);
  CHECK(md->url == df.at("url").get<std::string>());
  CHECK(md->config_offset == df.at("configOffset").get<int64_t>());
  if (!df.contains("assignment") || df.at("assignment").value("isEmptySingleton", false)) {
    CHECK_FALSE(md->allocation.has_value());
  } else {
    REQUIRE(md->allocation.has_value());
    check_fields(*md->allocation, df.at("assignment"), version);
  }
  if (v.contains("embedded_assignment_wire") && !v.at("embedded_assignment_wire").is_null()) {
    auto w = decode_assignment_wire(hex(v.at("embedded_assignment_hex")));
    REQUIRE(w.ok());
    check_wire(*w, v.at("embedded_assignment_wire"));
  }

  auto md0 = decode_metadata_v0(bytes);
  REQUIRE(md0.ok());
  CHECK(md0->url == md->url);
  CHECK(md0->config_offset == md->config_offset);
  CHECK_FALSE(md0->allocation.has_value());

  // Encoding: always byte-exact. The embedded header follows the outer one,
  // whatever version the allocation object carries.
  const json& in = v.at("input");
  WorkerMetadata m;
  m.version = version;
  m.url = in.at("url");
  m.config_offset = in.at("configOffset").get<int64_t>();
  if (in.contains("currentAssignment") && !in.at("currentAssignment").is_null()) {
    m.allocation = assignment_from_input(in.at("currentAssignment"), 7);
  }
  auto enc = encode_metadata(m);
  REQUIRE(enc.ok());
  CHECK(to_hex(*enc) == v.at("hex").get<std::string>());
}

}  // namespace

TEST_CASE("connect vectors: every vector holds", "[protocol][connect]") {
  REQUIRE(vectors().size() == 40);
  int checked = 0;
  for (const auto& v : vectors()) {
    const std::string name = v.at("name");
    const std::string kind = v.at("kind");
    const std::string mode = v.at("mode");
    INFO("vector " << name);
    if (mode == "roundtrip") {
      if (kind.rfind("assignment", 0) == 0) {
        check_assignment_vector(v);
      } else {
        check_metadata_vector(v);
      }
    } else if (mode == "encode_error") {
      if (name == "encode_error_v0_url_too_long") {
        WorkerMetadata m{0, std::string(32768, 'a'), 5, std::nullopt};
        auto r = encode_metadata(m);
        REQUIRE_FALSE(r.ok());
        CHECK(r.error().field == "metadata.url");
      } else {
        // A null leader cannot be expressed: Assignment::leader is a
        // non-nullable std::string, so this reference failure cannot occur.
        static_assert(std::is_same_v<decltype(Assignment::leader), std::string>);
        CHECK(name.find("null_leader") != std::string::npos);
      }
    } else if (mode == "encode_null_result") {
      // The empty singleton is our nullopt allocation: written as null bytes.
      WorkerMetadata m{1, "http://w1:8083/", 5, std::nullopt};
      auto r = encode_metadata(m);
      REQUIRE(r.ok());
      CHECK(to_hex(*r).ends_with("ffffffff"));
    } else if (mode == "encode_summary") {
      WorkerMetadata m{0, std::string(32767, 'a'), 5, std::nullopt};
      auto r = encode_metadata(m);
      REQUIRE(r.ok());
      CHECK(r->size() == v.at("size_bytes").get<std::size_t>());
      const std::string h = to_hex(*r);
      CHECK(h.starts_with(v.at("hex_prefix").get<std::string>()));
      CHECK(h.ends_with(v.at("hex_suffix").get<std::string>()));
    } else {
      FAIL("unknown mode " << mode);
    }
    ++checked;
  }
  CHECK(checked == 40);
}

TEST_CASE("connect vectors: decode every prefix without crashing", "[protocol][connect]") {
  for (const auto& v : vectors()) {
    if (!v.contains("hex") || v.at("hex").is_null()) continue;
    const std::string kind = v.at("kind");
    const auto bytes = hex(v.at("hex"));
    INFO("vector " << v.at("name").get<std::string>());
    if (kind.rfind("assignment", 0) == 0) {
      auto full = decode_assignment_wire(bytes);
      REQUIRE(full.ok());
      // Clean boundaries where the V1 reader may stop: after config-offset,
      // after the assigned array, after the revoked array (V1+ bytes only).
      std::size_t header = 2 + 2 + 2 + full->leader.size() + 2 + full->leader_url.size() + 8;
      std::size_t after_assigned = header + 4;
      for (const auto& g : full->assignment) after_assigned += 2 + g.connector.size() + 4 + 4 * g.tasks.size();
      std::size_t after_revoked = after_assigned + 4;
      for (const auto& g : full->revoked) after_revoked += 2 + g.connector.size() + 4 + 4 * g.tasks.size();
      std::set<std::size_t> ok_at{header, after_assigned, bytes.size()};
      if (full->version > 0) ok_at.insert(after_revoked);
      for (std::size_t n = 0; n <= bytes.size(); ++n) {
        std::span<const uint8_t> prefix(bytes.data(), n);
        auto r = decode_assignment(prefix);
        INFO("prefix " << n);
        CHECK(r.ok() == (ok_at.count(n) == 1));
        if (r.ok()) {
          CHECK(r->leader == full->leader);
          if (n <= after_assigned) CHECK(r->revoked_connectors.empty());
          if (n < bytes.size()) CHECK(r->delay_ms == 0);
        } else {
          CHECK_FALSE(r.error().field.empty());
        }
        auto r0 = decode_assignment_v0(prefix);
        CHECK(r0.ok() == (n >= after_assigned));
      }
    } else {
      auto full = decode_metadata(bytes);
      REQUIRE(full.ok());
      const std::size_t header = 2 + 2 + full->url.size() + 8;
      for (std::size_t n = 0; n <= bytes.size(); ++n) {
        std::span<const uint8_t> prefix(bytes.data(), n);
        INFO("prefix " << n);
        auto r = decode_metadata(prefix);
        CHECK(r.ok() == (n == header || n == bytes.size()));
        if (r.ok() && n == header) CHECK_FALSE(r->allocation.has_value());
        CHECK(decode_metadata_v0(prefix).ok() == (n >= header));
      }
    }
  }
}
