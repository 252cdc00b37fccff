// One round of the incremental cooperative assignor: the steps of reference
// 3.3 (Round, declared in round.h) and the counting helpers they share.
#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <numeric>
#include <tuple>

#include "assignor/round.h"

namespace kc::assignor::detail {

// Per-worker caps for load-balancing revocations: with T items over W workers,
// min = T / W and the `T % W` extra slots go to the workers that hold the most
// (ties: member id order), so as little as possible moves. Returns the number
// to revoke per worker (0 for most).
std::vector<int64_t> excess_per_worker(const std::vector<int64_t>& load, int64_t total) {
  const int64_t w = static_cast<int64_t>(load.size());
  std::vector<int64_t> excess(load.size(), 0);
  if (w == 0 || total == 0) return excess;
  const int64_t min = total / w;
  int64_t extra = total % w;
  std::vector<int32_t> over;
  for (size_t i = 0; i < load.size(); ++i)
    if (load[i] > min) over.push_back(static_cast<int32_t>(i));
  std::stable_sort(over.begin(), over.end(), [&](int32_t a, int32_t b) { return load[a] > load[b]; });
  for (int32_t i : over) {
    int64_t cap = min;
    if (extra > 0) {
      --extra;
      cap = min + 1;
    }
    excess[static_cast<size_t>(i)] = std::max<int64_t>(0, load[static_cast<size_t>(i)] - cap);
  }
  return excess;
}

// Connect's water-filling (assignConnectors/assignTasks) in counts only:
// workers sorted by (load, preference descending, member order), and each pass gives one item to every
// worker of the lowest level. Returns how many items each worker receives.
std::vector<int64_t> water_fill_quota(const std::vector<int64_t>& load, int64_t items,
                                      std::vector<int32_t>* order_out, const std::vector<uint8_t>& preference) {
  std::vector<int32_t> order(load.size());
  std::iota(order.begin(), order.end(), 0);
  // Lowest load first; among equal loads the higher preference first.
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) {
    return load[a] != load[b] ? load[a] < load[b] : preference[a] > preference[b];
  });
  std::vector<int64_t> quota(load.size(), 0);
  if (!order.empty() && items > 0) {
    // `up_to` is the length of the prefix at the lowest level.
    size_t up_to = 1;
    int64_t level = load[static_cast<size_t>(order[0])];
    while (up_to < order.size() && load[static_cast<size_t>(order[up_to])] == level) ++up_to;
    while (items > 0) {
      const int64_t give = std::min<int64_t>(items, static_cast<int64_t>(up_to));
      for (int64_t i = 0; i < give; ++i) ++quota[static_cast<size_t>(order[static_cast<size_t>(i)])];
      items -= give;
      ++level;
      while (up_to < order.size() && load[static_cast<size_t>(order[up_to])] == level) ++up_to;
    }
  }
  if (order_out != nullptr) *order_out = std::move(order);
  return quota;
}

// The steps in the reference's order (3.3 steps 1-17).
AssignmentResult Round::run() {
  order_members();
  number_items();
  mark_configured();
  collect_active();
  apply_generation_guard();
  check_failed_revocation();
  return_lost_to_owners();
  place_expired_static_now();
  revoke_deleted_and_duplicated();
  handle_lost_work();
  revoke_for_balance();
  if (!returned_conn.empty()) replace_revoked_returns();
  collect_to_assign();
  assign_connectors();
  assign_tasks();
  update_leader_state();
  AssignmentResult out = output();
  if (ctx.hand_over_placement) place_revoked_now(out);
  return out;
}

// Reads: members. Sets: by_id, member_ids (the member-id order that breaks
// every tie below; ours, Connect uses HashMap order).
void Round::order_members() {
  by_id.resize(members.size());
  std::iota(by_id.begin(), by_id.end(), 0);
  std::sort(by_id.begin(), by_id.end(),
            [&](int32_t a, int32_t b) { return members[a].member_id < members[b].member_id; });
  member_ids.reserve(W);
  for (int32_t i : by_id) member_ids.push_back(members[static_cast<size_t>(i)].member_id);
}

// Step 1 (ours, no Connect counterpart): numbers every connector and task the
// round mentions. Reads: config, members' reports, state's previous
// assignment and revocation. Sets: u (frozen), the handles of every reported
// item (so each name is hashed once), C, S, and sizes conns / tasks.
void Round::number_items() {
  u.reserve(config.connectors.size() + 16);
  for (const auto& [name, count] : config.connectors) u.note_configured(name, count);
  conn_handles.resize(members.size());
  task_handles.resize(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    conn_handles[i].reserve(m.owned.connectors.size());
    for (const auto& c : m.owned.connectors) conn_handles[i].push_back(u.note_connector(c));
    task_handles[i].reserve(m.owned.tasks.size());
    for (const auto& t : m.owned.tasks) task_handles[i].push_back(u.note_task(t));
  }
  prev_task_handles.reserve(state.previous_assignment.tasks.size());
  prev_rev_handles.reserve(state.previous_revocation.tasks.size());
  for (const auto& c : state.previous_assignment.connectors) u.note_connector(c);
  for (const auto& t : state.previous_assignment.tasks) prev_task_handles.push_back(u.note_task(t));
  for (const auto& c : state.previous_revocation.connectors) u.note_connector(c);
  for (const auto& t : state.previous_revocation.tasks) prev_rev_handles.push_back(u.note_task(t));
  u.build();
  C = static_cast<size_t>(u.connectors());
  S = static_cast<size_t>(u.slots());
  conns.resize(C);
  tasks.resize(S);
}

// 3.3 step 2, configured. Reads: config. Sets: kConfigured flags, cfg_n and
// the configured totals (the targets of step 13).
void Round::mark_configured() {
  cfg_n.assign(C, 0);
  for (const auto& [name, count] : config.connectors) {
    const int32_t c = u.conn(name);
    conns.flags[static_cast<size_t>(c)] |= kConfigured;
    ++configured_conns;
    const Slot first = u.first_slot(c);
    for (int32_t t = 0; t < count; ++t) tasks.flags[static_cast<size_t>(first + t)] |= kConfigured;
    configured_tasks += std::max(count, 0);
    cfg_n[static_cast<size_t>(c)] = std::max(count, 0);
  }
}

