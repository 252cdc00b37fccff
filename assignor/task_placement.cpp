// Task placement with the per-connector spread (TaskPlacement, declared in
// round.h): reference 3.6 for tasks and deviation 2 of assignor/README.md.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <tuple>

#include "assignor/round.h"

namespace kc::assignor::detail {

// The placement's phases in order. Changes: workers' placed_tasks (and, for
// augmenting paths through running tasks, next_tasks / revoked_tasks and
// next.revoked_in_previous).
void TaskPlacement::run() {
  plan_in_flight();
  round.build_holders();
  compute_quotas();
  group_pool();
  raise_to_floor();
  rebuild();
  recv.resize(W);
  group_of.assign(C, -1);
  for (size_t gi = 0; gi < groups.size(); ++gi) group_of[static_cast<size_t>(groups[gi].conn)] = static_cast<int32_t>(gi);
  for (auto& g : groups) place_group(g);
  revoke_augmented();
}

// The pool plus the configured tasks revoked in this round (in flight).
// Reads: pool_tasks, workers' revoked_tasks. Sets: planned, in_flight.
void TaskPlacement::plan_in_flight() {
  planned = pool_tasks;
  for (const auto& w : workers)
    for (Slot s : w.revoked_tasks)
      if (tasks.configured(static_cast<size_t>(s))) {
        if (in_flight.empty()) in_flight.assign(S, 0);
        in_flight[static_cast<size_t>(s)] = 1;
        planned.push_back(s);
      }
}

// Connect's water-filling counts: the final level L is the highest with
// sum(max(0, L - load)) <= planned. Every worker below L is filled to L
// (base quota); the E items left over go one each to workers at L. Reads:
// workers' next_tasks, planned, hold. Sets: load, quota, eligible, extras, total.
void TaskPlacement::compute_quotas() {
  load.resize(W);
  for (size_t wi = 0; wi < W; ++wi) load[wi] = static_cast<int64_t>(workers[wi].next_tasks.size());
  std::vector<int32_t> order(W);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return load[a] < load[b]; });
  int64_t level = load[static_cast<size_t>(order[0])], left = static_cast<int64_t>(planned.size());
  {
    size_t below = 0;  // workers with load <= level
    while (true) {
      while (below < W && load[static_cast<size_t>(order[below])] <= level) ++below;
      const int64_t next_level = below < W ? load[static_cast<size_t>(order[below])] : INT64_MAX;
      const int64_t can = next_level == INT64_MAX ? left / static_cast<int64_t>(below)
                                                  : std::min(next_level - level, left / static_cast<int64_t>(below));
      level += can;
      left -= can * static_cast<int64_t>(below);
      if (next_level == INT64_MAX || level < next_level) break;
    }
  }
  quota.assign(W, 0);
  eligible.assign(W, 0);
  for (size_t wi = 0; wi < W; ++wi) {
    quota[wi] = std::max<int64_t>(0, level - load[wi]);
    eligible[wi] = load[wi] <= level ? 1 : 0;
  }
  extras = left;
  reserve_extras_for_floor();
  prefer_returning_for_extras();
  total = load;
}

// Deviation 2: which workers at the level take the E extras decides whether
// phase 1 can raise everybody to floor(n / W) of every connector. A worker
// whose base quota is below what it lacks of those floors (counting only
// tasks the pool has) gets an extra first, member-id order; without it the
// round could end with a connector spread by 2 and nothing revoked, so no
// further round would follow (e.g. at delay expiry a newcomer taking the
// spare task that an idle-but-partly-filled worker needs). Reads: hold,
// cfg_n, planned. Changes: quota, eligible, extras.
void TaskPlacement::reserve_extras_for_floor() {
  if (extras <= 0) return;
  std::vector<int64_t> in_pool(C, 0);
  for (Slot s : planned) ++in_pool[static_cast<size_t>(u.conn_of(s))];
  // Every worker lacks min(floor, in pool) of each connector, less what it holds.
  int64_t lack_if_none = 0;
  for (size_t c = 0; c < C; ++c) lack_if_none += std::min(cfg_n[c] / static_cast<int64_t>(W), in_pool[c]);
  std::vector<int64_t> lack(W, lack_if_none);
  for (size_t c = 0; c < C; ++c) {
    const int64_t fl = cfg_n[c] / static_cast<int64_t>(W), none = std::min(fl, in_pool[c]);
    for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h) {
      const auto& hd = hold[static_cast<size_t>(h)];
      lack[static_cast<size_t>(hd.worker)] -= none - std::min(in_pool[c], std::max<int64_t>(0, fl - hd.count));
    }
  }
  for (size_t wi = 0; wi < W && extras > 0; ++wi) {
    if (!eligible[wi] || quota[wi] >= lack[wi]) continue;
    ++quota[wi];
    eligible[wi] = 0;
    --extras;
  }
}

