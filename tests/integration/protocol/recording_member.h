#pragma once
// A GroupMember for the security suites (TLS, SASL, SASL_SSL) that only
// need to see a client join or fail: one protocol "sessioned", and as leader
// it assigns `assignment` to the first member. It records every join and
// every error. Runs on the test's io_context (one thread).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"

namespace kc::test {

struct RecordingMember {
  std::vector<kafka::JoinedGroup> joined;
  std::vector<kafka::GroupError> errors;
  std::shared_ptr<kafka::GroupMember> member;

  /// These suites' group settings: scripted_group_config(group_id,
  /// bootstrap) with 100 ms heartbeats and 3 s request and connect
  /// timeouts; no TLS or SASL yet.
  static kafka::GroupMemberConfig config(const std::string& group_id, const std::string& bootstrap) {
    using std::chrono::milliseconds;
    kafka::GroupMemberConfig cfg = scripted_group_config(group_id, bootstrap);
    cfg.heartbeat_interval = milliseconds(100);
    cfg.request_timeout = milliseconds(3000);
    cfg.connect_timeout = milliseconds(3000);
    return cfg;
  }

  /// Creates and starts the member with `cfg` on `io`; the leader hands
  /// `assignment` to the first member.
  void start(boost::asio::io_context& io, const kafka::GroupMemberConfig& cfg, kafka::Bytes assignment = {7}) {
    kafka::GroupMemberCallbacks cb;
    cb.on_prepare_join = [](const kafka::JoinPrepare&, kafka::JoinReady ready) {
      ready({kafka::JoinGroupProtocol{"sessioned", kafka::Bytes{1, 2, 3}}});
    };
    cb.on_assign = [assignment](const kafka::LeaderAssignmentInput& in, kafka::AssignmentReady ready) {
      ready({kafka::SyncGroupAssignment{in.members.front().member_id, assignment}});
    };
    cb.on_joined = [this](const kafka::JoinedGroup& j) { joined.push_back(j); };
    cb.on_error = [this](const kafka::GroupError& e) { errors.push_back(e); };
    member = kafka::GroupMember::create(io, cfg, cb);
    member->start();
  }

  /// The first fatal error reported, null when none.
  [[nodiscard]] const kafka::GroupError* fatal_error() const {
    for (const auto& e : errors)
      if (e.fatal) return &e;
    return nullptr;
  }
};

}  // namespace kc::test
