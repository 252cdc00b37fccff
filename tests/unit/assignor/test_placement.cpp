// Placement labels in the assignors (issue 29): the mixed-cluster rule (a
// member without labels, e.g. of an older build, is ineligible), the
// unplaced list and its status trace, re-pinning as a must-move, the eager
// assignor, and the no-constraint fast path.
#include <catch2/catch.hpp>

#include "assignor/assignor.h"

using namespace kc::assignor;
using kc::connect::ConnectorTaskId;

namespace {

MemberReport member(const std::string& id, kc::Labels labels = {}) {
  MemberReport m;
  m.member_id = id;
  m.url = "http://" + id + ":8083/";
  m.config_offset = 1;
  m.labels = std::move(labels);
  return m;
}

RoundContext ctx_for(const std::string& leader) {
  RoundContext ctx;
  ctx.leader_id = leader;
  ctx.generation = 1;
  return ctx;
}

}  // namespace

TEST_CASE("placement: members without labels (older builds) get no pinned work", "[assignor][labels]") {
  ConfigSnapshot cfg{1, {{"pinned", 2}, {"free", 2}}, {{"pinned", {{{"host", "a"}}}}}};
  // The leader is the new-build labelled member; "old" sends no labels.
  std::vector<MemberReport> members = {member("a", {{"host", "a"}}), member("old")};
  auto r = IncrementalCooperativeAssignor{0}.assign({}, members, cfg, ctx_for("a"));
  const auto& a = r.assignments[0].assignment;
  const auto& old = r.assignments[1].assignment;
  CHECK(std::count(a.connectors.begin(), a.connectors.end(), "pinned") == 1);
  CHECK(std::find(old.connectors.begin(), old.connectors.end(), "pinned") == old.connectors.end());
  for (const auto& t : old.tasks) CHECK(t.connector != "pinned");
  CHECK(r.unplaced.empty());
  CHECK(r.state.placement_groups.size() == 1);
}

TEST_CASE("placement: no eligible worker -> unplaced, revoked from holders, trace names labels",
          "[assignor][labels]") {
  ConfigSnapshot cfg{1, {{"db", 1}}, {{"db", {{{"host", "x"}}}}}};
  std::vector<MemberReport> members = {member("a", {{"host", "a"}}), member("b")};
  members[1].owned.connectors = {"db"};  // runs it from before the pin
  members[1].owned.tasks = {{"db", 0}};
  auto r = IncrementalCooperativeAssignor{0}.assign({}, members, cfg, ctx_for("a"));
  REQUIRE(r.unplaced.size() == 1);
  CHECK(r.unplaced[0].connector == "db");
  CHECK(r.assignments[1].assignment.revoked_connectors == std::vector<std::string>{"db"});
  CHECK(r.assignments[1].assignment.revoked_tasks == std::vector<ConnectorTaskId>{{"db", 0}});
  CHECK(r.assignments[0].assignment.connectors.empty());
  const std::string trace = placement_trace(r.unplaced[0], members);
  CHECK(trace.find("placement.labels=host=x") != std::string::npos);
  CHECK(trace.find("http://a:8083/ {host=a}") != std::string::npos);
  CHECK(trace.find("http://b:8083/ {}") != std::string::npos);
  CHECK(trace.find("older build") != std::string::npos);
}

TEST_CASE("placement: a task on a worker that no longer matches is revoked first, placed next round",
          "[assignor][labels]") {
  ConfigSnapshot cfg{1, {{"c", 1}}, {{"c", {{{"host", "b"}}}}}};
  std::vector<MemberReport> members = {member("a", {{"host", "a"}}), member("b", {{"host", "b"}})};
  members[0].owned.connectors = {"c"};
  members[0].owned.tasks = {{"c", 0}};
  IncrementalCooperativeAssignor assignor{300000};
  auto r1 = assignor.assign({}, members, cfg, ctx_for("a"));
  CHECK(r1.assignments[0].assignment.revoked_tasks == std::vector<ConnectorTaskId>{{"c", 0}});
  CHECK(r1.assignments[1].assignment.tasks.empty());  // not in the same round
  CHECK(r1.assignments[0].assignment.delay_ms == 0);   // a must-move is not lost work
  members[0].owned = {};
  RoundContext ctx2 = ctx_for("a");
  ctx2.generation = 2;
  ctx2.last_completed_generation = 1;
  auto r2 = assignor.assign(r1.state, members, cfg, ctx2);
  CHECK(r2.assignments[1].assignment.connectors == std::vector<std::string>{"c"});
  CHECK(r2.assignments[1].assignment.tasks == std::vector<ConnectorTaskId>{{"c", 0}});
}