// 3.3 step 3, active. Reads: members' reports (through the handles). Sets:
// workers (input index and cur_conns / cur_tasks, de-duplicated per member)
// and the holder counts of every item (saturating at 2: duplicated).
void Round::collect_active() {
  workers.resize(W);
  for (size_t wi = 0; wi < W; ++wi) {
    const auto& m = members[static_cast<size_t>(by_id[wi])];
    Worker& w = workers[wi];
    w.input_index = by_id[wi];
    const auto& ch = conn_handles[static_cast<size_t>(by_id[wi])];
    const auto& th = task_handles[static_cast<size_t>(by_id[wi])];
    for (size_t k = 0; k < ch.size(); ++k) {
      const auto c = static_cast<size_t>(u.conn(ch[k]));
      if (conns.stamp[c] == static_cast<int32_t>(wi)) continue;
      conns.stamp[c] = static_cast<int32_t>(wi);
      if (conns.holders[c] < 2) ++conns.holders[c];
      w.cur_conns.push_back(static_cast<int32_t>(c));
    }
    for (size_t k = 0; k < th.size(); ++k) {
      const Slot s = u.slot(th[k], m.owned.tasks[k].task);
      if (s < 0) continue;
      if (tasks.stamp[static_cast<size_t>(s)] == static_cast<int32_t>(wi)) continue;
      tasks.stamp[static_cast<size_t>(s)] = static_cast<int32_t>(wi);
      if (tasks.holders[static_cast<size_t>(s)] < 2) ++tasks.holders[static_cast<size_t>(s)];
      w.cur_tasks.push_back(s);
    }
  }
}

// 3.3 step 1, generation guard: the previous assignment only counts if this
// leader's last round completed. Reads: state, ctx. Sets: kPrevious flags.
void Round::apply_generation_guard() {
  if (state.previous_generation != ctx.last_completed_generation) return;
  for (const auto& c : state.previous_assignment.connectors) conns.flags[static_cast<size_t>(u.conn(c))] |= kPrevious;
  for (size_t k = 0; k < prev_task_handles.size(); ++k) {
    const Slot s = u.slot(prev_task_handles[k], state.previous_assignment.tasks[k].task);
    if (s >= 0) tasks.flags[static_cast<size_t>(s)] |= kPrevious;
  }
}

// 3.3 step 4, failed-revocation check: something revoked last round still
// runs, so the previous assignment is rebuilt from what runs now. Reads:
// state's previous revocation, the holder counts. Changes: kPrevious flags.
void Round::check_failed_revocation() {
  bool failed_revocation = false;
  for (const auto& c : state.previous_revocation.connectors)
    failed_revocation |= conns.active(static_cast<size_t>(u.conn(c)));
  for (size_t k = 0; k < prev_rev_handles.size(); ++k) {
    const Slot s = u.slot(prev_rev_handles[k], state.previous_revocation.tasks[k].task);
    if (s >= 0) failed_revocation |= tasks.active(static_cast<size_t>(s));
  }
  if (!failed_revocation) return;
  for (size_t c = 0; c < C; ++c)
    conns.flags[c] = static_cast<uint8_t>((conns.flags[c] & ~kPrevious) | (conns.active(c) ? kPrevious : 0));
  for (size_t s = 0; s < S; ++s)
    tasks.flags[s] = static_cast<uint8_t>((tasks.flags[s] & ~kPrevious) | (tasks.active(s) ? kPrevious : 0));
}

// Ours, after 3.3 step 4 (RoundContext::return_lost_to_owner; nothing when
// off, except the owner bookkeeping that no_delay_for_expired_static also
// needs): lost work whose worker is back is given back to it in this round.
// The owner of each item comes from the state (lost_by_identity for work lost
// earlier in the delay, owners_by_identity for work the last round gave
// out); a member of this round with that worker_identity() takes it, unless
// two members share the identity (then nobody can tell which is the worker)
// or it is leaving. A given-back item counts as run by that member from here
// on (active, not lost), so every later step treats the round as if the
// worker had never gone: the delay ends when no other lost work is left.
// Reads: state, members, the lost predicate, leaving. Sets: owner_ids,
// conn_owner / task_owner, returned_conn / returned_task. Changes: holder
// counts and the receiving workers' cur_conns / cur_tasks.
void Round::return_lost_to_owners() {
  if (!tracks_owners()) return;
  conn_owner.assign(C, -1);
  task_owner.assign(S, -1);
  returned_conn.assign(C, 0);
  returned_task.assign(S, 0);
  for (const auto* by_identity : {&state.lost_by_identity, &state.owners_by_identity})
    for (const auto& [id, items] : *by_identity) {
      const auto k = static_cast<int32_t>(owner_ids.size());
      owner_ids.push_back(id);
      for (const auto& c : items.connectors)
        if (const int32_t i = u.conn_or_none(c); i >= 0) conn_owner[static_cast<size_t>(i)] = k;
      for (const auto& t : items.tasks)
        if (const Slot sl = u.slot_or_none(t); sl >= 0) task_owner[static_cast<size_t>(sl)] = k;
    }
  // Identity -> worker index in this round; -1 when two members share it.
  std::map<std::string, int32_t, std::less<>> back;
  for (size_t wi = 0; wi < W && ctx.return_lost_to_owner; ++wi) {
    const auto& m = members[static_cast<size_t>(by_id[wi])];
    if (std::find(leaving.begin(), leaving.end(), m.member_id) != leaving.end()) continue;
    std::string id = worker_identity(m);
    if (id.empty()) continue;
    auto [it, fresh] = back.emplace(std::move(id), static_cast<int32_t>(wi));
    if (!fresh) it->second = -1;
  }
  std::vector<int32_t> to(owner_ids.size(), -1);
  for (size_t k = 0; k < owner_ids.size(); ++k)
    if (auto it = back.find(owner_ids[k]); it != back.end()) to[k] = it->second;
  for (size_t c = 0; c < C; ++c) {
    if (!conns.lost(c) || conn_owner[c] < 0 || to[static_cast<size_t>(conn_owner[c])] < 0) continue;
    const int32_t wi = to[static_cast<size_t>(conn_owner[c])];
    returned_conn[c] = 1;
    conns.holders[c] = 1;
    conns.stamp[c] = wi;
    workers[static_cast<size_t>(wi)].cur_conns.push_back(static_cast<int32_t>(c));
  }
  for (size_t sl = 0; sl < S; ++sl) {
    if (!tasks.lost(sl) || task_owner[sl] < 0 || to[static_cast<size_t>(task_owner[sl])] < 0) continue;
    const int32_t wi = to[static_cast<size_t>(task_owner[sl])];
    returned_task[sl] = 1;
    tasks.holders[sl] = 1;
    tasks.stamp[sl] = wi;
    workers[static_cast<size_t>(wi)].cur_tasks.push_back(static_cast<Slot>(sl));
  }
}

