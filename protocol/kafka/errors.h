#pragma once
// Kafka protocol error codes used by the group client, with their Kafka names
// and retriability (clients/.../common/protocol/Errors.java), and the single
// table that maps an error to the group client's action
// (AbstractCoordinator behaviour, connect-reference.md 4.8).

#include <cstdint>
#include <string>

namespace kc::kafka {

/// Kafka error codes (numeric value = wire value).
enum class ErrorCode : int16_t {
  UNKNOWN_SERVER_ERROR = -1,
  NONE = 0,
  CORRUPT_MESSAGE = 2,
  REQUEST_TIMED_OUT = 7,
  NETWORK_EXCEPTION = 13,
  COORDINATOR_LOAD_IN_PROGRESS = 14,
  COORDINATOR_NOT_AVAILABLE = 15,
  NOT_COORDINATOR = 16,
  ILLEGAL_GENERATION = 22,
  INCONSISTENT_GROUP_PROTOCOL = 23,
  INVALID_GROUP_ID = 24,
  UNKNOWN_MEMBER_ID = 25,
  INVALID_SESSION_TIMEOUT = 26,
  REBALANCE_IN_PROGRESS = 27,
  TOPIC_AUTHORIZATION_FAILED = 29,
  GROUP_AUTHORIZATION_FAILED = 30,
  UNSUPPORTED_SASL_MECHANISM = 33,
  ILLEGAL_SASL_STATE = 34,
  UNSUPPORTED_VERSION = 35,
  INVALID_REQUEST = 42,
  SASL_AUTHENTICATION_FAILED = 58,
  NON_EMPTY_GROUP = 68,
  GROUP_ID_NOT_FOUND = 69,
  MEMBER_ID_REQUIRED = 79,
  GROUP_MAX_SIZE_REACHED = 81,
  FENCED_INSTANCE_ID = 82,
  UNRELEASED_INSTANCE_ID = 111,
};

/// Kafka's name for a code ("REBALANCE_IN_PROGRESS"); "UNKNOWN_ERROR_<n>" if unknown.
std::string error_name(int16_t code);
/// Whether Kafka marks the error retriable.
bool is_retriable(int16_t code);

/// What the group client does about an error (librdkafka/Redpanda-style
/// error-action table).
enum class ErrorAction {
  None,                  ///< success
  Retry,                 ///< back off (retry.backoff.ms) and resend
  RediscoverCoordinator, ///< mark coordinator unknown, FindCoordinator, retry
  Rejoin,                ///< send JoinGroup again at once
  ResetGenerationRejoin, ///< reset generation (keep member id), rejoin
  ResetMemberRejoin,     ///< reset member id and generation, rejoin
  AdoptMemberIdRejoin,   ///< MEMBER_ID_REQUIRED: take the id from the response, rejoin
  Fatal,                 ///< configuration/authorization problem: stop
};

/// The action for `code`. One table for JoinGroup/SyncGroup/Heartbeat
/// (connect-reference.md 4.8).
ErrorAction action_for(int16_t code);

}  // namespace kc::kafka
