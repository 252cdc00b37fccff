// The error table: Kafka names and codes (connect-reference.md 9.7),
// retriable flags (Errors.java), and the client action (4.8).

#include <catch2/catch.hpp>

#include "protocol/kafka/errors.h"

using namespace kc::kafka;  // NOLINT

namespace {
struct Row {
  ErrorCode code;
  int16_t wire;
  const char* name;
  bool retriable;
  ErrorAction action;
};
}  // namespace

TEST_CASE("error table: names, codes, retriable flags and actions", "[kafka][errors]") {
  using A = ErrorAction;
  using C = ErrorCode;
  const Row rows[] = {
      {C::UNKNOWN_SERVER_ERROR, -1, "UNKNOWN_SERVER_ERROR", false, A::Fatal},
      {C::NONE, 0, "NONE", false, A::None},
      {C::CORRUPT_MESSAGE, 2, "CORRUPT_MESSAGE", true, A::Retry},
      {C::REQUEST_TIMED_OUT, 7, "REQUEST_TIMED_OUT", true, A::Retry},
      {C::NETWORK_EXCEPTION, 13, "NETWORK_EXCEPTION", true, A::RediscoverCoordinator},
      {C::COORDINATOR_LOAD_IN_PROGRESS, 14, "COORDINATOR_LOAD_IN_PROGRESS", true, A::Retry},
      {C::COORDINATOR_NOT_AVAILABLE, 15, "COORDINATOR_NOT_AVAILABLE", true, A::RediscoverCoordinator},
      {C::NOT_COORDINATOR, 16, "NOT_COORDINATOR", true, A::RediscoverCoordinator},
      {C::ILLEGAL_GENERATION, 22, "ILLEGAL_GENERATION", false, A::ResetGenerationRejoin},
      {C::INCONSISTENT_GROUP_PROTOCOL, 23, "INCONSISTENT_GROUP_PROTOCOL", false, A::Fatal},
      {C::INVALID_GROUP_ID, 24, "INVALID_GROUP_ID", false, A::Fatal},
      {C::UNKNOWN_MEMBER_ID, 25, "UNKNOWN_MEMBER_ID", false, A::ResetMemberRejoin},
      {C::INVALID_SESSION_TIMEOUT, 26, "INVALID_SESSION_TIMEOUT", false, A::Fatal},
      {C::REBALANCE_IN_PROGRESS, 27, "REBALANCE_IN_PROGRESS", false, A::Rejoin},
      {C::TOPIC_AUTHORIZATION_FAILED, 29, "TOPIC_AUTHORIZATION_FAILED", false, A::Fatal},
      {C::GROUP_AUTHORIZATION_FAILED, 30, "GROUP_AUTHORIZATION_FAILED", false, A::Fatal},
      {C::UNSUPPORTED_VERSION, 35, "UNSUPPORTED_VERSION", false, A::Fatal},
      {C::INVALID_REQUEST, 42, "INVALID_REQUEST", false, A::Fatal},
      {C::NON_EMPTY_GROUP, 68, "NON_EMPTY_GROUP", false, A::Fatal},
      {C::GROUP_ID_NOT_FOUND, 69, "GROUP_ID_NOT_FOUND", false, A::Fatal},
      {C::MEMBER_ID_REQUIRED, 79, "MEMBER_ID_REQUIRED", false, A::AdoptMemberIdRejoin},
      {C::GROUP_MAX_SIZE_REACHED, 81, "GROUP_MAX_SIZE_REACHED", false, A::Fatal},
      {C::FENCED_INSTANCE_ID, 82, "FENCED_INSTANCE_ID", false, A::Fatal},
      {C::UNRELEASED_INSTANCE_ID, 111, "UNRELEASED_INSTANCE_ID", false, A::Fatal},
  };
  for (const auto& r : rows) {
    INFO(r.name);
    CHECK(static_cast<int16_t>(r.code) == r.wire);
    CHECK(error_name(r.wire) == r.name);
    CHECK(is_retriable(r.wire) == r.retriable);
    CHECK(action_for(r.wire) == r.action);
  }
}

TEST_CASE("unknown error codes", "[kafka][errors]") {
  CHECK(error_name(9999) == "UNKNOWN_ERROR_9999");
  CHECK(error_name(-7) == "UNKNOWN_ERROR_-7");
  CHECK_FALSE(is_retriable(9999));
  CHECK(action_for(9999) == ErrorAction::Fatal);
}
