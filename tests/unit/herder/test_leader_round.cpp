// The leader round's assignor inputs built from the coordinator's
// LeaderRound (worker/herder/leader_round.h): one report per member with its
// instance id and what it runs (nothing for a null allocation), and the
// round context with the worker's options.
#include <catch2/catch.hpp>

#include "worker/herder/leader_round.h"

using kc::connect::ConnectorTaskId;
using kc::connect::ConnectProtocol;
using kc::coordinator::LeaderRound;
using kc::coordinator::MemberMetadata;

namespace {

LeaderRound round_of_two() {
  LeaderRound r;
  r.generation = 7;
  r.leader_id = "w-a-3";
  r.leader_url = "http://a:8083/";
  r.protocol = ConnectProtocol::Compatible;
  r.last_completed_generation = 6;
  MemberMetadata a{"w-a-3", {}, "w-a"};
  a.metadata.url = "http://a:8083/";
  a.metadata.config_offset = 12;
  kc::connect::Assignment owned;
  owned.connectors = {"c1"};
  owned.tasks = {ConnectorTaskId{"c1", 0}, ConnectorTaskId{"c1", 2}};
  a.metadata.allocation = owned;
  MemberMetadata b{"member-9", {}, ""};  // dynamic, freshly started: no allocation
  b.metadata.url = "http://b:8083/";
  b.metadata.config_offset = 11;
  r.members = {a, b};
  return r;
}

}  // namespace

TEST_CASE("leader round: one report per member with its instance id and what it runs", "[herder][leader]") {
  const auto reports = kc::herder::leader_round_reports(round_of_two());
  REQUIRE(reports.size() == 2);
  CHECK(reports[0].member_id == "w-a-3");
  CHECK(reports[0].url == "http://a:8083/");
  CHECK(reports[0].config_offset == 12);
  CHECK(reports[0].group_instance_id == "w-a");
  CHECK(reports[0].owned.connectors == std::vector<std::string>{"c1"});
  CHECK(reports[0].owned.tasks == std::vector<ConnectorTaskId>{{"c1", 0}, {"c1", 2}});
  CHECK(kc::assignor::worker_identity(reports[0]) == "instance:w-a");
  CHECK(reports[1].member_id == "member-9");
  CHECK(reports[1].group_instance_id.empty());
  CHECK(reports[1].config_offset == 11);
  CHECK(reports[1].owned.empty());  // a null allocation reports nothing owned
}

TEST_CASE("leader round: the context carries the round and the worker's options", "[herder][leader]") {
  const LeaderRound r = round_of_two();
  const auto ctx = kc::herder::leader_round_context(r, {true, false}, {"member-9"});
  CHECK(ctx.leader_id == "w-a-3");
  CHECK(ctx.leader_url == "http://a:8083/");
  CHECK(ctx.generation == 7);
  CHECK(ctx.last_completed_generation == 6);
  CHECK(ctx.protocol == ConnectProtocol::Compatible);
  CHECK(ctx.draining_members == std::vector<std::string>{"member-9"});
  CHECK(ctx.return_lost_to_owner);
  CHECK_FALSE(ctx.no_delay_for_expired_static);
  CHECK(ctx.now_ms == 0);  // set by the caller right before the assignor runs
  const auto other = kc::herder::leader_round_context(r, {false, true});
  CHECK_FALSE(other.return_lost_to_owner);
  CHECK(other.no_delay_for_expired_static);
  CHECK(other.draining_members.empty());
  const kc::herder::LeaderRoundOptions defaults;
  CHECK(defaults.return_lost_to_owner);
  CHECK(defaults.no_delay_for_expired_static);
}
