// Unit checks of the assignors, named after the reference unit tests of
// Kafka Connect's IncrementalCooperativeAssignorTest (our own code and data).
#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "assignor/assignor.h"

using kc::assignor::AssignmentResult;
using kc::assignor::ConfigSnapshot;
using kc::assignor::ConnectorsAndTasks;
using kc::assignor::ConnectorTaskId;
using kc::assignor::EagerAssignor;
using kc::assignor::IncrementalCooperativeAssignor;
using kc::assignor::LeaderState;
using kc::assignor::MemberReport;
using kc::assignor::RoundContext;
using kc::assignor::successive_revocation_backoff_ms;

namespace {

constexpr int32_t D = 300000;

// A tiny leader-side harness: members, what they run, the leader state.
struct Group {
  IncrementalCooperativeAssignor assignor{D};
  LeaderState state;
  ConfigSnapshot config;
  std::map<std::string, ConnectorsAndTasks> running;  // member -> what it runs
  int32_t generation = 0;
  int32_t last_completed = -1;
  int64_t now = 1000;
  std::vector<std::string> draining;  // member ids that drain
  bool placement = false;             // RoundContext::hand_over_placement
  AssignmentResult last;

  explicit Group(int32_t delay = D) : assignor(delay) {}

  void connector(const std::string& name, int32_t tasks) {
    config.connectors[name] = tasks;
    ++config.offset;
  }
  std::vector<MemberReport> reports() const {
    std::vector<MemberReport> out;
    for (const auto& [id, run] : running) out.push_back({id, "http://" + id + ":8083/", config.offset, run});
    return out;
  }
  // One round; `deliver` applies the assignment (revoke, then assign).
  AssignmentResult& round(bool deliver = true) {
    RoundContext ctx;
    ctx.leader_id = running.begin()->first;
    ctx.generation = ++generation;
    ctx.last_completed_generation = last_completed;
    ctx.now_ms = now;
    ctx.draining_members = draining;
    ctx.hand_over_placement = placement;
    last = assignor.assign(state, reports(), config, ctx);
    state = last.state;
    if (deliver) {
      last_completed = generation;
      for (const auto& ma : last.assignments) {
        auto& run = running[ma.member_id];
        const auto& a = ma.assignment;
        for (const auto& c : a.revoked_connectors) std::erase(run.connectors, c);
        for (const auto& t : a.revoked_tasks) std::erase(run.tasks, t);
        run.connectors.insert(run.connectors.end(), a.connectors.begin(), a.connectors.end());
        run.tasks.insert(run.tasks.end(), a.tasks.begin(), a.tasks.end());
      }
    }
    return last;
  }
  const kc::connect::Assignment& of(const std::string& id) const {
    for (const auto& ma : last.assignments)
      if (ma.member_id == id) return ma.assignment;
    FAIL("no assignment for " << id);
    return last.assignments.front().assignment;
  }
  size_t conns(const std::string& id) { return running[id].connectors.size(); }
  size_t tasks(const std::string& id) { return running[id].tasks.size(); }
};

ConnectorsAndTasks owned(std::vector<std::string> c, std::vector<ConnectorTaskId> t) { return {std::move(c), std::move(t)}; }

std::vector<ConnectorTaskId> tasks_of(const std::string& c, int32_t n) {
  std::vector<ConnectorTaskId> out;
  for (int32_t i = 0; i < n; ++i) out.push_back({c, i});
  return out;
}

}  // namespace

TEST_CASE("backoff values for successive revoking rounds", "[assignor][backoff]") {
  CHECK(successive_revocation_backoff_ms(1, D) == 40);
  CHECK(successive_revocation_backoff_ms(2, D) == 1600);
  CHECK(successive_revocation_backoff_ms(3, D) == 64000);
  CHECK(successive_revocation_backoff_ms(4, D) == 300000);
  CHECK(successive_revocation_backoff_ms(40, D) == 300000);
  CHECK(successive_revocation_backoff_ms(1, 0) == 0);
  CHECK(successive_revocation_backoff_ms(3, 0) == 0);
  CHECK(successive_revocation_backoff_ms(1, 1) == 1);
  CHECK(successive_revocation_backoff_ms(2, 30000) == 1600);
  CHECK(successive_revocation_backoff_ms(3, 30000) == 30000);
}

