#pragma once
// A scripted multi-member group coordinator with KIP-345 static membership,
// for the static membership tests (the librdkafka 2.0.2 mock cluster keeps
// no group.instance.id state). Plug handle() into a FakeBroker's on_request.
//
// What it models (connect-reference.md 9.2-9.6), no more:
//   * FindCoordinator points at itself;
//   * a dynamic member with an empty member id gets MEMBER_ID_REQUIRED
//     (KIP-394); a static member with an empty member id and an unknown
//     instance id is added at once;
//   * a JoinGroup from a member while the group is Stable starts a
//     rebalance: Heartbeats answer REBALANCE_IN_PROGRESS and the join phase
//     completes once every member has a JoinGroup pending (no rebalance
//     timeout: tests never leave a member away during a join phase); the
//     generation goes up by one, the leader (first member, kept while it
//     stays) gets the member list with instance ids and the metadata of the
//     protocol it named first;
//   * SyncGroup is held until the leader's arrives, then every member gets
//     its bytes (missing = empty) and the group is Stable; in Stable a
//     SyncGroup returns the member's stored bytes;
//   * a static member that joins with an empty member id and a known
//     instance id while the group is Stable gets a NEW member id, the old
//     one is fenced (FENCED_INSTANCE_ID on its Heartbeat/SyncGroup/
//     JoinGroup, also on one it still waits on), and it receives the CURRENT generation at once, with no
//     rebalance; a returning leader gets SkipAssignment with the member
//     list (JoinGroup v9+) or, below v9, the old leader id;
//   * LeaveGroup removes the member (by member id, or by instance id for a
//     v3+ entry with an empty member id) and starts a rebalance if others
//     remain;
//   * rebalance_on_static_rejoin (off by default): a broker that does
//     rebalance when a known static member rejoins a Stable group (brokers
//     that implement KIP-345 partly, or Kafka when the rejoining member's
//     metadata forces one): the member is replaced as above, but the group
//     goes to a join phase that includes its new JoinGroup;
//   * expire(instance): the session of a static member that never came back
//     ran out (session.timeout.ms, simulated): it is removed, and a
//     rebalance starts if others remain (a join phase waiting on it
//     completes without it).

#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/kafka/messages.h"
#include "tests/integration/protocol/connection_test_util.h"

namespace kc::test {

/// See the file comment.
struct ScriptedStaticGroup {
  /// Group phases (the broker's states, Empty folded into Joining).
  enum class Phase { Joining, Syncing, Stable };
  /// One member as the coordinator sees it.
  struct Member {
    std::string id;
    std::optional<std::string> instance_id;
    std::vector<kafka::JoinGroupProtocol> protocols;
    kafka::Bytes assignment;
  };
  /// A request held until the phase completes.
  struct Held {
    std::shared_ptr<BrokerSession> session;
    kafka::RequestHeader header;
    /// Answers the held request with `r`.
    template <typename Response>
    void reply(const Response& r) const {
      session->reply(header, r);
    }
  };

  uint16_t port = 0;               ///< the broker's own port (FindCoordinator answer)
  std::string host = "127.0.0.1";  ///< host named in the FindCoordinator answer
  Phase phase = Phase::Joining;
  int32_t generation = 0;
  std::string leader;     ///< leader's member id
  std::string protocol;   ///< selected protocol name of the current generation
  int rebalances = 0;     ///< join phases started
  std::vector<Member> members;
  std::set<std::string> pending_ids;  ///< handed out by MEMBER_ID_REQUIRED
  std::set<std::string> fenced;       ///< member ids replaced by a newer static join
  std::map<std::string, Held> held_joins;
  std::map<std::string, Held> held_syncs;
  int next_id = 1;
  /// See the file comment: a known static member's rejoin in Stable starts
  /// a rebalance instead of getting the current generation.
  bool rebalance_on_static_rejoin = false;
  // Everything received, in order.
  std::vector<kafka::JoinGroupRequest> joins;
  std::vector<kafka::SyncGroupRequest> syncs;
  std::vector<kafka::HeartbeatRequest> heartbeats;
  std::vector<kafka::LeaveGroupRequest> leaves;
  std::vector<int16_t> heartbeat_errors;  ///< the answer of each Heartbeat

  Member* find(const std::string& id) {
    for (auto& m : members)
      if (m.id == id) return &m;
    return nullptr;
  }
  std::string instance_owner(const std::string& instance) const {
    for (const auto& m : members)
      if (m.instance_id == instance) return m.id;
    return "";
  }

