// Static members lose nothing across a restart (issue 26 item 3).
//
// Three static workers (group.instance.id w-a, w-b, w-c; w-a leads) share
// connectors c1..c3 with 3 tasks each. The broker is ScriptedStaticGroup
// (KIP-345 and KIP-814 rules; the librdkafka mock keeps no instance ids).
// The leader runs the real leader round (kc::herder::leader_round_reports /
// leader_round_context / plan_leader_round with the worker defaults:
// scheduled.rebalance.return.to.owner.enable, .static.expiry.immediate,
// rebalance.hand.over.enable, scheduled.rebalance.max.delay.ms 300 s), and
// keeps the assignor's LeaderState across rounds only while it stays leader,
// as the herder does; a restarted leader starts with no memory. Each worker
// reacts to an assignment as the herder does: it stops what is revoked and
// then rejoins, and rejoins when a scheduled delay runs out.
//
// Every case kills workers without LeaveGroup (SIGKILL, or SIGTERM of a
// static member) and restarts them under the same group.instance.id, then
// checks: the other workers stopped nothing and were handed no delay, the
// returned workers own exactly what they owned before, nobody was handed a
// scheduled delay (so nothing waited for a member that is back), and the
// number of new generations is the number the broker's rules force (plus,
// without the assignment file, the one the returning worker asks for):
//   a. Kafka's rule, assignment file kept: 0 generations (resumed);
//   b. Kafka's rule, no file: 1 (the returning worker cannot know what it
//      owned, so it asks for one; the leader hands its lost work back in it);
//   c. a broker that rebalances on a static rejoin: 1 (the broker's), with
//      the file; 2 without it (the broker's and the worker's own, as in b);
//   d. two workers at once: 0 (Kafka's rule) or 1 (rebalancing broker)
//      with the file; without it 1 or 2 (each asks for one; the two
//      requests share a round when the second worker's SyncGroup meets the
//      rebalance the first one started);
//   e. the leader: 0 with JoinGroup v9+ (KIP-814 SkipAssignment), 1 below
//      v9 (re-election of a leader) or on a rebalancing broker (with or
//      without the file: it led that round, so it knows what it runs); 1
//      without the file on v9+ (it asks for one);
//   f. a rebalance already running as it returns: 1 (the running one), 2
//      without the file;
//   g. the old process died between joining a generation and keeping it:
//      1 (the bytes handed back are an increment, the worker asks for one);
//   h. a static worker that never returns: its session expires, 1
//      generation places its work on the others at once, no delay.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <boost/asio/steady_timer.hpp>

#include "config/worker_config.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/scripted_static_group.h"
#include "protocol/connect/codec.h"
#include "worker/coordinator/static_assignment.h"
#include "worker/coordinator/worker_coordinator.h"
#include "worker/herder/herder_config.h"
#include "worker/herder/leader_round.h"
#include "worker/herder/rebalance_plan.h"

using kc::connect::Assignment;
using kc::connect::ConnectorTaskId;
using kc::coordinator::AssignedEvent;
using kc::coordinator::WorkerCoordinator;
using kc::test::FakeBroker;
using kc::test::FakeRequest;
using kc::test::run_for;
using kc::test::run_until;
using kc::test::ScriptedStaticGroup;
using std::chrono::milliseconds;

namespace {

/// The herder options of a static worker with every default.
kc::herder::HerderConfig worker_defaults() {
  kc::config::Properties props{{"group.id", "static"},
                               {"config.storage.topic", "c"},
                               {"offset.storage.topic", "o"},
                               {"status.storage.topic", "s"},
                               {"group.instance.id", "w"}};
  return kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(props), "localhost");
}

/// What a worker owns: connector names and task ids, sorted.
struct Owned {
  std::set<std::string> connectors;
  std::set<ConnectorTaskId> tasks;
  bool operator==(const Owned&) const = default;
};

