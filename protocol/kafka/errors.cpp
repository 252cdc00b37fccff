// The one error table: Kafka name, retriable flag (Errors.java: the exception
// class extends RetriableException) and the group client's action
// (AbstractCoordinator handling, connect-reference.md 4.8).

#include <array>

#include "protocol/kafka/errors.h"

namespace kc::kafka {
namespace {

struct ErrorInfo {
  ErrorCode code;
  const char* name;
  bool retriable;
  ErrorAction action;
};

using A = ErrorAction;
using C = ErrorCode;

// Codes the group APIs do not normally return (TOPIC_AUTHORIZATION_FAILED,
// INVALID_REQUEST, NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND, UNRELEASED_INSTANCE_ID,
// UNKNOWN_SERVER_ERROR) are fatal, as Java raises any unexpected group error
// to the caller. The SASL codes (33, 34, 58) come from SaslHandshake /
// SaslAuthenticate: authentication failures, never retried. FENCED_INSTANCE_ID is fatal on every API: another
// process took this static member's group.instance.id (KIP-345), so this one
// must stop (GroupMember words the message).
constexpr std::array<ErrorInfo, 27> kErrors{{
    {C::UNKNOWN_SERVER_ERROR, "UNKNOWN_SERVER_ERROR", false, A::Fatal},
    {C::NONE, "NONE", false, A::None},
    {C::CORRUPT_MESSAGE, "CORRUPT_MESSAGE", true, A::Retry},
    {C::REQUEST_TIMED_OUT, "REQUEST_TIMED_OUT", true, A::Retry},
    {C::NETWORK_EXCEPTION, "NETWORK_EXCEPTION", true, A::RediscoverCoordinator},
    {C::COORDINATOR_LOAD_IN_PROGRESS, "COORDINATOR_LOAD_IN_PROGRESS", true, A::Retry},
    {C::COORDINATOR_NOT_AVAILABLE, "COORDINATOR_NOT_AVAILABLE", true, A::RediscoverCoordinator},
    {C::NOT_COORDINATOR, "NOT_COORDINATOR", true, A::RediscoverCoordinator},
    {C::ILLEGAL_GENERATION, "ILLEGAL_GENERATION", false, A::ResetGenerationRejoin},
    {C::INCONSISTENT_GROUP_PROTOCOL, "INCONSISTENT_GROUP_PROTOCOL", false, A::Fatal},
    {C::INVALID_GROUP_ID, "INVALID_GROUP_ID", false, A::Fatal},
    {C::UNKNOWN_MEMBER_ID, "UNKNOWN_MEMBER_ID", false, A::ResetMemberRejoin},
    {C::INVALID_SESSION_TIMEOUT, "INVALID_SESSION_TIMEOUT", false, A::Fatal},
    {C::REBALANCE_IN_PROGRESS, "REBALANCE_IN_PROGRESS", false, A::Rejoin},
    {C::TOPIC_AUTHORIZATION_FAILED, "TOPIC_AUTHORIZATION_FAILED", false, A::Fatal},
    {C::GROUP_AUTHORIZATION_FAILED, "GROUP_AUTHORIZATION_FAILED", false, A::Fatal},
    {C::UNSUPPORTED_SASL_MECHANISM, "UNSUPPORTED_SASL_MECHANISM", false, A::Fatal},
    {C::ILLEGAL_SASL_STATE, "ILLEGAL_SASL_STATE", false, A::Fatal},
    {C::UNSUPPORTED_VERSION, "UNSUPPORTED_VERSION", false, A::Fatal},
    {C::INVALID_REQUEST, "INVALID_REQUEST", false, A::Fatal},
    {C::SASL_AUTHENTICATION_FAILED, "SASL_AUTHENTICATION_FAILED", false, A::Fatal},
    {C::NON_EMPTY_GROUP, "NON_EMPTY_GROUP", false, A::Fatal},
    {C::GROUP_ID_NOT_FOUND, "GROUP_ID_NOT_FOUND", false, A::Fatal},
    {C::MEMBER_ID_REQUIRED, "MEMBER_ID_REQUIRED", false, A::AdoptMemberIdRejoin},
    {C::GROUP_MAX_SIZE_REACHED, "GROUP_MAX_SIZE_REACHED", false, A::Fatal},
    {C::FENCED_INSTANCE_ID, "FENCED_INSTANCE_ID", false, A::Fatal},
    {C::UNRELEASED_INSTANCE_ID, "UNRELEASED_INSTANCE_ID", false, A::Fatal},
}};

const ErrorInfo* find_error(int16_t code) {
  for (const auto& e : kErrors) {
    if (static_cast<int16_t>(e.code) == code) return &e;
  }
  return nullptr;
}

}  // namespace

std::string error_name(int16_t code) {
  const ErrorInfo* e = find_error(code);
  return e ? std::string(e->name) : "UNKNOWN_ERROR_" + std::to_string(code);
}

bool is_retriable(int16_t code) {
  const ErrorInfo* e = find_error(code);
  return e != nullptr && e->retriable;
}

ErrorAction action_for(int16_t code) {
  const ErrorInfo* e = find_error(code);
  return e ? e->action : ErrorAction::Fatal;
}

}  // namespace kc::kafka