// 3.4 step 4 (ours at expiry): the items above the level go to returning
// candidates first, those that arrived since the loss before idle ones, as
// long as enough of them can take one. Reads: returning, extras. Changes: eligible.
void TaskPlacement::prefer_returning_for_extras() {
  for (uint8_t rank = 2; rank >= 1; --rank) {
    int64_t eligible_ranked = 0;
    for (size_t wi = 0; wi < W; ++wi) eligible_ranked += (eligible[wi] && returning[wi] >= rank) ? 1 : 0;
    if (eligible_ranked > 0 && eligible_ranked >= extras) {
      for (size_t wi = 0; wi < W; ++wi)
        if (returning[wi] < rank) eligible[wi] = 0;
      break;
    }
  }
}

// Hands task `s` to worker `wi` (only counted when in flight) and charges
// its quota, or its extra. Changes: placed_tasks, total, quota, eligible, extras.
void TaskPlacement::give(size_t wi, Slot s) {
  if (is_real(s)) workers[wi].placed_tasks.push_back(s);
  ++total[wi];
  if (quota[wi] > 0) {
    --quota[wi];
  } else {
    eligible[wi] = 0;
    if (--extras == 0) extras_gone = true;
  }
}

// The planned tasks sorted (created, released lost and in-flight tasks
// interleave otherwise) and cut into one group per connector. Sets:
// sorted_pool, groups, count.
void TaskPlacement::group_pool() {
  sorted_pool = std::move(planned);
  if (release_lost || !in_flight.empty()) std::sort(sorted_pool.begin(), sorted_pool.end());
  for (size_t i = 0; i < sorted_pool.size();) {
    const int32_t c = u.conn_of(sorted_pool[i]);
    size_t j = i;
    while (j < sorted_pool.size() && u.conn_of(sorted_pool[j]) == c) ++j;
    groups.push_back({c, i, j, 0, 0});
    i = j;
  }
  count.assign(W, 0);
}

// count[] = tasks of g's connector per worker: held, given in phase 1, and
// running ones that augmenting paths of earlier groups planned for it.
void TaskPlacement::load_counts(const PoolGroup& g) {
  const auto c = static_cast<size_t>(g.conn);
  for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h)
    count[static_cast<size_t>(hold[static_cast<size_t>(h)].worker)] += hold[static_cast<size_t>(h)].count;
  for (size_t k = g.phase1_begin; k < g.phase1_end; ++k) ++count[static_cast<size_t>(p1[k])];
  for (const auto& [wi, rc] : moved_running)
    if (rc == g.conn && count[static_cast<size_t>(wi)]++ == 0) touched.push_back(wi);
}

// Zeroes every count[] entry load_counts or phase 2 set for g.
void TaskPlacement::clear_counts(const PoolGroup& g) {
  const auto c = static_cast<size_t>(g.conn);
  for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h) count[static_cast<size_t>(hold[static_cast<size_t>(h)].worker)] = 0;
  for (size_t k = g.phase1_begin; k < g.phase1_end; ++k) count[static_cast<size_t>(p1[k])] = 0;
  for (int32_t t : touched) count[static_cast<size_t>(t)] = 0;
  touched.clear();
}

// Phase 1: everybody (with capacity) up to floor(n / W) of each connector,
// member-id order. Changes: groups (begin, phase-1 range), p1, and give()'s state.
void TaskPlacement::raise_to_floor() {
  for (auto& g : groups) {
    g.phase1_begin = g.phase1_end = p1.size();
    const int64_t fl = cfg_n[static_cast<size_t>(g.conn)] / static_cast<int64_t>(W);
    if (fl == 0) continue;
    load_counts(g);
    for (size_t wi = 0; wi < W && g.begin < g.end; ++wi) {
      while (count[wi] < fl && g.begin < g.end && cap(wi) > 0) {
        give(wi, sorted_pool[g.begin++]);
        ++count[wi];
        p1.push_back(static_cast<int32_t>(wi));
      }
    }
    g.phase1_end = p1.size();
    clear_counts(g);
  }
}

