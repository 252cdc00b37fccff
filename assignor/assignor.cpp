// Implementation of the eager and incremental cooperative assignors.
//
// Internally every connector name gets a dense index (names sorted, so index
// order is name order) and every task a dense "slot" (slots of one connector
// are contiguous and in task-number order, so slot order is the reference's
// (connector, task) order). Sets become flag arrays, and every step below is a
// linear pass or a sort of one worker's items: no repeated scans of the group.
#include "assignor/assignor.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <set>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <unordered_map>

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

namespace {

using Slot = int32_t;

int16_t version_for(connect::ConnectProtocol p) {
  switch (p) {
    case connect::ConnectProtocol::Eager: return 1;  // incremental never writes V0
    case connect::ConnectProtocol::Compatible: return 1;
    case connect::ConnectProtocol::Sessioned: return 2;
  }
  return 1;
}

std::string leader_url_of(const std::vector<MemberReport>& members, const RoundContext& ctx) {
  if (!ctx.leader_url.empty()) return ctx.leader_url;
  for (const auto& m : members)
    if (m.member_id == ctx.leader_id) return m.url;
  return {};
}

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

// Dense numbering of every connector name and task id the round mentions.
class Universe {
  struct Entry {
    int64_t span = 0;
    int32_t index = -1;
  };

 public:
  /// Opaque reference to a noted connector, valid for the Universe's life.
  using Handle = const Entry*;
  Handle note_connector(std::string_view name) { return &entry(name); }
  Handle note_task(const ConnectorTaskId& t) {
    auto& e = entry(t.connector);
    if (t.task >= 0) e.span = std::max<int64_t>(e.span, int64_t{t.task} + 1);
    return &e;
  }
  int32_t conn(Handle h) const { return h->index; }
  void reserve(size_t n) { map_.reserve(n); }
  Slot slot(Handle h, int32_t task) const {
    return task < 0 ? -1 : static_cast<Slot>(base_[static_cast<size_t>(h->index)] + task);
  }
  void note_configured(std::string_view name, int32_t count) {
    auto& e = entry(name);
    e.span = std::max<int64_t>(e.span, std::max(count, 0));
  }

  // Freezes the numbering: names sorted, slots laid out.
  void build() {
    names_.reserve(map_.size());
    for (auto& [name, e] : map_) names_.push_back(name);
    std::sort(names_.begin(), names_.end());
    base_.assign(names_.size() + 1, 0);
    for (size_t i = 0; i < names_.size(); ++i) {
      auto& e = map_.find(names_[i])->second;
      e.index = static_cast<int32_t>(i);
      base_[i + 1] = base_[i] + e.span;
    }
    if (base_.back() > (int64_t{1} << 31) - 1) throw std::length_error("assignor: too many task slots");
    slot_conn_.resize(static_cast<size_t>(base_.back()));
    for (size_t i = 0; i < names_.size(); ++i)
      std::fill(slot_conn_.begin() + base_[i], slot_conn_.begin() + base_[i + 1], static_cast<int32_t>(i));
    last_name_ = {};
  }

  int32_t connectors() const { return static_cast<int32_t>(names_.size()); }
  Slot slots() const { return static_cast<Slot>(base_.back()); }
  int32_t conn(std::string_view name) const { return lookup(name); }
  // -1 for a negative task number (never valid).
  Slot slot(const ConnectorTaskId& t) const {
    if (t.task < 0) return -1;
    return static_cast<Slot>(base_[static_cast<size_t>(lookup(t.connector))] + t.task);
  }
  Slot first_slot(int32_t c) const { return static_cast<Slot>(base_[static_cast<size_t>(c)]); }
  int32_t conn_of(Slot s) const { return slot_conn_[static_cast<size_t>(s)]; }
  const std::string_view& name(int32_t c) const { return names_[static_cast<size_t>(c)]; }
  ConnectorTaskId task_id(Slot s) const {
    const int32_t c = conn_of(s);
    return ConnectorTaskId{std::string(name(c)), static_cast<int32_t>(s - base_[static_cast<size_t>(c)])};
  }