TEST_CASE("assignConnectors/assignTasks when balanced: round-robin over equal workers", "[assignor]") {
  Group g;
  for (const char* c : {"c1", "c2", "c3"}) g.connector(c, 1);
  g.running["w1"] = owned({"c1"}, {{"c1", 0}});
  g.running["w2"] = owned({"c2"}, {{"c2", 0}});
  g.running["w3"] = owned({"c3"}, {{"c3", 0}});
  g.round();
  for (const char* c : {"c4", "c5", "c6"}) g.connector(c, 1);
  g.round();
  CHECK(g.of("w1").connectors == std::vector<std::string>{"c4"});
  CHECK(g.of("w2").connectors == std::vector<std::string>{"c5"});
  CHECK(g.of("w3").connectors == std::vector<std::string>{"c6"});
  for (const char* w : {"w1", "w2", "w3"}) {
    CHECK(g.conns(w) == 2);
    CHECK(g.tasks(w) == 2);
    CHECK(g.of(w).revoked_tasks.empty());
  }
}

TEST_CASE("assignConnectors/assignTasks when imbalanced: fill the lowest first", "[assignor]") {
  // Workers loaded 2/3/4/0 receive 15 new connectors (1 task each): 6 each.
  Group g;
  std::vector<std::vector<std::string>> load = {{"e1", "e2"}, {"e3", "e4", "e5"}, {"e6", "e7", "e8", "e9"}, {}};
  for (size_t w = 0; w < load.size(); ++w) {
    ConnectorsAndTasks run;
    for (const auto& c : load[w]) {
      g.connector(c, 1);
      run.connectors.push_back(c);
      run.tasks.push_back({c, 0});
    }
    g.running["w" + std::to_string(w + 1)] = run;
  }
  g.state.previous_generation = g.last_completed = 7;
  g.generation = 7;
  for (int i = 10; i < 25; ++i) g.connector(std::string("n").append(std::to_string(i)), 1);
  g.round();
  for (const char* w : {"w1", "w2", "w3", "w4"}) {
    CHECK(g.conns(w) == 6);
    CHECK(g.tasks(w) == 6);
    CHECK(g.of(w).revoked_connectors.empty());
    CHECK(g.of(w).revoked_tasks.empty());
  }
}

TEST_CASE("lost assignment handling when a worker bounces", "[assignor][lost]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  REQUIRE(g.tasks("w1") == 4);
  REQUIRE(g.tasks("w2") == 4);
  g.running.erase("w2");
  g.round();
  CHECK(g.of("w1").delay_ms == D);
  CHECK(g.state.scheduled_rebalance_ms == g.now + D);
  CHECK(g.state.candidate_workers.empty());
  CHECK(g.state.previous_assignment.tasks.size() == 8);  // lost work stays "previous"
  g.now += D / 2;
  g.running["w2"];  // back, empty
  g.round();
  CHECK(g.of("w1").delay_ms == D / 2);
  CHECK(g.state.candidate_workers == std::vector<std::string>{"w2"});
  CHECK(g.tasks("w2") == 0);
  g.now += D / 2;
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w2") == 4);
  CHECK(g.conns("w2") == 1);
  CHECK(g.of("w1").revoked_tasks.empty());
  CHECK(g.state.candidate_workers.empty());
  CHECK(g.state.scheduled_rebalance_ms == 0);
  CHECK(g.state.delay_ms == 0);
}

TEST_CASE("lost assignment handling when a worker leaves permanently", "[assignor][lost]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.running.erase("w2");
  g.round();
  CHECK(g.of("w1").delay_ms == D);
  g.now += D;
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w1") == 8);
  CHECK(g.conns("w1") == 2);
  CHECK(g.state.candidate_workers.empty());
  CHECK(g.state.scheduled_rebalance_ms == 0);
}

TEST_CASE("lost assignment handling with more than one candidate", "[assignor][lost]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.running.erase("w2");
  g.round();
  g.running["w3"];
  g.round();
  g.running["w2"];
  g.round();
  CHECK(g.state.candidate_workers == std::vector<std::string>{"w3", "w2"});
  g.now += D;
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w2") == 2);
  CHECK(g.tasks("w3") == 2);
  CHECK(g.conns("w2") + g.conns("w3") == 1);
}

TEST_CASE("lost assignment handling when a worker bounces back but finally leaves", "[assignor][lost]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.running.erase("w2");
  g.round();
  g.running["w2"];
  g.round();
  CHECK(g.state.candidate_workers == std::vector<std::string>{"w2"});
  g.running.erase("w2");
  g.round();
  g.now += D;
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w1") == 8);
  CHECK(g.state.candidate_workers.empty());
}

TEST_CASE("lost assignment handling when the scheduled delay is disabled", "[assignor][lost]") {
  Group g(0);
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.running.erase("w2");
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w1") == 8);
  CHECK(g.state.candidate_workers.empty());
}

