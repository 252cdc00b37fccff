// Table tests of the herder's pure rebalance and leader decisions
// (worker/herder/rebalance_plan.h): revocation stops, hand-over holds, drain,
// hand-over moves, the leader's task-config generation, and the statuses of
// failed generations. Every row has a name; rows that must yield nothing are
// there too, and each plan applied as the new actual state yields no more.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>

#include "worker/herder/rebalance_plan.h"

using namespace kc::herder;
using kc::connect::ConnectProtocol;
using kc::storage::kHandOverTrace;

namespace {

const std::string kMe = "w1:8083";
const std::string kOther = "w2:8083";

StatusValue status(StatusState s, const std::string& worker, int32_t gen = 3,
                   std::optional<std::string> trace = std::nullopt) {
  return StatusValue{s, std::move(trace), worker, gen};
}
StatusValue mark(StatusState s, const std::string& worker, int32_t gen = 3) {
  return status(s, worker, gen, std::string(kHandOverTrace));
}

std::set<ConnectorTaskId> ids(std::initializer_list<int32_t> tasks, const std::string& c = "c") {
  std::set<ConnectorTaskId> out;
  for (auto t : tasks) out.insert({c, t});
  return out;
}

}  // namespace

// ------------------------------------------------------------------ revocation

TEST_CASE("reconcile plan: revocation stops", "[herder][reconciler]") {
  struct Row {
    std::string name;
    std::set<std::string> owned_c;
    std::set<ConnectorTaskId> owned_t;
    std::set<std::string> running_c;
    std::set<ConnectorTaskId> running_t;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"revoked connector and task stop", {}, ids({0}), {"c"}, ids({0, 1}), "stop connectors [c] tasks [c-1]"},
      {"assignment keeps everything: nothing to stop", {"c"}, ids({0, 1}), {"c"}, ids({0, 1}), "nothing to stop"},
      {"newly assigned, not running yet: nothing to stop", {"c", "d"}, ids({0, 1, 2}), {"c"}, ids({0}),
       "nothing to stop"},
      {"empty assignment (drain done, or eager): everything stops", {}, {}, {"a", "c"}, ids({0, 3}),
       "stop connectors [a,c] tasks [c-0,c-3]"},
      {"task id beyond the new count is not owned: it stops", {"c"}, ids({0, 1}), {"c"}, ids({0, 1, 5}),
       "stop connectors [] tasks [c-5]"},
      {"nothing runs: nothing to stop", {}, {}, {}, {}, "nothing to stop"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      const auto p = plan_revocation(r.owned_c, r.owned_t, r.running_c, r.running_t);
      CHECK(to_string(p) == r.expected);
      // Idempotent: once the stops are carried out, nothing more to stop.
      auto rc = r.running_c;
      auto rt = r.running_t;
      for (const auto& c : p.stop_connectors) rc.erase(c);
      for (const auto& t : p.stop_tasks) rt.erase(t);
      CHECK(plan_revocation(r.owned_c, r.owned_t, rc, rt).empty());
    }
  }
}

// ------------------------------------------------------------------ hand-over hold

TEST_CASE("reconcile plan: hand-over holds", "[herder][reconciler]") {
  const int64_t bound = hand_over_hold_bound_ms(5000, 10000, 500);
  CHECK(bound == 16000);
  struct Row {
    std::string name;
    std::optional<StatusValue> st;
    std::optional<int64_t> since;
    int64_t now;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"no status: start", std::nullopt, std::nullopt, 100, "start"},
      {"old owner's RUNNING mark: first wait", mark(StatusState::Running, kOther), std::nullopt, 100, "wait (first)"},
      {"old owner's PAUSED mark: wait", mark(StatusState::Paused, kOther), 100, 300, "wait 200 ms"},
      {"old owner stopped (UNASSIGNED replaced the mark): start", status(StatusState::Unassigned, kOther), 100, 300,
       "start"},
      {"old owner's RUNNING without the mark: start", status(StatusState::Running, kOther), std::nullopt, 100,
       "start"},
      {"our own mark (we were the old owner): start", mark(StatusState::Running, kMe), std::nullopt, 100, "start"},
      {"marked but FAILED: nothing to wait for", status(StatusState::Failed, kOther, 3, std::string(kHandOverTrace)),
       std::nullopt, 100, "start"},
      {"just below the bound: still waits", mark(StatusState::Running, kOther), 0, bound - 1,
       "wait " + std::to_string(bound - 1) + " ms"},
      {"bound reached: give up and start", mark(StatusState::Running, kOther), 0, bound,
       "give up after " + std::to_string(bound) + " ms"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) { CHECK(to_string(decide_hand_over_hold(r.st, kMe, r.since, r.now, bound)) == r.expected); }
  }
  SECTION("a zero bound never holds past the first look") {
    CHECK(decide_hand_over_hold(mark(StatusState::Running, kOther), kMe, std::nullopt, 7, 0).verdict ==
          HoldVerdict::GiveUp);
  }
}

