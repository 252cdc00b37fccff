// Implementation of the eager and incremental cooperative assignors.
//
// Internally every connector name gets a dense index (names sorted, so index
// order is name order) and every task a dense "slot" (slots of one connector
// are contiguous and in task-number order, so slot order is the reference's
// (connector, task) order). Sets become flag arrays, and every step below is a
// linear pass or a sort of one worker's items: no repeated scans of the group.
#include "assignor/assignor.h"

#include <algorithm>
#include <iterator>
#include <deque>
#include <cstdint>
#include <numeric>
#include <optional>
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
  void reserve(size_t n) {
    size_t cap = 64;
    while (cap < 2 * n) cap *= 2;
    if (cap > table_.size()) rehash(cap);
  }
  Slot slot(Handle h, int32_t task) const {
    return task < 0 ? -1 : static_cast<Slot>(base_[static_cast<size_t>(h->index)] + task);
  }
  /// Configured connectors must be noted first, in name order (as a
  /// std::map gives them), so that only the few other names need sorting.
  void note_configured(std::string_view name, int32_t count) {
    auto& e = entry(name);
    e.span = std::max<int64_t>(e.span, std::max(count, 0));
    configured_prefix_ = names_.size();
  }

  // Freezes the numbering: names sorted, slots laid out.
  void build() {
    // names_ holds every name once, in first-noted order: a sorted prefix of
    // configured names, then the rest.
    const auto mid = names_.begin() + static_cast<std::ptrdiff_t>(configured_prefix_);
    if (!std::is_sorted(names_.begin(), mid)) std::sort(names_.begin(), mid);
    std::sort(mid, names_.end());
    std::inplace_merge(names_.begin(), mid, names_.end());
    base_.assign(names_.size() + 1, 0);
    for (size_t i = 0; i < names_.size(); ++i) {
      auto& e = *find(names_[i], false);
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
    Entry* e = find(name, true);
    last_name_ = name;
    last_entry_ = e;
    return *e;
  }
  int32_t lookup(std::string_view name) const {
    if (last_lookup_ != nullptr && name == last_lookup_name_) return last_lookup_->index;
    const Entry* e = const_cast<Universe*>(this)->find(name, false);
    last_lookup_name_ = name;
    last_lookup_ = e;
    return e->index;
  }

  // Open addressing (linear probing) over string_views of the callers'
  // strings: one probe into a flat array per lookup instead of a node chase.
  struct Bucket {
    const char* data = nullptr;
    size_t size = 0;
    size_t hash = 0;
    Entry* entry = nullptr;
  };
  Entry* find(std::string_view name, bool insert) {
    if (insert && (used_ + 1) * 2 > table_.size()) rehash(std::max<size_t>(64, table_.size() * 2));
    const size_t h = std::hash<std::string_view>{}(name);
    const size_t mask = table_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Bucket& b = table_[i];
      if (b.entry == nullptr) {
        if (!insert) return nullptr;
        entries_.emplace_back();
        b = Bucket{name.data(), name.size(), h, &entries_.back()};
        ++used_;
        names_.push_back(name);
        return b.entry;
      }
      if (b.hash == h && std::string_view(b.data, b.size) == name) return b.entry;
    }
  }
  void rehash(size_t cap) {
    std::vector<Bucket> old = std::move(table_);
    table_.assign(cap, Bucket{});
    for (const Bucket& b : old) {
      if (b.entry == nullptr) continue;
      for (size_t i = b.hash & (cap - 1);; i = (i + 1) & (cap - 1))
        if (table_[i].entry == nullptr) {
          table_[i] = b;
          break;
        }
    }
  }

  std::vector<Bucket> table_;
  size_t used_ = 0;
  std::deque<Entry> entries_;  // stable addresses (handles)
  std::string_view last_name_;
  Entry* last_entry_ = nullptr;
  mutable std::string_view last_lookup_name_;
  mutable const Entry* last_lookup_ = nullptr;
  std::vector<std::string_view> names_;
  size_t configured_prefix_ = 0;
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

}  // namespace