/// The scripted broker, the config every leader assigns from and the worker options.
struct Cluster {
  boost::asio::io_context io;
  FakeBroker broker{io};
  ScriptedStaticGroup group;
  kc::herder::HerderConfig options = worker_defaults();
  kc::assignor::ConfigSnapshot config;
  Cluster() {
    group.port = broker.port();
    broker.on_request = [this](FakeRequest& r) { group.handle(r); };
    config.offset = 0;
    config.connectors = {{"c1", 3}, {"c2", 3}, {"c3", 3}};
  }
};

/// One worker: a WorkerCoordinator plus the herder's reactions to it.
struct Worker {
  Cluster& cluster;
  std::string url;
  std::string instance;
  std::shared_ptr<WorkerCoordinator> coord;
  // The assignor's memory, kept while this worker stays leader (herder: io_leader_state).
  kc::assignor::LeaderState leader_state;
  bool was_leader = false;
  int leader_rounds = 0;
  std::vector<AssignedEvent> assigned;
  std::vector<std::string> stopped_connectors;  ///< every stop: revoked, or revoke-all
  std::vector<ConnectorTaskId> stopped_tasks;
  std::vector<int32_t> delays;  ///< every scheduled delay (ms) handed to this worker
  boost::asio::steady_timer delay_timer;
  bool delay_pending = false;

  Worker(Cluster& c, std::string u, std::string inst, const std::string& file)
      : cluster(c), url(std::move(u)), instance(std::move(inst)), delay_timer(c.io) {
    kc::coordinator::WorkerCoordinatorConfig cfg;
    cfg.group = kc::test::scripted_group_config("static", c.broker.port());
    cfg.group.session_timeout = milliseconds(6000);
    cfg.group.group_instance_id = instance;
    cfg.url = url;
    cfg.static_assignment_file = file;
    kc::coordinator::WorkerCoordinatorCallbacks cb;
    cb.config_offset = [] { return int64_t{0}; };
    cb.on_before_join = [this](const kc::coordinator::BeforeJoin& bj, std::function<void()> proceed) {
      if (bj.revoke_all) stop(bj.connectors, bj.tasks);
      proceed();
    };
    cb.on_leader = [this](const kc::coordinator::LeaderRound& r, kc::coordinator::AssignmentsReady ready) {
      lead(r, std::move(ready));
    };
    cb.on_assigned = [this](const AssignedEvent& ev) { on_assigned(ev); };
    cb.on_revoke_all = [this](std::vector<std::string> cs, std::vector<ConnectorTaskId> ts) { stop(cs, ts); };
    coord = WorkerCoordinator::create(c.io, cfg, std::move(cb));
    coord->start();
  }
  ~Worker() { delay_timer.cancel(); }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void stop(const std::vector<std::string>& cs, const std::vector<ConnectorTaskId>& ts) {
    stopped_connectors.insert(stopped_connectors.end(), cs.begin(), cs.end());
    stopped_tasks.insert(stopped_tasks.end(), ts.begin(), ts.end());
  }

  // The herder's on_leader + job_assign + io_assigned, with no config read
  // (the snapshot is fixed) and no status topic (no hand-over marks).
  void lead(const kc::coordinator::LeaderRound& r, kc::coordinator::AssignmentsReady ready) {
    if (!was_leader) leader_state = kc::assignor::LeaderState{};
    ++leader_rounds;
    auto ctx = kc::herder::leader_round_context(
        r, kc::herder::LeaderRoundOptions{cluster.options.return_lost_to_owner,
                                          cluster.options.no_delay_for_expired_static});
    ctx.now_ms = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
    const auto reports = kc::herder::leader_round_reports(r);
    auto moves = kc::herder::plan_leader_round(cluster.options.hand_over_moves, leader_state, reports, cluster.config,
                                               ctx, cluster.options.scheduled_rebalance_max_delay_ms, {});
    leader_state = moves.result.state;
    std::vector<std::pair<std::string, Assignment>> out;
    for (auto& ma : moves.result.assignments) out.emplace_back(ma.member_id, ma.assignment);
    ready(std::move(out));
  }