// Ours (RoundContext::no_delay_for_expired_static; nothing when off): lost
// work whose last owner was a static member (a worker_identity() from
// group.instance.id) is new work in this round, so step 12 holds no delay
// for it and step 14 places it. The broker keeps a static member through
// session.timeout.ms, so its work is lost only once that grace has run out.
// Runs after the give-back, so a static owner that is back keeps its own.
// Reads: owner_ids, conn_owner / task_owner, the lost predicate. Changes:
// kPrevious flags of those items.
void Round::place_expired_static_now() {
  if (!ctx.no_delay_for_expired_static || owner_ids.empty()) return;
  std::vector<uint8_t> is_static(owner_ids.size(), 0);
  for (size_t k = 0; k < owner_ids.size(); ++k) is_static[k] = owner_ids[k].starts_with(kStaticIdentityPrefix);
  const auto owned_by_static = [&](int32_t k) { return k >= 0 && is_static[static_cast<size_t>(k)]; };
  for (size_t c = 0; c < C; ++c)
    if (conns.lost(c) && owned_by_static(conn_owner[c])) conns.flags[c] &= static_cast<uint8_t>(~kPrevious);
  for (size_t sl = 0; sl < S; ++sl)
    if (tasks.lost(sl) && owned_by_static(task_owner[sl])) tasks.flags[sl] &= static_cast<uint8_t>(~kPrevious);
}

// 3.3 steps 5-11: deleted, duplicated, lost and created are the flag
// predicates of ItemTable; this step revokes deleted and duplicated work
// (toRevoke) and keeps the rest as the next loads. Reads: workers' current
// items, flags, holder counts. Sets: workers' revoked_* and next_*.
// Deviation: any reported item that is not configured is revoked, not only
// those in `previous - configured`, so a new leader stops deleted work at once.
void Round::revoke_deleted_and_duplicated() {
  for (auto& w : workers) {
    for (int32_t c : w.cur_conns) {
      const auto i = static_cast<size_t>(c);
      if (!conns.configured(i) || conns.holders[i] > 1) w.revoked_conns.push_back(c);
      else w.next_conns.push_back(c);
    }
    for (Slot s : w.cur_tasks) {
      const auto i = static_cast<size_t>(s);
      if (!tasks.configured(i) || tasks.holders[i] > 1) w.revoked_tasks.push_back(s);
      else w.next_tasks.push_back(s);
    }
  }
}

// 3.3 step 12 (all of 3.4): lost assignments and the scheduled rebalance
// delay. Reads: the lost predicate, state (delay, candidates, previous
// members), ctx.now_ms, workers' next loads. Sets: next (delay bookkeeping
// copied from state and updated), delay, release_lost, returning.
void Round::handle_lost_work() {
  bool any_lost = false;
  for (size_t c = 0; c < C && !any_lost; ++c) any_lost = conns.lost(c);
  for (size_t s = 0; s < S && !any_lost; ++s) any_lost = tasks.lost(s);
  next.scheduled_rebalance_ms = state.scheduled_rebalance_ms;
  next.candidate_workers = state.candidate_workers;
  next.members_before_delay = state.members_before_delay;
  next.revoked_in_previous = state.revoked_in_previous;
  next.num_successive_revoking_rebalances = state.num_successive_revoking_rebalances;
  delay = state.delay_ms;
  returning.assign(W, 0);
  if (!any_lost && !next.revoked_in_previous) {
    reset_delay();  // 3.4 step 1
  } else if (next.scheduled_rebalance_ms <= 0 &&
             std::all_of(state.previous_members.begin(), state.previous_members.end(),
                         [&](const std::string& id) { return is_member(id); })) {
    // 3.4 step 2. Nobody left: the missing work was most likely never delivered.
    release_lost = true;
  } else if (max_delay_ms == 0) {
    release_lost = true;  // 3.4 step 3 (KAFKA-15693)
  } else if (next.scheduled_rebalance_ms > 0 && ctx.now_ms >= next.scheduled_rebalance_ms) {
    release_at_expiry();  // 3.4 step 4
  } else {
    hold_lost_for_delay();  // 3.4 step 5
  }
}

// 3.4 step 1 (and the end of step 4): no delay, no candidates. Changes: delay, next.
void Round::reset_delay() {
  delay = 0;
  next.scheduled_rebalance_ms = 0;
  next.candidate_workers.clear();
  next.members_before_delay.clear();
}

// 3.4 step 4, the delay expired. Deviation: lost work is placed like new work
// over the least-loaded workers, so nobody ends above the balanced share; the
// candidates (workers that came back empty during the delay) are the least
// loaded and also win the ties, so a returning worker gets its whole share
// back. Reads: state's candidates and members_before_delay. Sets:
// release_lost, returning; resets the delay and revoked_in_previous.
void Round::release_at_expiry() {
  release_lost = true;
  for (size_t wi = 0; wi < W; ++wi)
    if (std::find(state.candidate_workers.begin(), state.candidate_workers.end(), member_ids[wi]) !=
        state.candidate_workers.end())
      returning[wi] = std::binary_search(state.members_before_delay.begin(), state.members_before_delay.end(),
                                         member_ids[wi])
                          ? 1
                          : 2;
  reset_delay();
  next.revoked_in_previous = false;
}