// ------------------------------------------------------------------ drain

TEST_CASE("reconcile plan: drain requests on the leader", "[herder][reconciler]") {
  struct Row {
    std::string name;
    bool leader;
    std::string leader_url;
    std::string member;
    std::vector<std::string> round;
    std::set<std::string> draining;
    DrainAcceptance expected;
  };
  const std::vector<Row> rows = {
      {"leader accepts and rebalances", true, "", "m2", {"m1", "m2"}, {}, {202, "draining", true}},
      {"second request of a draining member: accepted, no rebalance", true, "", "m2", {"m1", "m2"}, {"m2"},
       {202, "draining", false}},
      {"follower refuses and names the leader", false, "http://w1:8083/", "m2", {}, {},
       {409, "this worker is not the leader; the leader is http://w1:8083/", false}},
      {"follower without a known leader", false, "", "m2", {}, {}, {409, "this worker is not the leader", false}},
      {"only member: nobody to take the work", true, "", "m1", {"m1"}, {}, {409, kNoOtherWorker, false}},
      {"every other member drains too", true, "", "m1", {"m1", "m2"}, {"m2"}, {409, kNoOtherWorker, false}},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      CHECK(decide_drain_request(r.leader, r.leader_url, r.member, r.round, r.draining) == r.expected);
    }
  }
  SECTION("members that left the round are no longer draining") {
    CHECK(draining_members_in_round({"m2", "m3"}, {"m1", "m2"}) == std::set<std::string>{"m2"});
    CHECK(draining_members_in_round({}, {"m1"}).empty());
  }
}

TEST_CASE("reconcile plan: drain progress", "[herder][reconciler]") {
  CHECK(decide_drain_progress(true, true) == DrainProgress::Done);
  CHECK(decide_drain_progress(true, false) == DrainProgress::AskLeader);
  // An assignment being applied may still stop work: not done yet.
  CHECK(decide_drain_progress(false, true) == DrainProgress::AskLeader);
  CHECK(std::string(to_string(DrainProgress::Done)) == "done");
}

TEST_CASE("reconcile plan: drain hand-over marks", "[herder][reconciler]") {
  struct Row {
    std::string name;
    std::set<std::string> running_c;
    std::set<ConnectorTaskId> running_t;
    std::vector<ConnectorTaskId> tasks;
    std::map<ConnectorTaskId, StatusValue> statuses;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"running task marked RUNNING with our last generation", {"c"}, ids({0}), {{"c", 0}},
       {{{"c", 0}, status(StatusState::Running, kMe, 2)}}, "stop connectors [c] mark [c-0 RUNNING g2]"},
      {"paused task keeps PAUSED", {}, ids({1}), {{"c", 1}}, {{{"c", 1}, status(StatusState::Paused, kMe, 2)}},
       "stop connectors [] mark [c-1 PAUSED g2]"},
      {"failed task is not marked", {}, ids({0}), {{"c", 0}}, {{{"c", 0}, status(StatusState::Failed, kMe, 2)}},
       "stop connectors [] mark []"},
      {"no status yet: RUNNING with the current generation", {}, ids({0}), {{"c", 0}}, {},
       "stop connectors [] mark [c-0 RUNNING g7]"},
      {"another worker's stale PAUSED: RUNNING with the current generation", {}, ids({0}), {{"c", 0}},
       {{{"c", 0}, status(StatusState::Paused, kOther, 1)}}, "stop connectors [] mark [c-0 RUNNING g7]"},
      {"assigned but not running here (deleted mid-rebalance): no mark", {}, {}, {{"c", 0}}, {},
       "stop connectors [] mark []"},
      {"nothing runs: nothing to do", {}, {}, {}, {}, "stop connectors [] mark []"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      const auto p = plan_drain_hand_over(r.running_c, r.running_t, r.tasks, r.statuses, kMe, 7);
      CHECK(to_string(p) == r.expected);
      for (const auto& [t, v] : p.marks) {
        CHECK(v.trace == std::string(kHandOverTrace));
        CHECK(v.worker_id == kMe);
      }
      // Idempotent: with the connectors stopped and the tasks gone (stopped
      // once the assignment without them came), nothing more to do.
      CHECK(to_string(plan_drain_hand_over({}, {}, r.tasks, r.statuses, kMe, 7)) == "stop connectors [] mark []");
    }
  }
}