  // The herder's on_assigned: stop the revoked items, then rejoin; rejoin
  // when a scheduled delay runs out; rejoin after a failed assignment.
  void on_assigned(const AssignedEvent& ev) {
    assigned.push_back(ev);
    was_leader = ev.is_leader;
    delay_timer.cancel();
    delay_pending = false;
    if (ev.received.delay_ms > 0) {
      delays.push_back(ev.received.delay_ms);
      delay_pending = true;
      delay_timer.expires_after(milliseconds(ev.received.delay_ms));
      delay_timer.async_wait([this](const boost::system::error_code& ec) {
        if (ec) return;
        delay_pending = false;
        coord->request_rejoin("scheduled rebalance delay expired");
      });
    }
    stop(ev.received.revoked_connectors, ev.received.revoked_tasks);
    if (ev.received.error != 0) coord->request_rejoin("assignment failed");
    else if (!ev.received.revoked_connectors.empty() || !ev.received.revoked_tasks.empty())
      coord->request_rejoin("revocations completed");
  }

  [[nodiscard]] Owned owned() const {
    Owned o;
    if (const auto& s = coord->snapshot()) {
      o.connectors.insert(s->connectors.begin(), s->connectors.end());
      o.tasks.insert(s->tasks.begin(), s->tasks.end());
    }
    return o;
  }
  [[nodiscard]] size_t stops() const { return stopped_connectors.size() + stopped_tasks.size(); }
};

const std::vector<std::string> kInstances = {"w-a", "w-b", "w-c"};
std::string url_of(size_t i) { return "http://" + kInstances[i] + ":8083/"; }

/// A static worker per instance, each with its own assignment file (or none).
struct Workers {
  Cluster& c;
  bool with_file;
  std::vector<std::unique_ptr<Worker>> w;