TEST_CASE("tasks duplicated in worker assignments are revoked from every holder, then assigned once", "[assignor]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.round();
  REQUIRE(g.tasks("w1") == 8);
  g.running["w2"] = owned({"c1"}, tasks_of("c1", 4));  // claims what w1 also runs
  g.round();
  CHECK(g.of("w1").revoked_connectors == std::vector<std::string>{"c1"});
  CHECK(g.of("w2").revoked_connectors == std::vector<std::string>{"c1"});
  CHECK(g.of("w2").revoked_tasks == tasks_of("c1", 4));
  for (const auto& t : tasks_of("c1", 4))
    CHECK(std::count(g.of("w1").revoked_tasks.begin(), g.of("w1").revoked_tasks.end(), t) == 1);
  g.round();
  g.round();
  CHECK(g.conns("w1") == 1);
  CHECK(g.conns("w2") == 1);
  CHECK(g.tasks("w1") == 4);
  CHECK(g.tasks("w2") == 4);
}

TEST_CASE("duplicated assignments whose connector is deleted are revoked and not reassigned", "[assignor]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.round();
  g.running["w2"] = owned({"c1"}, tasks_of("c1", 4));
  g.config.connectors.erase("c1");
  ++g.config.offset;
  g.round();
  CHECK(g.of("w2").revoked_tasks == tasks_of("c1", 4));
  CHECK(g.of("w2").connectors.empty());
  g.round();
  g.round();
  CHECK(g.tasks("w1") == 2);
  CHECK(g.tasks("w2") == 2);
  CHECK(g.conns("w1") + g.conns("w2") == 1);
}

TEST_CASE("leader state is updated after each round", "[assignor]") {
  Group g;
  g.connector("c1", 2);
  g.running["w1"];
  g.running["w2"];
  g.round();
  CHECK(g.state.previous_generation == 1);
  CHECK(g.state.previous_members == std::vector<std::string>{"w1", "w2"});
  CHECK(g.state.previous_assignment.connectors == std::vector<std::string>{"c1"});
  CHECK(g.state.previous_assignment.tasks == tasks_of("c1", 2));
  CHECK(g.state.previous_revocation.empty());
}

TEST_CASE("protocol V1 and V2 write the negotiated version, eager writes V0", "[assignor]") {
  ConfigSnapshot cfg{3, {{"c1", 2}}};
  std::vector<MemberReport> members = {{"w1", "http://w1/", 3, {}}};
  RoundContext ctx;
  ctx.leader_id = "w1";
  ctx.generation = 1;
  ctx.protocol = kc::connect::ConnectProtocol::Compatible;
  auto r1 = IncrementalCooperativeAssignor{}.assign({}, members, cfg, ctx);
  CHECK(r1.assignments[0].assignment.version == 1);
  ctx.protocol = kc::connect::ConnectProtocol::Sessioned;
  auto r2 = IncrementalCooperativeAssignor{}.assign({}, members, cfg, ctx);
  CHECK(r2.assignments[0].assignment.version == 2);
  CHECK(r2.assignments[0].assignment.leader_url == "http://w1/");
  CHECK(r2.assignments[0].assignment.config_offset == 3);
  auto r0 = EagerAssignor{}.assign({}, members, cfg, ctx);
  CHECK(r0.assignments[0].assignment.version == 0);
}

TEST_CASE("config offset behind the members: CONFIG_MISMATCH for everybody, state untouched", "[assignor]") {
  ConfigSnapshot cfg{5, {{"c1", 2}}};
  std::vector<MemberReport> members = {{"w1", "http://w1/", 5, {}}, {"w2", "http://w2/", 9, {}}};
  RoundContext ctx;
  ctx.leader_id = "w1";
  ctx.generation = 4;
  LeaderState st;
  st.delay_ms = 17;
  for (auto r : {IncrementalCooperativeAssignor{}.assign(st, members, cfg, ctx), EagerAssignor{}.assign(st, members, cfg, ctx)}) {
    CHECK(r.config_mismatch);
    CHECK(r.state == st);
    for (const auto& ma : r.assignments) {
      CHECK(ma.assignment.error == 1);
      CHECK(ma.assignment.config_offset == 9);
      CHECK(ma.assignment.leader == "w1");
      CHECK(ma.assignment.leader_url == "http://w1/");
      CHECK(ma.assignment.connectors.empty());
      CHECK(ma.assignment.tasks.empty());
    }
  }
  // A fresher snapshot passes, and its offset is the one written.
  cfg.offset = 11;
  auto ok = IncrementalCooperativeAssignor{}.assign(st, members, cfg, ctx);
  CHECK_FALSE(ok.config_mismatch);
  CHECK(ok.assignments[0].assignment.config_offset == 11);
}