// ------------------------------------------------------------------ hand-over moves

namespace {

namespace as = kc::assignor;

/// m1 (w1, the leader) ran connector c and its 4 tasks alone in generation 1;
/// m2 (w2) joins with nothing in generation 2.
struct Round {
  std::vector<as::MemberReport> reports;
  as::ConfigSnapshot cs;
  as::RoundContext ctx;
  as::LeaderState state;
};

Round join_round() {
  Round r;
  as::MemberReport m1{"m1", "http://w1:8083/", 10, {{"c"}, {{"c", 0}, {"c", 1}, {"c", 2}, {"c", 3}}}};
  as::MemberReport m2{"m2", "http://w2:8083/", 10, {}};
  r.reports = {m1, m2};
  r.cs.offset = 10;
  r.cs.connectors = {{"c", 4}};
  r.ctx.leader_id = "m1";
  r.ctx.generation = 2;
  r.ctx.last_completed_generation = 1;
  r.ctx.now_ms = 1000;
  r.ctx.protocol = ConnectProtocol::Sessioned;
  r.state.previous_assignment = m1.owned;
  r.state.previous_generation = 1;
  r.state.previous_members = {"m1"};
  return r;
}

as::AssignmentResult assign(const Round& r) {
  auto state = r.state;
  return as::IncrementalCooperativeAssignor{300000}.assign(state, r.reports, r.cs, r.ctx);
}

std::map<ConnectorTaskId, StatusValue> running_on_w1() {
  std::map<ConnectorTaskId, StatusValue> out;
  for (int32_t i = 0; i < 4; ++i) out[{"c", i}] = status(StatusState::Running, kMe, 1);
  return out;
}

}  // namespace