// (Re)builds the phase-2 buckets from the capacities; needed again when the
// last extra is taken (every eligible worker's capacity drops by one).
void TaskPlacement::rebuild() {
  int64_t maxcap = 0;
  for (size_t wi = 0; wi < W; ++wi) maxcap = std::max(maxcap, cap(wi));
  bucket.assign(static_cast<size_t>(maxcap) + 1, {});
  head.assign(static_cast<size_t>(maxcap) + 1, 0);
  for (size_t wi = 0; wi < W; ++wi) {
    const int64_t k = cap(wi);
    if (k > 0) bucket[static_cast<size_t>(k)].push_back(static_cast<int32_t>(wi));
  }
  top = maxcap;
  extras_gone = false;
}

// ceil(n / W) for connector c.
int64_t TaskPlacement::ceil_of(int32_t c) const {
  const int64_t n = cfg_n[static_cast<size_t>(c)];
  return n / static_cast<int64_t>(W) + (n % static_cast<int64_t>(W) > 0 ? 1 : 0);
}

// Tasks of connector c worker wi holds or was given so far (slow path).
int64_t TaskPlacement::count_of(size_t wi, int32_t c) const {
  int64_t n = 0;
  const auto b = hold.begin() + hold_off[static_cast<size_t>(c)], e = hold.begin() + hold_off[static_cast<size_t>(c) + 1];
  auto it = std::lower_bound(b, e, static_cast<int32_t>(wi), [](const Hold& h, int32_t w) { return h.worker < w; });
  if (it != e && it->worker == static_cast<int32_t>(wi)) n += it->count;
  const int32_t gi = group_of[static_cast<size_t>(c)];
  if (gi >= 0)
    for (size_t k = groups[static_cast<size_t>(gi)].phase1_begin; k < groups[static_cast<size_t>(gi)].phase1_end; ++k)
      n += p1[k] == static_cast<int32_t>(wi) ? 1 : 0;
  for (const auto& [rc, rk] : recv[wi]) n += rc == c ? 1 : 0;
  return n;
}

// Phase 2 and after for one connector's remaining pool items.
void TaskPlacement::place_group(PoolGroup& g) {
  if (g.begin == g.end) return;
  load_counts(g);
  const int64_t ceil = ceil_of(g.conn);
  fill_by_capacity(g, ceil);
  while (g.begin < g.end && augment(g, ceil)) {
  }
  place_fallback(g);
  clear_counts(g);
}

// Phase 2: the workers with the most capacity left first, skipping those at
// ceil(n / W) of the connector; member-id order within a bucket. Changes:
// buckets, recv, count / touched, and give()'s state.
void TaskPlacement::fill_by_capacity(PoolGroup& g, int64_t ceil) {
  bool restart = true;
  while (restart && g.begin < g.end) {
    restart = false;
    while (top > 0 && head[static_cast<size_t>(top)] == bucket[static_cast<size_t>(top)].size()) --top;
    for (int64_t b = top; b > 0 && g.begin < g.end && !restart; --b) {
      auto& bk = bucket[static_cast<size_t>(b)];
      auto& hd = head[static_cast<size_t>(b)];
      for (size_t k = hd; k < bk.size() && g.begin < g.end; ++k) {
        const auto wi = static_cast<size_t>(bk[k]);
        if (cap(wi) != b) {
          if (k == hd) ++hd;  // stale at the front: drop it
          continue;
        }
        if (count[wi] >= ceil) continue;
        recv[wi].emplace_back(g.conn, sorted_pool[g.begin]);
        give(wi, sorted_pool[g.begin++]);
        if (count[wi]++ == 0) touched.push_back(static_cast<int32_t>(wi));
        if (k == hd) ++hd;
        if (extras_gone) {
          rebuild();
          restart = true;
          break;
        }
        if (b > 1) bucket[static_cast<size_t>(b - 1)].push_back(static_cast<int32_t>(wi));
      }
    }
  }
}