// 3.4 step 5, no delay yet or one still running: empty workers become
// candidates, lost work stays unassigned, and the delay is the remaining time
// (or the max delay when it starts now). Reads: workers' next loads, state,
// ctx.now_ms. Changes: next (candidates, scheduled time, members_before_delay), delay.
void Round::hold_lost_for_delay() {
  for (size_t wi = 0; wi < W; ++wi) {
    if (!workers[wi].next_conns.empty() || !workers[wi].next_tasks.empty()) continue;
    const auto& id = member_ids[wi];
    if (std::find(next.candidate_workers.begin(), next.candidate_workers.end(), id) == next.candidate_workers.end())
      next.candidate_workers.push_back(id);
  }
  if (next.scheduled_rebalance_ms > 0) {
    const int64_t remaining = next.scheduled_rebalance_ms - ctx.now_ms;
    delay = static_cast<int32_t>(std::clamp<int64_t>(remaining, 0, max_delay_ms));
  } else {
    delay = max_delay_ms;
    // Those that stayed through the loss (the lost ones are gone now).
    next.members_before_delay.clear();
    std::set_intersection(state.previous_members.begin(), state.previous_members.end(), member_ids.begin(),
                          member_ids.end(), std::back_inserter(next.members_before_delay));
  }
  next.scheduled_rebalance_ms = ctx.now_ms + delay;
}

// True when `id` is a member of this round.
bool Round::is_member(const std::string& id) const {
  return std::binary_search(member_ids.begin(), member_ids.end(), id);
}

// Groups every worker's next_tasks by connector (ours: the index behind the
// per-connector spread). Changes: sorts each worker's next_tasks. Sets:
// hold_off, hold.
void Round::build_holders() {
  hold_off.assign(C + 1, 0);
  for (auto& w : workers) {
    if (!std::is_sorted(w.next_tasks.begin(), w.next_tasks.end())) std::sort(w.next_tasks.begin(), w.next_tasks.end());
    int32_t prev = -1;
    for (Slot s : w.next_tasks) {
      const int32_t c = u.conn_of(s);
      if (c != prev) ++hold_off[static_cast<size_t>(c) + 1];
      prev = c;
    }
  }
  for (size_t c = 0; c < C; ++c) hold_off[c + 1] += hold_off[c];
  hold.resize(static_cast<size_t>(hold_off[C]));
  std::vector<int32_t> fill(hold_off.begin(), hold_off.end() - 1);
  for (size_t wi = 0; wi < W; ++wi) {
    const auto& nt = workers[wi].next_tasks;
    for (size_t i = 0; i < nt.size();) {
      const int32_t c = u.conn_of(nt[i]);
      size_t j = i + 1;
      while (j < nt.size() && u.conn_of(nt[j]) == c) ++j;
      hold[static_cast<size_t>(fill[static_cast<size_t>(c)]++)] = {static_cast<int32_t>(wi), static_cast<int32_t>(i),
                                                                   static_cast<int32_t>(j - i)};
      i = j;
    }
  }
}

// 3.3 step 13 (3.5): load-balancing revocations, only when no delay is
// pending, with the successive-revocation backoff. Reads: delay, workers'
// next loads, the configured totals. Changes: next (revoked_in_previous,
// backoff counter and schedule), delay (backoff), revoking_round, workers'
// next_* and revoked_* when the revocations apply.
void Round::revoke_for_balance() {
  if (delay != 0) {
    next.revoked_in_previous = false;
    return;
  }
  const BalancePlan plan = plan_balance_revocations();
  revoking_round = backoff_allows_revocation(plan.any());
  if (!revoking_round) return;
  revoke_connectors(plan.conn_excess);
  revoke_tasks(plan);
}

// 3.5, what would be revoked: nothing when every next load is empty;
// otherwise connectors above their share (Connect's rule, deterministic
// choice of who keeps the extra slots) and tasks for spread and for the
// total (deviation, KAFKA-17049). Reads: workers' next loads, cfg_n, the
// configured totals. Sets: hold_off / hold (build_holders).
BalancePlan Round::plan_balance_revocations() {
  std::vector<int64_t> conn_load(W), task_load(W);
  bool all_empty = true;
  for (size_t wi = 0; wi < W; ++wi) {
    conn_load[wi] = static_cast<int64_t>(workers[wi].next_conns.size());
    task_load[wi] = static_cast<int64_t>(workers[wi].next_tasks.size());
    all_empty = all_empty && conn_load[wi] == 0 && task_load[wi] == 0;
  }
  BalancePlan plan;
  plan.conn_excess.assign(W, 0);
  plan.task_excess.assign(W, 0);
  if (all_empty) return plan;
  plan.conn_excess = excess_per_worker(conn_load, configured_conns);
  build_holders();
  plan.hold_rev.assign(hold.size(), 0);
  plan.spread_revocation = plan_spread_revocations(task_load, plan.hold_rev);
  plan.task_excess = excess_per_worker(effective_loads(plan.hold_rev), configured_tasks);
  return plan;
}