  Workers(Cluster& cl, bool file) : c(cl), with_file(file) {}
  /// The worker's static.membership.assignment.file ("" without one).
  [[nodiscard]] std::string file_of(size_t i) const {
    if (!with_file) return "";
    auto dir = std::filesystem::temp_directory_path() / ("kc-static-restart-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / (kInstances[i] + ".json")).string();
  }
  /// Starts worker `i`; `fresh`: with no kept assignment from an earlier case.
  void start(size_t i, bool fresh) {
    const std::string file = file_of(i);
    if (fresh && !file.empty()) std::filesystem::remove(file);
    w[i] = std::make_unique<Worker>(c, url_of(i), kInstances[i], file);
  }
  /// The process ends without LeaveGroup.
  void kill(size_t i) {
    w[i]->coord->stop();
    run_for(c.io, milliseconds(100));
    w[i].reset();
  }
  /// Stable, every worker in the current generation with 1 connector and 3
  /// tasks, all 12 items owned once, no delay pending.
  [[nodiscard]] bool settled() const {
    if (c.group.phase != ScriptedStaticGroup::Phase::Stable) return false;
    std::multiset<std::string> cs;
    std::multiset<ConnectorTaskId> ts;
    for (const auto& x : w) {
      if (!x || x->delay_pending || x->assigned.empty()) return false;
      if (x->coord->status().generation != c.group.generation) return false;
      const Owned o = x->owned();
      if (o.connectors.size() != 1 || o.tasks.size() != 3) return false;
      cs.insert(o.connectors.begin(), o.connectors.end());
      ts.insert(o.tasks.begin(), o.tasks.end());
    }
    return cs.size() == 3 && std::set<std::string>(cs.begin(), cs.end()).size() == 3 && ts.size() == 9 &&
           std::set<ConnectorTaskId>(ts.begin(), ts.end()).size() == 9;
  }
  /// Starts w-a (the leader), then w-b, then w-c, and waits until settled.
  void start_all() {
    w.resize(kInstances.size());
    for (size_t i = 0; i < kInstances.size(); ++i) {
      start(i, true);
      REQUIRE(run_until(c.io, [&] { return !w[i]->assigned.empty(); }, milliseconds(5000)));
    }
    REQUIRE(run_until(c.io, [&] { return settled(); }, milliseconds(15000)));
    run_for(c.io, milliseconds(300));
    REQUIRE(settled());
  }
};

/// The counts a case compares against after the restart.
struct Marks {
  int32_t generation;
  int rebalances;
  std::vector<Owned> owned;
  std::vector<size_t> stops, delays, assigned;
};

Marks marks_of(const Workers& ws) {
  Marks m{ws.c.group.generation, ws.c.group.rebalances, {}, {}, {}, {}};
  for (const auto& x : ws.w) {
    m.owned.push_back(x->owned());
    m.stops.push_back(x->stops());
    m.delays.push_back(x->delays.size());
    m.assigned.push_back(x->assigned.size());
  }
  return m;
}

/// Everybody owns what it owned at `m`, and every returned worker (in
/// `returned`) is back in the current generation.
bool restored(const Workers& ws, const Marks& m) {
  if (ws.c.group.phase != ScriptedStaticGroup::Phase::Stable) return false;
  for (size_t i = 0; i < ws.w.size(); ++i) {
    const auto& x = ws.w[i];
    if (!x || x->assigned.empty() || x->delay_pending) return false;
    if (x->coord->status().generation != ws.c.group.generation) return false;
    if (!(x->owned() == m.owned[i])) return false;
  }
  return true;
}

/// The checks every case makes once restored: `generations` to
/// `max_generations` new generations and nothing more for a while; no stop and no delay anywhere;
/// the workers that stayed (not in `returned`) got no new assignment when
/// no generation was forced.
void check_restored(Workers& ws, const Marks& m, const std::set<size_t>& returned, int generations,
                    int max_generations) {
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_until(ws.c.io, [&] { return restored(ws, m) && ws.c.group.generation - m.generation >= generations; },
                    milliseconds(8000)));
  const auto took = std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - t0);
  // A quiet period: no further rebalance comes (a worker's own request or a delay).
  run_for(ws.c.io, milliseconds(800));
  CHECK(restored(ws, m));
  CHECK(ws.c.group.generation - m.generation >= generations);
  CHECK(ws.c.group.generation - m.generation <= max_generations);
  CHECK(ws.c.group.rebalances == m.rebalances + ws.c.group.generation - m.generation);
  CHECK(took < milliseconds(3000));
  for (size_t i = 0; i < ws.w.size(); ++i) {
    const auto& x = *ws.w[i];
    INFO("worker " << kInstances[i]);
    if (returned.count(i)) {
      CHECK(x.stops() == 0);
      CHECK(x.delays.empty());
      for (const auto& ev : x.assigned) CHECK(ev.received.delay_ms == 0);
    } else {
      CHECK(x.stops() == m.stops[i]);
      CHECK(x.delays.size() == m.delays[i]);
      for (size_t k = m.assigned[i]; k < x.assigned.size(); ++k) {
        CHECK(x.assigned[k].received.delay_ms == 0);
        CHECK(x.assigned[k].received.revoked_tasks.empty());
        CHECK(x.assigned[k].received.revoked_connectors.empty());
      }
      if (generations == 0) CHECK(x.assigned.size() == m.assigned[i]);
    }
  }
}

/// One restart: kill `who` (without LeaveGroup), optionally start a
/// rebalance among the others while they are away, restart them under the
/// same group.instance.id, and check.
struct Restart {
  bool with_file = true;
  bool broker_rebalances = false;      ///< ScriptedStaticGroup::rebalance_on_static_rejoin
  std::set<size_t> who = {1};          ///< indexes into kInstances (0 = w-a, the leader)
  bool rebalance_running = false;      ///< a rebalance is under way as they return
  int16_t join_group_max_version = 9;  ///< the broker's JoinGroup versions
  /// The old process joined the last generation but died before it kept it
  /// (the file holds the generation before, with the same snapshot).
  bool kept_older_generation = false;
  int generations = 0;                 ///< what the broker's rules force
  /// More allowed (-1: none): without the file each returning worker may ask
  /// for one of its own, and two such requests may or may not share a round.
  int max_generations = -1;
};