TEST_CASE("reconcile plan: hand-over moves", "[herder][reconciler]") {
  const Round round = join_round();
  const auto res = assign(round);
  // The assignor revokes two of m1's tasks for balance, placed next round.
  std::vector<ConnectorTaskId> revoked;
  for (const auto& ma : res.assignments) revoked.insert(revoked.end(), ma.assignment.revoked_tasks.begin(),
                                                        ma.assignment.revoked_tasks.end());
  REQUIRE(revoked.size() == 2);
  const std::string moved_text = "move [" + revoked[0].to_string() + "," + revoked[1].to_string() + "] -> m2";

  struct Row {
    std::string name;
    bool enabled = true;
    ConnectProtocol protocol = ConnectProtocol::Sessioned;
    std::function<void(as::AssignmentResult&)> tweak;
    std::map<ConnectorTaskId, StatusValue> statuses;
    std::string expected;
  };
  auto paused = running_on_w1();
  for (auto& [t, v] : paused) v.state = StatusState::Paused;
  auto stale = running_on_w1();
  for (auto& [t, v] : stale) v.worker_id = "w3:8083";
  auto failed = running_on_w1();
  for (auto& [t, v] : failed) v.state = StatusState::Failed;
  const std::vector<Row> rows = {
      {"revoked tasks go to their next owner in this round", true, ConnectProtocol::Sessioned, {}, running_on_w1(),
       moved_text},
      {"paused tasks move too", true, ConnectProtocol::Sessioned, {}, paused, moved_text},
      {"disabled: no moves", false, ConnectProtocol::Sessioned, {}, running_on_w1(), "no moves"},
      {"eager protocol: no moves", true, ConnectProtocol::Eager, {}, running_on_w1(), "no moves"},
      {"CONFIG_MISMATCH: no moves", true, ConnectProtocol::Sessioned,
       [](as::AssignmentResult& r) { r.config_mismatch = true; }, running_on_w1(), "no moves"},
      {"a delay runs: no moves", true, ConnectProtocol::Sessioned,
       [](as::AssignmentResult& r) { r.state.delay_ms = 1000; }, running_on_w1(), "no moves"},
      {"a scheduled rebalance is pending: no moves", true, ConnectProtocol::Sessioned,
       [](as::AssignmentResult& r) { r.state.scheduled_rebalance_ms = 5000; }, running_on_w1(), "no moves"},
      {"old owner's status unknown: the follow-up round places them", true, ConnectProtocol::Sessioned, {}, {},
       "no moves"},
      {"status of another worker (stale): not moved", true, ConnectProtocol::Sessioned, {}, stale, "no moves"},
      {"FAILED on the old owner: not moved", true, ConnectProtocol::Sessioned, {}, failed, "no moves"},
      {"nothing revoked (connector deleted mid-rebalance): no moves", true, ConnectProtocol::Sessioned,
       [](as::AssignmentResult& r) {
         for (auto& ma : r.assignments) ma.assignment.revoked_tasks.clear();
       },
       running_on_w1(), "no moves"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      auto in = res;
      if (r.tweak) r.tweak(in);
      auto ctx = round.ctx;
      ctx.protocol = r.protocol;
      const auto m = plan_hand_over_moves(r.enabled, in, round.reports, round.cs, ctx, 300000, r.statuses);
      CHECK(to_string(m) == r.expected);
      if (m.moved.empty()) {
        // Nothing moved: the round's result is handed back as it came.
        CHECK(m.marks.empty());
        CHECK(m.result.assignments.size() == in.assignments.size());
        for (size_t i = 0; i < in.assignments.size(); ++i)
          CHECK(m.result.assignments[i].assignment == in.assignments[i].assignment);
        CHECK(m.result.state.previous_assignment == in.state.previous_assignment);
        continue;
      }
      // One mark per moved task, the old owner's state, for the old owner.
      REQUIRE(m.marks.size() == 2);
      for (const auto& [t, v] : m.marks) {
        CHECK(v.trace == std::string(kHandOverTrace));
        CHECK(v.worker_id == kMe);
        CHECK(v.state == r.statuses.at(t).state);
        CHECK(v.generation == 1);
      }
      // The leader remembers the moved tasks as placed, not as revoked.
      for (const auto& t : m.moved) {
        CHECK(std::count(m.result.state.previous_assignment.tasks.begin(),
                         m.result.state.previous_assignment.tasks.end(), t) == 1);
        CHECK(std::count(m.result.state.previous_revocation.tasks.begin(),
                         m.result.state.previous_revocation.tasks.end(), t) == 0);
      }
    }
  }

  SECTION("idempotent: the follow-up round of the moved result changes nothing") {
    const auto m = plan_hand_over_moves(true, res, round.reports, round.cs, round.ctx, 300000, running_on_w1());
    REQUIRE(m.moved.size() == 2);
    // Each member reports what it owns once this round applied.
    auto next = round.reports;
    for (size_t i = 0; i < next.size(); ++i) {
      const auto& a = m.result.assignments[i].assignment;
      auto& owned = next[i].owned;
      std::erase_if(owned.tasks, [&](const auto& t) {
        return std::count(a.revoked_tasks.begin(), a.revoked_tasks.end(), t) > 0;
      });
      owned.tasks.insert(owned.tasks.end(), a.tasks.begin(), a.tasks.end());
      std::sort(owned.tasks.begin(), owned.tasks.end());
      owned.connectors.insert(owned.connectors.end(), a.connectors.begin(), a.connectors.end());
    }
    auto ctx = round.ctx;
    ctx.generation = 3;
    ctx.last_completed_generation = 2;
    auto state = m.result.state;
    const auto follow = as::IncrementalCooperativeAssignor{300000}.assign(state, next, round.cs, ctx);
    for (const auto& ma : follow.assignments) {
      INFO(ma.member_id);
      CHECK(ma.assignment.tasks.empty());
      CHECK(ma.assignment.connectors.empty());
      CHECK(ma.assignment.revoked_tasks.empty());
      CHECK(ma.assignment.revoked_connectors.empty());
    }
    CHECK(to_string(plan_hand_over_moves(true, follow, next, round.cs, ctx, 300000, running_on_w1())) == "no moves");
  }
}