 private:
  // Consecutive lookups are usually for the same connector (tasks come
  // grouped), so the last hit is cached before the hash lookup.
  Entry& entry(std::string_view name) {
    if (last_entry_ != nullptr && name == last_name_) return *last_entry_;
    auto [it, inserted] = map_.try_emplace(name);
    last_name_ = it->first;
    last_entry_ = &it->second;
    return it->second;
  }
  int32_t lookup(std::string_view name) const {
    if (last_lookup_ != nullptr && name == last_lookup_name_) return last_lookup_->index;
    const auto& e = map_.find(name)->second;
    last_lookup_name_ = name;
    last_lookup_ = &e;
    return e.index;
  }

  std::unordered_map<std::string_view, Entry> map_;
  std::string_view last_name_;
  Entry* last_entry_ = nullptr;
  mutable std::string_view last_lookup_name_;
  mutable const Entry* last_lookup_ = nullptr;
  std::vector<std::string_view> names_;
  std::vector<int64_t> base_;
  std::vector<int32_t> slot_conn_;
};

enum : uint8_t { kConfigured = 1, kPrevious = 2, kPrevRevoked = 4 };

// Per item (connector or task slot): flags, how many members report it
// (saturating at 2) and the first member that does.
struct ItemTable {
  std::vector<uint8_t> flags;
  std::vector<uint8_t> holders;
  std::vector<int32_t> stamp;  // last member that reported it (per-member de-duplication)

  void resize(size_t n) {
    flags.assign(n, 0);
    holders.assign(n, 0);
    stamp.assign(n, -1);
  }
  bool configured(size_t i) const { return flags[i] & kConfigured; }
  bool previous(size_t i) const { return flags[i] & kPrevious; }
  bool active(size_t i) const { return holders[i] > 0; }
  bool lost(size_t i) const { return previous(i) && configured(i) && !active(i); }
  bool created(size_t i) const { return configured(i) && !previous(i) && !active(i); }
};

struct Worker {
  int32_t input_index = 0;               // position in the members vector
  std::vector<int32_t> cur_conns;        // reported, de-duplicated
  std::vector<Slot> cur_tasks;
  std::vector<int32_t> next_conns;       // cur minus revoked, plus placed
  std::vector<Slot> next_tasks;
  std::vector<int32_t> revoked_conns;
  std::vector<Slot> revoked_tasks;
  std::vector<int32_t> placed_conns;
  std::vector<Slot> placed_tasks;
};

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
// workers sorted by (load, member order), and each pass gives one item to every
// worker of the lowest level. Returns how many items each worker receives.
std::vector<int64_t> water_fill_quota(const std::vector<int64_t>& load, int64_t items,
                                      std::vector<int32_t>* order_out) {
  std::vector<int32_t> order(load.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return load[a] < load[b]; });
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

}  // namespace