// Fallback: fewest of this connector, then fewest in total, then member id.
void TaskPlacement::place_fallback(PoolGroup& g) {
  while (g.begin < g.end) {
    size_t best = W;
    for (size_t wi = 0; wi < W; ++wi) {
      if (cap(wi) <= 0) continue;
      if (best == W || std::tie(count[wi], total[wi]) < std::tie(count[best], total[best])) best = wi;
    }
    if (best == W) break;  // cannot happen: capacities sum to the pool
    recv[best].emplace_back(g.conn, sorted_pool[g.begin]);
    give(best, sorted_pool[g.begin++]);
    if (count[best]++ == 0) touched.push_back(static_cast<int32_t>(best));
    if (extras_gone) rebuild();
    else if (cap(best) > 0) bucket[static_cast<size_t>(cap(best))].push_back(static_cast<int32_t>(best));
  }
}

// When no worker with capacity may take a task of g's connector: an
// augmenting path places one (see find_augmenting_path). Returns false when
// there is none.
bool TaskPlacement::augment(PoolGroup& g, int64_t ceil) {
  std::vector<int32_t> prev(W, -2), via(W, 0);
  const int32_t end = find_augmenting_path(g.conn, ceil, prev, via);
  if (end < 0) return false;
  shift_along_path(g, end, prev, via);
  return true;
}

// Breadth-first search for an augmenting path: a worker w0 that may take a
// task of connector c (below `ceil` of it, but full) hands one of its
// phase-2 tasks to a worker that may take that one, and so on until a worker
// with capacity. In a round that revokes for balance, a worker may also hand
// over a task it runs of a connector it holds above floor(n / W) of: that
// task is revoked now and planned for the other worker (it is placed next
// round). Member-id order, phase-2 tasks before running ones. Sets: prev
// (the worker each was reached from; -1 = start, -2 = unreached) and via
// (index into recv[prev], or -1 - index into `hold` for a running task).
// Returns the worker with capacity that ends the path, or -1.
int32_t TaskPlacement::find_augmenting_path(int32_t c, int64_t ceil, std::vector<int32_t>& prev,
                                            std::vector<int32_t>& via) {
  std::vector<int32_t> queue;
  for (size_t wi = 0; wi < W; ++wi)
    if (count[wi] < ceil) {
      prev[wi] = -1;
      queue.push_back(static_cast<int32_t>(wi));
    }
  int32_t end = -1;
  // Tries to hand a task of c2 from w to somebody; `tag` encodes the edge.
  auto try_edges = [&](size_t w, int32_t c2, int32_t tag) {
    const int64_t ceil2 = ceil_of(c2);
    for (size_t w2 = 0; w2 < W; ++w2) {
      if (prev[w2] != -2) continue;
      const int64_t n2 = c2 == c ? count[w2] : count_of(w2, c2);
      if (n2 >= ceil2) continue;
      prev[w2] = static_cast<int32_t>(w);
      via[w2] = tag;
      if (cap(w2) > 0) {
        end = static_cast<int32_t>(w2);
        return;
      }
      queue.push_back(static_cast<int32_t>(w2));
    }
  };
  for (size_t qi = 0; qi < queue.size() && end < 0; ++qi) {
    const auto w = static_cast<size_t>(queue[qi]);
    for (size_t j = 0; j < recv[w].size() && end < 0; ++j) try_edges(w, recv[w][j].first, static_cast<int32_t>(j));
    if (!revoking_round) continue;
    const auto& nt = workers[w].next_tasks;
    for (size_t i = 0; i < nt.size() && end < 0;) {
      const int32_t c2 = u.conn_of(nt[i]);
      size_t j = i + 1;
      while (j < nt.size() && u.conn_of(nt[j]) == c2) ++j;
      i = j;
      if (c2 == c) continue;
      const auto hb = hold.begin() + hold_off[static_cast<size_t>(c2)];
      const auto he = hold.begin() + hold_off[static_cast<size_t>(c2) + 1];
      auto it = std::lower_bound(hb, he, static_cast<int32_t>(w), [](const Hold& h, int32_t x) { return h.worker < x; });
      if (it == he || it->worker != static_cast<int32_t>(w) || it->count == 0) continue;
      if (count_of(w, c2) - 1 < cfg_n[static_cast<size_t>(c2)] / static_cast<int64_t>(W)) continue;
      try_edges(w, c2, -1 - static_cast<int32_t>(it - hold.begin()));
    }
  }
  return end;
}

