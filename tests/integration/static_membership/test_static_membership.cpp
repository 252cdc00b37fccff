// Static membership for workers (KIP-345): what goes on the wire at each
// version, a restart under the same group.instance.id (same generation, the
// kept assignment, nothing stops on the other worker), FENCED_INSTANCE_ID,
// LeaveGroup only when asked. The broker is ScriptedStaticGroup
// (scripted_static_group.h) behind a FakeBroker.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "config/worker_config.h"
#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/scripted_static_group.h"
#include "worker/coordinator/worker_coordinator.h"
#include "worker/herder/herder_config.h"

using namespace kc::kafka;
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

/// The scripted settings for group "static" with a 6 s session timeout and
/// `instance` as group.instance.id (none: a dynamic member).
GroupMemberConfig group_config(uint16_t port, std::optional<std::string> instance) {
  GroupMemberConfig cfg = kc::test::scripted_group_config("static", port);
  cfg.session_timeout = milliseconds(6000);
  cfg.group_instance_id = std::move(instance);
  return cfg;
}

/// A broker with the scripted static group on it.
struct StaticBroker {
  boost::asio::io_context io;
  FakeBroker broker{io};
  ScriptedStaticGroup group;
  StaticBroker() {
    group.port = broker.port();
    broker.on_request = [this](FakeRequest& r) { group.handle(r); };
  }
};

const std::string kUrlA = "http://a:8083/";
const std::string kUrlB = "http://b:8083/";
const ConnectorTaskId kA0{"c-a", 0};
const ConnectorTaskId kB0{"c-b", 0};
const ConnectorTaskId kB1{"c-b", 1};

/// What the test leader hands out: each worker URL's whole share. Like
/// Connect's incremental cooperative leader, a member's assignment holds only
/// what it does not report owning yet (its SyncGroup bytes are a delta).
struct TestLeader {
  /// Connectors and tasks per worker URL; every case starts from these.
  std::map<std::string, std::pair<std::vector<std::string>, std::vector<ConnectorTaskId>>> share = {
      {kUrlA, {{"c-a"}, {kA0}}}, {kUrlB, {{"c-b"}, {kB0}}}};
  /// Per worker URL: the group.instance.id its last round reported ("" = dynamic).
  std::map<std::string, std::string> instance_of;

  void assign(const kc::coordinator::LeaderRound& round, kc::coordinator::AssignmentsReady ready) {
    std::vector<std::pair<std::string, Assignment>> out;
    for (const auto& m : round.members) {
      instance_of[m.metadata.url] = m.group_instance_id;
      Assignment a;
      a.leader = round.leader_id;
      a.leader_url = round.leader_url;
      a.config_offset = 0;
      const auto& owned = m.metadata.allocation;
      const auto& [cs, ts] = share[m.metadata.url];
      for (const auto& c : cs)
        if (!owned || std::find(owned->connectors.begin(), owned->connectors.end(), c) == owned->connectors.end())
          a.connectors.push_back(c);
      for (const auto& t : ts)
        if (!owned || std::find(owned->tasks.begin(), owned->tasks.end(), t) == owned->tasks.end())
          a.tasks.push_back(t);
      out.emplace_back(m.member_id, a);
    }
    ready(std::move(out));
  }
};

/// One worker's coordinator and everything it reported.
struct TestWorker {
  std::shared_ptr<WorkerCoordinator> coord;
  std::vector<AssignedEvent> assigned;
  std::vector<kc::coordinator::BeforeJoin> before_joins;
  std::vector<RebalanceStarted> rebalances;
  std::vector<GroupError> errors;
  int revoke_all = 0;

  TestWorker(StaticBroker& b, TestLeader& leader, const std::string& url, std::optional<std::string> instance,
             const std::string& file) {
    kc::coordinator::WorkerCoordinatorConfig cfg;
    cfg.group = group_config(b.broker.port(), std::move(instance));
    cfg.url = url;
    cfg.static_assignment_file = file;
    kc::coordinator::WorkerCoordinatorCallbacks cb;
    cb.config_offset = [] { return int64_t{0}; };
    cb.on_before_join = [this](const kc::coordinator::BeforeJoin& bj, std::function<void()> proceed) {
      before_joins.push_back(bj);
      proceed();
    };
    cb.on_leader = [&leader](const kc::coordinator::LeaderRound& r, kc::coordinator::AssignmentsReady ready) {
      leader.assign(r, std::move(ready));
    };
    cb.on_assigned = [this](const AssignedEvent& ev) { assigned.push_back(ev); };
    cb.on_revoke_all = [this](std::vector<std::string>, std::vector<ConnectorTaskId>) { ++revoke_all; };
    cb.on_rebalance_started = [this](const RebalanceStarted& r) { rebalances.push_back(r); };
    cb.on_error = [this](const GroupError& e) { errors.push_back(e); };
    coord = WorkerCoordinator::create(b.io, cfg, std::move(cb));
    coord->start();
  }