TEST_CASE("a failed sync not visible in the generation counts as a successive revoking round", "[assignor]") {
  Group g;
  g.connector("c1", 4);
  g.connector("c2", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.round();
  g.running["w3"];
  g.round(false);  // revoking assignment computed, never delivered
  CHECK(g.state.revoked_in_previous);
  // Same generation bookkeeping as if it had completed (the failure happened
  // outside the leader's view).
  g.last_completed = g.generation;
  g.round();
  CHECK(g.of("w1").delay_ms == 40);
  CHECK(g.of("w1").revoked_tasks.empty());
  CHECK(g.of("w2").revoked_tasks.empty());
  g.now += 40;
  g.round();
  g.round();
  std::vector<size_t> counts = {g.tasks("w1"), g.tasks("w2"), g.tasks("w3")};
  std::sort(counts.begin(), counts.end());
  CHECK(counts == std::vector<size_t>{2, 3, 3});
}

TEST_CASE("generation mismatch discards the previous assignment (no delay for missing work)", "[assignor]") {
  Group g;
  g.connector("c1", 4);
  g.running["w1"];
  g.running["w2"];
  g.round();
  g.state.previous_generation = 99;  // not the leader's last completed generation
  g.running.erase("w2");
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.tasks("w1") == 4);
}

TEST_CASE("eager assignor deals connectors then tasks with one circular iterator", "[assignor][eager]") {
  ConfigSnapshot cfg{1, {{"a", 2}, {"b", 1}, {"c", 3}}};
  std::vector<MemberReport> members = {{"m2", "u2", 1, {}}, {"m1", "u1", 1, {}}};
  RoundContext ctx;
  ctx.leader_id = "m1";
  auto r = EagerAssignor{}.assign({}, members, cfg, ctx);
  // Sorted members m1, m2: a->m1 b->m2 c->m1 | a-0->m2 a-1->m1 b-0->m2 c-0->m1 c-1->m2 c-2->m1
  const auto& m1 = r.assignments[1].assignment;
  const auto& m2 = r.assignments[0].assignment;
  CHECK(m1.connectors == std::vector<std::string>{"a", "c"});
  CHECK(m2.connectors == std::vector<std::string>{"b"});
  CHECK(m1.tasks == std::vector<ConnectorTaskId>{{"a", 1}, {"c", 0}, {"c", 2}});
  CHECK(m2.tasks == std::vector<ConnectorTaskId>{{"a", 0}, {"b", 0}, {"c", 1}});
  CHECK(m1.leader_url == "u1");
}

TEST_CASE("the result does not depend on the order of the member reports", "[assignor]") {
  ConfigSnapshot cfg{1, {{"a", 5}, {"b", 7}}};
  std::vector<MemberReport> members = {{"w3", "u3", 1, owned({"a"}, tasks_of("a", 5))},
                                       {"w1", "u1", 1, owned({}, tasks_of("b", 7))},
                                       {"w2", "u2", 1, {}}};
  RoundContext ctx;
  ctx.leader_id = "w1";
  auto r1 = IncrementalCooperativeAssignor{}.assign({}, members, cfg, ctx);
  std::reverse(members.begin(), members.end());
  auto r2 = IncrementalCooperativeAssignor{}.assign({}, members, cfg, ctx);
  CHECK(r1.state == r2.state);
  for (const auto& a : r1.assignments)
    for (const auto& b : r2.assignments)
      if (a.member_id == b.member_id) CHECK(a.assignment == b.assignment);
}

// ------------------------------------------------------------------ drain (kconnectd extension)

namespace {
// Every configured task runs on exactly one member; none twice.
void check_each_task_once(Group& g) {
  std::map<ConnectorTaskId, int> seen;
  for (const auto& [id, run] : g.running)
    for (const auto& t : run.tasks) ++seen[t];
  for (const auto& [c, n] : g.config.connectors)
    for (int32_t i = 0; i < n; ++i) CHECK(seen[ConnectorTaskId{c, i}] == 1);
}
}  // namespace