AssignmentResult IncrementalCooperativeAssignor::assign(const LeaderState& state,
                                                        const std::vector<MemberReport>& members,
                                                        const ConfigSnapshot& config,
                                                        const RoundContext& ctx) const {
  auto split = split_draining(members, ctx, true);
  if (!split) return assign_core(state, members, config, ctx);
  const int16_t version = version_for(ctx.protocol);
  if (config.offset < max_config_offset(members))
    return config_mismatch(state, members, ctx, version, max_config_offset(members));
  return merge_drained(assign_core(state, split->members, config, split->ctx), members, *split, config, ctx,
                       version);
}

AssignmentResult IncrementalCooperativeAssignor::assign_core(const LeaderState& state,
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
  // Handles of the previous assignment's and revocation's tasks too.
  std::vector<Universe::Handle> prev_task_handles, prev_rev_handles;
  prev_task_handles.reserve(state.previous_assignment.tasks.size());
  prev_rev_handles.reserve(state.previous_revocation.tasks.size());
  for (const auto& c : state.previous_assignment.connectors) u.note_connector(c);
  for (const auto& t : state.previous_assignment.tasks) prev_task_handles.push_back(u.note_task(t));
  for (const auto& c : state.previous_revocation.connectors) u.note_connector(c);
  for (const auto& t : state.previous_revocation.tasks) prev_rev_handles.push_back(u.note_task(t));
  u.build();
  const size_t C = static_cast<size_t>(u.connectors());
  const size_t S = static_cast<size_t>(u.slots());

  ItemTable conns, tasks;
  conns.resize(C);
  tasks.resize(S);

  // 2. configured.
  int64_t configured_conns = 0, configured_tasks = 0;
  std::vector<int64_t> cfg_n(C, 0);  // configured task count per connector
  for (const auto& [name, count] : config.connectors) {
    const int32_t c = u.conn(name);
    conns.flags[static_cast<size_t>(c)] |= kConfigured;
    ++configured_conns;
    const Slot first = u.first_slot(c);
    for (int32_t t = 0; t < count; ++t) tasks.flags[static_cast<size_t>(first + t)] |= kConfigured;
    configured_tasks += std::max(count, 0);
    cfg_n[static_cast<size_t>(c)] = std::max(count, 0);
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
    for (size_t k = 0; k < prev_task_handles.size(); ++k) {
      const Slot s = u.slot(prev_task_handles[k], state.previous_assignment.tasks[k].task);
      if (s >= 0) tasks.flags[static_cast<size_t>(s)] |= kPrevious;
    }
  }
  // 4. Failed-revocation check: something revoked last round still runs, so
  // the previous assignment is rebuilt from what runs now.
  bool failed_revocation = false;
  for (const auto& c : state.previous_revocation.connectors)
    failed_revocation |= conns.active(static_cast<size_t>(u.conn(c)));
  for (size_t k = 0; k < prev_rev_handles.size(); ++k) {
    const Slot s = u.slot(prev_rev_handles[k], state.previous_revocation.tasks[k].task);
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
  next.members_before_delay = state.members_before_delay;
  next.revoked_in_previous = state.revoked_in_previous;
  next.num_successive_revoking_rebalances = state.num_successive_revoking_rebalances;
  int32_t delay = state.delay_ms;
  bool release_lost = false;
  // Candidates of a delay that expires now: 2 = arrived since the loss,
  // 1 = was there before (an idle worker), 0 = not a candidate.
  std::vector<uint8_t> returning(W, 0);
  auto reset_delay = [&] {
    delay = 0;
    next.scheduled_rebalance_ms = 0;
    next.candidate_workers.clear();
    next.members_before_delay.clear();
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
    // Delay expired. Lost work is placed like new work over the least-loaded
    // workers, so nobody ends above the balanced share; the candidates (3.4
    // step 4: workers that came back empty during the delay) are the
    // least loaded and also win the ties, so a returning worker gets its
    // whole share back.
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
      // Those that stayed through the loss (the lost ones are gone now).
      next.members_before_delay.clear();
      std::set_intersection(state.previous_members.begin(), state.previous_members.end(), member_ids.begin(),
                            member_ids.end(), std::back_inserter(next.members_before_delay));
    }
    next.scheduled_rebalance_ms = ctx.now_ms + delay;
  }

  // Per-(worker, connector) groups of next_tasks: every worker's next_tasks
  // sorted (so one connector's tasks are contiguous), and for each connector
  // the list of its holders in member-id order (CSR layout: hold_off[c] ..
  // hold_off[c + 1] in `hold`).
  struct Hold {
    int32_t worker;
    int32_t begin;  // first index of the group in the worker's next_tasks
    int32_t count;  // tasks of the connector the worker holds
  };
  std::vector<int32_t> hold_off;
  std::vector<Hold> hold;
  auto build_holders = [&] {
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
  };

  // 13. Load-balancing revocations, only when no delay is pending (3.5).
  bool revoking_round = false;  // this round revokes for balance
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
    // Tasks to revoke per holder entry (parallel to `hold`).
    std::vector<int32_t> hold_rev;
    std::vector<int64_t> load_after = task_load;
    bool spread_revocation = false;
    if (!all_empty) {
      conn_excess = excess_per_worker(conn_load, configured_conns);
      // Per-connector spread is part of balance (deviation, KAFKA-17049):
      // with n tasks of a connector over W workers, nobody keeps more than
      // ceil(n / W), and only n % W workers keep ceil(n / W) when that is
      // above floor(n / W); the others drop to floor(n / W). Those that drop
      // are the most loaded after the connectors handled before (ties: member
      // id), so the drops spread over the workers and the total balancing
      // below has less to take.
      build_holders();
      hold_rev.assign(hold.size(), 0);
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
      // Effective load: what the worker keeps plus what it must still receive
      // to reach floor(n / W) of every connector. Dropping a connector held
      // above floor(n / W) lowers it by one; the total balancing revokes only
      // those, so the next round can fill every deficit and stay balanced.
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
      task_excess = excess_per_worker(effective, configured_tasks);
    }
    const bool any_revocation =
        spread_revocation ||
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
    revoking_round = apply;
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
      // Tasks, per connector (above) and then for the total: the total excess
      // is taken from the connectors the worker holds most of, preferring
      // those where it holds more than floor(n / W) (dropping one of those
      // leaves the connector spread); ties: the connector with the most tasks
      // held in the group, then by index. Highest task numbers go first.
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

  // Augmenting paths in the placement may also revoke running tasks when no
  // delay is pending (the planned spread is then part of this round's
  // load-balancing revocations).
  if (delay == 0) revoking_round = true;
  if (W > 0 && (!pool_tasks.empty() || revoking_round)) {
    // Tasks: the per-worker counts come from Connect's water-filling; which
    // task goes where keeps every connector spread (deviation, KAFKA-17049):
    // with n tasks of a connector over W workers, first every worker with
    // capacity is raised to floor(n / W) of it, then the remaining ones go to
    // the workers with the most capacity left (i.e. the fewest tasks in
    // total), skipping those that already hold ceil(n / W); ties in member-id
    // order. Anything still left goes to the worker with the fewest of that
    // connector, then the fewest in total, then member id.
    //
    // Tasks revoked in this round come back next round; they are planned
    // here as if placed ("in flight": counted, not handed out), so that what
    // is placed now leaves room for them and the next round can complete a
    // balanced, spread assignment.
    std::vector<Slot> planned = pool_tasks;
    std::vector<uint8_t> in_flight;
    for (const auto& w : workers)
      for (Slot s : w.revoked_tasks)
        if (tasks.configured(static_cast<size_t>(s))) {
          if (in_flight.empty()) in_flight.assign(S, 0);
          in_flight[static_cast<size_t>(s)] = 1;
          planned.push_back(s);
        }
    std::vector<int64_t> load(W);
    for (size_t wi = 0; wi < W; ++wi) load[wi] = static_cast<int64_t>(workers[wi].next_tasks.size());
    // Final level L: the highest with sum(max(0, L - load)) <= planned. Every
    // worker below L is filled to L ("base" quota); the E items left over go
    // one each to workers at L.
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
    std::vector<int64_t> quota(W, 0);
    std::vector<uint8_t> eligible(W, 0);  // may take one extra item
    for (size_t wi = 0; wi < W; ++wi) {
      quota[wi] = std::max<int64_t>(0, level - load[wi]);
      eligible[wi] = load[wi] <= level ? 1 : 0;
    }
    int64_t extras = left;
    // The items above the level go to returning candidates first (3.4 step
    // 4), those that arrived since the loss before idle ones, as long as
    // enough of them can take one.
    for (uint8_t rank = 2; rank >= 1; --rank) {
      int64_t eligible_ranked = 0;
      for (size_t wi = 0; wi < W; ++wi) eligible_ranked += (eligible[wi] && returning[wi] >= rank) ? 1 : 0;
      if (eligible_ranked > 0 && eligible_ranked >= extras) {
        for (size_t wi = 0; wi < W; ++wi)
          if (returning[wi] < rank) eligible[wi] = 0;
        break;
      }
    }
    bool extras_gone = false;  // set when the last extra is taken
    auto cap = [&](size_t wi) -> int64_t { return quota[wi] + ((extras > 0 && eligible[wi]) ? 1 : 0); };
    std::vector<int64_t> total(load);  // load + placed so far
    auto is_real = [&](Slot s) { return in_flight.empty() || !in_flight[static_cast<size_t>(s)]; };
    auto give = [&](size_t wi, Slot s) {
      if (is_real(s)) workers[wi].placed_tasks.push_back(s);
      ++total[wi];
      if (quota[wi] > 0) {
        --quota[wi];
      } else {
        eligible[wi] = 0;
        if (--extras == 0) extras_gone = true;
      }
    };

    build_holders();
    std::vector<Slot> sorted_pool = std::move(planned);
    if (release_lost || !in_flight.empty()) std::sort(sorted_pool.begin(), sorted_pool.end());
    struct PoolGroup {
      int32_t conn;
      size_t begin, end;  // remaining items: sorted_pool[begin, end)
      size_t phase1_begin, phase1_end;  // workers given one in phase 1 (in p1)
    };
    std::vector<PoolGroup> groups;
    for (size_t i = 0; i < sorted_pool.size();) {
      const int32_t c = u.conn_of(sorted_pool[i]);
      size_t j = i;
      while (j < sorted_pool.size() && u.conn_of(sorted_pool[j]) == c) ++j;
      groups.push_back({c, i, j, 0, 0});
      i = j;
    }
    std::vector<int64_t> count(W, 0);  // tasks of the current connector per worker
    std::vector<int32_t> p1;           // phase-1 receivers, per group
    auto load_counts = [&](const PoolGroup& g) {
      const auto c = static_cast<size_t>(g.conn);
      for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h)
        count[static_cast<size_t>(hold[static_cast<size_t>(h)].worker)] += hold[static_cast<size_t>(h)].count;
      for (size_t k = g.phase1_begin; k < g.phase1_end; ++k) ++count[static_cast<size_t>(p1[k])];
    };
    std::vector<int32_t> touched;  // phase-2 receivers of the current connector
    auto clear_counts = [&](const PoolGroup& g) {
      const auto c = static_cast<size_t>(g.conn);
      for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h) count[static_cast<size_t>(hold[static_cast<size_t>(h)].worker)] = 0;
      for (size_t k = g.phase1_begin; k < g.phase1_end; ++k) count[static_cast<size_t>(p1[k])] = 0;
      for (int32_t t : touched) count[static_cast<size_t>(t)] = 0;
      touched.clear();
    };
    // Phase 1: everybody (with capacity) up to floor(n / W).
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
    // Phase 2: buckets of workers by capacity left; an entry is stale when
    // the worker's capacity changed since it was queued.
    std::vector<std::vector<int32_t>> bucket;
    std::vector<size_t> head;
    int64_t top = 0;
    auto rebuild = [&] {
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
    };
    rebuild();
    // Phase-2 receipts per worker (connector, task), and
    // which group each connector's pool items form: for the augmenting
    // search below.
    std::vector<std::vector<std::pair<int32_t, Slot>>> recv(W);
    std::vector<int32_t> group_of(C, -1);
    for (size_t gi = 0; gi < groups.size(); ++gi) group_of[static_cast<size_t>(groups[gi].conn)] = static_cast<int32_t>(gi);
    auto ceil_of = [&](int32_t c) {
      const int64_t n = cfg_n[static_cast<size_t>(c)];
      return n / static_cast<int64_t>(W) + (n % static_cast<int64_t>(W) > 0 ? 1 : 0);
    };
    // Tasks of connector c worker wi holds or was given so far (slow path).
    auto count_of = [&](size_t wi, int32_t c) {
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
    };
    // When no worker with capacity may take a task of connector c, look for
    // an augmenting path: a worker w0 that may take it (but is full) hands
    // one of its phase-2 tasks to a worker that may take that one, and so on
    // until a worker with capacity. In a round that revokes for balance, a
    // worker may also hand over a task it runs of a connector it holds above
    // floor(n / W) of: that task is revoked now and planned for the other
    // worker (it is placed next round). Breadth-first, member-id order,
    // phase-2 tasks before running ones.
    std::vector<std::pair<size_t, Slot>> extra_revoked;  // (worker, task) revoked by augmenting paths
    auto augment = [&](PoolGroup& g, int64_t ceil) -> bool {
      const int32_t c = g.conn;
      std::vector<int32_t> prev(W, -2), via(W, 0);
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
      if (end < 0) return false;
      auto hand = [&](size_t from, size_t to, Slot sl) {
        if (!is_real(sl)) return;
        auto& pf = workers[from].placed_tasks;
        pf.erase(std::find(pf.begin(), pf.end(), sl));
        workers[to].placed_tasks.push_back(sl);
      };
      // The last worker pays with its capacity; everyone else swaps one for one.
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
        } else {
          // A running task: revoke it now, plan it for `cur`.
          auto& hd = hold[static_cast<size_t>(-1 - via[cur])];
          const Slot sl = workers[from].next_tasks[static_cast<size_t>(hd.begin + --hd.count)];
          extra_revoked.emplace_back(from, sl);
          if (in_flight.empty()) in_flight.assign(S, 0);
          in_flight[static_cast<size_t>(sl)] = 1;
          item = {u.conn_of(sl), sl};
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
      return true;
    };
    for (auto& g : groups) {
      if (g.begin == g.end) continue;
      load_counts(g);
      const int64_t n = cfg_n[static_cast<size_t>(g.conn)];
      const int64_t ceil = n / static_cast<int64_t>(W) + (n % static_cast<int64_t>(W) > 0 ? 1 : 0);
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
      while (g.begin < g.end && augment(g, ceil)) {
      }
      // Fallback: fewest of this connector, then fewest in total, then id.
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
      clear_counts(g);
    }
    // Running tasks that augmenting paths revoked.
    if (!extra_revoked.empty()) {
      next.revoked_in_previous = true;
      std::vector<uint8_t> gone(S, 0);
      for (const auto& [wi, sl] : extra_revoked) {
        gone[static_cast<size_t>(sl)] = 1;
        workers[wi].revoked_tasks.push_back(sl);
      }
      for (auto& w : workers)
        w.next_tasks.erase(std::remove_if(w.next_tasks.begin(), w.next_tasks.end(),
                                          [&](Slot sl) { return gone[static_cast<size_t>(sl)] != 0; }),
                           w.next_tasks.end());
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
