// group_error_log_level (worker/coordinator/group_member.h): the coordinator
// announces a normal rebalance with REBALANCE_IN_PROGRESS; that is info (or
// debug where the herder's "rebalance started" line already says it), and
// only real failures are warnings or errors.
#include <catch2/catch.hpp>

#include "worker/coordinator/group_member.h"

using kc::kafka::ApiKey;
using kc::kafka::ErrorAction;
using kc::kafka::ErrorCode;
using kc::kafka::GroupError;
using kc::kafka::group_error_log_level;
using kc::kafka::NetErrorKind;

namespace {

GroupError error(ApiKey api, ErrorCode code, ErrorAction action, bool fatal = false) {
  GroupError e;
  e.api = api;
  e.code = code;
  e.action = action;
  e.fatal = fatal;
  return e;
}

}  // namespace

TEST_CASE("group error level: REBALANCE_IN_PROGRESS from Heartbeat is debug (the herder logs it once at info)",
          "[coordinator][logging]") {
  CHECK(group_error_log_level(error(ApiKey::Heartbeat, ErrorCode::REBALANCE_IN_PROGRESS, ErrorAction::Rejoin)) ==
        spdlog::level::debug);
}

TEST_CASE("group error level: REBALANCE_IN_PROGRESS from JoinGroup or SyncGroup is info", "[coordinator][logging]") {
  CHECK(group_error_log_level(error(ApiKey::SyncGroup, ErrorCode::REBALANCE_IN_PROGRESS, ErrorAction::Rejoin)) ==
        spdlog::level::info);
  CHECK(group_error_log_level(error(ApiKey::JoinGroup, ErrorCode::REBALANCE_IN_PROGRESS, ErrorAction::Rejoin)) ==
        spdlog::level::info);
}

TEST_CASE("group error level: other errors stay warnings, fatal ones errors", "[coordinator][logging]") {
  CHECK(group_error_log_level(error(ApiKey::Heartbeat, ErrorCode::UNKNOWN_MEMBER_ID,
                                    ErrorAction::ResetMemberRejoin)) == spdlog::level::warn);
  CHECK(group_error_log_level(error(ApiKey::Heartbeat, ErrorCode::NOT_COORDINATOR,
                                    ErrorAction::RediscoverCoordinator)) == spdlog::level::warn);
  CHECK(group_error_log_level(error(ApiKey::JoinGroup, ErrorCode::REBALANCE_IN_PROGRESS, ErrorAction::Fatal,
                                    /*fatal=*/true)) == spdlog::level::err);
  CHECK(group_error_log_level(error(ApiKey::SyncGroup, ErrorCode::FENCED_INSTANCE_ID, ErrorAction::Fatal,
                                    /*fatal=*/true)) == spdlog::level::err);
  // A lost connection carries code NONE and a NetErrorKind: a warning.
  GroupError net = error(ApiKey::Heartbeat, ErrorCode::NONE, ErrorAction::RediscoverCoordinator);
  net.net = NetErrorKind::Disconnected;
  CHECK(group_error_log_level(net) == spdlog::level::warn);
}