TEST_CASE("a draining worker revokes all its work in one round and the others take it in the next, with no delay",
          "[assignor][drain]") {
  Group g;
  g.connector("a", 6);
  g.connector("b", 3);
  g.running["w1"] = g.running["w2"] = g.running["w3"] = {};
  g.round();
  g.round();
  check_each_task_once(g);
  const auto w3_work = g.running["w3"];
  REQUIRE_FALSE(w3_work.tasks.empty());
  const auto w1_before = g.running["w1"], w2_before = g.running["w2"];

  g.draining = {"w3"};
  g.round();
  // Round 1: w3 revokes everything it runs; nobody is given anything, and
  // the others keep all they run.
  CHECK(g.of("w3").revoked_tasks == w3_work.tasks);
  CHECK(g.of("w3").revoked_connectors == w3_work.connectors);
  CHECK(g.of("w3").tasks.empty());
  for (const char* w : {"w1", "w2"}) {
    CHECK(g.of(w).revoked_tasks.empty());
    CHECK(g.of(w).tasks.empty());
  }
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.running["w3"].empty());

  g.round();
  // Round 2: w3's work goes to w1 and w2 at once, nothing to w3.
  CHECK(g.of("w3").tasks.empty());
  CHECK(g.of("w3").connectors.empty());
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.of("w2").delay_ms == 0);
  CHECK(g.running["w3"].empty());
  check_each_task_once(g);
  CHECK(g.tasks("w1") + g.tasks("w2") == 9);
  CHECK(g.conns("w1") + g.conns("w2") == 2);
  // What w1 and w2 ran before still runs there (only the drained work moved).
  for (const auto& t : w1_before.tasks) CHECK(std::count(g.running["w1"].tasks.begin(), g.running["w1"].tasks.end(), t) == 1);
  for (const auto& t : w2_before.tasks) CHECK(std::count(g.running["w2"].tasks.begin(), g.running["w2"].tasks.end(), t) == 1);

  // w3 leaves: nothing is lost, so no delay and nothing moves.
  g.running.erase("w3");
  g.draining.clear();
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.of("w1").tasks.empty());
  CHECK(g.of("w2").tasks.empty());
  check_each_task_once(g);
}

TEST_CASE("hand-over placement lists a draining worker's tasks with their next owners, and changes nothing else",
          "[assignor][drain]") {
  Group g;
  g.connector("a", 6);
  g.connector("b", 3);
  g.running["w1"] = g.running["w2"] = g.running["w3"] = {};
  g.round();
  g.round();
  auto w3_work = g.running["w3"];
  std::sort(w3_work.tasks.begin(), w3_work.tasks.end());
  REQUIRE_FALSE(w3_work.tasks.empty());
  g.draining = {"w3"};
  Group without = g;
  const auto plain = without.round(false);
  g.placement = true;
  const auto with = g.round(false);
  // The round itself is Connect's round (plus the drain), unchanged.
  CHECK(with.state == plain.state);
  for (size_t i = 0; i < plain.assignments.size(); ++i)
    CHECK(with.assignments[i].assignment == plain.assignments[i].assignment);
  CHECK(plain.moved.empty());
  // Every task w3 stops is listed, going to w1 or w2, none back to w3.
  REQUIRE(with.moved.size() == w3_work.tasks.size());
  std::map<std::string, size_t> to;
  for (size_t i = 0; i < with.moved.size(); ++i) {
    CHECK(with.moved[i].task == w3_work.tasks[i]);
    CHECK(with.moved[i].from == "w3");
    ++to[with.moved[i].to];
  }
  CHECK(to.count("w3") == 0);
  // Balanced over the two that stay: 9 tasks, w1 and w2 end with 4 or 5.
  CHECK(g.tasks("w1") + to["w1"] >= 4);
  CHECK(g.tasks("w2") + to["w2"] >= 4);
  CHECK(g.tasks("w1") + to["w1"] + g.tasks("w2") + to["w2"] == 9);
}

TEST_CASE("a draining worker that stopped its work before joining has it placed on the others in that round",
          "[assignor][drain]") {
  Group g;
  g.connector("a", 6);
  g.connector("b", 3);
  g.running["w1"] = g.running["w2"] = g.running["w3"] = {};
  g.round();
  g.round();
  const auto w3_work = g.running["w3"];
  REQUIRE_FALSE(w3_work.tasks.empty());
  const auto w1_before = g.running["w1"], w2_before = g.running["w2"];

  // w3 stopped everything before its JoinGroup, so it reports nothing owned.
  g.draining = {"w3"};
  g.running["w3"] = {};
  g.round();
  CHECK(g.of("w3").tasks.empty());
  CHECK(g.of("w3").connectors.empty());
  CHECK(g.of("w3").revoked_tasks.empty());
  CHECK(g.of("w1").delay_ms == 0);
  CHECK(g.of("w2").delay_ms == 0);
  CHECK(g.state.scheduled_rebalance_ms == 0);
  CHECK(g.running["w3"].empty());
  // One round: all of w3's work already runs on w1 and w2, and nothing else moved.
  check_each_task_once(g);
  CHECK(g.tasks("w1") + g.tasks("w2") == 9);
  CHECK(g.conns("w1") + g.conns("w2") == 2);
  for (const char* w : {"w1", "w2"}) CHECK(g.of(w).revoked_tasks.empty());
  for (const auto& t : w1_before.tasks) CHECK(std::count(g.running["w1"].tasks.begin(), g.running["w1"].tasks.end(), t) == 1);
  for (const auto& t : w2_before.tasks) CHECK(std::count(g.running["w2"].tasks.begin(), g.running["w2"].tasks.end(), t) == 1);

  // w3 leaves: it ran nothing, so nothing is lost and nothing moves.
  g.running.erase("w3");
  g.draining.clear();
  g.round();
  CHECK(g.of("w1").delay_ms == 0);
  check_each_task_once(g);
}