AssignmentResult IncrementalCooperativeAssignor::assign(const LeaderState& state,
                                                        const std::vector<MemberReport>& members,
                                                        const ConfigSnapshot& config,
                                                        const RoundContext& ctx) const {
  const int16_t version = version_for(ctx.protocol);
  const int64_t max_offset = max_config_offset(members);
  if (config.offset < max_offset) return config_mismatch(state, members, ctx, version, max_offset);

  // Members in member-id order: every tie below is broken by this order.
  std::vector<int32_t> by_id(members.size());
  std::iota(by_id.begin(), by_id.end(), 0);
  std::sort(by_id.begin(), by_id.end(),
            [&](int32_t a, int32_t b) { return members[a].member_id < members[b].member_id; });
  const size_t W = members.size();

  // 1. Number everything the round mentions.
  Universe u;
  u.reserve(config.connectors.size() + 16);
  for (const auto& [name, count] : config.connectors) u.note_configured(name, count);
  // Handles of every reported item, so each name is hashed once.
  std::vector<std::vector<Universe::Handle>> conn_handles(members.size()), task_handles(members.size());
  for (size_t i = 0; i < members.size(); ++i) {
    const auto& m = members[i];
    conn_handles[i].reserve(m.owned.connectors.size());
    for (const auto& c : m.owned.connectors) conn_handles[i].push_back(u.note_connector(c));
    task_handles[i].reserve(m.owned.tasks.size());
    for (const auto& t : m.owned.tasks) task_handles[i].push_back(u.note_task(t));
  }
  for (const auto* set : {&state.previous_assignment, &state.previous_revocation}) {
    for (const auto& c : set->connectors) u.note_connector(c);
    for (const auto& t : set->tasks) u.note_task(t);
  }
  u.build();
  const size_t C = static_cast<size_t>(u.connectors());
  const size_t S = static_cast<size_t>(u.slots());

  ItemTable conns, tasks;
  conns.resize(C);
  tasks.resize(S);

  // 2. configured.
  int64_t configured_conns = 0, configured_tasks = 0;
  for (const auto& [name, count] : config.connectors) {
    const int32_t c = u.conn(name);
    conns.flags[static_cast<size_t>(c)] |= kConfigured;
    ++configured_conns;
    const Slot first = u.first_slot(c);
    for (int32_t t = 0; t < count; ++t) tasks.flags[static_cast<size_t>(first + t)] |= kConfigured;
    configured_tasks += std::max(count, 0);
  }

  // 3. active, per member de-duplicated.
  std::vector<Worker> workers(W);
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

  // Generation guard (3.3 step 1): the previous assignment only counts if this
  // leader's last round completed.
  if (state.previous_generation == ctx.last_completed_generation) {
    for (const auto& c : state.previous_assignment.connectors) conns.flags[static_cast<size_t>(u.conn(c))] |= kPrevious;
    for (const auto& t : state.previous_assignment.tasks) {
      const Slot s = u.slot(t);
      if (s >= 0) tasks.flags[static_cast<size_t>(s)] |= kPrevious;
    }
  }
  // 4. Failed-revocation check: something revoked last round still runs, so
  // the previous assignment is rebuilt from what runs now.
  bool failed_revocation = false;
  for (const auto& c : state.previous_revocation.connectors)
    failed_revocation |= conns.active(static_cast<size_t>(u.conn(c)));
  for (const auto& t : state.previous_revocation.tasks) {
    const Slot s = u.slot(t);
    if (s >= 0) failed_revocation |= tasks.active(static_cast<size_t>(s));
  }
  if (failed_revocation) {
    for (size_t c = 0; c < C; ++c)
      conns.flags[c] = static_cast<uint8_t>((conns.flags[c] & ~kPrevious) | (conns.active(c) ? kPrevious : 0));
    for (size_t s = 0; s < S; ++s)
      tasks.flags[s] = static_cast<uint8_t>((tasks.flags[s] & ~kPrevious) | (tasks.active(s) ? kPrevious : 0));
  }

  // 5-11. deleted / duplicated / lost / created, revocations of deleted and
  // duplicated work, next loads. Deviation: any reported item that is not
  // configured is revoked, not only those in `previous - configured`, so a new
  // leader stops deleted work at once.
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
  bool any_lost = false;
  for (size_t c = 0; c < C && !any_lost; ++c) any_lost = conns.lost(c);
  for (size_t s = 0; s < S && !any_lost; ++s) any_lost = tasks.lost(s);

  // 12. Lost assignments and the scheduled rebalance delay (3.4).
  LeaderState next;
  next.scheduled_rebalance_ms = state.scheduled_rebalance_ms;
  next.candidate_workers = state.candidate_workers;
  next.revoked_in_previous = state.revoked_in_previous;
  next.num_successive_revoking_rebalances = state.num_successive_revoking_rebalances;
  int32_t delay = state.delay_ms;
  bool release_lost = false;
  auto reset_delay = [&] {
    delay = 0;
    next.scheduled_rebalance_ms = 0;
    next.candidate_workers.clear();
  };
  std::vector<std::string> member_ids;
  member_ids.reserve(W);
  for (int32_t i : by_id) member_ids.push_back(members[static_cast<size_t>(i)].member_id);
  auto is_member = [&](const std::string& id) { return std::binary_search(member_ids.begin(), member_ids.end(), id); };

  if (!any_lost && !next.revoked_in_previous) {
    reset_delay();
  } else if (next.scheduled_rebalance_ms <= 0 &&
             std::all_of(state.previous_members.begin(), state.previous_members.end(), is_member)) {
    // Nobody left: the missing work was most likely never delivered.
    release_lost = true;
  } else if (max_delay_ms_ == 0) {
    release_lost = true;
  } else if (next.scheduled_rebalance_ms > 0 && ctx.now_ms >= next.scheduled_rebalance_ms) {
    // Delay expired. Deviation: lost work is placed like new work over the
    // least-loaded workers; the candidates are empty workers, so they come
    // first, but nobody ends above the balanced share.
    release_lost = true;
    reset_delay();
    next.revoked_in_previous = false;
  } else {
    for (size_t wi = 0; wi < W; ++wi) {
      if (!workers[wi].next_conns.empty() || !workers[wi].next_tasks.empty()) continue;
      const auto& id = member_ids[wi];
      if (std::find(next.candidate_workers.begin(), next.candidate_workers.end(), id) == next.candidate_workers.end())
        next.candidate_workers.push_back(id);
    }
    if (next.scheduled_rebalance_ms > 0) {
      const int64_t remaining = next.scheduled_rebalance_ms - ctx.now_ms;
      delay = static_cast<int32_t>(std::clamp<int64_t>(remaining, 0, max_delay_ms_));
    } else {
      delay = max_delay_ms_;
    }
    next.scheduled_rebalance_ms = ctx.now_ms + delay;
  }

  // 13. Load-balancing revocations, only when no delay is pending (3.5).
  if (delay != 0) {
    next.revoked_in_previous = false;
  } else {
    std::vector<int64_t> conn_load(W), task_load(W);
    bool all_empty = true;
    for (size_t wi = 0; wi < W; ++wi) {
      conn_load[wi] = static_cast<int64_t>(workers[wi].next_conns.size());
      task_load[wi] = static_cast<int64_t>(workers[wi].next_tasks.size());
      all_empty = all_empty && conn_load[wi] == 0 && task_load[wi] == 0;
    }
    std::vector<int64_t> conn_excess(W, 0), task_excess(W, 0);
    if (!all_empty) {
      conn_excess = excess_per_worker(conn_load, configured_conns);
      task_excess = excess_per_worker(task_load, configured_tasks);
    }
    const bool any_revocation =
        std::any_of(conn_excess.begin(), conn_excess.end(), [](int64_t e) { return e > 0; }) ||
        std::any_of(task_excess.begin(), task_excess.end(), [](int64_t e) { return e > 0; });
    bool apply = false;
    if (any_revocation && !next.revoked_in_previous) {
      apply = true;
      next.revoked_in_previous = true;
    } else if (any_revocation) {
      // Successive revoking round (KAFKA-12495): back off instead.
      ++next.num_successive_revoking_rebalances;
      delay = successive_revocation_backoff_ms(next.num_successive_revoking_rebalances, max_delay_ms_);
      if (delay != 0) next.scheduled_rebalance_ms = ctx.now_ms + delay;
      else apply = true;
    } else if (next.revoked_in_previous) {
      next.revoked_in_previous = false;
      next.num_successive_revoking_rebalances = 0;
    }
    if (apply) {
      // Connectors: the highest names go first (a deterministic choice).
      for (size_t wi = 0; wi < W; ++wi) {
        auto& w = workers[wi];
        if (conn_excess[wi] <= 0) continue;
        std::sort(w.next_conns.begin(), w.next_conns.end());
        for (int64_t k = 0; k < conn_excess[wi]; ++k) {
          w.revoked_conns.push_back(w.next_conns.back());
          w.next_conns.pop_back();
        }
      }
      // Tasks: from the connector this worker holds most of; ties go to the
      // connector with the most tasks held in the whole group, then by name.
      // This keeps each connector spread evenly (KAFKA-17049).
      std::vector<int32_t> held(C, 0);
      for (const auto& w : workers)
        for (Slot s : w.next_tasks) ++held[static_cast<size_t>(u.conn_of(s))];
      std::vector<int32_t> revoke_order;
      for (size_t wi = 0; wi < W; ++wi)
        if (task_excess[wi] > 0) revoke_order.push_back(static_cast<int32_t>(wi));
      std::stable_sort(revoke_order.begin(), revoke_order.end(),
                       [&](int32_t a, int32_t b) { return task_load[a] > task_load[b]; });
      for (int32_t wi : revoke_order) {
        auto& w = workers[static_cast<size_t>(wi)];
        std::sort(w.next_tasks.begin(), w.next_tasks.end());
        // Groups of this worker's tasks by connector: [begin, end) in next_tasks.
        struct Group {
          int32_t conn;
          size_t begin, end;
        };
        std::vector<Group> groups;
        for (size_t i = 0; i < w.next_tasks.size();) {
          size_t j = i;
          const int32_t c = u.conn_of(w.next_tasks[i]);
          while (j < w.next_tasks.size() && u.conn_of(w.next_tasks[j]) == c) ++j;
          groups.push_back({c, i, j});
          i = j;
        }
        // Key: (-count on this worker, -held in group, connector index).
        std::set<std::tuple<int64_t, int64_t, int32_t, size_t>> pq;
        for (size_t g = 0; g < groups.size(); ++g) {
          const auto& gr = groups[g];
          pq.emplace(-static_cast<int64_t>(gr.end - gr.begin), -held[static_cast<size_t>(gr.conn)], gr.conn, g);
        }
        std::vector<uint8_t> drop(w.next_tasks.size(), 0);
        for (int64_t k = 0; k < task_excess[static_cast<size_t>(wi)] && !pq.empty(); ++k) {
          auto top = *pq.begin();
          pq.erase(pq.begin());
          auto& gr = groups[std::get<3>(top)];
          --gr.end;  // the highest task number of that connector
          drop[gr.end] = 1;
          w.revoked_tasks.push_back(w.next_tasks[gr.end]);
          --held[static_cast<size_t>(gr.conn)];
          if (gr.end > gr.begin)
            pq.emplace(-static_cast<int64_t>(gr.end - gr.begin), -held[static_cast<size_t>(gr.conn)], gr.conn,
                       std::get<3>(top));
        }
        size_t out = 0;
        for (size_t i = 0; i < w.next_tasks.size(); ++i)
          if (!drop[i]) w.next_tasks[out++] = w.next_tasks[i];
        w.next_tasks.resize(out);
      }
    }
  }

  // 14. toAssign = created, then released lost work (each sorted).
  std::vector<int32_t> pool_conns;
  std::vector<Slot> pool_tasks;
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

  if (W > 0 && !pool_conns.empty()) {
    // Connectors: Connect's water-filling, dealt in pool order.
    std::vector<int64_t> load(W);
    for (size_t wi = 0; wi < W; ++wi) load[wi] = static_cast<int64_t>(workers[wi].next_conns.size());
    std::vector<int32_t> order;
    auto quota = water_fill_quota(load, static_cast<int64_t>(pool_conns.size()), &order);
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

  if (W > 0 && !pool_tasks.empty()) {
    // Tasks: the per-worker counts come from Connect's water-filling; which
    // task goes where prefers the workers holding the fewest tasks of that
    // connector, round-robin from the least loaded. Deviation: Connect deals
    // tasks in order and can pile one connector's tasks onto one worker.
    std::vector<int64_t> load(W);
    for (size_t wi = 0; wi < W; ++wi) load[wi] = static_cast<int64_t>(workers[wi].next_tasks.size());
    // Final level L: the highest with sum(max(0, L - load)) <= pool. Every
    // worker below L is filled to L ("base" quota); the E items left over go
    // one each to workers at L, whichever the connector preference picks.
    std::vector<int32_t> order(W);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int32_t a, int32_t b) { return load[a] < load[b]; });
    int64_t level = load[static_cast<size_t>(order[0])], left = static_cast<int64_t>(pool_tasks.size());
    {
      size_t below = 0;  // workers with load <= level
      while (true) {
        while (below < W && load[static_cast<size_t>(order[below])] <= level) ++below;
        const int64_t next_level = below < W ? load[static_cast<size_t>(order[below])] : INT64_MAX;
        // Raise all `below` workers from level toward next_level.
        const int64_t can = next_level == INT64_MAX ? left / static_cast<int64_t>(below)
                                                    : std::min(next_level - level, left / static_cast<int64_t>(below));
        level += can;
        left -= can * static_cast<int64_t>(below);
        if (next_level == INT64_MAX || level < next_level) break;
      }
    }
    std::vector<int64_t> quota(W, 0);
    std::vector<uint8_t> eligible(W, 0);  // may take one extra item
    for (size_t wi = 0; wi < W; ++wi) {
      quota[wi] = std::max<int64_t>(0, level - load[wi]);
      eligible[wi] = load[wi] <= level ? 1 : 0;
    }
    int64_t extras = left;
    auto capacity = [&](int32_t wi) {
      return quota[static_cast<size_t>(wi)] > 0 || (extras > 0 && eligible[static_cast<size_t>(wi)]);
    };
    // Circular doubly linked list of workers with capacity, in `order`.
    std::vector<int32_t> ring;
    for (int32_t wi : order)
      if (capacity(wi)) ring.push_back(wi);
    const size_t R = ring.size();
    std::vector<size_t> nxt(R), prv(R);
    for (size_t i = 0; i < R; ++i) {
      nxt[i] = (i + 1) % R;
      prv[i] = (i + R - 1) % R;
    }
    std::vector<uint8_t> in_ring(R, 1);
    size_t ring_size = R;
    size_t cursor = 0;
    auto unlink = [&](size_t at) {
      in_ring[at] = 0;
      --ring_size;
      if (ring_size == 0) return;
      nxt[prv[at]] = nxt[at];
      prv[nxt[at]] = prv[at];
    };
    // Holders of each pooled connector among next loads (count per worker).
    std::vector<uint8_t> pooled(C, 0);
    for (Slot s : pool_tasks) pooled[static_cast<size_t>(u.conn_of(s))] = 1;
    std::vector<std::vector<int32_t>> holders_of(C);
    for (size_t wi = 0; wi < W; ++wi)
      for (Slot s : workers[wi].next_tasks) {
        const auto c = static_cast<size_t>(u.conn_of(s));
        if (pooled[c]) holders_of[c].push_back(static_cast<int32_t>(wi));
      }
    std::vector<int64_t> count(W, 0);
    // Slots of one connector are contiguous, so sorting groups by connector.
    std::vector<Slot> sorted_pool = pool_tasks;
    if (release_lost) std::sort(sorted_pool.begin(), sorted_pool.end());
    for (size_t i = 0; i < sorted_pool.size();) {
      const int32_t c = u.conn_of(sorted_pool[i]);
      size_t j = i;
      while (j < sorted_pool.size() && u.conn_of(sorted_pool[j]) == c) ++j;
      for (int32_t h : holders_of[static_cast<size_t>(c)]) ++count[static_cast<size_t>(h)];
      std::vector<int32_t> touched;
      int64_t want = 0;  // the connector count we look for; raised after a full lap
      for (size_t k = i; k < j; ++k) {
        // Walk the ring from the cursor to the first worker holding at most
        // `want` tasks of this connector.
        size_t steps = 0;
        while (count[static_cast<size_t>(ring[cursor])] > want) {
          cursor = nxt[cursor];
          if (++steps >= ring_size) {
            ++want;
            steps = 0;
          }
        }
        const int32_t wi = ring[cursor];
        workers[static_cast<size_t>(wi)].placed_tasks.push_back(sorted_pool[k]);
        if (count[static_cast<size_t>(wi)]++ == 0) touched.push_back(wi);
        const size_t here = cursor;
        cursor = nxt[cursor];
        if (quota[static_cast<size_t>(wi)] > 0) {
          --quota[static_cast<size_t>(wi)];
        } else {
          eligible[static_cast<size_t>(wi)] = 0;
          if (--extras == 0) {
            // No extra slots left: drop every worker that only had one.
            for (size_t r = 0; r < R; ++r)
              if (in_ring[r] && r != here && !capacity(ring[r])) {
                if (cursor == r) cursor = nxt[r];
                unlink(r);
              }
          }
        }
        if (!capacity(wi)) unlink(here);
      }
      for (int32_t h : holders_of[static_cast<size_t>(c)]) count[static_cast<size_t>(h)] = 0;
      for (int32_t t : touched) count[static_cast<size_t>(t)] = 0;
      i = j;
    }
  }

  // 15-17. Increments, state, output.
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
  for (size_t s = 0; s < S; ++s) {
    if (tasks.lost(s)) prev_task[s] = 1;
    if (rev_task[s]) prev_task[s] = 0;
    if (prev_task[s]) next.previous_assignment.tasks.push_back(u.task_id(static_cast<Slot>(s)));
    if (rev_task[s]) next.previous_revocation.tasks.push_back(u.task_id(static_cast<Slot>(s)));
  }
  next.previous_generation = ctx.generation;
  next.previous_members = member_ids;
  next.delay_ms = delay;

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
    for (int32_t c : w.placed_conns) a.connectors.emplace_back(u.name(c));
    a.tasks.reserve(w.placed_tasks.size());
    for (Slot s : w.placed_tasks) a.tasks.push_back(u.task_id(s));
    for (int32_t c : w.revoked_conns) a.revoked_connectors.emplace_back(u.name(c));
    for (Slot s : w.revoked_tasks) a.revoked_tasks.push_back(u.task_id(s));
  }
  out.state = std::move(next);
  return out;
}

AssignmentResult EagerAssignor::assign(const LeaderState& state, const std::vector<MemberReport>& members,
                                       const ConfigSnapshot& config, const RoundContext& ctx) const {
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
