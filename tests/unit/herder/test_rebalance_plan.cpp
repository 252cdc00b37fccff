// Table tests of the herder's pure rebalance and leader decisions
// (worker/herder/rebalance_plan.h): revocation stops, revoke-all, the
// before-join gate, hand-over holds, drain, hand-over moves, the config
// catch-up of an assignment, stale leader rounds, the leader's task-config
// generation and its write retries, and the statuses of failed
// generations. Every row has a name; rows that must yield nothing are there
// too, and each plan applied as the new actual state yields no more.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <functional>
#include <random>

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

as::AssignmentResult assign(const Round& r, bool placement = false, int32_t max_delay_ms = 300000) {
  auto ctx = r.ctx;
  ctx.hand_over_placement = placement;
  return as::IncrementalCooperativeAssignor{max_delay_ms}.assign(r.state, r.reports, r.cs, ctx);
}

std::map<ConnectorTaskId, StatusValue> running_on_w1() {
  std::map<ConnectorTaskId, StatusValue> out;
  for (int32_t i = 0; i < 4; ++i) out[{"c", i}] = status(StatusState::Running, kMe, 1);
  return out;
}

/// The hand-over moves as the herder computed them before the assignor
/// placed revoked tasks itself: the round's result, then a second assignor
/// run on the follow-up round (this round applied). The oracle of the
/// one-run computation.
HandOverMoves two_run_hand_over_moves(as::AssignmentResult res, const Round& in, int32_t max_delay_ms,
                                      const std::map<ConnectorTaskId, StatusValue>& task_statuses) {
  HandOverMoves out;
  out.result = std::move(res);
  auto& r = out.result;
  if (in.ctx.protocol == ConnectProtocol::Eager || r.config_mismatch) return out;
  std::map<ConnectorTaskId, size_t> revoked_from;
  for (size_t i = 0; i < r.assignments.size(); ++i)
    for (const auto& t : r.assignments[i].assignment.revoked_tasks) revoked_from[t] = i;
  if (revoked_from.empty() || r.state.delay_ms > 0 || r.state.scheduled_rebalance_ms != 0) return out;
  std::vector<as::MemberReport> next = in.reports;
  for (size_t i = 0; i < next.size() && i < r.assignments.size(); ++i) {
    const auto& a = r.assignments[i].assignment;
    auto& owned = next[i].owned;
    std::erase_if(owned.connectors, [&](const auto& c) {
      return std::count(a.revoked_connectors.begin(), a.revoked_connectors.end(), c) > 0;
    });
    std::erase_if(owned.tasks,
                  [&](const auto& t) { return std::count(a.revoked_tasks.begin(), a.revoked_tasks.end(), t) > 0; });
    owned.connectors.insert(owned.connectors.end(), a.connectors.begin(), a.connectors.end());
    std::sort(owned.connectors.begin(), owned.connectors.end());
    owned.connectors.erase(std::unique(owned.connectors.begin(), owned.connectors.end()), owned.connectors.end());
    owned.tasks.insert(owned.tasks.end(), a.tasks.begin(), a.tasks.end());
    std::sort(owned.tasks.begin(), owned.tasks.end());
    owned.tasks.erase(std::unique(owned.tasks.begin(), owned.tasks.end()), owned.tasks.end());
  }
  auto next_ctx = in.ctx;
  next_ctx.generation = in.ctx.generation + 1;
  next_ctx.last_completed_generation = in.ctx.generation;
  const auto follow_up = as::IncrementalCooperativeAssignor{max_delay_ms}.assign(r.state, next, in.cs, next_ctx);
  if (follow_up.config_mismatch || follow_up.state.delay_ms > 0) return out;
  for (const auto& ma : follow_up.assignments)
    if (!ma.assignment.revoked_tasks.empty() || !ma.assignment.revoked_connectors.empty()) return out;
  std::vector<std::pair<size_t, std::vector<ConnectorTaskId>>> taken_by;
  for (const auto& ma : follow_up.assignments) {
    auto to = std::find_if(r.assignments.begin(), r.assignments.end(),
                           [&](const auto& x) { return x.member_id == ma.member_id; });
    std::vector<ConnectorTaskId> taken;
    for (const auto& t : ma.assignment.tasks) {
      auto from = revoked_from.find(t);
      if (from == revoked_from.end() || r.assignments[from->second].member_id == ma.member_id) continue;
      auto st = task_statuses.find(t);
      const std::string& old_url = in.reports[from->second].url;
      if (st == task_statuses.end() ||
          (st->second.state != StatusState::Running && st->second.state != StatusState::Paused) ||
          old_url.find("//" + st->second.worker_id + "/") == std::string::npos)
        continue;
      out.marks.emplace_back(t, StatusValue{st->second.state, std::string(kHandOverTrace), st->second.worker_id,
                                            st->second.generation});
      taken.push_back(t);
    }
    taken_by.emplace_back(static_cast<size_t>(to - r.assignments.begin()), std::move(taken));
  }
  for (const auto& [i, taken] : taken_by) {
    auto& tasks = r.assignments[i].assignment.tasks;
    tasks.insert(tasks.end(), taken.begin(), taken.end());
    std::sort(tasks.begin(), tasks.end());
    out.moved.insert(out.moved.end(), taken.begin(), taken.end());
  }
  if (out.moved.empty()) return out;
  auto& prev = r.state.previous_assignment.tasks;
  prev.insert(prev.end(), out.moved.begin(), out.moved.end());
  std::sort(prev.begin(), prev.end());
  std::erase_if(r.state.previous_revocation.tasks,
                [&](const auto& t) { return std::count(out.moved.begin(), out.moved.end(), t) > 0; });
  std::sort(out.moved.begin(), out.moved.end());
  return out;
}