  [[nodiscard]] bool owns(const std::vector<std::string>& cs, const std::vector<ConnectorTaskId>& ts) const {
    const auto& s = coord->snapshot();
    return s && s->connectors == cs && s->tasks == ts;
  }
};

std::string temp_file(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("kc-static-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto path = (dir / name).string();
  std::filesystem::remove(path);
  return path;
}

/// A (static "w-a", leader) and B (static "w-b") stable, then a second
/// generation that gives B one more task: B's last SyncGroup bytes hold
/// only that task, its snapshot all three items.
void settle_two_generations(StaticBroker& b, TestLeader& leader, TestWorker& a, TestWorker& w) {
  REQUIRE(run_until(b.io, [&] { return a.owns({"c-a"}, {kA0}) && w.owns({"c-b"}, {kB0}); }, milliseconds(5000)));
  leader.share[kUrlB].second.push_back(kB1);
  a.coord->request_rejoin("task configs changed");
  REQUIRE(run_until(b.io, [&] { return w.owns({"c-b"}, {kB0, kB1}) && b.group.phase == ScriptedStaticGroup::Phase::Stable; },
                    milliseconds(5000)));
  REQUIRE(w.assigned.back().received.tasks == std::vector<ConnectorTaskId>{kB1});
  REQUIRE(w.assigned.back().received.connectors.empty());
}

}  // namespace

TEST_CASE("static member: group.instance.id on JoinGroup, SyncGroup, Heartbeat and LeaveGroup at each version",
          "[static][protocol]") {
  // Newest (flexible) versions, then the oldest that carry the id (KIP-345:
  // JoinGroup v5, SyncGroup v3, Heartbeat v3, LeaveGroup v3), then the
  // librdkafka mock's LeaveGroup v1, which has no place for it.
  const std::vector<std::vector<ApiVersionRange>> ranges = {
      {{18, 0, 3}, {10, 0, 4}, {11, 0, 9}, {12, 0, 4}, {13, 0, 5}, {14, 0, 5}},
      {{18, 0, 3}, {10, 0, 2}, {11, 0, 5}, {12, 0, 3}, {13, 0, 3}, {14, 0, 3}},
      {{18, 0, 3}, {10, 0, 2}, {11, 0, 5}, {12, 0, 3}, {13, 0, 1}, {14, 0, 3}}};
  for (const auto& range : ranges) {
    const bool leave_carries_id = range[4].max_version >= 3;
    StaticBroker b;
    b.broker.api_versions = range;
    std::vector<JoinedGroup> joined;
    GroupMemberCallbacks cb;
    cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({JoinGroupProtocol{"sessioned", {7}}}); };
    cb.on_assign = [](const LeaderAssignmentInput& in, AssignmentReady ready) {
      REQUIRE(in.members.size() == 1);
      CHECK(in.members[0].group_instance_id == std::optional<std::string>("w-1"));
      ready({SyncGroupAssignment{in.members[0].member_id, Bytes{1, 2}}});
    };
    cb.on_joined = [&](const JoinedGroup& j) { joined.push_back(j); };
    auto member = GroupMember::create(b.io, group_config(b.broker.port(), "w-1"), cb);
    CHECK(member->group_instance_id() == std::optional<std::string>("w-1"));
    member->start();
    REQUIRE(run_until(b.io, [&] { return !joined.empty() && b.group.heartbeats.size() >= 2; }, milliseconds(5000)));
    // A static member is added at once: no MEMBER_ID_REQUIRED round.
    REQUIRE(b.group.joins.size() == 1);
    CHECK(b.group.joins[0].member_id.empty());
    CHECK(b.group.joins[0].group_instance_id == std::optional<std::string>("w-1"));
    CHECK(joined[0].member_id == "w-1-1");
    CHECK(joined[0].assignment == Bytes{1, 2});
    REQUIRE(b.group.syncs.size() == 1);
    CHECK(b.group.syncs[0].group_instance_id == std::optional<std::string>("w-1"));
    for (const auto& h : b.group.heartbeats) CHECK(h.group_instance_id == std::optional<std::string>("w-1"));
    std::optional<std::optional<GroupError>> left;
    member->leave("going away", [&](std::optional<GroupError> e) { left = e; });
    REQUIRE(run_until(b.io, [&] { return left.has_value(); }, milliseconds(3000)));
    CHECK_FALSE(left->has_value());
    REQUIRE(b.group.leaves.size() == 1);
    REQUIRE(b.group.leaves[0].members.size() == 1);
    CHECK(b.group.leaves[0].members[0].member_id == "w-1-1");
    CHECK(b.group.leaves[0].members[0].group_instance_id ==
          (leave_carries_id ? std::optional<std::string>("w-1") : std::nullopt));
    CHECK(b.group.members.empty());
  }
  // A dynamic member never sends one.
  StaticBroker b;
  GroupMemberCallbacks cb;
  bool joined = false;
  cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({JoinGroupProtocol{"sessioned", {7}}}); };
  cb.on_assign = [](const LeaderAssignmentInput&, AssignmentReady ready) { ready({}); };
  cb.on_joined = [&](const JoinedGroup&) { joined = true; };
  auto member = GroupMember::create(b.io, group_config(b.broker.port(), std::nullopt), cb);
  member->start();
  REQUIRE(run_until(b.io, [&] { return joined && !b.group.heartbeats.empty(); }, milliseconds(5000)));
  for (const auto& j : b.group.joins) CHECK(j.group_instance_id == std::nullopt);
  CHECK(b.group.joins.front().member_id.empty());  // then MEMBER_ID_REQUIRED (KIP-394)
  CHECK(b.group.syncs.front().group_instance_id == std::nullopt);
  CHECK(b.group.heartbeats.front().group_instance_id == std::nullopt);
  CHECK_THROWS_AS(GroupMember::create(b.io, group_config(b.broker.port(), ""), cb), std::invalid_argument);
}

