// GroupMember against librdkafka's in-process mock cluster (a real TCP Kafka
// broker implementation with a classic group coordinator and fault injection).
// Mock facts that shape these tests (librdkafka 2.0.2): JoinGroup <= v5,
// SyncGroup <= v3, Heartbeat <= v3, LeaveGroup <= v1, FindCoordinator <= v2;
// the first join of an empty group waits ~3 s for more members; a rebalance
// of a running group waits session.timeout - 1 s for members to rejoin; the
// leader's SyncGroup must carry an assignment for every member, and it
// completes the round at once: a follower whose SyncGroup arrives after the
// leader's gets INVALID_REQUEST (Kafka would return the stored assignment).
// So the tests' leader hands in its assignment kAssignDelay after JoinGroup,
// as a real leader does after reading the config topic.
#include <catch2/catch.hpp>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <algorithm>
#include <set>
#include <sstream>

#include <boost/asio/steady_timer.hpp>

#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"

using namespace kc::kafka;
using kc::test::run_for;
using kc::test::run_until;
using std::chrono::milliseconds;

namespace {

constexpr milliseconds kSession{4000};
constexpr milliseconds kHeartbeat{500};
constexpr milliseconds kAssignDelay{200};

/// An in-process mock cluster with `n` brokers (ids 1..n).
class MockCluster {
 public:
  explicit MockCluster(int n) {
    char err[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    rd_kafka_conf_set(conf, "log_level", "3", err, sizeof err);
    rk_ = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
    REQUIRE(rk_ != nullptr);
    mc_ = rd_kafka_mock_cluster_new(rk_, n);
    REQUIRE(mc_ != nullptr);
  }
  ~MockCluster() {
    rd_kafka_mock_cluster_destroy(mc_);
    rd_kafka_destroy(rk_);
  }
  MockCluster(const MockCluster&) = delete;
  MockCluster& operator=(const MockCluster&) = delete;

  rd_kafka_mock_cluster_t* get() { return mc_; }

  /// The bootstrap list split into "host:port" entries.
  std::vector<std::string> bootstraps() const {
    std::vector<std::string> out;
    std::stringstream ss(rd_kafka_mock_cluster_bootstraps(mc_));
    std::string item;
    while (std::getline(ss, item, ',')) out.push_back(item);
    return out;
  }

  void set_coordinator(const std::string& group, int32_t broker) {
    REQUIRE(rd_kafka_mock_coordinator_set(mc_, "group", group.c_str(), broker) ==
            RD_KAFKA_RESP_ERR_NO_ERROR);
  }

 private:
  rd_kafka_t* rk_ = nullptr;
  rd_kafka_mock_cluster_t* mc_ = nullptr;
};

Bytes to_bytes(const std::string& s) { return Bytes(s.begin(), s.end()); }
std::string to_string(const Bytes& b) { return std::string(b.begin(), b.end()); }

/// One GroupMember plus everything its callbacks reported.
struct TestMember {
  std::string name;
  std::shared_ptr<GroupMember> member;
  std::vector<JoinPrepare> prepares;
  std::vector<LeaderAssignmentInput> assigns;
  std::vector<JoinedGroup> joined;
  std::vector<RebalanceStarted> rebalances;
  std::vector<GroupError> errors;
  std::unique_ptr<boost::asio::steady_timer> assign_timer;
  /// When set, the next on_assign (the leader computing) requests a rejoin.
  std::optional<std::string> rejoin_while_assigning;