// Per-connector spread is part of balance (deviation, KAFKA-17049): with n
// tasks of a connector over W workers, nobody keeps more than ceil(n / W),
// and only n % W workers keep ceil(n / W) when that is above floor(n / W);
// the others drop to floor(n / W). Those that drop are the most loaded after
// the connectors handled before (`load_after`, starting from the next task
// loads; ties: member id), so the drops spread over the workers and the
// total balancing has less to take. Reads: hold, cfg_n. Changes: hold_rev.
// Returns whether anything is to be revoked.
bool Round::plan_spread_revocations(std::vector<int64_t> load_after, std::vector<int32_t>& hold_rev) const {
  bool spread_revocation = false;
  std::vector<int32_t> at_ceil;
  for (size_t c = 0; c < C; ++c) {
    const int32_t b = hold_off[c], e = hold_off[c + 1];
    if (b == e) continue;
    const int64_t n = cfg_n[c];
    const int64_t fl = n / static_cast<int64_t>(W), r = n % static_cast<int64_t>(W);
    const int64_t ceil = fl + (r > 0 ? 1 : 0);
    at_ceil.clear();
    for (int32_t h = b; h < e; ++h) {
      const auto& hd = hold[static_cast<size_t>(h)];
      if (hd.count > ceil) {
        hold_rev[static_cast<size_t>(h)] = static_cast<int32_t>(hd.count - ceil);
        load_after[static_cast<size_t>(hd.worker)] -= hd.count - ceil;
        spread_revocation = true;
      }
      if (r > 0 && hd.count >= ceil) at_ceil.push_back(h);
    }
    if (static_cast<int64_t>(at_ceil.size()) > r) {
      // The most loaded (as left by the connectors before) drop to floor.
      std::stable_sort(at_ceil.begin(), at_ceil.end(), [&](int32_t x, int32_t y) {
        return load_after[static_cast<size_t>(hold[static_cast<size_t>(x)].worker)] >
               load_after[static_cast<size_t>(hold[static_cast<size_t>(y)].worker)];
      });
      for (size_t k = 0; k < at_ceil.size() - static_cast<size_t>(r); ++k) {
        ++hold_rev[static_cast<size_t>(at_ceil[k])];
        --load_after[static_cast<size_t>(hold[static_cast<size_t>(at_ceil[k])].worker)];
        spread_revocation = true;
      }
    }
  }
  return spread_revocation;
}

// Effective load per worker (ours, KAFKA-17049): what it keeps plus what it
// must still receive to reach floor(n / W) of every connector. Dropping a
// connector held above floor(n / W) lowers it by one; the total balancing
// revokes only those, so the next round can fill every deficit and stay
// balanced. Reads: hold, hold_rev, cfg_n.
std::vector<int64_t> Round::effective_loads(const std::vector<int32_t>& hold_rev) const {
  int64_t phi = 0;  // sum of floor(n / W) over the configured connectors
  for (size_t c = 0; c < C; ++c) phi += cfg_n[c] / static_cast<int64_t>(W);
  std::vector<int64_t> effective(W, phi);
  for (size_t c = 0; c < C; ++c) {
    const int64_t fl = cfg_n[c] / static_cast<int64_t>(W);
    for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h) {
      const auto& hd = hold[static_cast<size_t>(h)];
      const int64_t kept = hd.count - hold_rev[static_cast<size_t>(h)];
      effective[static_cast<size_t>(hd.worker)] += std::max<int64_t>(0, kept - fl);
    }
  }
  return effective;
}

// 3.5, successive-revocation backoff (KAFKA-12495): revocations apply when
// the previous round did not revoke; after a revoking round they back off
// (delay 40^n ms, capped) unless the max delay is 0. Reads: next.
// Changes: next (revoked_in_previous, counter, schedule), delay. Returns
// whether the revocations apply in this round.
bool Round::backoff_allows_revocation(bool any_revocation) {
  bool apply = false;
  if (any_revocation && !next.revoked_in_previous) {
    apply = true;
    next.revoked_in_previous = true;
  } else if (any_revocation) {
    // Successive revoking round: back off instead.
    ++next.num_successive_revoking_rebalances;
    delay = successive_revocation_backoff_ms(next.num_successive_revoking_rebalances, max_delay_ms);
    if (delay != 0) next.scheduled_rebalance_ms = ctx.now_ms + delay;
    else apply = true;
  } else if (next.revoked_in_previous) {
    next.revoked_in_previous = false;
    next.num_successive_revoking_rebalances = 0;
  }
  return apply;
}

// 3.5, connectors: `conn_excess[wi]` of each worker's connectors are revoked,
// the highest names first (deviation: a deterministic choice). Changes:
// workers' next_conns, revoked_conns.
void Round::revoke_connectors(const std::vector<int64_t>& conn_excess) {
  for (size_t wi = 0; wi < W; ++wi) {
    auto& w = workers[wi];
    if (conn_excess[wi] <= 0) continue;
    std::sort(w.next_conns.begin(), w.next_conns.end());
    for (int64_t k = 0; k < conn_excess[wi]; ++k) {
      w.revoked_conns.push_back(w.next_conns.back());
      w.next_conns.pop_back();
    }
  }
}

