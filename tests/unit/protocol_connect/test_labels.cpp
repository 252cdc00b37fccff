// The labels trailer of the worker metadata (kconnectd, not in Connect; issue
// 29): layout, byte-identity without labels, what older readers see, and
// the reader's errors. Layout: protocol/connect/README.md.
#include <catch2/catch.hpp>

#include "protocol/connect/codec.h"

using namespace kc::connect;

namespace {

std::vector<uint8_t> h(const std::string& s) { return *parse_hex(s); }

// V1 metadata: url "u", offset 3, null allocation.
const std::string kV1Null = "0001" "000175" "0000000000000003" "ffffffff";
// Trailer: magic "kcL1", 2 labels, host=a, zone=z1.
const std::string kTrailer = "6b634c31" "00000002" "0004686f7374" "000161" "00047a6f6e65" "00027a31";

WorkerMetadata labelled() {
  WorkerMetadata md;
  md.version = 1;
  md.url = "u";
  md.config_offset = 3;
  md.labels = {{"zone", "z1"}, {"host", "a"}};
  return md;
}

}  // namespace

TEST_CASE("labels trailer: exact layout after a null allocation", "[protocol][connect][labels]") {
  auto enc = encode_metadata(labelled());
  REQUIRE(enc.ok());
  CHECK(to_hex(*enc) == kV1Null + kTrailer);
  auto dec = decode_metadata(*enc);
  REQUIRE(dec.ok());
  CHECK(*dec == labelled());
  CHECK(to_json(*dec)["labels"]["host"] == "a");
}

TEST_CASE("labels trailer: no labels gives Connect's bytes exactly", "[protocol][connect][labels]") {
  WorkerMetadata md = labelled();
  md.labels.clear();
  auto enc = encode_metadata(md);
  REQUIRE(enc.ok());
  CHECK(to_hex(*enc) == kV1Null);
  CHECK_FALSE(to_json(md).contains("labels"));
  // V2 with an allocation: labelled bytes = unlabelled bytes + trailer.
  md.version = 2;
  Assignment a;
  a.version = 2;
  a.leader = "m";
  a.leader_url = "u";
  a.connectors = {"c1"};
  a.tasks = {{"c1", 0}};
  md.allocation = a;
  auto bare = encode_metadata(md);
  md.labels = labelled().labels;
  auto with = encode_metadata(md);
  REQUIRE(bare.ok());
  REQUIRE(with.ok());
  CHECK(to_hex(*with) == to_hex(*bare) + kTrailer);
}

TEST_CASE("labels trailer: an older reader ignores it", "[protocol][connect][labels]") {
  auto enc = *encode_metadata(labelled());
  // The V0 reader (ConnectProtocol) stops after the config offset.
  auto v0 = decode_metadata_v0(enc);
  REQUIRE(v0.ok());
  CHECK(v0->url == "u");
  // An older kconnectd / Java V1 reader stops after the allocation: simulate
  // by reading the bytes without the trailer; same fields.
  auto old = decode_metadata(h(kV1Null));
  REQUIRE(old.ok());
  CHECK(old->config_offset == 3);
  CHECK_FALSE(old->allocation.has_value());
  CHECK(old->labels.empty());
}

TEST_CASE("labels trailer: other trailing bytes are still ignored", "[protocol][connect][labels]") {
  auto dec = decode_metadata(h(kV1Null + "0001020304"));
  REQUIRE(dec.ok());
  CHECK(dec->labels.empty());
  auto short_magic = decode_metadata(h(kV1Null + "6b634c"));
  REQUIRE(short_magic.ok());
}

TEST_CASE("labels trailer: reader errors name the field", "[protocol][connect][labels]") {
  SECTION("truncated") {
    auto full = kV1Null + kTrailer;
    for (size_t cut = kV1Null.size() + 8; cut < full.size(); cut += 2) {
      auto dec = decode_metadata(h(full.substr(0, cut)));
      REQUIRE_FALSE(dec.ok());
      CHECK(dec.error().field.rfind("metadata.labels", 0) == 0);
    }
  }
  SECTION("repeated key") {
    auto dec = decode_metadata(h(kV1Null + "6b634c31" "00000002" "0004686f7374" "000161" "0004686f7374" "000162"));
    REQUIRE_FALSE(dec.ok());
    CHECK(dec.error().field == "metadata.labels[1].key");
  }
  SECTION("bad key character") {
    auto dec = decode_metadata(h(kV1Null + "6b634c31" "00000001" "0002683d" "000161"));
    REQUIRE_FALSE(dec.ok());
    CHECK(dec.error().field == "metadata.labels[0]");
  }
  SECTION("count above the bound") {
    std::string t = kV1Null + "6b634c31" "00000041";
    for (int i = 0; i < 65; ++i) t += "000161" "000161";
    auto dec = decode_metadata(h(t));
    REQUIRE_FALSE(dec.ok());
    CHECK(dec.error().message.find("maximum of 64") != std::string::npos);
  }
}

TEST_CASE("labels trailer: writer errors", "[protocol][connect][labels]") {
  WorkerMetadata md = labelled();
  md.version = 0;
  auto v0 = encode_metadata(md);
  REQUIRE_FALSE(v0.ok());
  CHECK(v0.error().field == "metadata.labels");
  md.version = 1;
  md.labels = {{"bad key", "a"}};
  auto bad = encode_metadata(md);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().field == "metadata.labels");
}

TEST_CASE("parse_labels: syntax, bounds and matching", "[protocol][connect][labels]") {
  auto ok = kc::parse_labels(" host=a , zone=z1,disk=ssd ");
  REQUIRE(ok.ok());
  CHECK(kc::format_labels(*ok) == "disk=ssd,host=a,zone=z1");
  CHECK(kc::parse_labels("").ok());
  CHECK(kc::parse_labels("  ")->empty());
  CHECK_FALSE(kc::parse_labels("host").ok());
  CHECK_FALSE(kc::parse_labels("host=").ok());
  CHECK_FALSE(kc::parse_labels("=a").ok());
  CHECK_FALSE(kc::parse_labels("host=a,host=b").ok());
  CHECK_FALSE(kc::parse_labels("host=a,").ok());
  CHECK_FALSE(kc::parse_labels("ho st=a").ok());
  CHECK(kc::labels_match({}, {}));
  CHECK(kc::labels_match({{"host", "a"}}, {{"host", "a"}, {"zone", "z1"}}));
  CHECK_FALSE(kc::labels_match({{"host", "a"}}, {{"host", "b"}}));
  CHECK_FALSE(kc::labels_match({{"host", "a"}}, {}));
}
