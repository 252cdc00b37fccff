// The leader's view of placement (issue 29): connector configs become
// ConfigSnapshot::placement, and a malformed placement.labels that reached
// the config topic matches no worker (never a wrong host).
#include <catch2/catch.hpp>

#include "worker/herder/rebalance_plan.h"

using namespace kc::herder;

TEST_CASE("placement: connector configs give the assignor's constraints", "[herder][labels]") {
  kc::storage::ClusterConfigState snap;
  snap.offset = 7;
  snap.connector_configs["pinned"] = {{"connector.class", "X"}, {"placement.labels", "host=a, zone=z1"},
                                      {"placement.tasks", "pack"}};
  snap.connector_configs["free"] = {{"connector.class", "X"}};
  snap.connector_configs["bad"] = {{"connector.class", "X"}, {"placement.labels", "host"}};
  snap.task_counts = {{"pinned", 2}, {"free", 1}, {"bad", 1}};
  const auto cs = assignor_snapshot(snap);
  CHECK(cs.connectors.size() == 3);
  REQUIRE(cs.placement.count("pinned") == 1);
  CHECK(kc::format_labels(cs.placement.at("pinned").labels) == "host=a,zone=z1");
  CHECK(cs.placement.at("pinned").tasks == kc::assignor::PlacementTasks::Pack);
  CHECK(cs.placement.count("free") == 0);
  REQUIRE(cs.placement.count("bad") == 1);
  CHECK_FALSE(kc::labels_match(cs.placement.at("bad").labels, {{"host", "a"}}));
  CHECK(cs.placement.at("bad").labels.count(std::string(kUnmatchableLabelKey)) == 1);
}

TEST_CASE("placement: a worker refuses work whose placement.labels it does not match (an older leader's mistake)",
          "[herder][labels]") {
  const ConfigMap pinned{{"connector.class", "X"}, {"placement.labels", "host=a"}};
  CHECK_FALSE(placement_refusal(pinned, {{"host", "a"}, {"zone", "z1"}}));
  CHECK_FALSE(placement_refusal({{"connector.class", "X"}}, {}));  // unconstrained runs anywhere
  auto other = placement_refusal(pinned, {{"host", "b"}});
  REQUIRE(other);
  CHECK_THAT(*other, Catch::Contains("placement.labels=host=a") && Catch::Contains("{host=b}") &&
                         Catch::Contains("older build"));
  auto unlabelled = placement_refusal(pinned, {});
  REQUIRE(unlabelled);
  CHECK_THAT(*unlabelled, Catch::Contains("{}"));
  // A malformed value (validation refuses it; an older build may have written it) runs nowhere.
  CHECK(placement_refusal({{"placement.labels", "host"}}, {{"host", "a"}}));
}