// ------------------------------------------------------------------ the leader's round

TEST_CASE("reconcile plan: the leader's round", "[herder][reconciler]") {
  SECTION("assignor snapshot: committed task counts, 0 for none or inconsistent") {
    ClusterConfigState snap;
    snap.offset = 42;
    snap.connector_configs = {{"a", {}}, {"b", {}}, {"c", {}}};
    snap.task_counts = {{"a", 3}, {"c", 5}, {"gone", 2}};
    snap.inconsistent = {"c"};
    const auto cs = assignor_snapshot(snap);
    CHECK(cs.offset == 42);
    CHECK(cs.connectors == std::map<std::string, int32_t>{{"a", 3}, {"b", 0}, {"c", 0}});
  }
  const Round round = join_round();
  SECTION("cooperative: the assignor's round plus the hand-over moves, in one step") {
    const auto m = plan_leader_round(true, round.state, round.reports, round.cs, round.ctx, 300000, running_on_w1());
    const auto two_steps =
        plan_hand_over_moves(true, assign(round), round.reports, round.cs, round.ctx, 300000, running_on_w1());
    REQUIRE(m.moved.size() == 2);
    CHECK(m.moved == two_steps.moved);
    CHECK(m.marks == two_steps.marks);
    CHECK(m.result.state == two_steps.result.state);
    for (size_t i = 0; i < m.result.assignments.size(); ++i)
      CHECK(m.result.assignments[i].assignment == two_steps.result.assignments[i].assignment);
  }
  SECTION("eager: the full set dealt round robin, no moves, the state kept") {
    auto ctx = round.ctx;
    ctx.protocol = ConnectProtocol::Eager;
    const auto m = plan_leader_round(true, round.state, round.reports, round.cs, ctx, 300000, running_on_w1());
    CHECK(m.moved.empty());
    CHECK(m.marks.empty());
    CHECK(m.result.state == round.state);
    REQUIRE(m.result.assignments.size() == 2);
    CHECK(m.result.assignments[0].assignment.version == 0);
    CHECK(m.result.assignments[0].assignment.tasks == std::vector<ConnectorTaskId>{{"c", 1}, {"c", 3}});
    CHECK(m.result.assignments[1].assignment.tasks == std::vector<ConnectorTaskId>{{"c", 0}, {"c", 2}});
    CHECK(m.result.assignments[0].assignment.revoked_tasks.empty());
  }
}

// ------------------------------------------------------------------ task configs (leader)

TEST_CASE("reconcile plan: task-config generation triggers", "[herder][reconciler]") {
  using T = GenerationTrigger;
  using V = GenerationVerdict;
  struct Row {
    std::string name;
    T trigger;
    GenerationFacts facts;
    V expected;
  };
  const GenerationFacts leader{true, false, false, false};
  const GenerationFacts leader_busy{true, true, false, false};
  const GenerationFacts follower{false, false, false, false};
  const std::vector<Row> rows = {
      {"leader: connector config record generates", T::ConnectorConfigRecord, leader, V::Generate},
      {"leader: config record while generating runs one more after it", T::ConnectorConfigRecord, leader_busy,
       V::AfterCurrent},
      {"follower: config record does nothing", T::ConnectorConfigRecord, follower, V::None},
      {"leader: consistent commit does nothing", T::TasksCommitted, leader, V::None},
      {"leader: inconsistent commit regenerates", T::TasksCommitted, {true, false, false, true}, V::Generate},
      {"follower: inconsistent commit is the leader's", T::TasksCommitted, {false, false, false, true}, V::None},
      {"leader: connector's request generates", T::ConnectorRequest, leader, V::Generate},
      {"leader: request while generating runs one more after it", T::ConnectorRequest, leader_busy, V::AfterCurrent},
      {"follower: connector's request is forwarded", T::ConnectorRequest, follower, V::ForwardToLeader},
      {"became leader: every connector once", T::BecameLeader, leader, V::Generate},
      {"became leader but lost it meanwhile: nothing", T::BecameLeader, follower, V::None},
      {"finished, asked again meanwhile: once more", T::GenerationFinished, {true, true, true, false}, V::Generate},
      {"finished, not asked again: nothing", T::GenerationFinished, leader_busy, V::None},
      {"finished, asked again but no longer leader: nothing", T::GenerationFinished, {false, true, true, false},
       V::None},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      INFO(to_string(decide_task_config_generation(r.trigger, r.facts)));
      CHECK(decide_task_config_generation(r.trigger, r.facts) == r.expected);
    }
  }
}

