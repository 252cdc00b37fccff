// The eager and incremental cooperative assignors: the public entry points,
// the config-offset check and draining members. One incremental round is
// in round.cpp (its steps) and task_placement.cpp.
#include "assignor/assignor.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <map>
#include <optional>
#include <set>

#include "assignor/round.h"

namespace kc::assignor {

int64_t max_config_offset(const std::vector<MemberReport>& members) {
  int64_t max_offset = -1;
  for (const auto& m : members) max_offset = std::max(max_offset, m.config_offset);
  return max_offset;
}

int32_t successive_revocation_backoff_ms(int32_t n, int32_t max_delay_ms) {
  if (max_delay_ms <= 0) return 0;
  if (n <= 0) return 0;
  int64_t value = 1;
  for (int32_t i = 0; i < n; ++i) {
    value *= 40;
    if (value >= max_delay_ms) return max_delay_ms;
  }
  return static_cast<int32_t>(value);
}

std::string worker_identity(const MemberReport& m) {
  if (!m.group_instance_id.empty()) return std::string(kStaticIdentityPrefix) + m.group_instance_id;
  if (!m.url.empty()) return "url:" + m.url;
  return {};
}

namespace detail {

std::string leader_url_of(const std::vector<MemberReport>& members, const RoundContext& ctx) {
  if (!ctx.leader_url.empty()) return ctx.leader_url;
  for (const auto& m : members)
    if (m.member_id == ctx.leader_id) return m.url;
  return {};
}

}  // namespace detail

namespace {

using detail::leader_url_of;
using detail::version_for;

// Every member gets CONFIG_MISMATCH with the max offset (reference 3.2).
AssignmentResult config_mismatch(const LeaderState& state, const std::vector<MemberReport>& members,
                                 const RoundContext& ctx, int16_t version, int64_t max_offset) {
  AssignmentResult out;
  out.state = state;
  out.config_mismatch = true;
  const std::string url = leader_url_of(members, ctx);
  for (const auto& m : members) {
    Assignment a;
    a.version = version;
    a.error = static_cast<int16_t>(connect::AssignmentError::ConfigMismatch);
    a.leader = ctx.leader_id;
    a.leader_url = url;
    a.config_offset = max_offset;
    out.assignments.push_back({m.member_id, std::move(a)});
  }
  return out;
}

// ------------------------------------------------------------------ drain

// A round with draining members, split: the members that take part in the
// assignor's round, and for every input member its index there (-1 = left
// out). A draining member is left out when it runs nothing, or always when
// `keep_running` is false (eager: every member stops everything anyway).
struct DrainSplit {
  std::vector<MemberReport> members;
  RoundContext ctx;               // draining_members cleared, leader_url resolved
  std::vector<int32_t> index;     // input member -> index in `members`, or -1
  std::vector<bool> draining;     // per input member
};

std::optional<DrainSplit> split_draining(const std::vector<MemberReport>& members, const RoundContext& ctx,
                                         bool keep_running) {
  if (ctx.draining_members.empty()) return std::nullopt;
  const std::set<std::string> ids(ctx.draining_members.begin(), ctx.draining_members.end());
  DrainSplit split;
  bool any_staying = false;
  for (const auto& m : members) {
    split.draining.push_back(ids.count(m.member_id) > 0);
    any_staying = any_staying || !split.draining.back();
  }
  if (!any_staying || std::find(split.draining.begin(), split.draining.end(), true) == split.draining.end())
    return std::nullopt;
  split.ctx = ctx;
  split.ctx.draining_members.clear();
  split.ctx.leader_url = leader_url_of(members, ctx);
  for (size_t i = 0; i < members.size(); ++i) {
    if (split.draining[i] && (!keep_running || members[i].owned.empty())) {
      split.index.push_back(-1);
      continue;
    }
    split.index.push_back(static_cast<int32_t>(split.members.size()));
    split.members.push_back(members[i]);
  }
  return split;
}

template <typename T>
void remove_all(std::vector<T>& from, const std::vector<T>& items) {
  const std::set<T> gone(items.begin(), items.end());
  from.erase(std::remove_if(from.begin(), from.end(), [&](const T& x) { return gone.count(x) > 0; }), from.end());
}

template <typename T>
void add_all(std::vector<T>& to, const std::vector<T>& items) {
  std::set<T> all(to.begin(), to.end());
  all.insert(items.begin(), items.end());
  to.assign(all.begin(), all.end());
}

// Back to one assignment per input member. A draining member that still
// runs work revokes all of it; whatever the round placed on a draining
// member is withheld (not running anywhere, it is placed on the others in
// the next round). Both leave the leader state's previous assignment, so
// the next round sees them as unassigned, not lost (no scheduled delay);
// the revoked work joins previous_revocation, so a revocation that failed is
// still detected.
AssignmentResult merge_drained(AssignmentResult core, const std::vector<MemberReport>& members,
                               const DrainSplit& split, const ConfigSnapshot& config, const RoundContext& ctx,
                               int16_t version) {
  if (core.config_mismatch) return config_mismatch(core.state, members, ctx, version, max_config_offset(members));
  AssignmentResult out;
  out.state = std::move(core.state);
  out.moved = std::move(core.moved);
  for (size_t i = 0; i < members.size(); ++i) {
    const int32_t at = split.index[i];
    MemberAssignment ma;
    if (at >= 0) {
      ma = std::move(core.assignments[static_cast<size_t>(at)]);
    } else {
      ma.member_id = members[i].member_id;
      ma.assignment.version = version;
      ma.assignment.leader = ctx.leader_id;
      ma.assignment.leader_url = split.ctx.leader_url;
      ma.assignment.config_offset = config.offset;
    }
    if (split.draining[i]) {
      Assignment& a = ma.assignment;
      auto& prev = out.state.previous_assignment;
      remove_all(prev.connectors, a.connectors);
      remove_all(prev.tasks, a.tasks);
      a.connectors.clear();
      a.tasks.clear();
      a.delay_ms = 0;
      if (version > 0) {
        const auto& owned = members[i].owned;
        add_all(a.revoked_connectors, owned.connectors);
        add_all(a.revoked_tasks, owned.tasks);
        remove_all(prev.connectors, owned.connectors);
        remove_all(prev.tasks, owned.tasks);
        add_all(out.state.previous_revocation.connectors, owned.connectors);
        add_all(out.state.previous_revocation.tasks, owned.tasks);
      }
    }
    out.assignments.push_back(std::move(ma));
  }
  return out;
}

// EagerAssignor with placement (kconnectd): the same circular iterator, but a
// constrained connector (and a spread task of one) goes to the next member
// from the iterator that it may run on; pack tasks go to their connector's
// member; a connector no member may run is unplaced.
AssignmentResult eager_placed(AssignmentResult out, const std::vector<MemberReport>& members,
                              const std::vector<size_t>& by_id, const ConfigSnapshot& config) {
  const size_t n = members.size();
  size_t it = 0;
  auto placement_of = [&](const std::string& name) -> const ConnectorPlacement* {
    auto p = config.placement.find(name);
    return p != config.placement.end() && p->second.constrains() ? &p->second : nullptr;
  };
  // Next member from `it` that may run a connector with placement `p`; n if none.
  auto next_eligible = [&](const ConnectorPlacement* p) {
    for (size_t k = 0; k < n; ++k) {
      const size_t at = (it + k) % n;
      if (p == nullptr || labels_match(p->labels, members[by_id[at]].labels)) {
        it = (at + 1) % n;
        return at;
      }
    }
    return n;
  };
  std::map<std::string, size_t> conn_at;
  for (const auto& [name, count] : config.connectors) {
    const ConnectorPlacement* p = placement_of(name);
    const size_t at = next_eligible(p);
    if (at == n) {
      out.unplaced.push_back({name, p->labels});
      continue;
    }
    conn_at[name] = at;
    out.assignments[by_id[at]].assignment.connectors.push_back(name);
  }
  for (const auto& [name, count] : config.connectors) {
    const ConnectorPlacement* p = placement_of(name);
    auto c = conn_at.find(name);
    if (c == conn_at.end()) continue;  // unplaced: its tasks too
    for (int32_t t = 0; t < count; ++t) {
      const size_t at = (p != nullptr && p->tasks == PlacementTasks::Pack) ? c->second : next_eligible(p);
      out.assignments[by_id[at]].assignment.tasks.push_back(ConnectorTaskId{name, t});
    }
  }
  return out;
}

}  // namespace

bool has_placement(const ConfigSnapshot& config) {
  return std::any_of(config.placement.begin(), config.placement.end(),
                     [](const auto& e) { return e.second.constrains(); });
}

AssignmentResult IncrementalCooperativeAssignor::assign(const LeaderState& state,
                                                        const std::vector<MemberReport>& members,
                                                        const ConfigSnapshot& config,
                                                        const RoundContext& ctx) const {
  if (has_placement(config)) return assign_placed(state, members, config, ctx);
  return assign_plain(state, members, config, ctx);
}

AssignmentResult IncrementalCooperativeAssignor::assign_plain(const LeaderState& state,
                                                              const std::vector<MemberReport>& members,
                                                              const ConfigSnapshot& config,
                                                              const RoundContext& ctx) const {
  auto split = split_draining(members, ctx, true);
  if (!split) return assign_core(state, members, config, ctx);
  const int16_t version = version_for(ctx.protocol);
  if (config.offset < max_config_offset(members))
    return config_mismatch(state, members, ctx, version, max_config_offset(members));
  // A draining member that stopped its work before joining (it owns nothing)
  // is left out of the round. The work it ran is then unowned, and leaving it
  // among the previous members would make the core see a departed worker and
  // hold that work for the scheduled delay. Without it, the core's rule for
  // "every previous member is still here" places the work now.
  LeaderState core_state = state;
  for (size_t i = 0; i < members.size(); ++i)
    if (split->index[i] < 0) std::erase(core_state.previous_members, members[i].member_id);
  // A draining member that still runs work revokes all of it (merge_drained)
  // and is left out of the follow-up round: the hand-over placement places
  // its work over the others.
  std::vector<std::string> leaving;
  for (size_t i = 0; i < members.size(); ++i)
    if (split->draining[i] && split->index[i] >= 0) leaving.push_back(members[i].member_id);
  return merge_drained(assign_core(core_state, split->members, config, split->ctx, leaving), members, *split, config,
                       ctx, version);
}

AssignmentResult IncrementalCooperativeAssignor::assign_core(const LeaderState& state,
                                                             const std::vector<MemberReport>& members,
                                                             const ConfigSnapshot& config,
                                                             const RoundContext& ctx,
                                                             const std::vector<std::string>& leaving) const {
  const int64_t max_offset = max_config_offset(members);
  if (config.offset < max_offset) return config_mismatch(state, members, ctx, version_for(ctx.protocol), max_offset);
  detail::Round round(state, members, config, ctx, max_delay_ms_);
  round.leaving = leaving;
  return round.run();
}

AssignmentResult EagerAssignor::assign(const LeaderState& state, const std::vector<MemberReport>& members,
                                       const ConfigSnapshot& config, const RoundContext& ctx) const {
  if (auto split = split_draining(members, ctx, false)) {
    AssignmentResult out = assign(state, split->members, config, split->ctx);
    return merge_drained(std::move(out), members, *split, config, ctx, 0);
  }
  const int64_t max_offset = max_config_offset(members);
  if (config.offset < max_offset) return config_mismatch(state, members, ctx, 0, max_offset);
  AssignmentResult out;
  out.state = state;
  out.assignments.resize(members.size());
  std::vector<size_t> by_id(members.size());
  std::iota(by_id.begin(), by_id.end(), size_t{0});
  std::sort(by_id.begin(), by_id.end(),
            [&](size_t a, size_t b) { return members[a].member_id < members[b].member_id; });
  const std::string url = leader_url_of(members, ctx);
  for (size_t i = 0; i < members.size(); ++i) {
    auto& ma = out.assignments[i];
    ma.member_id = members[i].member_id;
    ma.assignment.version = 0;
    ma.assignment.leader = ctx.leader_id;
    ma.assignment.leader_url = url;
    ma.assignment.config_offset = config.offset;
  }
  if (members.empty()) return out;
  if (has_placement(config)) return eager_placed(std::move(out), members, by_id, config);
  // One circular iterator over the sorted members, not reset between the
  // connectors and the tasks (std::map iterates connectors by name).
  size_t it = 0;
  for (const auto& [name, count] : config.connectors) {
    out.assignments[by_id[it]].assignment.connectors.push_back(name);
    it = (it + 1) % members.size();
  }
  for (const auto& [name, count] : config.connectors)
    for (int32_t t = 0; t < count; ++t) {
      out.assignments[by_id[it]].assignment.tasks.push_back(ConnectorTaskId{name, t});
      it = (it + 1) % members.size();
    }
  return out;
}

}  // namespace kc::assignor
