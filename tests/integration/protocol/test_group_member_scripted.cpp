// GroupMember against a scripted FakeBroker that speaks the newest versions
// (JoinGroup v9, SyncGroup v5, Heartbeat v4, LeaveGroup v5, FindCoordinator
// v4: all flexible): MEMBER_ID_REQUIRED, Heartbeat ILLEGAL_GENERATION and
// UNKNOWN_MEMBER_ID, and LeaveGroup — paths the librdkafka mock cannot show.
#include <catch2/catch.hpp>

#include <algorithm>
#include <deque>

#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/scripted_coordinator.h"

using namespace kc::kafka;
using kc::test::FakeBroker;
using kc::test::FakeRequest;
using kc::test::run_until;
using kc::test::ScriptedCoordinator;
using kc::test::scripted_group_config;
using std::chrono::milliseconds;

TEST_CASE("GroupMember handles MEMBER_ID_REQUIRED and heartbeat resets on flexible versions",
          "[group][scripted]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  ScriptedCoordinator coord{broker.port()};
  broker.on_request = [&](FakeRequest& r) { coord.handle(r); };

  const GroupMemberConfig cfg = scripted_group_config("scripted", broker.port());

  std::vector<JoinPrepare> prepares;
  std::vector<JoinedGroup> joined;
  std::vector<GroupError> errors;
  std::vector<RebalanceStarted> rebalances;
  GroupMemberCallbacks cb;
  cb.on_prepare_join = [&](const JoinPrepare& p, JoinReady ready) {
    prepares.push_back(p);
    ready({JoinGroupProtocol{"sessioned", Bytes{1, 2, 3}}, JoinGroupProtocol{"compatible", Bytes{4}}});
  };
  cb.on_assign = [&](const LeaderAssignmentInput& in, AssignmentReady ready) {
    REQUIRE(in.members.size() == 1);
    CHECK(in.members[0].metadata == Bytes{1, 2, 3});
    CHECK(in.protocol == "sessioned");
    ready({SyncGroupAssignment{in.members[0].member_id, Bytes{9, static_cast<uint8_t>(in.generation)}}});
  };
  cb.on_joined = [&](const JoinedGroup& j) { joined.push_back(j); };
  cb.on_error = [&](const GroupError& e) { errors.push_back(e); };
  cb.on_rebalance_started = [&](const RebalanceStarted& r) { rebalances.push_back(r); };
  auto member = GroupMember::create(io, cfg, cb);

  // Join: MEMBER_ID_REQUIRED, then the real join with the adopted id.
  coord.heartbeat_script = {ErrorCode::NONE, ErrorCode::ILLEGAL_GENERATION};
  member->start();
  REQUIRE(run_until(io, [&] { return joined.size() == 2; }, milliseconds(5000)));
  REQUIRE(coord.joins.size() >= 3);
  CHECK(coord.joins[0].member_id.empty());
  CHECK(coord.joins[1].member_id == "m-1");
  CHECK(coord.joins[0].rebalance_timeout_ms == 3000);
  CHECK(coord.joins[0].session_timeout_ms == 3000);
  CHECK(coord.joins[0].protocol_type == "connect");
  CHECK(coord.joins[0].group_instance_id == std::nullopt);
  REQUIRE(coord.joins[0].reason.has_value());  // v8+
  CHECK(joined[0].generation == 1);
  CHECK(joined[0].member_id == "m-1");
  CHECK(joined[0].is_leader);
  CHECK(joined[0].assignment == Bytes{9, 1});
  // MEMBER_ID_REQUIRED is a normal step: resent at once, not reported.
  CHECK(prepares.size() >= 2);

  // ILLEGAL_GENERATION from Heartbeat: reset the generation, keep the member id, rejoin.
  CHECK(coord.joins[2].member_id == "m-1");
  CHECK(prepares[1].generation == -1);
  CHECK(prepares[1].member_id == "m-1");
  CHECK(joined[1].generation == 2);
  CHECK(joined[1].assignment == Bytes{9, 2});
  REQUIRE_FALSE(errors.empty());
  CHECK(errors[0].api == ApiKey::Heartbeat);
  CHECK(errors[0].code == ErrorCode::ILLEGAL_GENERATION);
  CHECK(errors[0].action == ErrorAction::ResetGenerationRejoin);
  REQUIRE(rebalances.size() == 1);
  CHECK(rebalances[0].generation == 1);
  // SyncGroup v5 carried the protocol type and name.
  CHECK(coord.syncs.back().protocol_type == std::optional<std::string>("connect"));
  CHECK(coord.syncs.back().protocol_name == std::optional<std::string>("sessioned"));

  // UNKNOWN_MEMBER_ID: reset the member id too, which means a new id.
  coord.heartbeat_script = {ErrorCode::UNKNOWN_MEMBER_ID};
  REQUIRE(run_until(io, [&] { return joined.size() == 3; }, milliseconds(5000)));
  CHECK(joined[2].member_id == "m-2");
  CHECK(member->member_id() == "m-2");
  CHECK(member->state() == GroupState::Stable);

  // Stays stable while heartbeats succeed.
  const size_t hb = coord.heartbeats.size();
  kc::test::run_for(io, milliseconds(400));
  CHECK(coord.heartbeats.size() > hb + 3);
  CHECK(joined.size() == 3);
  for (size_t i = hb; i < coord.heartbeats.size(); ++i) {
    CHECK(coord.heartbeats[i].generation_id == joined[2].generation);
    CHECK(coord.heartbeats[i].member_id == "m-2");
  }

  // Leave sends the member id and the reason (v5).
  std::optional<std::optional<GroupError>> left;
  member->leave("shutting down", [&](std::optional<GroupError> e) { left = e; });
  REQUIRE(run_until(io, [&] { return left.has_value(); }, milliseconds(3000)));
  CHECK_FALSE(left->has_value());
  REQUIRE(coord.leaves.size() == 1);
  REQUIRE(coord.leaves[0].members.size() == 1);
  CHECK(coord.leaves[0].members[0].member_id == "m-2");
  CHECK(coord.leaves[0].members[0].reason == std::optional<std::string>("shutting down"));
  CHECK(member->state() == GroupState::Closed);
}