namespace {

ClusterConfigState snapshot() {
  ClusterConfigState s;
  s.connector_configs["ok"] = {{"connector.class", "X"}};
  s.task_counts["ok"] = 2;
  s.task_configs[{"ok", 0}] = {{"t", "0"}};
  s.task_configs[{"ok", 1}] = {{"t", "1"}};
  s.connector_configs["none"] = {{"connector.class", "X"}};  // no commit yet
  s.connector_configs["zero"] = {{"connector.class", "X"}};
  s.task_counts["zero"] = 0;  // resumed after STOPPED
  s.connector_configs["broken"] = {{"connector.class", "X"}};
  s.task_counts["broken"] = 2;
  s.inconsistent.insert("broken");
  s.connector_configs["stopped"] = {{"connector.class", "X"}};
  s.task_counts["stopped"] = 0;
  s.target_states["stopped"] = TargetState::Stopped;
  s.connector_configs["paused"] = {{"connector.class", "X"}};
  s.target_states["paused"] = TargetState::Paused;
  return s;
}

}  // namespace

TEST_CASE("reconcile plan: connectors the leader generates task configs for", "[herder][reconciler]") {
  const auto snap = snapshot();
  struct Row {
    std::string name;
    std::set<std::string> in_flight;
    std::map<std::string, GenerationFailure> failures;
    std::vector<std::string> expected;
  };
  const std::vector<Row> rows = {
      {"none, zero, inconsistent and paused-without-tasks need them; STOPPED and ok do not", {}, {},
       {"broken", "none", "paused", "zero"}},
      {"in flight: not again", {"none", "zero"}, {}, {"broken", "paused"}},
      {"failed for this very config: not retried",
       {},
       {{"none", {{{"connector.class", "X"}}, "boom"}}},
       {"broken", "paused", "zero"}},
      {"failed for an older config: retried", {}, {{"none", {{{"connector.class", "Old"}}, "boom"}}},
       {"broken", "none", "paused", "zero"}},
  };
  for (const auto& r : rows) {
    SECTION(r.name) { CHECK(connectors_needing_task_configs(snap, r.in_flight, r.failures) == r.expected); }
  }
  SECTION("idempotent: once written, nothing is needed") {
    auto done = snap;
    for (const auto& c : connectors_needing_task_configs(snap, {}, {})) {
      done.task_counts[c] = 1;
      done.task_configs[{c, 0}] = {{"t", "0"}};
      done.inconsistent.erase(c);
    }
    CHECK(connectors_needing_task_configs(done, {}, {}).empty());
  }
}