void run_restart(const Restart& r) {
  Cluster c;
  for (auto& range : c.broker.api_versions)
    if (range.api_key == 11) range.max_version = r.join_group_max_version;
  c.group.rebalance_on_static_rejoin = r.broker_rebalances;
  Workers ws(c, r.with_file);
  ws.start_all();
  REQUIRE(ws.w[0]->was_leader);
  const Marks m = marks_of(ws);
  for (size_t i : r.who) ws.kill(i);
  if (r.kept_older_generation) {
    for (size_t i : r.who) {
      auto kept = kc::coordinator::load_static_assignment(ws.file_of(i));
      REQUIRE(kept);
      REQUIRE(kept.value());
      kc::coordinator::StaticAssignmentRecord rec = *kept.value();
      --rec.generation;
      REQUIRE(kc::coordinator::save_static_assignment(ws.file_of(i), rec));
      // The bytes the broker hands back are an increment on that snapshot,
      // so they cannot hold all of it: the worker must ask for a rebalance.
      const auto* member = [&]() -> const ScriptedStaticGroup::Member* {
        for (const auto& x : c.group.members)
          if (x.instance_id == kInstances[i]) return &x;
        return nullptr;
      }();
      REQUIRE(member != nullptr);
      auto stored = kc::connect::decode_assignment(member->assignment);
      REQUIRE(stored);
      REQUIRE(stored.value().tasks.size() < rec.snapshot.tasks.size());
    }
  }
  if (r.rebalance_running) {
    // One of the workers that stayed asks for a rebalance (a config change,
    // say); the broker waits in the join phase for the absent static members.
    size_t asker = 0;
    while (r.who.count(asker)) ++asker;
    ws.w[asker]->coord->request_rejoin("a rebalance under way");
    REQUIRE(run_until(c.io, [&] { return c.group.held_joins.size() == ws.w.size() - r.who.size(); },
                      milliseconds(3000)));
    REQUIRE(c.group.phase == ScriptedStaticGroup::Phase::Joining);
  }
  for (size_t i : r.who) ws.start(i, false);
  check_restored(ws, m, r.who, r.generations, std::max(r.generations, r.max_generations));
  // The old member ids were fenced and the new ones kept the instance ids.
  for (size_t i : r.who) CHECK(c.group.instance_owner(kInstances[i]) == ws.w[i]->coord->status().member_id);
  // The leader holds no scheduled rebalance for anybody.
  for (const auto& x : ws.w)
    if (x->was_leader && x->leader_rounds > 0) CHECK(x->leader_state.scheduled_rebalance_ms == 0);
}

}  // namespace

TEST_CASE("static restart (issue 26 item 3): a follower restarts on a broker with Kafka's rule", "[static][restart]") {
  SECTION("with static.membership.assignment.file: resumed, 0 generations") {
    run_restart(Restart{.with_file = true, .generations = 0});
  }
  SECTION("without the file: the one rebalance the worker asks for, its lost work given back in it") {
    run_restart(Restart{.with_file = false, .generations = 1});
  }
}

TEST_CASE("static restart (issue 26 item 3): the old process died before it kept the last generation",
          "[static][restart]") {
  // The coordinator hands back the last generation's bytes, an increment on
  // what the old process reported: the worker asks for the one rebalance
  // that lets the leader see what it runs, and gets the rest back in it.
  run_restart(Restart{.with_file = true, .kept_older_generation = true, .generations = 1});
}

TEST_CASE("static restart (issue 26 item 3): the broker rebalances when a static member rejoins",
          "[static][restart]") {
  SECTION("with the file: only the broker's rebalance") {
    run_restart(Restart{.with_file = true, .broker_rebalances = true, .generations = 1});
  }
  SECTION("without the file: the broker's rebalance and the worker's own") {
    run_restart(Restart{.with_file = false, .broker_rebalances = true, .generations = 2});
  }
}