TEST_CASE("placement: entries that constrain nothing take the plain path", "[assignor][labels]") {
  ConfigSnapshot plain{1, {{"c", 3}}, {}};
  ConfigSnapshot with{1, {{"c", 3}}, {{"c", {}}}};
  std::vector<MemberReport> members = {member("a", {{"host", "a"}}), member("b")};
  IncrementalCooperativeAssignor assignor{0};
  auto r1 = assignor.assign({}, members, plain, ctx_for("a"));
  auto r2 = assignor.assign({}, members, with, ctx_for("a"));
  CHECK(r1.assignments[0].assignment == r2.assignments[0].assignment);
  CHECK(r1.assignments[1].assignment == r2.assignments[1].assignment);
  CHECK(r1.state == r2.state);
  CHECK_FALSE(has_placement(with));
}

TEST_CASE("placement: eager deals constrained work to eligible members only", "[assignor][labels]") {
  ConfigSnapshot cfg{1, {{"a1", 2}, {"b1", 2}, {"nowhere", 1}},
                     {{"a1", {{{"host", "a"}}, PlacementTasks::Pack}}, {"nowhere", {{{"host", "z"}}}}}};
  std::vector<MemberReport> members = {member("m1", {{"host", "a"}}), member("m2")};
  RoundContext ctx = ctx_for("m1");
  ctx.protocol = kc::connect::ConnectProtocol::Eager;
  auto r = EagerAssignor{}.assign({}, members, cfg, ctx);
  const auto& m1 = r.assignments[0].assignment;
  CHECK(std::find(m1.connectors.begin(), m1.connectors.end(), "a1") != m1.connectors.end());
  CHECK(std::count_if(m1.tasks.begin(), m1.tasks.end(), [](const auto& t) { return t.connector == "a1"; }) == 2);
  REQUIRE(r.unplaced.size() == 1);
  CHECK(r.unplaced[0].connector == "nowhere");
}

TEST_CASE("placement: a drain of the only worker that matches lets go of the pinned work", "[assignor][labels]") {
  // host=b is pinned to b; b drains (SIGTERM of a dynamic worker). Before
  // the fix the group's round ignored the drain (b was its only member) and
  // handed "pinned" back to b every round, so the drain ran into
  // shutdown.drain.timeout.ms with the connector stopped and its task on.
  ConfigSnapshot cfg{1, {{"pinned", 1}, {"free", 2}}, {{"pinned", {{{"host", "b"}}}}}};
  std::vector<MemberReport> members = {member("a", {{"host", "a"}}), member("b", {{"host", "b"}})};
  RoundContext ctx = ctx_for("a");
  ctx.draining_members = {"b"};
  SECTION("the drainer reports nothing (it handed over before its JoinGroup)") {
    auto r = IncrementalCooperativeAssignor{300000}.assign({}, members, cfg, ctx);
    const auto& b = r.assignments[1].assignment;
    CHECK(b.connectors.empty());
    CHECK(b.tasks.empty());
    const auto& a = r.assignments[0].assignment;
    CHECK(std::find(a.connectors.begin(), a.connectors.end(), "pinned") == a.connectors.end());
    for (const auto& t : a.tasks) CHECK(t.connector != "pinned");
    REQUIRE(r.unplaced.size() == 1);
    CHECK(r.unplaced[0].connector == "pinned");
    const std::string trace = placement_trace(r.unplaced[0], members, ctx.draining_members);
    CHECK(trace.find("placement.labels=host=b matches only workers that are draining") != std::string::npos);
    CHECK(trace.find("http://b:8083/ {host=b} draining") != std::string::npos);
    CHECK(placement_trace(r.unplaced[0], members).find("matches no worker of the group") != std::string::npos);
  }
  SECTION("the drainer still runs it: revoked, placed nowhere") {
    members[1].owned.connectors = {"pinned"};
    members[1].owned.tasks = {{"pinned", 0}};
    auto r = IncrementalCooperativeAssignor{300000}.assign({}, members, cfg, ctx);
    const auto& b = r.assignments[1].assignment;
    CHECK(b.revoked_connectors == std::vector<std::string>{"pinned"});
    CHECK(b.revoked_tasks == std::vector<ConnectorTaskId>{{"pinned", 0}});
    CHECK(b.connectors.empty());
    CHECK(b.tasks.empty());
    CHECK(r.unplaced.size() == 1);
  }
  SECTION("every member drains: the drain is ignored, as in a plain round") {
    ctx.draining_members = {"a", "b"};
    auto r = IncrementalCooperativeAssignor{300000}.assign({}, members, cfg, ctx);
    const auto& b = r.assignments[1].assignment;
    CHECK(std::count(b.connectors.begin(), b.connectors.end(), "pinned") == 1);
    CHECK(r.unplaced.empty());
  }
}