TEST_CASE("static member: a coordinator older than KIP-345 is a fatal error, not a silent dynamic member",
          "[static][protocol]") {
  for (const auto& [key, range] : std::vector<std::pair<ApiKey, ApiVersionRange>>{
           {ApiKey::JoinGroup, {11, 0, 4}}, {ApiKey::SyncGroup, {14, 0, 2}}, {ApiKey::Heartbeat, {12, 0, 2}}}) {
    StaticBroker b;
    for (auto& r : b.broker.api_versions)
      if (r.api_key == range.api_key) r = range;
    std::vector<GroupError> errors;
    GroupMemberCallbacks cb;
    cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({JoinGroupProtocol{"sessioned", {}}}); };
    cb.on_assign = [](const LeaderAssignmentInput&, AssignmentReady ready) { ready({}); };
    cb.on_error = [&](const GroupError& e) { errors.push_back(e); };
    auto member = GroupMember::create(b.io, group_config(b.broker.port(), "w-old"), cb);
    member->start();
    REQUIRE(run_until(b.io, [&] { return member->state() == GroupState::Closed; }, milliseconds(3000)));
    REQUIRE(errors.size() == 1);
    CHECK(errors[0].fatal);
    CHECK(errors[0].api == key);
    CHECK(errors[0].code == ErrorCode::UNSUPPORTED_VERSION);
    const std::string want = "group.instance.id 'w-old' needs static membership (KIP-345: " + std::string(api_name(key)) +
                             " v" + std::to_string(static_membership_min_version(key)) + "+, Kafka 2.3+)";
    CHECK(errors[0].message.find(want) != std::string::npos);
    CHECK(errors[0].message.find("only up to v" + std::to_string(range.max_version)) != std::string::npos);
    CHECK(b.group.joins.empty());  // nothing was sent as a dynamic member
  }
}