/// Both computations agree on everything the leader sends and keeps.
void check_same(const HandOverMoves& one_run, const HandOverMoves& oracle) {
  CHECK(to_string(one_run) == to_string(oracle));
  CHECK(one_run.moved == oracle.moved);
  CHECK(one_run.marks == oracle.marks);
  CHECK(one_run.result.state == oracle.result.state);
  CHECK(one_run.result.config_mismatch == oracle.result.config_mismatch);
  REQUIRE(one_run.result.assignments.size() == oracle.result.assignments.size());
  for (size_t i = 0; i < oracle.result.assignments.size(); ++i) {
    INFO(oracle.result.assignments[i].member_id);
    CHECK(one_run.result.assignments[i].member_id == oracle.result.assignments[i].member_id);
    CHECK(one_run.result.assignments[i].assignment == oracle.result.assignments[i].assignment);
  }
}

}  // namespace

TEST_CASE("reconcile plan: hand-over moves", "[herder][reconciler]") {
  const Round base = join_round();
  const auto plain = assign(base);
  // The assignor revokes two of m1's tasks for balance, placed next round.
  std::vector<ConnectorTaskId> revoked;
  for (const auto& ma : plain.assignments) revoked.insert(revoked.end(), ma.assignment.revoked_tasks.begin(),
                                                          ma.assignment.revoked_tasks.end());
  REQUIRE(revoked.size() == 2);
  CHECK(plain.moved.empty());  // hand-over placement off: Connect's round
  const std::string moved_text = "move [" + revoked[0].to_string() + "," + revoked[1].to_string() + "] -> m2";

  struct Row {
    std::string name;
    bool enabled = true;
    std::function<void(Round&)> setup;
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
      {"revoked tasks go to their next owner in this round", true, {}, running_on_w1(), moved_text},
      {"paused tasks move too", true, {}, paused, moved_text},
      {"disabled: no moves", false, {}, running_on_w1(), "no moves"},
      {"eager protocol: no moves", true, [](Round& r) { r.ctx.protocol = ConnectProtocol::Eager; }, running_on_w1(),
       "no moves"},
      {"CONFIG_MISMATCH: no moves", true, [](Round& r) { r.cs.offset = 5; }, running_on_w1(), "no moves"},
      {"lost work held for the delay: no moves", true,
       [](Round& r) {
         r.cs.connectors["d"] = 2;
         r.state.previous_assignment.tasks.push_back({"d", 0});
         r.state.previous_assignment.tasks.push_back({"d", 1});
         r.state.previous_members = {"m1", "m3"};
       },
       running_on_w1(), "no moves"},
      {"successive revoking round (backoff delay): no moves", true,
       [](Round& r) { r.state.revoked_in_previous = true; }, running_on_w1(), "no moves"},
      {"old owner's status unknown: the follow-up round places them", true, {}, {}, "no moves"},
      {"status of another worker (stale): not moved", true, {}, stale, "no moves"},
      {"FAILED on the old owner: not moved", true, {}, failed, "no moves"},
      {"balanced already: nothing revoked, no moves", true,
       [](Round& r) {
         r.reports[0].owned.tasks = {{"c", 0}, {"c", 1}};
         r.reports[1].owned.tasks = {{"c", 2}, {"c", 3}};
         r.state.previous_assignment.tasks = {{"c", 0}, {"c", 1}, {"c", 2}, {"c", 3}};
         r.state.previous_members = {"m1", "m2"};
       },
       running_on_w1(), "no moves"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      Round in = base;
      if (r.setup) r.setup(in);
      const auto m = plan_leader_round(r.enabled, in.state, in.reports, in.cs, in.ctx, 300000, r.statuses);
      CHECK(to_string(m) == r.expected);
      // The oracle (two assignor runs) agrees on every enabled row.
      if (r.enabled && in.ctx.protocol != ConnectProtocol::Eager)
        check_same(m, two_run_hand_over_moves(assign(in), in, 300000, r.statuses));
      if (m.moved.empty()) {
        CHECK(m.marks.empty());
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

  SECTION("the assignor reports its moves beside an unchanged result") {
    const auto with = assign(base, true);
    REQUIRE(with.moved.size() == 2);
    for (const auto& mv : with.moved) {
      CHECK(mv.from == "m1");
      CHECK(mv.to == "m2");
    }
    CHECK(with.state == plain.state);
    for (size_t i = 0; i < plain.assignments.size(); ++i)
      CHECK(with.assignments[i].assignment == plain.assignments[i].assignment);
  }

  SECTION("idempotent: the follow-up round of the moved result changes nothing") {
    const auto m = plan_leader_round(true, base.state, base.reports, base.cs, base.ctx, 300000, running_on_w1());
    REQUIRE(m.moved.size() == 2);
    // Each member reports what it owns once this round applied.
    auto next = base.reports;
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
    auto ctx = base.ctx;
    ctx.generation = 3;
    ctx.last_completed_generation = 2;
    const auto follow = plan_leader_round(true, m.result.state, next, base.cs, ctx, 300000, running_on_w1());
    for (const auto& ma : follow.result.assignments) {
      INFO(ma.member_id);
      CHECK(ma.assignment.tasks.empty());
      CHECK(ma.assignment.connectors.empty());
      CHECK(ma.assignment.revoked_tasks.empty());
      CHECK(ma.assignment.revoked_connectors.empty());
    }
    CHECK(to_string(follow) == "no moves");
  }
}

TEST_CASE("reconcile plan: hand-over moves in one assignor run equal the two-run oracle", "[herder][reconciler]") {
  // Random groups evolved over rounds (fixed seeds): members join and leave,
  // connectors change their task counts, members may report duplicates and
  // deleted tasks; delays expire as time goes on. Every round, the one-run
  // computation must equal the old two-run one exactly. Seeds above 300 run
  // with return_lost_to_owner (a member that left and joins again has its
  // URL, so it gets its lost work back).
  int64_t rounds = 0, rounds_with_moves = 0, tasks_moved = 0, drain_rounds_with_moves = 0;
  for (uint32_t seed = 1; seed <= 600; ++seed) {
    std::mt19937 rng(seed);
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint32_t>(n)); };
    const int32_t max_delay = std::array<int32_t, 3>{0, 300000, 250}[static_cast<size_t>(pick(3))];
    Round r;
    r.cs.offset = 10;
    const int n_conns = 1 + pick(4);
    for (int c = 0; c < n_conns; ++c) r.cs.connectors["c" + std::to_string(c)] = pick(10);
    std::vector<int> present = {1};
    for (int i = 2; i <= 6; ++i)
      if (pick(2)) present.push_back(i);
    auto report_of = [](int i) {
      return as::MemberReport{"m" + std::to_string(i), "http://w" + std::to_string(i) + ":8083/", 10, {}};
    };
    for (int i : present) r.reports.push_back(report_of(i));
    auto any_member = [&]() -> as::MemberReport& {
      return r.reports[static_cast<size_t>(pick(static_cast<int>(r.reports.size())))];
    };
    for (const auto& [c, n] : r.cs.connectors) {
      if (pick(4)) any_member().owned.connectors.push_back(c);
      for (int32_t t = 0; t < n + pick(2); ++t) {  // sometimes one above the count: deleted
        const int k = pick(10);
        if (k < 2) continue;
        any_member().owned.tasks.push_back({c, t});
        if (k == 9) any_member().owned.tasks.push_back({c, t});  // maybe a duplicate
      }
    }
    for (auto& m : r.reports) {
      std::sort(m.owned.tasks.begin(), m.owned.tasks.end());
      m.owned.tasks.erase(std::unique(m.owned.tasks.begin(), m.owned.tasks.end()), m.owned.tasks.end());
    }
    r.ctx.leader_id = "m1";
    r.ctx.generation = 1;
    r.ctx.last_completed_generation = -1;
    r.ctx.protocol = ConnectProtocol::Sessioned;
    r.ctx.return_lost_to_owner = seed > 300;
    for (int step = 0; step < 6; ++step) {
      r.ctx.now_ms = 1000 + int64_t{step} * 200;
      std::map<ConnectorTaskId, StatusValue> statuses;
      for (const auto& m : r.reports) {
        const std::string worker = m.url.substr(7, m.url.size() - 8);  // "http://w3:8083/" -> "w3:8083"
        for (const auto& t : m.owned.tasks) {
          const int k = pick(10);
          if (k == 0) continue;  // status not read yet
          statuses[t] = status(k == 1 ? StatusState::Paused : StatusState::Running, worker, r.ctx.generation - 1);
        }
      }
      INFO("seed " << seed << " step " << step);
      const auto one_run = plan_leader_round(true, r.state, r.reports, r.cs, r.ctx, max_delay, statuses);
      const auto oracle = two_run_hand_over_moves(assign(r, false, max_delay), r, max_delay, statuses);
      check_same(one_run, oracle);
      ++rounds;
      rounds_with_moves += oracle.moved.empty() ? 0 : 1;
      drain_rounds_with_moves += !oracle.moved.empty() && !r.ctx.draining_members.empty() ? 1 : 0;
      tasks_moved += static_cast<int64_t>(oracle.moved.size());
      // Apply the round: each member runs what it keeps and what it got.
      for (size_t i = 0; i < r.reports.size(); ++i) {
        const auto& a = oracle.result.assignments[i].assignment;
        auto& owned = r.reports[i].owned;
        std::erase_if(owned.connectors, [&](const auto& c) {
          return std::count(a.revoked_connectors.begin(), a.revoked_connectors.end(), c) > 0;
        });
        std::erase_if(owned.tasks,
                      [&](const auto& t) { return std::count(a.revoked_tasks.begin(), a.revoked_tasks.end(), t) > 0; });
        owned.connectors.insert(owned.connectors.end(), a.connectors.begin(), a.connectors.end());
        owned.tasks.insert(owned.tasks.end(), a.tasks.begin(), a.tasks.end());
        std::sort(owned.tasks.begin(), owned.tasks.end());
      }
      r.state = oracle.result.state;
      r.ctx.last_completed_generation = r.ctx.generation++;
      // Change the group: a member leaves or joins, a connector resizes, a
      // member starts draining (the leader's drain set) or the drain ends.
      const int change = pick(8);
      if (change == 0 && r.reports.size() > 1) {
        const auto gone = r.reports.begin() + 1 + pick(static_cast<int>(r.reports.size()) - 1);
        std::erase(r.ctx.draining_members, gone->member_id);
        r.reports.erase(gone);
      } else if (change == 6) {
        r.ctx.draining_members = {any_member().member_id};
      } else if (change == 7) {
        r.ctx.draining_members.clear();
      } else if (change == 1) {
        for (int i = 2; i <= 6; ++i)
          if (std::none_of(r.reports.begin(), r.reports.end(),
                           [&](const auto& m) { return m.member_id == "m" + std::to_string(i); })) {
            r.reports.push_back(report_of(i));
            break;
          }
      } else if (change == 2) {
        r.cs.connectors["c" + std::to_string(pick(n_conns))] = pick(10);
      }
    }
  }
  // The scenarios do exercise the moves.
  CHECK(rounds == 3600);
  CHECK(rounds_with_moves > 50);
  CHECK(tasks_moved > 100);
  CHECK(drain_rounds_with_moves > 10);
  WARN("equivalence: " << rounds << " rounds, " << rounds_with_moves << " with moves (" << drain_rounds_with_moves
                       << " while a member drains), " << tasks_moved << " tasks moved");
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
    const auto two_steps = two_run_hand_over_moves(assign(round), round, 300000, running_on_w1());
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

// ------------------------------------------------------------------ revoke everything

TEST_CASE("reconcile plan: revoke everything (eager round, generation reset, coordinator lost)",
          "[herder][reconciler]") {
  struct Row {
    std::string name;
    std::set<std::string> known_c;
    std::set<ConnectorTaskId> known_t;
    std::string expected;
  };
  const std::vector<Row> rows = {
      {"every connector and task stops, sorted", {"b", "a"}, {{"b", 1}, {"a", 0}, {"b", 0}},
       "stop connectors [a,b] tasks [a-0,b-0,b-1]"},
      {"tasks without their connector (it runs elsewhere) stop too", {}, ids({2, 0}),
       "stop connectors [] tasks [c-0,c-2]"},
      {"a failed start is in the actual state: it is stopped (a no-op) and forgotten", {"failed"}, {},
       "stop connectors [failed] tasks []"},
      {"nothing known: nothing to stop (the sweep and the flush still run)", {}, {}, "nothing to stop"},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      const auto p = plan_revoke_all(r.known_c, r.known_t);
      CHECK(to_string(p) == r.expected);
      // Everything goes: no connector or task is kept.
      CHECK(p.stop_connectors.size() == r.known_c.size());
      CHECK(p.stop_tasks.size() == r.known_t.size());
      // Idempotent: carried out (each stopped and forgotten), a second plan
      // has nothing left to stop.
      auto kc = r.known_c;
      auto kt = r.known_t;
      for (const auto& c : p.stop_connectors) kc.erase(c);
      for (const auto& t : p.stop_tasks) kt.erase(t);
      CHECK(plan_revoke_all(kc, kt).empty());
    }
  }
}

// ------------------------------------------------------------------ before JoinGroup

TEST_CASE("reconcile plan: the before-join gate", "[herder][reconciler]") {
  struct Row {
    std::string name;
    bool revoke_all;
    bool hand_over;
    int pending;
    std::string expected;
    bool gives_up_assignment;
    bool gives_up_connectors;
    bool holds_gate;
  };
  const std::vector<Row> rows = {
      {"nothing to stop: JoinGroup now", false, false, 0, "join: Joining", false, false, false},
      {"revocations still stopping: JoinGroup waits for them", false, false, 2, "await stops: Revoking, then Joining",
       false, false, false},
      {"eager round or generation reset: everything stops first", true, false, 0,
       "revoke all: Revoking, then Joining", true, false, false},
      {"revoke-all with stops pending: the strand runs it after them", true, false, 3,
       "revoke all: Revoking, then Joining", true, false, false},
      {"drain accepted: connectors stop, tasks are marked; the gate counts it", false, true, 0,
       "hand over: Revoking, then Joining", false, true, true},
      {"drain with stops pending: the hand-over is queued behind them", false, true, 1,
       "hand over: Revoking, then Joining", false, true, true},
      {"a drainer whose generation was reset stops everything", true, true, 0, "revoke all: Revoking, then Joining",
       true, false, false},
  };
  for (const auto& r : rows) {
    SECTION(r.name) {
      const auto p = plan_before_join(r.revoke_all, r.hand_over, r.pending);
      CHECK(to_string(p) == r.expected);
      CHECK(p.give_up_assignment == r.gives_up_assignment);
      CHECK(p.give_up_connectors == r.gives_up_connectors);
      CHECK(p.holds_join_gate == r.holds_gate);
      CHECK_FALSE(p.why.empty());
      CHECK(p.then_why.empty() == !p.then.has_value());
      // Each path ends in Joining before the JoinGroup goes out.
      CHECK(p.then.value_or(p.state) == WorkerState::Joining);
    }
  }
  SECTION("the lifecycle texts operators read") {
    CHECK(plan_before_join(true, false, 0).why ==
          "eager rebalance or generation reset: everything stops before JoinGroup");
    CHECK(plan_before_join(false, true, 0).then_why == "connectors handed over; JoinGroup");
    CHECK(plan_before_join(false, false, 1).then_why == "revocations stopped; JoinGroup");
  }
}

// ------------------------------------------------------------------ config catch-up

TEST_CASE("reconcile plan: config catch-up of an assignment", "[herder][reconciler]") {
  struct Row {
    std::string name;
    int64_t snapshot;
    int64_t assignment;
    int retry_backoff_ms;
    ConfigCatchUpPlan expected;
  };
  const std::vector<Row> rows = {
      {"read up to the assignment's offset: apply", 42, 42, 100, {true, false, 0, ""}},
      {"lagging: rejoin after 10 x retry.backoff.ms", 40, 42, 100, {false, true, 1000, "config topic lagging"}},
      {"lagging with retry.backoff.ms=0: rejoin at once", 40, 42, 0, {false, true, 0, "config topic lagging"}},
      {"overshooting (the leader read less): rejoin at once", 44, 42, 100,
       {false, false, 0, "config offset overshoots the assignment"}},
      {"a huge retry.backoff.ms does not overflow the delay", 0, 1, 1 << 30,
       {false, true, INT32_MAX, "config topic lagging"}},
  };
  for (const auto& r : rows) {
    SECTION(r.name) { CHECK(plan_config_catch_up(r.snapshot, r.assignment, r.retry_backoff_ms) == r.expected); }
  }
}

// ------------------------------------------------------------------ the leader's round result

TEST_CASE("reconcile plan: a stale leader round is dropped", "[herder][reconciler]") {
  // io_leader_round counts leader rounds and JoinGroups (on_leader,
  // on_before_join); the pool's result of round `seq` goes out only while
  // it is still the newest.
  struct Row {
    std::string name;
    uint64_t seq;
    uint64_t current;
    bool sent;
  };
  const std::vector<Row> rows = {
      {"no newer round: the assignment goes out", 7, 7, true},
      {"a JoinGroup began while the assignor ran: dropped", 7, 8, false},
      {"several rounds later: dropped", 7, 12, false},
      {"the first round of a new leader", 1, 1, true},
  };
  for (const auto& r : rows) {
    SECTION(r.name) { CHECK(leader_round_is_current(r.seq, r.current) == r.sent); }
  }
}

// ------------------------------------------------------------------ task-config write retries

TEST_CASE("reconcile plan: task-config write retries back off", "[herder][reconciler]") {
  SECTION("written (or nothing to retry): the generation ends") {
    CHECK(plan_task_config_retry(true, kTaskConfigRetryFirstMs) == TaskConfigRetryPlan{});
    CHECK(plan_task_config_retry(true, 8000) == TaskConfigRetryPlan{});
  }
  SECTION("failed writes: 250 ms, doubled each time, at most 10 s") {
    std::vector<int> delays;
    int backoff = kTaskConfigRetryFirstMs;
    for (int i = 0; i < 8; ++i) {
      const auto p = plan_task_config_retry(false, backoff);
      REQUIRE(p.retry);
      delays.push_back(p.delay_ms);
      backoff = p.next_backoff_ms;
    }
    CHECK(delays == std::vector<int>{250, 500, 1000, 2000, 4000, 8000, 10000, 10000});
  }
  SECTION("a retry whose back-off ended runs only on a leader that is not stopping") {
    struct Row {
      std::string name;
      bool cancelled, stopping, leader, due;
    };
    const std::vector<Row> rows = {
        {"still leader", false, false, true, true},
        {"no longer leader", false, false, false, false},
        {"stopping", false, true, true, false},
        {"timer cancelled", true, false, true, false},
    };
    for (const auto& r : rows) {
      INFO(r.name);
      CHECK(task_config_retry_due(r.cancelled, r.stopping, r.leader) == r.due);
    }
  }
}

TEST_CASE("reconcile plan: the rejoin for a scheduled rebalance starts the round early by the last round's length",
          "[herder][reconciler]") {
  struct Row {
    const char* name;
    int64_t delay_ms, last_round_ms, want_ms;
  };
  const std::array rows{
      Row{"no delay: nothing scheduled", 0, 5000, 0},
      Row{"no round measured yet: Connect's rejoin at the expiry", 5000, 0, 5000},
      Row{"a round shorter than the margin: at the expiry", 5000, 200, 5000},
      Row{"the mock broker's 3 s hold: 2.75 s early, assigned 0.25 s after the expiry", 15000, 3000, 12250},
      Row{"the mock broker's 5 s hold and a 5 s delay: the round begins 250 ms after the assignment", 5000, 5000, 250},
      Row{"a round longer than the delay: at most the delay less the margin early", 5000, 9000, 250},
      Row{"a delay shorter than the margin: at the expiry", 200, 5000, 200},
      Row{"a negative length (clock step): at the expiry", 5000, -100, 5000},
  };
  for (const auto& r : rows) {
    INFO(r.name);
    CHECK(scheduled_rejoin_after_ms(r.delay_ms, r.last_round_ms) == r.want_ms);
  }
}

TEST_CASE("early resume: a restarted dynamic worker resumes only kept work that nobody else took",
          "[herder][early-resume]") {
  ClusterConfigState configs;
  configs.offset = 15;
  configs.connector_configs["a"] = {{"connector.class", "X"}};
  configs.connector_configs["b"] = {{"connector.class", "X"}};
  configs.task_configs[ConnectorTaskId{"a", 0}] = {{"k", "v"}};
  configs.task_configs[ConnectorTaskId{"a", 1}] = {{"k", "v"}};
  configs.task_configs[ConnectorTaskId{"b", 0}] = {{"k", "v"}};
  configs.task_configs[ConnectorTaskId{"b", 1}] = {{"k", "v"}};
  kc::connect::Assignment kept;
  kept.leader = "old-leader";
  kept.config_offset = 9;  // configs changed while the worker was away
  kept.revoked_tasks = {{"a", 0}};
  kept.connectors = {"a", "b", "gone"};
  kept.tasks = {{"a", 0}, {"a", 1}, {"b", 0}, {"b", 1}, {"gone", 0}};
  const std::string me = "w1:8083";
  std::map<std::string, StatusValue> cs{{"a", StatusValue{StatusState::Running, std::nullopt, me, 4}},
                                        {"b", StatusValue{StatusState::Running, std::nullopt, "w2:8083", 6}}};
  std::map<ConnectorTaskId, StatusValue> ts{
      {{"a", 0}, StatusValue{StatusState::Running, std::nullopt, me, 4}},
      // a's task 1 has no status yet: ours to resume
      {{"b", 0}, StatusValue{StatusState::Running, std::string(kc::storage::kHandOverTrace), me, 4}},
      {{"b", 1}, StatusValue{StatusState::Running, std::nullopt, "w3:8083", 6}},
  };
  const auto plan = plan_early_resume(kept, configs, cs, ts, me);
  CHECK(plan.resume.connectors == std::vector<std::string>{"a"});
  CHECK(plan.resume.tasks == std::vector<ConnectorTaskId>{{"a", 0}, {"a", 1}});
  CHECK(plan.resume.revoked_tasks.empty());
  CHECK(plan.resume.leader == "old-leader");
  CHECK(plan.resume.config_offset == 15);  // checked against the current configs: no catch-up rejoin
  CHECK(plan.skipped == std::vector<std::string>{"b: its status was written by w2:8083", "gone: no config",
                                                 "b-0: it was being handed over",
                                                 "b-1: its status was written by w3:8083", "gone-0: no task config"});

  // Nothing left to resume when another worker took everything.
  for (auto& [_, v] : cs) v.worker_id = "w2:8083";
  for (auto& [_, v] : ts) v.worker_id = "w2:8083";
  kept.tasks = {{"a", 0}};
  kept.connectors = {"a"};
  const auto none = plan_early_resume(kept, configs, cs, ts, me);
  CHECK(none.resume.connectors.empty());
  CHECK(none.resume.tasks.empty());
  CHECK(none.skipped.size() == 2);
}

TEST_CASE("early resume: the kept file's largest age is session - heartbeat, + half the delay for a follower",
          "[herder][early-resume]") {
  CHECK(early_resume_max_age_ms(6000, 1000, 5000, false) == 7500);     // bench --quick
  CHECK(early_resume_max_age_ms(10000, 3000, 300000, false) == 157000);  // Connect's defaults
  CHECK(early_resume_max_age_ms(6000, 1000, 0, false) == 5000);
  CHECK(early_resume_max_age_ms(1000, 3000, 0, false) == 0);  // never negative
  // The dead process led the group: a new leader places its work at once,
  // so only the session timeout protects it.
  CHECK(early_resume_max_age_ms(6000, 1000, 5000, true) == 5000);
  CHECK(early_resume_max_age_ms(10000, 3000, 300000, true) == 7000);
}
