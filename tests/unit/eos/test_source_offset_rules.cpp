// Source offsets with a connector-specific offsets topic (KIP-618) as the
// offsets API (KIP-875) uses them: which topic a connector has, the merge of
// its topic over the worker's, and where each part of a write goes (Connect's
// ConnectorOffsetBackingStore). Pure functions, no broker.
#include <catch2/catch.hpp>

#include "worker/herder/source_offsets.h"
#include "worker/runtime/client_overrides.h"

using kc::herder::merge_source_offsets;
using kc::herder::plan_source_offset_write;
using kc::herder::SourceOffsetBatch;
using kc::runtime::connector_offsets_topic;
using json = nlohmann::ordered_json;

TEST_CASE("connector_offsets_topic: only a set, different topic on an exactly-once worker", "[eos]") {
  CHECK(connector_offsets_topic({{"offsets.storage.topic", "own"}}, true, "connect-offsets") == "own");
  CHECK(connector_offsets_topic({{"offsets.storage.topic", "  own "}}, true, "connect-offsets") == "own");
  CHECK_FALSE(connector_offsets_topic({{"offsets.storage.topic", "own"}}, false, "connect-offsets"));
  CHECK_FALSE(connector_offsets_topic({{"offsets.storage.topic", " "}}, true, "connect-offsets"));
  CHECK_FALSE(connector_offsets_topic({}, true, "connect-offsets"));
  // The worker's own topic: one store, no fallback.
  CHECK_FALSE(connector_offsets_topic({{"offsets.storage.topic", "connect-offsets"}}, true, "connect-offsets"));
}

TEST_CASE("merge_source_offsets: the connector's topic wins, the worker's fills the gaps", "[eos]") {
  const json a{{"file", "a"}}, b{{"file", "b"}}, c{{"file", "c"}};
  auto out = merge_source_offsets("conn", {{a, json{{"pos", 30}}}, {c, json{{"pos", 3}}}},
                                  {{a, json{{"pos", 10}}}, {b, json{{"pos", 20}}}});
  REQUIRE(out.size() == 3);
  // Sorted by the offset-topic key bytes.
  CHECK(out[0].partition == a);
  CHECK(out[0].offset == json{{"pos", 30}});
  CHECK(out[1].partition == b);
  CHECK(out[1].offset == json{{"pos", 20}});
  CHECK(out[2].partition == c);
  CHECK(out[2].offset == json{{"pos", 3}});
  CHECK(merge_source_offsets("conn", {}, {}).empty());
}

TEST_CASE("plan_source_offset_write: tombstones to the worker's topic first, offsets after", "[eos]") {
  const json a{{"file", "a"}}, b{{"file", "b"}};
  const SourceOffsetBatch batch{{a, json{{"pos", 1}}}, {b, std::nullopt}};
  auto two = plan_source_offset_write(batch, true);
  CHECK(two.primary == batch);
  CHECK(two.secondary_first == SourceOffsetBatch{{b, std::nullopt}});
  CHECK(two.secondary_after == SourceOffsetBatch{{a, json{{"pos", 1}}}});
  auto one = plan_source_offset_write(batch, false);
  CHECK(one.primary == batch);
  CHECK(one.secondary_first.empty());
  CHECK(one.secondary_after.empty());
}