TEST_CASE("static member restarted with the same group.instance.id: same generation, the whole kept assignment, "
          "no rebalance, the other worker undisturbed",
          "[static][coordinator]") {
  StaticBroker b;
  TestLeader leader;
  const std::string file_a = temp_file("a.json");
  const std::string file_b = temp_file("b.json");
  TestWorker a(b, leader, kUrlA, "w-a", file_a);
  REQUIRE(run_until(b.io, [&] { return !a.assigned.empty(); }, milliseconds(5000)));
  auto w = std::make_unique<TestWorker>(b, leader, kUrlB, "w-b", file_b);
  settle_two_generations(b, leader, a, *w);
  REQUIRE(std::filesystem::exists(file_b));
  const int32_t gen = b.group.generation;
  const int rebalances = b.group.rebalances;
  const std::string old_id = w->assigned.back().member_id;
  const size_t a_assigned = a.assigned.size(), a_joins = a.before_joins.size();
  const size_t a_rebalances = a.rebalances.size(), a_errors = a.errors.size();

  // The worker process ends without LeaveGroup (SIGTERM of a static member, or a crash).
  w->coord->stop();
  run_for(b.io, milliseconds(100));
  w.reset();
  CHECK(b.group.leaves.empty());
  CHECK(std::filesystem::exists(file_b));  // kept for the restart
  const size_t hb_mark = b.group.heartbeats.size();

  TestWorker back(b, leader, kUrlB, "w-b", file_b);
  REQUIRE(run_until(b.io, [&] { return !back.assigned.empty(); }, milliseconds(5000)));
  const AssignedEvent& ev = back.assigned.front();
  CHECK(ev.resumed);
  CHECK(ev.generation == gen);                   // no new generation
  CHECK(ev.member_id != old_id);                 // a new member id for the same instance
  CHECK(b.group.fenced.count(old_id) == 1);      // the old identity is fenced
  CHECK(ev.snapshot.connectors == std::vector<std::string>{"c-b"});
  CHECK(ev.snapshot.tasks == std::vector<ConnectorTaskId>{kB0, kB1});  // everything, not just the last delta
  CHECK(ev.received.tasks == std::vector<ConnectorTaskId>{kB1});
  CHECK(back.owns({"c-b"}, {kB0, kB1}));
  // Nothing moves for a few session heartbeats: no rebalance, and worker A
  // was never asked to rejoin, revoke or take a new assignment.
  run_for(b.io, milliseconds(600));
  CHECK(b.group.generation == gen);
  CHECK(b.group.rebalances == rebalances);
  CHECK(back.assigned.size() == 1);
  CHECK(back.before_joins.size() == 1);
  CHECK(a.assigned.size() == a_assigned);
  CHECK(a.before_joins.size() == a_joins);
  CHECK(a.rebalances.size() == a_rebalances);
  CHECK(a.revoke_all == 0);
  CHECK(a.errors.size() == a_errors);
  CHECK(a.owns({"c-a"}, {kA0}));
  REQUIRE(b.group.heartbeats.size() > hb_mark + 10);
  for (size_t i = hb_mark; i < b.group.heartbeats.size(); ++i) CHECK(b.group.heartbeat_errors[i] == 0);
}

TEST_CASE("static member restarted without a kept assignment: takes what it gets, then one rebalance restores it",
          "[static][coordinator]") {
  StaticBroker b;
  TestLeader leader;
  TestWorker a(b, leader, kUrlA, "w-a", "");
  REQUIRE(run_until(b.io, [&] { return !a.assigned.empty(); }, milliseconds(5000)));
  auto w = std::make_unique<TestWorker>(b, leader, kUrlB, "w-b", "");
  settle_two_generations(b, leader, a, *w);
  const int32_t gen = b.group.generation;
  w->coord->stop();
  run_for(b.io, milliseconds(100));
  w.reset();

  TestWorker back(b, leader, kUrlB, "w-b", "");
  REQUIRE(run_until(b.io, [&] { return back.assigned.size() >= 2; }, milliseconds(5000)));
  // First the coordinator's stored bytes of the same generation (only the
  // last delta), then the rebalance it asked for gives it the rest.
  CHECK(back.assigned[0].generation == gen);
  CHECK_FALSE(back.assigned[0].resumed);
  CHECK(back.assigned[0].snapshot.tasks == std::vector<ConnectorTaskId>{kB1});
  CHECK(back.assigned[1].generation > gen);
  REQUIRE(run_until(b.io, [&] { return back.owns({"c-b"}, {kB0, kB1}); }, milliseconds(5000)));
  CHECK(a.owns({"c-a"}, {kA0}));
}

