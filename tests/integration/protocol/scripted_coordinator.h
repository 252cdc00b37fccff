#pragma once
// A scripted one-member group coordinator for scripted-broker tests, shared by
// the plaintext (FakeBroker), TLS (TlsBroker) and SASL (BasicSaslBroker)
// suites.

#include <catch2/catch.hpp>

#include <deque>
#include <string>
#include <vector>

#include "protocol/kafka/messages.h"
#include "tests/integration/protocol/connection_test_util.h"

namespace kc::test {

using namespace kc::kafka;

/// A one-member group coordinator driven by a script of Heartbeat answers:
/// FindCoordinator points at itself (`host`:`port`), JoinGroup answers
/// MEMBER_ID_REQUIRED first (KIP-394, ids `member_id_prefix` + 1, 2, ...)
/// and then makes the member leader of a
/// new generation, SyncGroup hands back the leader's assignment, Heartbeat
/// answers from `heartbeat_script`, SyncGroup fails with the codes in
/// `sync_script` first, LeaveGroup succeeds. Transport-neutral:
/// plug handle() into a FakeBroker's or TlsBroker's on_request.
struct ScriptedCoordinator {
  uint16_t port = 0;                 ///< the broker's own port (FindCoordinator answer)
  std::string host = "127.0.0.1";    ///< host named in the FindCoordinator answer
  int32_t generation = 0;
  int next_member = 1;
  std::string member_id_prefix = "m-";  ///< ids handed out are this + next_member
  std::deque<ErrorCode> heartbeat_script;  // answers, in order; then NONE
  std::deque<ErrorCode> sync_script;       // SyncGroup errors, in order; then the assignment
  std::vector<JoinGroupRequest> joins;
  std::vector<SyncGroupRequest> syncs;
  std::vector<HeartbeatRequest> heartbeats;
  std::vector<LeaveGroupRequest> leaves;

  void handle(FakeRequest& req) {
    switch (req.header.api_key) {
      case ApiKey::FindCoordinator:
        answer_find_coordinator(req, host, port);
        return;
      case ApiKey::JoinGroup: {
        const auto j = decode_logged(req, decode_JoinGroupRequest, joins);
        JoinGroupResponse r;
        if (j.member_id.empty()) {  // KIP-394
          r.error_code = static_cast<int16_t>(ErrorCode::MEMBER_ID_REQUIRED);
          r.member_id = member_id_prefix + std::to_string(next_member++);
        } else {
          r.generation_id = ++generation;
          r.protocol_type = j.protocol_type;
          r.protocol_name = j.protocols.front().name;
          r.leader = j.member_id;
          r.member_id = j.member_id;
          r.members.push_back(JoinGroupMember{j.member_id, std::nullopt, j.protocols.front().metadata});
        }
        req.reply(r);
        return;
      }
      case ApiKey::SyncGroup: {
        const auto s = decode_logged(req, decode_SyncGroupRequest, syncs);
        SyncGroupResponse r;
        r.protocol_type = s.protocol_type;
        r.protocol_name = s.protocol_name;
        if (!sync_script.empty()) {
          r.error_code = static_cast<int16_t>(sync_script.front());
          sync_script.pop_front();
        } else if (s.generation_id != generation) {
          r.error_code = static_cast<int16_t>(ErrorCode::ILLEGAL_GENERATION);
        } else if (!s.assignments.empty()) {
          r.assignment = s.assignments.front().assignment;
        }
        req.reply(r);
        return;
      }
      case ApiKey::Heartbeat: {
        decode_logged(req, decode_HeartbeatRequest, heartbeats);
        HeartbeatResponse r;
        if (!heartbeat_script.empty()) {
          r.error_code = static_cast<int16_t>(heartbeat_script.front());
          heartbeat_script.pop_front();
        }
        req.reply(r);
        return;
      }
      case ApiKey::LeaveGroup: {
        const auto l = decode_logged(req, decode_LeaveGroupRequest, leaves);
        LeaveGroupResponse r;
        for (const auto& m : l.members) r.members.push_back(LeaveGroupMemberResponse{m.member_id, std::nullopt, 0});
        req.reply(r);
        return;
      }
      case ApiKey::ApiVersions:
      case ApiKey::SaslHandshake:  // answered before (ScriptedRequests, BasicSaslBroker)
      case ApiKey::SaslAuthenticate:
        return;
    }
  }
};

}  // namespace kc::test