  [[nodiscard]] std::string metadata() const { return "meta-" + name; }
  [[nodiscard]] int32_t last_generation() const { return joined.empty() ? -1 : joined.back().generation; }
  [[nodiscard]] bool saw_error(ErrorCode code) const {
    return std::any_of(errors.begin(), errors.end(), [code](const GroupError& e) { return e.code == code; });
  }
};

GroupMemberConfig member_config(MockCluster& cluster, const std::string& group) {
  GroupMemberConfig c;
  c.group_id = group;
  c.bootstrap_servers = cluster.bootstraps();
  c.client_id = "kc-test";
  c.protocol_type = "connect";
  c.session_timeout = kSession;
  c.rebalance_timeout = milliseconds(8000);
  c.heartbeat_interval = kHeartbeat;
  c.request_timeout = milliseconds(5000);
  c.retry_backoff = milliseconds(100);
  c.connect_timeout = milliseconds(2000);
  return c;
}

std::unique_ptr<TestMember> make_member(boost::asio::io_context& io, GroupMemberConfig cfg,
                                        const std::string& name) {
  auto tm = std::make_unique<TestMember>();
  tm->name = name;
  TestMember* t = tm.get();
  GroupMemberCallbacks cb;
  cb.on_prepare_join = [t](const JoinPrepare& p, JoinReady ready) {
    t->prepares.push_back(p);
    ready({JoinGroupProtocol{"compatible", to_bytes(t->metadata())},
           JoinGroupProtocol{"default", to_bytes(t->metadata() + "-v0")}});
  };
  tm->assign_timer = std::make_unique<boost::asio::steady_timer>(io);
  cb.on_assign = [t](const LeaderAssignmentInput& in, AssignmentReady ready) {
    t->assigns.push_back(in);
    if (t->rejoin_while_assigning) {
      t->member->request_rejoin(*t->rejoin_while_assigning);
      t->rejoin_while_assigning.reset();
    }
    std::vector<SyncGroupAssignment> out;
    for (const auto& m : in.members) {
      out.push_back(SyncGroupAssignment{m.member_id, to_bytes("assign:" + to_string(m.metadata))});
    }
    // Asynchronous completion, as a herder computing on another thread would do.
    t->assign_timer->expires_after(kAssignDelay);
    t->assign_timer->async_wait([ready = std::move(ready), out = std::move(out)](
                                    const boost::system::error_code& ec) mutable {
      if (!ec) ready(std::move(out));
    });
  };
  cb.on_joined = [t](const JoinedGroup& j) { t->joined.push_back(j); };
  cb.on_rebalance_started = [t](const RebalanceStarted& r) { t->rebalances.push_back(r); };
  cb.on_error = [t](const GroupError& e) { t->errors.push_back(e); };
  tm->member = GroupMember::create(io, std::move(cfg), std::move(cb));
  return tm;
}

using Members = std::vector<std::unique_ptr<TestMember>>;

/// True when every member in `ms` is Stable in one generation > `after`,
/// and that generation's leader assigned exactly ms.size() members.
bool stable_together(const Members& ms, int32_t after = -1) {
  if (ms.empty()) return false;
  const int32_t gen = ms.front()->last_generation();
  if (gen <= after) return false;
  for (const auto& m : ms) {
    if (m->member->state() != GroupState::Stable || m->last_generation() != gen) return false;
  }
  for (const auto& m : ms) {
    if (m->joined.back().is_leader) {
      return !m->assigns.empty() && m->assigns.back().generation == gen &&
             m->assigns.back().members.size() == ms.size();
    }
  }
  return false;
}

Members start_members(boost::asio::io_context& io, MockCluster& cluster, const std::string& group,
                      std::initializer_list<const char*> names) {
  Members ms;
  for (const char* n : names) ms.push_back(make_member(io, member_config(cluster, group), n));
  for (auto& m : ms) m->member->start();
  return ms;
}

void stop_all(boost::asio::io_context& io, Members& ms) {
  for (auto& m : ms) m->member->stop();
  run_for(io, milliseconds(50));
}

std::string describe(const Members& ms) {
  std::string s;
  for (const auto& m : ms) {
    s += m->name + ": state=" + group_state_name(m->member->state()) +
         " gen=" + std::to_string(m->last_generation()) + " joins=" + std::to_string(m->joined.size()) +
         " coordinator=" + m->member->coordinator() + " errors=[";
    for (const auto& e : m->errors) s += e.to_string() + "; ";
    s += "]\n";
  }
  return s;
}

}  // namespace

TEST_CASE("three connect members join one group with one leader and their own assignments and stay stable",
          "[group][mock]") {
  MockCluster cluster(3);
  const std::string group = "kc-three";
  cluster.set_coordinator(group, 1);
  boost::asio::io_context io;
  auto ms = start_members(io, cluster, group, {"a", "b", "c"});

  const bool stable = run_until(io, [&] { return stable_together(ms); }, milliseconds(30000));
  INFO(describe(ms));
  REQUIRE(stable);

  const int32_t gen = ms[0]->last_generation();
  CHECK(gen > 0);
  // Exactly one leader, and every member names it.
  int leaders = 0;
  std::string leader_id;
  for (const auto& m : ms) {
    if (m->joined.back().is_leader) {
      ++leaders;
      leader_id = m->joined.back().member_id;
    }
  }
  REQUIRE(leaders == 1);
  std::set<std::string> member_ids;
  for (const auto& m : ms) {
    CHECK(m->joined.back().leader_id == leader_id);
    CHECK(m->joined.back().protocol == "compatible");  // the mock picks the leader's first protocol
    CHECK(m->member->member_id() == m->joined.back().member_id);
    member_ids.insert(m->joined.back().member_id);
  }
  CHECK(member_ids.size() == 3);

  // The leader received all three metadata blobs for the selected protocol.
  for (const auto& m : ms) {
    if (!m->joined.back().is_leader) continue;
    std::set<std::string> metas;
    for (const auto& jm : m->assigns.back().members) metas.insert(to_string(jm.metadata));
    CHECK(metas == std::set<std::string>{"meta-a", "meta-b", "meta-c"});
    CHECK(m->assigns.back().protocol == "compatible");
  }
  // SyncGroup handed each member its own bytes.
  for (const auto& m : ms) CHECK(to_string(m->joined.back().assignment) == "assign:" + m->metadata());
  // The very first JoinGroup of each member was a new rebalance with no member id.
  for (const auto& m : ms) {
    REQUIRE_FALSE(m->prepares.empty());
    CHECK(m->prepares.front().new_rebalance);
    CHECK(m->prepares.front().member_id.empty());
  }

  // Heartbeats keep the group stable for three session timeouts.
  std::vector<size_t> joins;
  for (const auto& m : ms) joins.push_back(m->joined.size());
  run_for(io, 3 * kSession);
  INFO(describe(ms));
  for (size_t i = 0; i < ms.size(); ++i) {
    CHECK(ms[i]->member->state() == GroupState::Stable);
    CHECK(ms[i]->last_generation() == gen);
    CHECK(ms[i]->joined.size() == joins[i]);
    CHECK(ms[i]->member->generation() == gen);
  }

  // Clean exit: everybody leaves.
  int left = 0;
  for (auto& m : ms) {
    m->member->leave("test done", [&left](std::optional<GroupError> e) {
      CHECK_FALSE(e.has_value());
      ++left;
    });
  }
  REQUIRE(run_until(io, [&] { return left == 3; }, milliseconds(10000)));
  for (const auto& m : ms) CHECK(m->member->state() == GroupState::Closed);
}

TEST_CASE("a member leaves and the others see REBALANCE_IN_PROGRESS and rejoin at a higher generation",
          "[group][mock]") {
  MockCluster cluster(3);
  const std::string group = "kc-leave";
  cluster.set_coordinator(group, 2);
  boost::asio::io_context io;
  auto ms = start_members(io, cluster, group, {"a", "b", "c"});
  REQUIRE(run_until(io, [&] { return stable_together(ms); }, milliseconds(30000)));
  const int32_t gen = ms[0]->last_generation();

  // Let a non-leader leave, so that the remaining leader runs the next round.
  auto leaver_it = std::find_if(ms.begin(), ms.end(), [](const auto& m) { return !m->joined.back().is_leader; });
  REQUIRE(leaver_it != ms.end());
  std::unique_ptr<TestMember> leaver = std::move(*leaver_it);
  ms.erase(leaver_it);

  std::optional<std::optional<GroupError>> leave_result;
  leaver->member->leave("scaling down", [&](std::optional<GroupError> e) { leave_result = e; });
  const bool rejoined = run_until(
      io, [&] { return leave_result.has_value() && stable_together(ms, gen); }, milliseconds(30000));
  INFO(describe(ms));
  REQUIRE(rejoined);
  CHECK_FALSE(leave_result->has_value());
  CHECK(leaver->member->state() == GroupState::Closed);

  for (const auto& m : ms) {
    CHECK(m->last_generation() > gen);
    // The coordinator announced the rebalance through Heartbeat.
    CHECK(m->saw_error(ErrorCode::REBALANCE_IN_PROGRESS));
    REQUIRE_FALSE(m->rebalances.empty());
    CHECK(m->rebalances.back().generation == gen);
    CHECK(m->rebalances.back().reason.find("REBALANCE_IN_PROGRESS") != std::string::npos);
    // The rejoin kept the member id and was announced as a new rebalance.
    CHECK(m->joined.back().member_id == m->joined.front().member_id);
    bool new_round = false;
    for (const auto& p : m->prepares) new_round = new_round || (p.new_rebalance && p.generation == gen);
    CHECK(new_round);
  }
  for (const auto& m : ms) {
    if (!m->joined.back().is_leader) continue;
    std::set<std::string> metas;
    for (const auto& jm : m->assigns.back().members) metas.insert(to_string(jm.metadata));
    CHECK(metas.size() == 2);
    CHECK(metas.count(leaver->metadata()) == 0);
  }
  for (const auto& m : ms) CHECK(to_string(m->joined.back().assignment) == "assign:" + m->metadata());
  stop_all(io, ms);
}

TEST_CASE("the coordinator moves and members rediscover it and rejoin", "[group][mock]") {
  MockCluster cluster(3);
  const std::string group = "kc-move";
  cluster.set_coordinator(group, 1);
  boost::asio::io_context io;
  auto ms = start_members(io, cluster, group, {"a", "b", "c"});
  REQUIRE(run_until(io, [&] { return stable_together(ms); }, milliseconds(30000)));
  const int32_t gen1 = ms[0]->last_generation();
  const std::string coord1 = ms[0]->member->coordinator();
  for (const auto& m : ms) CHECK(m->member->coordinator() == coord1);

  SECTION("rd_kafka_mock_coordinator_set moves the group to broker 3") {
    cluster.set_coordinator(group, 3);
    const bool moved = run_until(
        io,
        [&] {
          return stable_together(ms, gen1) &&
                 std::all_of(ms.begin(), ms.end(),
                             [&](const auto& m) { return m->member->coordinator() != coord1; });
        },
        milliseconds(30000));
    INFO(describe(ms));
    REQUIRE(moved);
    const std::string coord2 = ms[0]->member->coordinator();
    for (const auto& m : ms) {
      CHECK(m->member->coordinator() == coord2);
      CHECK(m->saw_error(ErrorCode::NOT_COORDINATOR));
      CHECK(m->last_generation() > gen1);
      CHECK(to_string(m->joined.back().assignment) == "assign:" + m->metadata());
    }
  }

  SECTION("a pushed NOT_COORDINATOR on Heartbeat makes one member rediscover and the group rejoin") {
    rd_kafka_mock_push_request_errors(cluster.get(), static_cast<int16_t>(ApiKey::Heartbeat), 1,
                                      RD_KAFKA_RESP_ERR_NOT_COORDINATOR);
    const bool again = run_until(io, [&] { return stable_together(ms, gen1); }, milliseconds(30000));
    INFO(describe(ms));
    REQUIRE(again);
    int saw = 0;
    for (const auto& m : ms) saw += m->saw_error(ErrorCode::NOT_COORDINATOR) ? 1 : 0;
    CHECK(saw == 1);
    for (const auto& m : ms) CHECK(m->member->coordinator() == coord1);
  }

  SECTION("the coordinator broker goes down and comes back") {
    rd_kafka_mock_broker_set_down(cluster.get(), 1);
    const bool lost = run_until(
        io,
        [&] {
          return std::all_of(ms.begin(), ms.end(), [](const auto& m) {
            return m->member->state() == GroupState::Discovering;
          });
        },
        milliseconds(15000));
    INFO(describe(ms));
    CHECK(lost);
    run_for(io, milliseconds(500));
    rd_kafka_mock_broker_set_up(cluster.get(), 1);
    const bool back = run_until(io, [&] { return stable_together(ms, gen1); }, milliseconds(30000));
    INFO(describe(ms));
    REQUIRE(back);
    for (const auto& m : ms) {
      const bool disconnected = std::any_of(m->errors.begin(), m->errors.end(), [](const GroupError& e) {
        return e.net.has_value() && e.action == ErrorAction::RediscoverCoordinator;
      });
      CHECK(disconnected);
    }
  }
  stop_all(io, ms);
}

TEST_CASE("request_rejoin during the sync waits for the assignment: the round completes for every member",
          "[group][mock]") {
  MockCluster cluster(1);
  const std::string group = "kc-rejoin-sync";
  boost::asio::io_context io;
  auto ms = start_members(io, cluster, group, {"a", "b"});
  REQUIRE(run_until(io, [&] { return stable_together(ms); }, milliseconds(30000)));
  TestMember* leader = ms[0]->joined.back().is_leader ? ms[0].get() : ms[1].get();
  TestMember* follower = leader == ms[0].get() ? ms[1].get() : ms[0].get();
  const int32_t g0 = leader->last_generation();
  leader->rejoin_while_assigning = "config changed during sync";
  follower->member->request_rejoin("kick");
  // Round g1: the leader asks to rejoin while it computes the assignment.
  // The round still completes for both (no SyncGroup REBALANCE_IN_PROGRESS),
  // then the deferred rejoin starts round g2.
  const bool again = run_until(
      io, [&] { return stable_together(ms, g0) && leader->last_generation() > g0 + 1; }, milliseconds(40000));
  INFO(describe(ms));
  REQUIRE(again);
  const int32_t g1 = g0 + 1;
  for (TestMember* m : {leader, follower})
    CHECK(std::any_of(m->joined.begin(), m->joined.end(), [&](const JoinedGroup& j) { return j.generation == g1; }));
  for (TestMember* m : {leader, follower})
    CHECK(std::none_of(m->errors.begin(), m->errors.end(), [](const GroupError& e) { return e.api == ApiKey::SyncGroup; }));
  REQUIRE_FALSE(leader->rebalances.empty());
  CHECK(leader->rebalances.back().reason == "config changed during sync");
  stop_all(io, ms);
}

TEST_CASE("request_rejoin starts a new rebalance at a higher generation", "[group][mock]") {
  MockCluster cluster(1);
  const std::string group = "kc-rejoin";
  boost::asio::io_context io;
  auto ms = start_members(io, cluster, group, {"a", "b"});
  REQUIRE(run_until(io, [&] { return stable_together(ms); }, milliseconds(30000)));
  const int32_t gen = ms[0]->last_generation();
  ms[0]->member->request_rejoin("config changed");
  const bool again = run_until(io, [&] { return stable_together(ms, gen); }, milliseconds(30000));
  INFO(describe(ms));
  REQUIRE(again);
  REQUIRE_FALSE(ms[0]->rebalances.empty());
  CHECK(ms[0]->rebalances.back().reason == "config changed");
  stop_all(io, ms);
}