TEST_CASE("a draining worker is given no new work, and work placed while it drains waits one round",
          "[assignor][drain]") {
  Group g;
  g.connector("a", 4);
  g.running["w1"] = g.running["w2"] = {};
  g.round();
  g.round();
  g.draining = {"w2"};
  g.connector("b", 4);  // new work in the same round as the drain starts
  g.round();
  CHECK(g.of("w2").tasks.empty());
  CHECK(g.of("w2").connectors.empty());
  g.round();
  g.round();
  CHECK(g.running["w2"].empty());
  CHECK(g.tasks("w1") == 8);
  CHECK(g.conns("w1") == 2);
  check_each_task_once(g);
}

TEST_CASE("when every member drains, the drain is ignored (nobody to hand over to)", "[assignor][drain]") {
  Group g;
  g.connector("a", 2);
  g.running["w1"] = {};
  g.round();
  g.round();
  g.draining = {"w1"};
  g.round();
  CHECK(g.of("w1").revoked_tasks.empty());
  CHECK(g.tasks("w1") == 2);
}

TEST_CASE("the leader itself can drain", "[assignor][drain]") {
  Group g;  // the leader is the first member id, w1
  g.connector("a", 4);
  g.running["w1"] = g.running["w2"] = {};
  g.round();
  g.round();
  g.draining = {"w1"};
  g.round();
  g.round();
  CHECK(g.running["w1"].empty());
  CHECK(g.tasks("w2") == 4);
  CHECK(g.of("w1").leader == "w1");
  check_each_task_once(g);
}

TEST_CASE("eager: draining members get nothing and the others get everything in one round", "[assignor][drain][eager]") {
  EagerAssignor eager;
  ConfigSnapshot config;
  config.offset = 3;
  config.connectors = {{"a", 3}};
  std::vector<MemberReport> members = {{"m1", "http://m1/", 3, {}}, {"m2", "http://m2/", 3, {}}};
  RoundContext ctx;
  ctx.leader_id = "m1";
  ctx.protocol = kc::connect::ConnectProtocol::Eager;
  ctx.draining_members = {"m2"};
  auto r = eager.assign(LeaderState{}, members, config, ctx);
  REQUIRE(r.assignments.size() == 2);
  CHECK(r.assignments[0].member_id == "m1");
  CHECK(r.assignments[0].assignment.tasks.size() == 3);
  CHECK(r.assignments[0].assignment.connectors.size() == 1);
  CHECK(r.assignments[1].member_id == "m2");
  CHECK(r.assignments[1].assignment.tasks.empty());
  CHECK(r.assignments[1].assignment.leader == "m1");
  CHECK(r.assignments[1].assignment.config_offset == 3);
}

// ------------------------------------------------------------------ return to owner (deviation 8)

namespace {

ConnectorTaskId tid(const std::string& c, int32_t t) { return ConnectorTaskId{c, t}; }

// One round over `members` with `state`, generation 6 after a completed 5.
AssignmentResult return_round(const LeaderState& state, const std::vector<MemberReport>& members,
                              const ConfigSnapshot& config, bool on, bool placement = false) {
  RoundContext ctx;
  ctx.leader_id = members.front().member_id;
  ctx.generation = 6;
  ctx.last_completed_generation = 5;
  ctx.now_ms = 100000;
  ctx.return_lost_to_owner = on;
  ctx.hand_over_placement = placement;
  return IncrementalCooperativeAssignor{D}.assign(state, members, config, ctx);
}

const kc::connect::Assignment& assignment_of(const AssignmentResult& r, const std::string& id) {
  for (const auto& ma : r.assignments)
    if (ma.member_id == id) return ma.assignment;
  FAIL("no assignment for " << id);
  return r.assignments.front().assignment;
}

}  // namespace