TEST_CASE("GroupMember reports a fatal error and closes", "[group][scripted]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  broker.on_request = [&](FakeRequest& req) {
    if (req.header.api_key == ApiKey::FindCoordinator) {
      kc::test::answer_find_coordinator(req, "127.0.0.1", broker.port());
    } else if (req.header.api_key == ApiKey::JoinGroup) {
      JoinGroupResponse r;
      r.error_code = static_cast<int16_t>(ErrorCode::GROUP_AUTHORIZATION_FAILED);
      req.reply(r);
    }
  };
  GroupMemberConfig cfg;
  cfg.group_id = "denied";
  cfg.bootstrap_servers = {"127.0.0.1:" + std::to_string(broker.port())};
  std::vector<GroupError> errors;
  GroupMemberCallbacks cb;
  cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({JoinGroupProtocol{"default", {}}}); };
  cb.on_assign = [](const LeaderAssignmentInput&, AssignmentReady ready) { ready({}); };
  cb.on_error = [&](const GroupError& e) { errors.push_back(e); };
  auto member = GroupMember::create(io, cfg, cb);
  member->start();
  REQUIRE(run_until(io, [&] { return member->state() == GroupState::Closed; }, milliseconds(3000)));
  REQUIRE(errors.size() == 1);
  CHECK(errors[0].fatal);
  CHECK(errors[0].code == ErrorCode::GROUP_AUTHORIZATION_FAILED);
  CHECK(errors[0].action == ErrorAction::Fatal);
  CHECK(errors[0].api == ApiKey::JoinGroup);

  CHECK_THROWS_AS(GroupMember::create(io, GroupMemberConfig{}, cb), std::invalid_argument);
  GroupMemberConfig bad = cfg;
  bad.bootstrap_servers = {"no-port"};
  CHECK_THROWS_AS(GroupMember::create(io, bad, cb), std::invalid_argument);
}

TEST_CASE("GroupMember rejoins after SyncGroup INVALID_REQUEST a bounded number of times, then it is fatal",
          "[group][scripted]") {
  // librdkafka's mock answers a follower whose SyncGroup lands after the
  // leader's with INVALID_REQUEST; librdkafka's consumer rejoins on it.
  const int streak = GENERATE(1, kMaxSyncInvalidRequestRejoins, kMaxSyncInvalidRequestRejoins + 1);
  boost::asio::io_context io;
  FakeBroker broker(io);
  ScriptedCoordinator coord{broker.port()};
  broker.on_request = [&](FakeRequest& r) { coord.handle(r); };
  coord.sync_script.assign(static_cast<size_t>(streak), ErrorCode::INVALID_REQUEST);

  std::vector<JoinedGroup> joined;
  std::vector<GroupError> errors;
  GroupMemberCallbacks cb;
  cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({JoinGroupProtocol{"sessioned", {}}}); };
  cb.on_assign = [](const LeaderAssignmentInput& in, AssignmentReady ready) {
    ready({SyncGroupAssignment{in.members[0].member_id, Bytes{7}}});
  };
  cb.on_joined = [&](const JoinedGroup& j) { joined.push_back(j); };
  cb.on_error = [&](const GroupError& e) { errors.push_back(e); };
  auto member = GroupMember::create(io, scripted_group_config("scripted", broker.port()), cb);
  member->start();
  REQUIRE(run_until(io, [&] { return !joined.empty() || member->state() == GroupState::Closed; },
                    milliseconds(5000)));
  REQUIRE(coord.syncs.size() == static_cast<size_t>(std::min(streak + 1, kMaxSyncInvalidRequestRejoins + 1)));
  REQUIRE_FALSE(errors.empty());
  for (const auto& e : errors) CHECK(e.code == ErrorCode::INVALID_REQUEST);
  if (streak <= kMaxSyncInvalidRequestRejoins) {
    REQUIRE(joined.size() == 1);
    CHECK(joined[0].assignment == Bytes{7});
    CHECK(joined[0].member_id == "m-1");  // a rejoin keeps the member id
    CHECK(joined[0].generation == streak + 1);
    CHECK(member->state() == GroupState::Stable);
    CHECK(errors.size() == static_cast<size_t>(streak));
    CHECK_FALSE(errors.back().fatal);
    CHECK(errors.back().action == ErrorAction::Rejoin);
  } else {
    CHECK(joined.empty());
    CHECK(member->state() == GroupState::Closed);
    CHECK(errors.back().fatal);
    CHECK(errors.back().api == ApiKey::SyncGroup);
    CHECK(errors.back().action == ErrorAction::Fatal);
  }
}