  /// Simulated session expiry of the static member `instance`: it is
  /// removed (its member id becomes unknown), a rebalance starts if others
  /// remain, and a join phase that waited on it completes. Returns false
  /// when no member has that instance id.
  bool expire(const std::string& instance) {
    const std::string id = instance_owner(instance);
    if (id.empty()) return false;
    std::erase_if(members, [&](const Member& m) { return m.id == id; });
    held_joins.erase(id);
    held_syncs.erase(id);
    if (members.empty()) {
      phase = Phase::Joining;
      return true;
    }
    start_rebalance();
    try_complete_join();
    return true;
  }

  void handle(FakeRequest& req) {
    using namespace kc::kafka;
    const int16_t v = req.header.api_version;
    switch (req.header.api_key) {
      case ApiKey::FindCoordinator:
        answer_find_coordinator(req, host, port);
        return;
      case ApiKey::JoinGroup: {
        on_join(req, decode_logged(req, decode_JoinGroupRequest, joins));
        return;
      }
      case ApiKey::SyncGroup: {
        on_sync(req, decode_logged(req, decode_SyncGroupRequest, syncs));
        return;
      }
      case ApiKey::Heartbeat: {
        const auto h = decode_logged(req, decode_HeartbeatRequest, heartbeats);
        HeartbeatResponse r;
        r.error_code = static_cast<int16_t>(member_error(h.member_id, h.generation_id));
        if (r.error_code == 0 && phase == Phase::Joining)
          r.error_code = static_cast<int16_t>(ErrorCode::REBALANCE_IN_PROGRESS);
        heartbeat_errors.push_back(r.error_code);
        req.reply(r);
        return;
      }
      case ApiKey::LeaveGroup: {
        const auto l = decode_logged(req, decode_LeaveGroupRequest, leaves);
        LeaveGroupResponse r;
        for (const auto& lm : l.members) {
          std::string id = lm.member_id;
          if (id.empty() && lm.group_instance_id) id = instance_owner(*lm.group_instance_id);
          int16_t code = 0;
          if (fenced.count(id)) code = static_cast<int16_t>(ErrorCode::FENCED_INSTANCE_ID);
          else if (!find(id)) code = static_cast<int16_t>(ErrorCode::UNKNOWN_MEMBER_ID);
          else std::erase_if(members, [&](const Member& m) { return m.id == id; });
          if (v >= 3) r.members.push_back(LeaveGroupMemberResponse{lm.member_id, lm.group_instance_id, code});
          else r.error_code = code;  // v0-2: one member, top-level error
        }
        if (!members.empty()) start_rebalance();
        req.reply(r);
        return;
      }
      case ApiKey::ApiVersions:
      case ApiKey::SaslHandshake:
      case ApiKey::SaslAuthenticate:
        return;
    }
  }

 private:
  kafka::ErrorCode member_error(const std::string& id, int32_t gen) {
    using kafka::ErrorCode;
    if (fenced.count(id)) return ErrorCode::FENCED_INSTANCE_ID;
    if (!find(id)) return ErrorCode::UNKNOWN_MEMBER_ID;
    if (gen != generation) return ErrorCode::ILLEGAL_GENERATION;
    return ErrorCode::NONE;
  }

  void start_rebalance() {
    if (phase == Phase::Joining) return;
    phase = Phase::Joining;
    ++rebalances;
    for (auto& [id, held] : held_syncs) respond_sync(held, kafka::ErrorCode::REBALANCE_IN_PROGRESS, {});
    held_syncs.clear();
  }

  void respond_sync(const Held& h, kafka::ErrorCode code, kafka::Bytes assignment) {
    kafka::SyncGroupResponse r;
    r.error_code = static_cast<int16_t>(code);
    if (code == kafka::ErrorCode::NONE) {
      r.protocol_type = "connect";
      r.protocol_name = protocol;
      r.assignment = std::move(assignment);
    }
    h.reply(r);
  }

  static kafka::Bytes metadata_for(const Member& m, const std::string& name) {
    for (const auto& p : m.protocols)
      if (p.name == name) return p.metadata;
    return {};
  }