TEST_CASE("return to owner: a worker back within the delay gets exactly its lost work in that round",
          "[assignor][return]") {
  ConfigSnapshot config{3, {{"a", 4}}};
  LeaderState state;
  state.previous_assignment = {{"a"}, {tid("a", 0), tid("a", 1), tid("a", 2), tid("a", 3)}};
  state.previous_generation = 5;
  state.previous_members = {"m1", "m2"};
  state.owners_by_identity = {{"url:http://w1:8083/", {{"a"}, {tid("a", 0), tid("a", 1)}}},
                              {"url:http://w2:8083/", {{}, {tid("a", 2), tid("a", 3)}}}};
  // m2 was killed; m3 is the same worker (same URL) restarted, running nothing.
  const std::vector<MemberReport> members = {
      {"m1", "http://w1:8083/", 3, {{"a"}, {tid("a", 0), tid("a", 1)}}},
      {"m3", "http://w2:8083/", 3, {}},
  };
  const auto on = return_round(state, members, config, true);
  CHECK(assignment_of(on, "m3").tasks == std::vector<ConnectorTaskId>{tid("a", 2), tid("a", 3)});
  CHECK(assignment_of(on, "m3").delay_ms == 0);
  CHECK(assignment_of(on, "m1").tasks.empty());
  CHECK(assignment_of(on, "m1").revoked_tasks.empty());
  CHECK(on.state.scheduled_rebalance_ms == 0);
  CHECK(on.state.lost_by_identity.empty());
  CHECK(on.state.owners_by_identity.at("url:http://w2:8083/").tasks ==
        std::vector<ConnectorTaskId>{tid("a", 2), tid("a", 3)});

  // Off: Connect's round, which the identity fields do not change.
  const auto off = return_round(state, members, config, false);
  CHECK(assignment_of(off, "m3").tasks.empty());
  CHECK(assignment_of(off, "m3").delay_ms == D);
  CHECK(off.state.owners_by_identity.empty());  // off keeps no identity bookkeeping
  CHECK(off.state.lost_by_identity.empty());
}

TEST_CASE("return to owner: a static member is known by its instance id, a dynamic one with another URL is new",
          "[assignor][return]") {
  ConfigSnapshot config{3, {{"a", 2}}};
  LeaderState state;
  state.previous_assignment = {{"a"}, {tid("a", 0), tid("a", 1)}};
  state.previous_generation = 5;
  state.previous_members = {"m1", "m2"};
  state.owners_by_identity = {{"url:http://w1:8083/", {{"a"}, {tid("a", 0)}}},
                              {"instance:pod-2", {{}, {tid("a", 1)}}}};
  std::vector<MemberReport> members = {
      {"m1", "http://w1:8083/", 3, {{"a"}, {tid("a", 0)}}},
      {"m3", "http://elsewhere:8083/", 3, {}},
  };
  members[1].group_instance_id = "pod-2";
  const auto same = return_round(state, members, config, true);
  CHECK(assignment_of(same, "m3").tasks == std::vector<ConnectorTaskId>{tid("a", 1)});
  CHECK(same.state.scheduled_rebalance_ms == 0);

  members[1].group_instance_id.clear();  // dynamic, another URL: a new worker
  const auto other = return_round(state, members, config, true);
  CHECK(assignment_of(other, "m3").tasks.empty());
  CHECK(assignment_of(other, "m3").delay_ms == D);
  CHECK(other.state.lost_by_identity.at("instance:pod-2").tasks == std::vector<ConnectorTaskId>{tid("a", 1)});
  CHECK(other.state.candidate_workers == std::vector<std::string>{"m3"});
}

