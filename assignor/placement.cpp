// Placement labels in the incremental cooperative assignor (kconnectd, not in
// Connect; issue 29; assignor/README.md "Placement labels"). A round with
// constraints is one plain round per placement group (connectors with the
// same placement.labels; "" = the unconstrained ones), each over the members
// its selector matches, with its own LeaderState; the results are merged
// per member. A member that runs work of a group it no longer matches takes
// part in that group's round as a draining member (its work is revoked and
// placed on eligible members in the follow-up round, with no delay). Pack
// connectors take part with 0 tasks; their tasks follow the connector
// (pack_tasks()).
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include "assignor/assignor.h"
#include "assignor/round.h"

namespace kc::assignor {

namespace {

// One placement group of the round.
struct Group {
  Labels selector;
  ConfigSnapshot config;                       // its connectors (pack ones with 0 tasks)
  std::vector<ConnectorsAndTasks> owned;       // per input member: what it runs of the group
};

template <typename T>
void sort_unique(std::vector<T>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

// Appends b's lists to a's (the header fields stay a's).
void append(Assignment& a, const Assignment& b) {
  a.connectors.insert(a.connectors.end(), b.connectors.begin(), b.connectors.end());
  a.tasks.insert(a.tasks.end(), b.tasks.begin(), b.tasks.end());
  a.revoked_connectors.insert(a.revoked_connectors.end(), b.revoked_connectors.begin(), b.revoked_connectors.end());
  a.revoked_tasks.insert(a.revoked_tasks.end(), b.revoked_tasks.begin(), b.revoked_tasks.end());
}

}  // namespace

std::string placement_trace(const UnplacedConnector& u, const std::vector<MemberReport>& members,
                            const std::vector<std::string>& draining) {
  std::vector<const MemberReport*> sorted;
  for (const auto& m : members) sorted.push_back(&m);
  std::sort(sorted.begin(), sorted.end(),
            [](const MemberReport* a, const MemberReport* b) { return a->member_id < b->member_id; });
  auto drains = [&](const MemberReport* m) {
    return std::find(draining.begin(), draining.end(), m->member_id) != draining.end();
  };
  const bool only_drainers = std::any_of(sorted.begin(), sorted.end(), [&](const MemberReport* m) {
    return drains(m) && labels_match(u.selector, m->labels);
  });
  std::string s = "placement.labels=" + format_labels(u.selector) +
                  (only_drainers ? " matches only workers that are draining (leaving the group)"
                                 : " matches no worker of the group") +
                  "; workers' labels: ";
  bool any_unlabelled = false;
  for (size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0) s += ", ";
    s += (sorted[i]->url.empty() ? sorted[i]->member_id : sorted[i]->url) + " {" + format_labels(sorted[i]->labels) + "}";
    if (drains(sorted[i])) s += " draining";
    any_unlabelled = any_unlabelled || sorted[i]->labels.empty();
  }
  if (sorted.empty()) s += "(no members)";
  if (any_unlabelled) s += " ({}: worker.labels unset, or an older build that sends none)";
  return s;
}

AssignmentResult IncrementalCooperativeAssignor::assign_placed(const LeaderState& state,
                                                               const std::vector<MemberReport>& members,
                                                               const ConfigSnapshot& config,
                                                               const RoundContext& ctx) const {
  // The config-offset check is the same for every group: the plain round
  // answers CONFIG_MISMATCH with the state unchanged.
  if (config.offset < max_config_offset(members)) return assign_plain(state, members, config, ctx);
  const size_t W = members.size();

  // Connector -> group selector text, and which connectors pack.
  std::map<std::string, Group> groups;  // "" first
  groups[""].config.offset = config.offset;
  std::map<std::string, std::string, std::less<>> group_of;
  std::set<std::string, std::less<>> pack;
  for (const auto& [name, count] : config.connectors) {
    auto p = config.placement.find(name);
    const bool constrained = p != config.placement.end() && p->second.constrains();
    const std::string key = constrained ? format_labels(p->second.labels) : std::string();
    Group& g = groups[key];
    if (constrained) g.selector = p->second.labels;
    g.config.offset = config.offset;
    const bool packs = constrained && p->second.tasks == PlacementTasks::Pack;
    if (packs) pack.insert(name);
    g.config.connectors[name] = packs ? 0 : count;
    group_of[name] = key;
  }
  auto key_of = [&](const std::string& connector) -> const std::string& {
    static const std::string none;
    auto it = group_of.find(connector);
    return it == group_of.end() ? none : it->second;  // unknown: the plain round revokes it
  };
  // What each member runs, split by group; pack tasks apart (holders per task).
  for (auto& [key, g] : groups) g.owned.resize(W);
  std::map<ConnectorTaskId, std::vector<size_t>> pack_holders;
  for (size_t i = 0; i < W; ++i) {
    for (const auto& c : members[i].owned.connectors) groups[key_of(c)].owned[i].connectors.push_back(c);
    for (const auto& t : members[i].owned.tasks) {
      if (pack.count(t.connector) > 0) {
        auto& h = pack_holders[t];
        if (std::find(h.begin(), h.end(), i) == h.end()) h.push_back(i);
        continue;
      }
      groups[key_of(t.connector)].owned[i].tasks.push_back(t);
    }
  }

  AssignmentResult out;
  out.assignments.resize(W);
  const std::string leader_url = detail::leader_url_of(members, ctx);
  int32_t delay = 0;
  std::map<std::string, const PlacementGroupState*> old_states;
  for (const auto& pg : state.placement_groups) old_states[pg.selector] = &pg;

  std::set<std::string> drainers(ctx.draining_members.begin(), ctx.draining_members.end());
  const bool all_draining =
      std::all_of(members.begin(), members.end(), [&](const MemberReport& m) { return drainers.count(m.member_id) > 0; });
  for (auto& [key, g] : groups) {
    // Members of the group's round: the eligible ones, and ineligible ones
    // that still run some of its work (draining: they revoke all of it).
    std::vector<MemberReport> sub;
    std::vector<size_t> input;  // sub index -> input index
    RoundContext sub_ctx = ctx;
    sub_ctx.leader_url = leader_url;
    sub_ctx.draining_members.clear();
    std::set<std::string> draining(ctx.draining_members.begin(), ctx.draining_members.end());
    bool any_eligible = false;
    std::set<std::string> left_out;
    for (size_t i = 0; i < W; ++i) {
      const bool eligible = labels_match(g.selector, members[i].labels);
      if (!eligible && g.owned[i].empty()) {
        left_out.insert(members[i].member_id);
        continue;
      }
      MemberReport rep = members[i];
      rep.owned = g.owned[i];
      // A draining member is leaving: it counts as eligible only when the
      // whole round drains (then the drain is ignored, as in a plain round).
      // Otherwise a group whose only matching members drain is not run: the
      // drainer revokes its work and can finish, instead of being handed it
      // back every round until shutdown.drain.timeout.ms.
      if (eligible && (all_draining || draining.count(rep.member_id) == 0)) any_eligible = true;
      if (!eligible || draining.count(rep.member_id) > 0) sub_ctx.draining_members.push_back(rep.member_id);
      sub.push_back(std::move(rep));
      input.push_back(i);
    }
    if (!any_eligible) {
      // Nobody may run it: every holder revokes it, nothing is placed, the
      // group keeps no state (a fresh one when a worker matches again).
      for (size_t i = 0; i < W; ++i) {
        append(out.assignments[i].assignment, Assignment{.revoked_connectors = g.owned[i].connectors,
                                                         .revoked_tasks = g.owned[i].tasks});
      }
      for (const auto& [name, count] : g.config.connectors) out.unplaced.push_back({name, g.selector});
      continue;
    }
    LeaderState sub_state;
    if (key.empty()) {
      sub_state = state;
      sub_state.placement_groups.clear();
    } else if (auto it = old_states.find(key); it != old_states.end()) {
      sub_state = it->second->state;
    }
    // A member of this round that is not in the group's round left the group
    // without taking work with it: not a departed worker for the delay.
    std::erase_if(sub_state.previous_members, [&](const std::string& id) { return left_out.count(id) > 0; });
    AssignmentResult r = assign_plain(sub_state, sub, g.config, sub_ctx);
    for (size_t k = 0; k < sub.size(); ++k) {
      const Assignment& a = r.assignments[k].assignment;
      append(out.assignments[input[k]].assignment, a);
      if (a.delay_ms > 0) delay = delay == 0 ? a.delay_ms : std::min(delay, a.delay_ms);
    }
    out.moved.insert(out.moved.end(), r.moved.begin(), r.moved.end());
    if (key.empty()) {
      const auto keep = std::move(out.state.placement_groups);
      out.state = std::move(r.state);
      out.state.placement_groups = keep;
    } else {
      out.state.placement_groups.push_back({key, std::move(r.state)});
    }
  }

  // Pack tasks follow their connector: the member that runs it after this
  // round (kept or placed now). A holder that is not that member revokes the
  // task; a task nobody runs goes to it; one still running elsewhere waits
  // for the next round (revoked first).
  std::map<std::string, size_t> runs_after;
  for (size_t i = 0; i < W; ++i) {
    const Assignment& a = out.assignments[i].assignment;
    for (const auto& c : members[i].owned.connectors)
      if (pack.count(c) > 0 && std::find(a.revoked_connectors.begin(), a.revoked_connectors.end(), c) ==
                                   a.revoked_connectors.end())
        runs_after[c] = i;
    for (const auto& c : a.connectors)
      if (pack.count(c) > 0) runs_after[c] = i;
  }
  for (const auto& [task, holders] : pack_holders) {
    auto target = runs_after.find(task.connector);
    const bool configured = task.task >= 0 && task.task < config.connectors.at(task.connector);
    for (size_t h : holders)
      if (!configured || target == runs_after.end() || target->second != h)
        out.assignments[h].assignment.revoked_tasks.push_back(task);
  }
  for (const std::string& name : pack) {
    auto target = runs_after.find(name);
    if (target == runs_after.end()) continue;
    for (int32_t t = 0; t < config.connectors.at(name); ++t)
      if (pack_holders.count(ConnectorTaskId{name, t}) == 0)
        out.assignments[target->second].assignment.tasks.push_back(ConnectorTaskId{name, t});
  }

  // Headers as a plain round writes them; lists sorted; one delay for all.
  for (size_t i = 0; i < W; ++i) {
    MemberAssignment& ma = out.assignments[i];
    ma.member_id = members[i].member_id;
    Assignment& a = ma.assignment;
    a.version = detail::version_for(ctx.protocol);
    a.error = 0;
    a.leader = ctx.leader_id;
    a.leader_url = leader_url;
    a.config_offset = config.offset;
    a.delay_ms = delay;
    sort_unique(a.connectors);
    sort_unique(a.tasks);
    sort_unique(a.revoked_connectors);
    sort_unique(a.revoked_tasks);
  }
  std::sort(out.moved.begin(), out.moved.end(), [](const TaskMove& a, const TaskMove& b) { return a.task < b.task; });
  std::sort(out.unplaced.begin(), out.unplaced.end(),
            [](const UnplacedConnector& a, const UnplacedConnector& b) { return a.connector < b.connector; });
  return out;
}

}  // namespace kc::assignor