  void on_join(FakeRequest& req, const kafka::JoinGroupRequest& j) {
    using namespace kc::kafka;
    const Held held{req.session, req.header};
    JoinGroupResponse err;
    if (fenced.count(j.member_id)) {
      err.error_code = static_cast<int16_t>(ErrorCode::FENCED_INSTANCE_ID);
      return held.reply(err);
    }
    std::string id = j.member_id;
    if (id.empty() && j.group_instance_id) {
      const std::string old = instance_owner(*j.group_instance_id);
      id = *j.group_instance_id + "-" + std::to_string(next_id++);
      if (!old.empty()) {
        // KIP-345: the returning static member replaces its old identity.
        fenced.insert(old);
        Member* m = find(old);
        m->id = id;
        m->protocols = j.protocols;
        // A JoinGroup or SyncGroup the old identity still waits on is
        // answered FENCED_INSTANCE_ID, as the broker does.
        if (auto hj = held_joins.find(old); hj != held_joins.end()) {
          JoinGroupResponse fenced_join;
          fenced_join.error_code = static_cast<int16_t>(ErrorCode::FENCED_INSTANCE_ID);
          hj->second.reply(fenced_join);
          held_joins.erase(hj);
        }
        if (auto hs = held_syncs.find(old); hs != held_syncs.end()) {
          respond_sync(hs->second, ErrorCode::FENCED_INSTANCE_ID, {});
          held_syncs.erase(hs);
        }
        const bool was_leader = leader == old;
        if (was_leader) leader = id;
        if (phase == Phase::Stable && !rebalance_on_static_rejoin) {
          JoinGroupResponse r;
          r.generation_id = generation;
          r.protocol_type = "connect";
          r.protocol_name = protocol;
          r.member_id = id;
          r.leader = was_leader && req.header.api_version < 9 ? old : leader;
          if (was_leader && req.header.api_version >= 9) {
            r.skip_assignment = true;
            for (const auto& o : members)
              r.members.push_back(JoinGroupMember{o.id, o.instance_id, metadata_for(o, protocol)});
          }
          return held.reply(r);
        }
        start_rebalance();
        held_joins[id] = held;
        return try_complete_join();
      }
      members.push_back(Member{id, j.group_instance_id, j.protocols, {}});
    } else if (id.empty()) {
      id = "member-" + std::to_string(next_id++);
      pending_ids.insert(id);
      err.error_code = static_cast<int16_t>(ErrorCode::MEMBER_ID_REQUIRED);
      err.member_id = id;
      return held.reply(err);
    } else if (Member* m = find(id)) {
      m->protocols = j.protocols;
    } else if (pending_ids.erase(id)) {
      members.push_back(Member{id, j.group_instance_id, j.protocols, {}});
    } else {
      err.error_code = static_cast<int16_t>(ErrorCode::UNKNOWN_MEMBER_ID);
      return held.reply(err);
    }
    start_rebalance();
    held_joins[id] = held;
    try_complete_join();
  }

  void try_complete_join() {
    using namespace kc::kafka;
    if (members.empty()) return;
    for (const auto& m : members)
      if (!held_joins.count(m.id)) return;
    ++generation;
    phase = Phase::Syncing;
    if (!find(leader)) leader = members.front().id;
    protocol = find(leader)->protocols.front().name;
    for (auto& [id, h] : held_joins) {
      JoinGroupResponse r;
      r.generation_id = generation;
      r.protocol_type = "connect";
      r.protocol_name = protocol;
      r.leader = leader;
      r.member_id = id;
      if (id == leader)
        for (const auto& o : members) r.members.push_back(JoinGroupMember{o.id, o.instance_id, metadata_for(o, protocol)});
      h.reply(r);
    }
    held_joins.clear();
  }

  void on_sync(FakeRequest& req, const kafka::SyncGroupRequest& s) {
    using kafka::ErrorCode;
    const Held held{req.session, req.header};
    if (auto e = member_error(s.member_id, s.generation_id); e != ErrorCode::NONE) return respond_sync(held, e, {});
    switch (phase) {
      case Phase::Joining:
        return respond_sync(held, ErrorCode::REBALANCE_IN_PROGRESS, {});
      case Phase::Stable:
        return respond_sync(held, ErrorCode::NONE, find(s.member_id)->assignment);
      case Phase::Syncing:
        break;
    }
    held_syncs[s.member_id] = held;
    if (s.member_id != leader) return;
    for (auto& m : members) m.assignment.clear();
    for (const auto& a : s.assignments)
      if (Member* m = find(a.member_id)) m->assignment = a.assignment;
    phase = Phase::Stable;
    for (auto& [id, h] : held_syncs) respond_sync(h, ErrorCode::NONE, find(id)->assignment);
    held_syncs.clear();
  }
};

}  // namespace kc::test