TEST_CASE("return to owner: given-back tasks the same round revokes for balance are placed at once, not revoked",
          "[assignor][return]") {
  // w2 ran all 4 tasks of a; while it was away w4 joined (a candidate). Back
  // as m3, it is given a and its 4 tasks, and the round (no delay left)
  // balances 4 tasks over 3 workers: 2 of the given-back tasks are taken off
  // m3 at once. Nobody runs them, so they go to m4 in this round (a
  // revocation nobody carries out would start no follow-up round), m3 is
  // told to start only the others, and nobody stops anything.
  ConfigSnapshot config{3, {{"a", 4}, {"b", 0}}};
  LeaderState state;
  state.previous_assignment = {{"a", "b"}, {tid("a", 0), tid("a", 1), tid("a", 2), tid("a", 3)}};
  state.previous_generation = 5;
  state.previous_members = {"m1", "m4"};
  state.scheduled_rebalance_ms = 300000;
  state.delay_ms = 200000;
  state.candidate_workers = {"m4"};
  state.members_before_delay = {"m1"};
  state.owners_by_identity = {{"url:http://w1:8083/", {{"b"}, {}}}};
  state.lost_by_identity = {{"url:http://w2:8083/", {{"a"}, {tid("a", 0), tid("a", 1), tid("a", 2), tid("a", 3)}}}};
  const std::vector<MemberReport> members = {
      {"m1", "http://w1:8083/", 3, {{"b"}, {}}},
      {"m3", "http://w2:8083/", 3, {}},
      {"m4", "http://w4:8083/", 3, {}},
  };
  for (bool placement : {false, true}) {
    const auto r = return_round(state, members, config, true, placement);
    const auto& a = assignment_of(r, "m3");
    CHECK(a.connectors == std::vector<std::string>{"a"});
    CHECK(a.tasks.size() == 2);
    CHECK(a.revoked_tasks.empty());
    CHECK(assignment_of(r, "m1").revoked_tasks.empty());
    CHECK(assignment_of(r, "m4").tasks.size() == 1);  // 2/1/1
    CHECK(assignment_of(r, "m1").tasks.size() == 1);
    CHECK_FALSE(r.state.revoked_in_previous);  // nothing was revoked: no backoff next round
    CHECK(r.state.previous_assignment.tasks.size() == 4);
    CHECK(r.state.previous_revocation.tasks.empty());
    CHECK(r.state.lost_by_identity.empty());
    for (const auto& mv : r.moved) CHECK(mv.from != "m3");
  }
}

// ------------------------------------------------------------------ expired static member (deviation 9)

TEST_CASE("expired static member: its lost work is placed in that round, a dynamic member's waits the delay",
          "[assignor][static]") {
  ConfigSnapshot config{3, {{"a", 6}}};
  LeaderState state;
  state.previous_assignment = {{"a"}, {tid("a", 0), tid("a", 1), tid("a", 2), tid("a", 3), tid("a", 4), tid("a", 5)}};
  state.previous_generation = 5;
  state.previous_members = {"m1", "m2", "m3"};
  state.owners_by_identity = {{"url:http://w1:8083/", {{"a"}, {tid("a", 0), tid("a", 1)}}},
                              {"url:http://w2:8083/", {{}, {tid("a", 2), tid("a", 3)}}},
                              {"instance:pod-3", {{}, {tid("a", 4), tid("a", 5)}}}};
  // m2 (dynamic) and m3 (static, expired by the broker) are both gone.
  const std::vector<MemberReport> members = {{"m1", "http://w1:8083/", 3, {{"a"}, {tid("a", 0), tid("a", 1)}}}};
  RoundContext ctx;
  ctx.leader_id = "m1";
  ctx.generation = 6;
  ctx.last_completed_generation = 5;
  ctx.now_ms = 100000;
  ctx.no_delay_for_expired_static = true;
  const auto on = IncrementalCooperativeAssignor{D}.assign(state, members, config, ctx);
  CHECK(assignment_of(on, "m1").tasks == std::vector<ConnectorTaskId>{tid("a", 4), tid("a", 5)});
  CHECK(assignment_of(on, "m1").delay_ms == D);  // for m2's work
  CHECK(on.state.lost_by_identity.size() == 1);
  CHECK(on.state.lost_by_identity.at("url:http://w2:8083/").tasks == std::vector<ConnectorTaskId>{tid("a", 2), tid("a", 3)});

  // Only the static member lost: no delay at all.
  state.owners_by_identity.erase("url:http://w2:8083/");
  state.owners_by_identity["url:http://w1:8083/"].tasks.insert(
      state.owners_by_identity["url:http://w1:8083/"].tasks.end(), {tid("a", 2), tid("a", 3)});
  std::vector<MemberReport> with_w1_all = members;
  with_w1_all[0].owned.tasks = {tid("a", 0), tid("a", 1), tid("a", 2), tid("a", 3)};
  const auto only_static = IncrementalCooperativeAssignor{D}.assign(state, with_w1_all, config, ctx);
  CHECK(assignment_of(only_static, "m1").tasks == std::vector<ConnectorTaskId>{tid("a", 4), tid("a", 5)});
  CHECK(assignment_of(only_static, "m1").delay_ms == 0);
  CHECK(only_static.state.scheduled_rebalance_ms == 0);
  CHECK(only_static.state.lost_by_identity.empty());

  // Off: Connect's round, the static member's work waits the delay too.
  ctx.no_delay_for_expired_static = false;
  const auto off = IncrementalCooperativeAssignor{D}.assign(state, with_w1_all, config, ctx);
  CHECK(assignment_of(off, "m1").tasks.empty());
  CHECK(assignment_of(off, "m1").delay_ms == D);
}