TEST_CASE("reconcile plan: task-config source and write", "[herder][reconciler]") {
  const auto snap = snapshot();
  SECTION("source") {
    CHECK(task_config_source("ok", snap) == TaskConfigSource::Plugin);
    CHECK(task_config_source("paused", snap) == TaskConfigSource::Plugin);
    CHECK(task_config_source("stopped", snap) == TaskConfigSource::WriteEmpty);
    CHECK(task_config_source("deleted-mid-rebalance", snap) == TaskConfigSource::Nothing);
    CHECK(std::string(to_string(TaskConfigSource::WriteEmpty)) == "write empty");
  }
  struct Row {
    std::string name;
    std::string connector;
    std::vector<ConfigMap> generated;
    bool expected;
  };
  const std::vector<Row> rows = {
      {"the committed configs: no write", "ok", {{{"t", "0"}}, {{"t", "1"}}}, false},
      {"one config changed: write", "ok", {{{"t", "0"}}, {{"t", "X"}}}, true},
      {"fewer tasks: write", "ok", {{{"t", "0"}}}, true},
      {"more tasks: write", "ok", {{{"t", "0"}}, {{"t", "1"}}, {{"t", "2"}}}, true},
      {"none committed yet: write", "none", {{{"t", "0"}}}, true},
      {"inconsistent: write even the same count", "broken", {{{"t", "0"}}, {{"t", "1"}}}, true},
      {"STOPPED with its 0-task commit: no second write", "stopped", {}, false},
      {"no commit yet, an empty set generated: write it", "paused", {}, true},
  };
  for (const auto& r : rows) {
    SECTION(r.name) { CHECK(task_configs_need_write(r.connector, r.generated, snap) == r.expected); }
  }
  SECTION("idempotent: after the write, the same configs need none") {
    auto after = snap;
    after.task_counts["none"] = 1;
    after.task_configs[{"none", 0}] = {{"t", "0"}};
    CHECK_FALSE(task_configs_need_write("none", {{{"t", "0"}}}, after));
  }
}

// ------------------------------------------------------------------ statuses of failed generations

TEST_CASE("reconcile plan: statuses of failed generations", "[herder][reconciler]") {
  const auto snap = snapshot();
  const ConfigMap conf{{"connector.class", "X"}};
  struct Row {
    std::string name;
    std::map<std::string, GenerationFailure> failures;
    std::map<std::string, StatusValue> statuses;
    std::string expected;
    std::vector<StatusValue> written;
  };
  const std::vector<Row> rows = {
      {"no status yet: FAILED under this worker",
       {{"none", {conf, "boom"}}},
       {},
       "forget [] write [none FAILED]",
       {StatusValue{StatusState::Failed, std::string("boom"), kMe, -1}}},
      {"owner's RUNNING replaced by FAILED under the owner",
       {{"ok", {conf, "boom"}}},
       {{"ok", status(StatusState::Running, kOther, 4)}},
       "forget [] write [ok FAILED]",
       {StatusValue{StatusState::Failed, std::string("boom"), kOther, 4}}},
      {"already FAILED with this trace: nothing (no-op row)",
       {{"ok", {conf, "boom"}}},
       {{"ok", status(StatusState::Failed, kOther, 4, std::string("boom"))}},
       "forget [] write []",
       {}},
      {"FAILED with another trace: rewritten",
       {{"ok", {conf, "boom"}}},
       {{"ok", status(StatusState::Failed, kOther, 4, std::string("older"))}},
       "forget [] write [ok FAILED]",
       {StatusValue{StatusState::Failed, std::string("boom"), kOther, 4}}},
      {"connector deleted: forgotten", {{"gone", {conf, "boom"}}}, {}, "forget [gone] write []", {}},
      {"config changed since: forgotten", {{"ok", {{{"connector.class", "Old"}}, "boom"}}}, {},
       "forget [ok] write []", {}},
      {"STOPPED since: forgotten", {{"stopped", {conf, "boom"}}}, {}, "forget [stopped] write []", {}},
      {"no failures: nothing", {}, {}, "forget [] write []", {}},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      const auto p = plan_generation_failure_statuses(r.failures, snap, r.statuses, kMe);
      CHECK(to_string(p) == r.expected);
      std::vector<StatusValue> written;
      for (const auto& w : p.writes) written.push_back(w.second);
      CHECK(written == r.written);
      // Idempotent: with the writes read back and the forgotten dropped, nothing more.
      auto failures = r.failures;
      for (const auto& c : p.forget) failures.erase(c);
      auto statuses = r.statuses;
      for (const auto& [c, v] : p.writes) statuses[c] = v;
      CHECK(to_string(plan_generation_failure_statuses(failures, snap, statuses, kMe)) == "forget [] write []");
    }
  }
}