// 3.5, tasks: first per connector (plan.hold_rev), then for the total: the
// total excess is taken from the connectors the worker holds most of,
// preferring those where it holds more than floor(n / W) (dropping one of
// those leaves the connector spread); ties: the connector with the most tasks
// held in the group, then by index. Highest task numbers go first. Reads:
// hold, cfg_n. Changes: workers' next_tasks, revoked_tasks.
void Round::revoke_tasks(const BalancePlan& plan) {
  const auto& hold_rev = plan.hold_rev;
  const auto& task_excess = plan.task_excess;
  std::vector<int32_t> held(C, 0);
  for (const auto& w : workers)
    for (Slot s : w.next_tasks) ++held[static_cast<size_t>(u.conn_of(s))];
  // Per worker: drop[i] marks next_tasks[i] revoked; group ends shrink.
  std::vector<std::vector<uint8_t>> drop(W);
  std::vector<std::vector<int32_t>> worker_holds(W);  // indices into `hold`
  for (size_t h = 0; h < hold.size(); ++h) worker_holds[static_cast<size_t>(hold[h].worker)].push_back(static_cast<int32_t>(h));
  std::vector<int32_t> left(hold.size());
  for (size_t h = 0; h < hold.size(); ++h) left[h] = hold[h].count;
  auto revoke_one = [&](size_t wi, int32_t h) {
    auto& w = workers[wi];
    if (drop[wi].empty()) drop[wi].assign(w.next_tasks.size(), 0);
    const auto& hd = hold[static_cast<size_t>(h)];
    const int32_t at = hd.begin + --left[static_cast<size_t>(h)];
    drop[wi][static_cast<size_t>(at)] = 1;
    w.revoked_tasks.push_back(w.next_tasks[static_cast<size_t>(at)]);
    --held[static_cast<size_t>(u.conn_of(w.next_tasks[static_cast<size_t>(at)]))];
  };
  for (size_t h = 0; h < hold.size(); ++h)
    for (int32_t k = 0; k < hold_rev[h]; ++k) revoke_one(static_cast<size_t>(hold[h].worker), static_cast<int32_t>(h));
  for (size_t wi = 0; wi < W; ++wi) {
    if (task_excess[wi] <= 0) continue;
    // Only connectors held above floor(n / W) (dropping one lowers the
    // effective load). After the per-connector step such a connector is
    // held exactly ceil(n / W) times, so each gives at most one: the
    // `excess` best by (-count on this worker, -held in group, connector
    // index) go.
    std::vector<std::tuple<int64_t, int64_t, int32_t, int32_t>> cand;
    for (int32_t h : worker_holds[wi]) {
      const int32_t c = u.conn_of(workers[wi].next_tasks[static_cast<size_t>(hold[static_cast<size_t>(h)].begin)]);
      const int32_t l = left[static_cast<size_t>(h)];
      if (l > cfg_n[static_cast<size_t>(c)] / static_cast<int64_t>(W))
        cand.emplace_back(-static_cast<int64_t>(l), -static_cast<int64_t>(held[static_cast<size_t>(c)]), c, h);
    }
    const auto take = static_cast<size_t>(std::min<int64_t>(task_excess[wi], static_cast<int64_t>(cand.size())));
    std::partial_sort(cand.begin(), cand.begin() + static_cast<std::ptrdiff_t>(take), cand.end());
    for (size_t k = 0; k < take; ++k) revoke_one(wi, std::get<3>(cand[k]));
  }
  for (size_t wi = 0; wi < W; ++wi) {
    if (drop[wi].empty()) continue;
    auto& nt = workers[wi].next_tasks;
    size_t out = 0;
    for (size_t i = 0; i < nt.size(); ++i)
      if (!drop[wi][i]) nt[out++] = nt[i];
    nt.resize(out);
  }
}

// Ours (deviation 8): a given-back item that the load-balancing step revoked
// runs nowhere (its worker never started it), so it is placed in this round
// like new work instead: a revocation that nobody carries out would start no
// follow-up round and leave it unassigned. When the balance step revoked
// nothing else, the round is not a revoking one for the backoff. Reads:
// returned_*, revoking_round. Changes: workers' revoked_*,
// next.revoked_in_previous. Sets: replace_conns, replace_tasks.
void Round::replace_revoked_returns() {
  bool other_balance_revocation = false;  // configured, one holder: not step 5-11's
  for (auto& w : workers) {
    for (int32_t c : w.revoked_conns) {
      const auto i = static_cast<size_t>(c);
      other_balance_revocation |= !returned_conn[i] && conns.configured(i) && conns.holders[i] == 1;
    }
    for (Slot s : w.revoked_tasks) {
      const auto i = static_cast<size_t>(s);
      other_balance_revocation |= !returned_task[i] && tasks.configured(i) && tasks.holders[i] == 1;
    }
    std::erase_if(w.revoked_conns, [&](int32_t c) {
      if (!returned_conn[static_cast<size_t>(c)]) return false;
      replace_conns.push_back(c);
      return true;
    });
    std::erase_if(w.revoked_tasks, [&](Slot s) {
      if (!returned_task[static_cast<size_t>(s)]) return false;
      replace_tasks.push_back(s);
      return true;
    });
  }
  if (revoking_round && !other_balance_revocation && (!replace_conns.empty() || !replace_tasks.empty()))
    next.revoked_in_previous = false;
}

// 3.3 step 14, toAssign: created, then the lost work step 12 released (each
// sorted), and (deviation 8) given-back items revoked again, all sorted then.
// Reads: created / lost predicates, release_lost, replace_*. Sets:
// pool_conns, pool_tasks.
void Round::collect_to_assign() {
  for (size_t c = 0; c < C; ++c)
    if (conns.created(c)) pool_conns.push_back(static_cast<int32_t>(c));
  if (release_lost)
    for (size_t c = 0; c < C; ++c)
      if (conns.lost(c)) pool_conns.push_back(static_cast<int32_t>(c));
  for (size_t s = 0; s < S; ++s)
    if (tasks.created(s)) pool_tasks.push_back(static_cast<Slot>(s));
  if (release_lost)
    for (size_t s = 0; s < S; ++s)
      if (tasks.lost(s)) pool_tasks.push_back(static_cast<Slot>(s));
  if (!replace_conns.empty()) {
    pool_conns.insert(pool_conns.end(), replace_conns.begin(), replace_conns.end());
    std::sort(pool_conns.begin(), pool_conns.end());
  }
  if (!replace_tasks.empty()) {
    pool_tasks.insert(pool_tasks.end(), replace_tasks.begin(), replace_tasks.end());
    std::sort(pool_tasks.begin(), pool_tasks.end());
  }
}

// 3.6 for connectors (Connect's assignConnectors): water-filling over the
// next connector loads, dealt in pool order, returning candidates first
// among equal loads. Reads: pool_conns, workers' next_conns, returning.
// Changes: workers' placed_conns.
void Round::assign_connectors() {
  if (W == 0 || pool_conns.empty()) return;
  std::vector<int64_t> load(W);
  for (size_t wi = 0; wi < W; ++wi) load[wi] = static_cast<int64_t>(workers[wi].next_conns.size());
  std::vector<int32_t> order;
  auto quota = water_fill_quota(load, static_cast<int64_t>(pool_conns.size()), &order, returning);
  // Deal one per pass to the workers that still have quota, lowest first.
  size_t next_item = 0;
  while (next_item < pool_conns.size()) {
    for (int32_t wi : order) {
      if (next_item == pool_conns.size()) break;
      if (quota[static_cast<size_t>(wi)] == 0) continue;
      --quota[static_cast<size_t>(wi)];
      workers[static_cast<size_t>(wi)].placed_conns.push_back(pool_conns[next_item++]);
    }
  }
}