TEST_CASE("static restart (issue 26 item 3): two static workers restart at once", "[static][restart]") {
  SECTION("Kafka's rule, with the file") {
    run_restart(Restart{.with_file = true, .who = {1, 2}, .generations = 0});
  }
  SECTION("a broker that rebalances, with the file") {
    run_restart(Restart{.with_file = true, .broker_rebalances = true, .who = {1, 2}, .generations = 1});
  }
  SECTION("Kafka's rule, without the file: one rebalance asked for by each, shared when they coincide") {
    run_restart(Restart{.with_file = false, .who = {1, 2}, .generations = 1, .max_generations = 2});
  }
}

TEST_CASE("static restart (issue 26 item 3): the leader restarts", "[static][restart]") {
  SECTION("JoinGroup v9+ (KIP-814 SkipAssignment), with the file: 0 generations") {
    run_restart(Restart{.with_file = true, .who = {0}, .generations = 0});
  }
  SECTION("JoinGroup below v9, with the file: the re-election of a leader") {
    run_restart(Restart{.with_file = true, .who = {0}, .join_group_max_version = 8, .generations = 1});
  }
  SECTION("a broker that rebalances, with the file: the new leader has no memory") {
    run_restart(Restart{.with_file = true, .broker_rebalances = true, .who = {0}, .generations = 1});
  }
  SECTION("a broker that rebalances, without the file: it led the round, so it knows what it runs") {
    run_restart(Restart{.with_file = false, .broker_rebalances = true, .who = {0}, .generations = 1});
  }
  SECTION("JoinGroup v9+, without the file: the one rebalance it asks for") {
    run_restart(Restart{.with_file = false, .who = {0}, .generations = 1});
  }
}

TEST_CASE("static restart (issue 26 item 3): a rebalance is already running as it returns", "[static][restart]") {
  SECTION("a follower, with the file: only the running rebalance") {
    run_restart(Restart{.with_file = true, .rebalance_running = true, .generations = 1});
  }
  SECTION("the leader, with the file: only the running rebalance") {
    run_restart(Restart{.with_file = true, .who = {0}, .rebalance_running = true, .generations = 1});
  }
  SECTION("a follower, without the file: the running rebalance and the worker's own") {
    run_restart(Restart{.with_file = false, .rebalance_running = true, .generations = 2});
  }
}

TEST_CASE("static member that never returns (issue 26 item 3): after its session expires its work is placed at "
          "once, with no scheduled delay",
          "[static][restart]") {
  Cluster c;
  Workers ws(c, true);
  ws.start_all();
  const Marks m = marks_of(ws);
  ws.kill(2);
  run_for(c.io, milliseconds(300));
  CHECK(c.group.generation == m.generation);  // the broker still keeps it
  REQUIRE(c.group.expire("w-c"));             // session.timeout.ms ran out
  ws.w.pop_back();
  REQUIRE(run_until(c.io, [&] {
    if (c.group.phase != ScriptedStaticGroup::Phase::Stable) return false;
    size_t tasks = 0, connectors = 0;
    for (const auto& x : ws.w)
      if (x->coord->status().generation == c.group.generation) {
        tasks += x->owned().tasks.size();
        connectors += x->owned().connectors.size();
      }
    return tasks == 9 && connectors == 3;
  }, milliseconds(5000)));
  run_for(c.io, milliseconds(800));
  CHECK(c.group.generation - m.generation == 1);
  for (size_t i = 0; i < 2; ++i) {
    INFO("worker " << kInstances[i]);
    const auto& x = *ws.w[i];
    CHECK(x.stops() == m.stops[i]);
    CHECK(x.delays.size() == m.delays[i]);
    // It kept what it had and took a share of w-c's work.
    const Owned o = x.owned();
    CHECK(std::includes(o.tasks.begin(), o.tasks.end(), m.owned[i].tasks.begin(), m.owned[i].tasks.end()));
    CHECK(std::includes(o.connectors.begin(), o.connectors.end(), m.owned[i].connectors.begin(),
                        m.owned[i].connectors.end()));
  }
  const size_t a = ws.w[0]->owned().tasks.size(), b = ws.w[1]->owned().tasks.size();
  CHECK(std::max(a, b) - std::min(a, b) <= 1);
}