// Moves a planned task from one worker's placed_tasks to another's.
void TaskPlacement::hand(size_t from, size_t to, Slot sl) {
  if (!is_real(sl)) return;
  auto& pf = workers[from].placed_tasks;
  pf.erase(std::find(pf.begin(), pf.end(), sl));
  workers[to].placed_tasks.push_back(sl);
}

// Carries an augmenting path out: the last worker pays with its capacity,
// everyone else swaps one for one, and w0 takes g's next task. A running
// task on the path is revoked (extra_revoked) and planned in flight.
// Changes: placed_tasks, recv, total, count / touched, hold counts,
// in_flight, extra_revoked, and give()'s state.
void TaskPlacement::shift_along_path(PoolGroup& g, int32_t end, const std::vector<int32_t>& prev,
                                     const std::vector<int32_t>& via) {
  const int32_t c = g.conn;
  const Slot item_c = sorted_pool[g.begin++];
  give(static_cast<size_t>(end), item_c);  // accounting; the task itself moves below
  if (is_real(item_c)) workers[static_cast<size_t>(end)].placed_tasks.pop_back();
  --total[static_cast<size_t>(end)];
  auto cur = static_cast<size_t>(end);
  while (prev[cur] >= 0) {
    const auto from = static_cast<size_t>(prev[cur]);
    std::pair<int32_t, Slot> item;
    if (via[cur] >= 0) {
      const auto j = static_cast<size_t>(via[cur]);
      item = recv[from][j];
      recv[from].erase(recv[from].begin() + static_cast<std::ptrdiff_t>(j));
      hand(from, cur, item.second);
      // A running task planned by an earlier path moves on with it.
      for (auto& m : moved_running)
        if (m == std::pair<int32_t, int32_t>{static_cast<int32_t>(from), item.first}) {
          m.first = static_cast<int32_t>(cur);
          break;
        }
    } else {
      // A running task: revoke it now, plan it for `cur`.
      auto& hd = hold[static_cast<size_t>(-1 - via[cur])];
      const Slot sl = workers[from].next_tasks[static_cast<size_t>(hd.begin + --hd.count)];
      extra_revoked.emplace_back(from, sl);
      if (in_flight.empty()) in_flight.assign(S, 0);
      in_flight[static_cast<size_t>(sl)] = 1;
      item = {u.conn_of(sl), sl};
      if (item.first != c) moved_running.emplace_back(static_cast<int32_t>(cur), item.first);
    }
    recv[cur].push_back(item);
    ++total[cur];
    --total[from];
    if (item.first == c) {
      --count[from];
      if (count[cur]++ == 0) touched.push_back(static_cast<int32_t>(cur));
    }
    cur = from;
  }
  // cur is w0: it takes the task of c.
  if (is_real(item_c)) workers[cur].placed_tasks.push_back(item_c);
  ++total[cur];
  recv[cur].emplace_back(c, item_c);
  if (count[cur]++ == 0) touched.push_back(static_cast<int32_t>(cur));
  if (extras_gone) rebuild();
}

// Running tasks that augmenting paths revoked: they count as this round's
// load-balancing revocations (for the backoff). A given-back task
// (deviation 8) runs nowhere yet, so it goes to the worker the path planned
// it for in this round instead. Changes: workers' revoked_tasks /
// next_tasks / placed_tasks, next.revoked_in_previous.
void TaskPlacement::revoke_augmented() {
  if (extra_revoked.empty()) return;
  std::vector<uint8_t> gone(S, 0);
  for (const auto& [wi, sl] : extra_revoked) {
    gone[static_cast<size_t>(sl)] = 1;
    if (!round.returned_task.empty() && round.returned_task[static_cast<size_t>(sl)]) {
      for (size_t to = 0; to < W; ++to)
        if (std::any_of(recv[to].begin(), recv[to].end(), [&](const auto& r) { return r.second == sl; })) {
          workers[to].placed_tasks.push_back(sl);
          break;
        }
      continue;
    }
    next.revoked_in_previous = true;
    workers[wi].revoked_tasks.push_back(sl);
  }
  for (auto& w : workers)
    w.next_tasks.erase(std::remove_if(w.next_tasks.begin(), w.next_tasks.end(),
                                      [&](Slot sl) { return gone[static_cast<size_t>(sl)] != 0; }),
                       w.next_tasks.end());
}

}  // namespace kc::assignor::detail