// 3.3 steps 15-16, the leader state: previous assignment = next loads plus
// placed plus every lost item, minus everything revoked; previous revocation
// = what this round revoked; generation and members. Reads: workers, the
// lost predicate, ctx, member_ids, delay. Changes: next.
void Round::update_leader_state() {
  std::vector<uint8_t> prev_conn(C, 0), prev_task(S, 0);
  for (auto& w : workers) {
    for (int32_t c : w.next_conns) prev_conn[static_cast<size_t>(c)] = 1;
    for (int32_t c : w.placed_conns) prev_conn[static_cast<size_t>(c)] = 1;
    for (Slot s : w.next_tasks) prev_task[static_cast<size_t>(s)] = 1;
    for (Slot s : w.placed_tasks) prev_task[static_cast<size_t>(s)] = 1;
  }
  std::vector<uint8_t> rev_conn(C, 0), rev_task(S, 0);
  for (auto& w : workers) {
    for (int32_t c : w.revoked_conns) rev_conn[static_cast<size_t>(c)] = 1;
    for (Slot s : w.revoked_tasks) rev_task[static_cast<size_t>(s)] = 1;
  }
  for (size_t c = 0; c < C; ++c) {
    if (conns.lost(c)) prev_conn[c] = 1;
    if (rev_conn[c]) prev_conn[c] = 0;
    if (prev_conn[c]) next.previous_assignment.connectors.emplace_back(u.name(static_cast<int32_t>(c)));
    if (rev_conn[c]) next.previous_revocation.connectors.emplace_back(u.name(static_cast<int32_t>(c)));
  }
  {
    size_t n_prev = 0, n_rev = 0;
    for (size_t s = 0; s < S; ++s) {
      n_prev += (prev_task[s] || tasks.lost(s)) && !rev_task[s];
      n_rev += rev_task[s];
    }
    next.previous_assignment.tasks.reserve(n_prev);
    next.previous_revocation.tasks.reserve(n_rev);
  }
  for (size_t s = 0; s < S; ++s) {
    if (tasks.lost(s)) prev_task[s] = 1;
    if (rev_task[s]) prev_task[s] = 0;
    if (prev_task[s]) next.previous_assignment.tasks.push_back(u.task_id(static_cast<Slot>(s)));
    if (rev_task[s]) next.previous_revocation.tasks.push_back(u.task_id(static_cast<Slot>(s)));
  }
  next.previous_generation = ctx.generation;
  next.previous_members = member_ids;
  next.delay_ms = delay;
  record_owners();
}

// Ours, part of the leader state with RoundContext::return_lost_to_owner or
// no_delay_for_expired_static (nothing when both are off): who runs what
// after this round, per worker_identity(), and the lost work still held for
// the delay, per identity that ran it (none when it was released). Reads: workers' next_* and placed_*, the lost
// predicate, conn_owner / task_owner, release_lost. Changes: next.
void Round::record_owners() {
  if (!tracks_owners()) return;
  std::vector<int32_t> cs;
  std::vector<Slot> ts;
  for (const auto& w : workers) {
    const std::string id = worker_identity(members[static_cast<size_t>(w.input_index)]);
    if (id.empty()) continue;
    cs.assign(w.next_conns.begin(), w.next_conns.end());
    cs.insert(cs.end(), w.placed_conns.begin(), w.placed_conns.end());
    ts.assign(w.next_tasks.begin(), w.next_tasks.end());
    ts.insert(ts.end(), w.placed_tasks.begin(), w.placed_tasks.end());
    if (cs.empty() && ts.empty()) continue;
    auto& o = next.owners_by_identity[id];
    for (int32_t c : cs) o.connectors.emplace_back(u.name(c));
    for (Slot sl : ts) o.tasks.push_back(u.task_id(sl));
    // Sorted, and merged when two members share the identity.
    std::sort(o.connectors.begin(), o.connectors.end());
    o.connectors.erase(std::unique(o.connectors.begin(), o.connectors.end()), o.connectors.end());
    std::sort(o.tasks.begin(), o.tasks.end());
    o.tasks.erase(std::unique(o.tasks.begin(), o.tasks.end()), o.tasks.end());
  }
  if (release_lost) return;
  for (size_t c = 0; c < C; ++c)
    if (conns.lost(c) && conn_owner[c] >= 0)
      next.lost_by_identity[owner_ids[static_cast<size_t>(conn_owner[c])]].connectors.emplace_back(
          u.name(static_cast<int32_t>(c)));
  for (size_t sl = 0; sl < S; ++sl)
    if (tasks.lost(sl) && task_owner[sl] >= 0)
      next.lost_by_identity[owner_ids[static_cast<size_t>(task_owner[sl])]].tasks.push_back(
          u.task_id(static_cast<Slot>(sl)));
}

// 3.3 step 17, the output: per member (input order) its newly assigned and
// newly revoked items (sorted), the delay, leader id and URL, config offset.
// Changes: sorts workers' placed_* and revoked_*. Moves `next` into the result.
AssignmentResult Round::output() {
  AssignmentResult out;
  out.assignments.resize(W);
  const std::string url = leader_url_of(members, ctx);
  for (auto& w : workers) {
    auto& ma = out.assignments[static_cast<size_t>(w.input_index)];
    ma.member_id = members[static_cast<size_t>(w.input_index)].member_id;
    Assignment& a = ma.assignment;
    a.version = version;
    a.error = 0;
    a.leader = ctx.leader_id;
    a.leader_url = url;
    a.config_offset = config.offset;
    a.delay_ms = delay;
    std::sort(w.placed_conns.begin(), w.placed_conns.end());
    std::sort(w.placed_tasks.begin(), w.placed_tasks.end());
    std::sort(w.revoked_conns.begin(), w.revoked_conns.end());
    std::sort(w.revoked_tasks.begin(), w.revoked_tasks.end());
    if (!returned_conn.empty()) {
      output_returned(w, a);
      continue;
    }
    for (int32_t c : w.placed_conns) a.connectors.emplace_back(u.name(c));
    a.tasks.reserve(w.placed_tasks.size());
    for (Slot s : w.placed_tasks) a.tasks.push_back(u.task_id(s));
    for (int32_t c : w.revoked_conns) a.revoked_connectors.emplace_back(u.name(c));
    for (Slot s : w.revoked_tasks) a.revoked_tasks.push_back(u.task_id(s));
  }
  out.state = std::move(next);
  return out;
}