TEST_CASE("FENCED_INSTANCE_ID: a second process with the same group.instance.id takes over, the first stops with a "
          "clear fatal error",
          "[static][coordinator]") {
  StaticBroker b;
  TestLeader leader;
  const std::string file_b = temp_file("fenced.json");
  TestWorker a(b, leader, kUrlA, "w-a", "");
  REQUIRE(run_until(b.io, [&] { return !a.assigned.empty(); }, milliseconds(5000)));
  TestWorker first(b, leader, kUrlB, "w-b", file_b);
  // Settled: B joined with nothing kept, so it asked for one more round.
  REQUIRE(run_until(b.io, [&] {
    return first.owns({"c-b"}, {kB0}) && a.owns({"c-a"}, {kA0}) && first.assigned.size() >= 2 &&
           b.group.phase == ScriptedStaticGroup::Phase::Stable;
  }, milliseconds(5000)));
  const int32_t gen = b.group.generation;
  const int rebalances = b.group.rebalances;
  const size_t a_rebalances = a.rebalances.size();

  TestWorker second(b, leader, kUrlB, "w-b", file_b);
  REQUIRE(run_until(b.io, [&] { return !second.assigned.empty() && first.coord->status().fatal; }, milliseconds(5000)));
  CHECK(second.assigned.front().generation == gen);
  CHECK(second.assigned.front().resumed);
  const GroupError& e = first.errors.back();
  CHECK(e.fatal);
  CHECK(e.code == ErrorCode::FENCED_INSTANCE_ID);
  CHECK(e.api == ApiKey::Heartbeat);
  CHECK(e.to_string() ==
        "Heartbeat: FENCED_INSTANCE_ID (82): group.instance.id 'w-b' was taken over by another member "
        "(FENCED_INSTANCE_ID from Heartbeat): another worker process runs with the same group.instance.id; this "
        "one stops so that no task runs twice [fatal]");
  CHECK(first.coord->status().fatal_message == e.to_string());
  run_for(b.io, milliseconds(200));
  CHECK(first.coord->status().state == GroupState::Closed);
  CHECK(b.group.rebalances == rebalances);  // the take-over caused no rebalance
  CHECK(a.rebalances.size() == a_rebalances);
  CHECK(a.owns({"c-a"}, {kA0}));
}

TEST_CASE("static member: leave() sends LeaveGroup with the instance id and forgets the kept assignment",
          "[static][coordinator]") {
  StaticBroker b;
  TestLeader leader;
  const std::string file = temp_file("leave.json");
  TestWorker a(b, leader, kUrlA, "w-a", file);
  REQUIRE(run_until(b.io, [&] { return a.owns({"c-a"}, {kA0}); }, milliseconds(5000)));
  REQUIRE(std::filesystem::exists(file));
  bool left = false;
  a.coord->leave("shutting down", [&] { left = true; });
  REQUIRE(run_until(b.io, [&] { return left; }, milliseconds(3000)));
  REQUIRE(b.group.leaves.size() == 1);
  CHECK(b.group.leaves[0].members[0].group_instance_id == std::optional<std::string>("w-a"));
  CHECK_FALSE(std::filesystem::exists(file));
}

TEST_CASE("static member: worker properties reach the herder and LeaveGroup on shutdown only when asked",
          "[static][config]") {
  kc::config::Properties props{{"group.id", "g"},
                               {"config.storage.topic", "c"},
                               {"offset.storage.topic", "o"},
                               {"status.storage.topic", "s"}};
  auto dyn = kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(props));
  CHECK(dyn.group_instance_id == std::nullopt);
  CHECK(dyn.leave_group_on_shutdown);
  props["group.instance.id"] = "connect-0";
  props["static.membership.assignment.file"] = "/data/assignment.json";
  auto st = kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(props));
  CHECK(st.group_instance_id == std::optional<std::string>("connect-0"));
  CHECK(st.static_assignment_file == "/data/assignment.json");
  CHECK_FALSE(st.leave_group_on_shutdown);
  props["static.membership.leave.on.shutdown"] = "true";
  CHECK(kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(props)).leave_group_on_shutdown);
}

TEST_CASE("static member: the leader's round carries each member's group.instance.id, empty for a dynamic one",
          "[static][coordinator]") {
  // The assignor gives lost work back by this identity
  // (scheduled.rebalance.return.to.owner.enable, assignor/README deviation 8).
  StaticBroker b;
  TestLeader leader;
  TestWorker a(b, leader, kUrlA, "w-a", "");
  REQUIRE(run_until(b.io, [&] { return a.owns({"c-a"}, {kA0}); }, milliseconds(5000)));
  TestWorker w(b, leader, kUrlB, std::nullopt, "");
  REQUIRE(run_until(b.io, [&] { return w.owns({"c-b"}, {kB0}) && leader.instance_of.count(kUrlB) == 1; },
                    milliseconds(5000)));
  CHECK(leader.instance_of.at(kUrlA) == "w-a");
  CHECK(leader.instance_of.at(kUrlB).empty());
}