// output() with RoundContext::return_lost_to_owner: the member never ran
// what it was given back, so a given-back item it keeps is assigned (one
// revoked again was placed as new work, replace_revoked_returns; the filter
// of the revoked lists only guards that). Reads: w's sorted lists,
// returned_*. Changes: a's lists.
void Round::output_returned(const Worker& w, Assignment& a) const {
  std::vector<int32_t> cs = w.placed_conns;
  for (int32_t c : w.next_conns)
    if (returned_conn[static_cast<size_t>(c)]) cs.push_back(c);
  std::sort(cs.begin(), cs.end());
  std::vector<Slot> ts = w.placed_tasks;
  for (Slot s : w.next_tasks)
    if (returned_task[static_cast<size_t>(s)]) ts.push_back(s);
  std::sort(ts.begin(), ts.end());
  for (int32_t c : cs) a.connectors.emplace_back(u.name(c));
  a.tasks.reserve(ts.size());
  for (Slot s : ts) a.tasks.push_back(u.task_id(s));
  for (int32_t c : w.revoked_conns)
    if (!returned_conn[static_cast<size_t>(c)]) a.revoked_connectors.emplace_back(u.name(c));
  for (Slot s : w.revoked_tasks)
    if (!returned_task[static_cast<size_t>(s)]) a.revoked_tasks.push_back(u.task_id(s));
}

// 3.6 for tasks. Augmenting paths in the placement may also revoke running
// tasks when no delay is pending (the planned spread is then part of this
// round's load-balancing revocations). Changes: revoking_round, and what
// TaskPlacement changes.
void Round::assign_tasks() {
  if (delay == 0) revoking_round = true;
  if (W > 0 && (!pool_tasks.empty() || revoking_round)) TaskPlacement(*this).run();
}

// Hand-over placement (ours, RoundContext::hand_over_placement): the tasks
// this round revokes, placed as the follow-up round would place them, in the
// same run. The follow-up's inputs are this round applied: every worker runs
// its next and placed items, the leader state is out.state, and its pool is
// what nobody runs then: the revoked configured tasks, and everything of a
// `leaving` worker (it revokes all it runs, and what was placed on it is
// withheld; it is not in the follow-up). With no delay there is no lost work
// left. Nothing when a delay is pending now, or when the follow-up would
// revoke for balance (it would then back off with a delay, or revoke) or
// revoke through an augmenting path. Reads and then discards the working
// state (run() has produced `out`). Sets: out.moved.
void Round::place_revoked_now(AssignmentResult& out) {
  if (W == 0 || delay > 0 || out.state.scheduled_rebalance_ms != 0) return;
  // In the follow-up, given-back items run on their worker like any other
  // (revoke_augmented must revoke them, not place them).
  returned_conn.clear();
  returned_task.clear();
  // Per slot: its old owner (the last revoking member in input order, -1:
  // none) and whether the follow-up places it.
  std::vector<int32_t> from(S, -1);
  std::vector<uint8_t> in_pool(S, 0);
  std::vector<Worker> staying;
  for (auto& w : workers) {
    const bool leaves = std::find(leaving.begin(), leaving.end(),
                                  members[static_cast<size_t>(w.input_index)].member_id) != leaving.end();
    for (Slot s : leaves ? w.cur_tasks : w.revoked_tasks)
      if (tasks.configured(static_cast<size_t>(s))) {
        from[static_cast<size_t>(s)] = std::max(from[static_cast<size_t>(s)], w.input_index);
        in_pool[static_cast<size_t>(s)] = 1;
      }
    if (leaves) {
      for (Slot s : w.placed_tasks) in_pool[static_cast<size_t>(s)] = 1;
      continue;
    }
    w.next_conns.insert(w.next_conns.end(), w.placed_conns.begin(), w.placed_conns.end());
    std::sort(w.next_conns.begin(), w.next_conns.end());
    w.next_tasks.insert(w.next_tasks.end(), w.placed_tasks.begin(), w.placed_tasks.end());
    std::sort(w.next_tasks.begin(), w.next_tasks.end());
    w.revoked_conns.clear();
    w.revoked_tasks.clear();
    w.placed_conns.clear();
    w.placed_tasks.clear();
    staying.push_back(std::move(w));
  }
  if (std::all_of(from.begin(), from.end(), [](int32_t f) { return f < 0; }) || staying.empty()) return;
  workers = std::move(staying);
  W = workers.size();
  next = out.state;
  returning.assign(W, 0);
  const BalancePlan plan = plan_balance_revocations();
  if (plan.any()) return;
  pool_conns.clear();
  pool_tasks.clear();
  for (size_t s = 0; s < S; ++s)
    if (in_pool[s]) pool_tasks.push_back(static_cast<Slot>(s));
  release_lost = next.revoked_in_previous;  // the follow-up's 3.4 step 2 (the pool is in slot order either way)
  revoking_round = true;                    // no delay in the follow-up
  TaskPlacement(*this).run();
  for (const auto& w : workers)
    if (!w.revoked_tasks.empty()) return;
  for (const auto& w : workers)
    for (Slot s : w.placed_tasks) {
      const int32_t old_owner = from[static_cast<size_t>(s)];
      if (old_owner < 0 || old_owner == w.input_index) continue;
      out.moved.push_back({u.task_id(s), members[static_cast<size_t>(w.input_index)].member_id,
                           members[static_cast<size_t>(old_owner)].member_id});
    }
  std::sort(out.moved.begin(), out.moved.end(), [](const TaskMove& a, const TaskMove& b) { return a.task < b.task; });
}

}  // namespace kc::assignor::detail
