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

// ------------------------------------------------------------------ one incremental round

// One (worker, connector) group of a worker's next_tasks. For each connector
// its holders are listed in member-id order (CSR layout: hold_off[c] ..
// hold_off[c + 1] in `hold`).
struct Hold {
  int32_t worker;
  int32_t begin;  // first index of the group in the worker's next_tasks
  int32_t count;  // tasks of the connector the worker holds
};

// What the load-balancing step (3.5) would revoke, before the successive-
// revocation backoff decides whether it happens in this round.
struct BalancePlan {
  std::vector<int64_t> conn_excess;  // connectors to revoke, per worker
  std::vector<int64_t> task_excess;  // tasks to revoke for the total, per worker
  std::vector<int32_t> hold_rev;     // tasks to revoke for spread, per `hold` entry
  bool spread_revocation = false;    // some hold_rev entry is above 0
};

// One round of the incremental cooperative assignor (reference 3.3, after
// the config-offset check of 3.2). The fields are the round's working state;
// run() calls the steps in the reference's order, and each step names what it
// reads and what it changes. Steps 5-11 and 15-16 are each one pass over
// flag arrays, so they are grouped as the reference's text groups them.
struct Round {
  Round(const LeaderState& state_in, const std::vector<MemberReport>& members_in, const ConfigSnapshot& config_in,
        const RoundContext& ctx_in, int32_t max_delay_ms_in)
      : state(state_in),
        members(members_in),
        config(config_in),
        ctx(ctx_in),
        max_delay_ms(max_delay_ms_in),
        version(version_for(ctx_in.protocol)),
        W(members_in.size()) {}

  // Inputs (borrowed for the round).
  const LeaderState& state;
  const std::vector<MemberReport>& members;
  const ConfigSnapshot& config;
  const RoundContext& ctx;
  const int32_t max_delay_ms;  // scheduled.rebalance.max.delay.ms
  const int16_t version;       // assignment version written
  const size_t W;              // number of members

  // Members in member-id order: every tie below is broken by this order.
  std::vector<int32_t> by_id;           // worker index -> input index
  std::vector<std::string> member_ids;  // worker index -> member id (sorted)

  // Dense numbering (step 1) and the item sets (steps 2-8).
  Universe u;
  std::vector<std::vector<Universe::Handle>> conn_handles, task_handles;  // per input member
  std::vector<Universe::Handle> prev_task_handles, prev_rev_handles;
  size_t C = 0;  // connectors
  size_t S = 0;  // task slots
  ItemTable conns, tasks;
  int64_t configured_conns = 0, configured_tasks = 0;
  std::vector<int64_t> cfg_n;  // configured task count per connector

  // Per worker (member-id order): current, next, revoked and placed items.
  std::vector<Worker> workers;

  // Lost work and the delay (step 12).
  LeaderState next;
  int32_t delay = 0;
  bool release_lost = false;
  // Candidates of a delay that expires now: 2 = arrived since the loss,
  // 1 = was there before (an idle worker), 0 = not a candidate.
  std::vector<uint8_t> returning;

  // Holders per connector of the next tasks (see Hold).
  std::vector<int32_t> hold_off;
  std::vector<Hold> hold;

  bool revoking_round = false;  // this round revokes for balance (step 13, and placement)
  std::vector<int32_t> pool_conns;  // toAssign (step 14)
  std::vector<Slot> pool_tasks;

  AssignmentResult run();

  void order_members();
  void number_items();
  void mark_configured();
  void collect_active();
  void apply_generation_guard();
  void check_failed_revocation();
  void revoke_deleted_and_duplicated();
  void handle_lost_work();
  void reset_delay();
  void release_at_expiry();
  void hold_lost_for_delay();
  [[nodiscard]] bool is_member(const std::string& id) const;
  void build_holders();
  void revoke_for_balance();
  [[nodiscard]] BalancePlan plan_balance_revocations();
  [[nodiscard]] bool plan_spread_revocations(std::vector<int64_t> load_after, std::vector<int32_t>& hold_rev) const;
  [[nodiscard]] std::vector<int64_t> effective_loads(const std::vector<int32_t>& hold_rev) const;
  [[nodiscard]] bool backoff_allows_revocation(bool any_revocation);
  void revoke_connectors(const std::vector<int64_t>& conn_excess);
  void revoke_tasks(const BalancePlan& plan);
  void collect_to_assign();
  void assign_connectors();
  void assign_tasks();
  void update_leader_state();
  [[nodiscard]] AssignmentResult output();
};

// The steps in the reference's order (3.3 steps 1-17).
AssignmentResult Round::run() {
  order_members();
  number_items();
  mark_configured();
  collect_active();
  apply_generation_guard();
  check_failed_revocation();
  revoke_deleted_and_duplicated();
  handle_lost_work();
  revoke_for_balance();
  collect_to_assign();
  assign_connectors();
  assign_tasks();
  update_leader_state();
  return output();
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
  const bool any_revocation =
      plan.spread_revocation ||
      std::any_of(plan.conn_excess.begin(), plan.conn_excess.end(), [](int64_t e) { return e > 0; }) ||
      std::any_of(plan.task_excess.begin(), plan.task_excess.end(), [](int64_t e) { return e > 0; });
  revoking_round = backoff_allows_revocation(any_revocation);
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

// 3.3 step 14, toAssign: created, then the lost work step 12 released (each
// sorted). Reads: created / lost predicates, release_lost. Sets: pool_conns,
// pool_tasks.
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
    for (int32_t c : w.placed_conns) a.connectors.emplace_back(u.name(c));
    a.tasks.reserve(w.placed_tasks.size());
    for (Slot s : w.placed_tasks) a.tasks.push_back(u.task_id(s));
    for (int32_t c : w.revoked_conns) a.revoked_connectors.emplace_back(u.name(c));
    for (Slot s : w.revoked_tasks) a.revoked_tasks.push_back(u.task_id(s));
  }
  out.state = std::move(next);
  return out;
}

// ------------------------------------------------------------------ task placement

// 3.6 for tasks (Connect's assignTasks), with the per-connector spread
// (deviation, KAFKA-17049). The per-worker counts come from Connect's
// water-filling; which task goes where keeps every connector spread: with n
// tasks of a connector over W workers, first every worker with capacity is
// raised to floor(n / W) of it (phase 1), then the remaining ones go to the
// workers with the most capacity left (i.e. the fewest tasks in total),
// skipping those that already hold ceil(n / W); ties in member-id order
// (phase 2). When none fits, an augmenting path moves tasks planned earlier;
// anything still left goes to the worker with the fewest of that connector,
// then the fewest in total, then member id.
//
// Tasks revoked in this round come back next round; they are planned here as
// if placed ("in flight": counted, not handed out), so that what is placed
// now leaves room for them and the next round can complete a balanced,
// spread assignment.
//
// Borrows the round's working state under the same names; run() once.
struct TaskPlacement {
  // One connector's run of the sorted pool.
  struct PoolGroup {
    int32_t conn;
    size_t begin, end;                // remaining items: sorted_pool[begin, end)
    size_t phase1_begin, phase1_end;  // workers given one in phase 1 (in p1)
  };

  explicit TaskPlacement(Round& r)
      : round(r),
        workers(r.workers),
        u(r.u),
        tasks(r.tasks),
        cfg_n(r.cfg_n),
        hold_off(r.hold_off),
        hold(r.hold),
        next(r.next),
        returning(r.returning),
        pool_tasks(r.pool_tasks),
        W(r.W),
        C(r.C),
        S(r.S),
        revoking_round(r.revoking_round),
        release_lost(r.release_lost) {}

  // The round's state, borrowed.
  Round& round;
  std::vector<Worker>& workers;
  const Universe& u;
  const ItemTable& tasks;
  const std::vector<int64_t>& cfg_n;
  const std::vector<int32_t>& hold_off;
  std::vector<Hold>& hold;
  LeaderState& next;
  const std::vector<uint8_t>& returning;
  const std::vector<Slot>& pool_tasks;
  const size_t W, C, S;
  const bool revoking_round;
  const bool release_lost;

  // Quotas (water-filling counts).
  std::vector<Slot> planned;       // pool plus in-flight tasks
  std::vector<uint8_t> in_flight;  // per slot; empty = none
  std::vector<int64_t> load;       // next task load per worker
  std::vector<int64_t> quota;      // base quota left per worker
  std::vector<uint8_t> eligible;   // may take one extra item
  int64_t extras = 0;              // items above the level, left to hand out
  bool extras_gone = false;        // set when the last extra is taken
  std::vector<int64_t> total;      // load + placed so far

  // The pool by connector.
  std::vector<Slot> sorted_pool;
  std::vector<PoolGroup> groups;
  std::vector<int64_t> count;    // tasks of the current connector per worker
  std::vector<int32_t> p1;       // phase-1 receivers, per group
  std::vector<int32_t> touched;  // phase-2 receivers of the current connector

  // Phase 2: buckets of workers by capacity left; an entry is stale when the
  // worker's capacity changed since it was queued.
  std::vector<std::vector<int32_t>> bucket;
  std::vector<size_t> head;
  int64_t top = 0;
  // Phase-2 receipts per worker (connector, task), and which group each
  // connector's pool items form: for the augmenting search.
  std::vector<std::vector<std::pair<int32_t, Slot>>> recv;
  std::vector<int32_t> group_of;
  std::vector<std::pair<size_t, Slot>> extra_revoked;  // (worker, task) revoked by augmenting paths

  void run();
  void plan_in_flight();
  void compute_quotas();
  void prefer_returning_for_extras();
  void group_pool();
  void raise_to_floor();
  void rebuild();
  void place_group(PoolGroup& g);
  void fill_by_capacity(PoolGroup& g, int64_t ceil);
  void place_fallback(PoolGroup& g);
  bool augment(PoolGroup& g, int64_t ceil);
  int32_t find_augmenting_path(int32_t c, int64_t ceil, std::vector<int32_t>& prev, std::vector<int32_t>& via);
  void shift_along_path(PoolGroup& g, int32_t end, const std::vector<int32_t>& prev, const std::vector<int32_t>& via);
  void revoke_augmented();

  // Capacity left: base quota plus one while extras remain and it is eligible.
  int64_t cap(size_t wi) const { return quota[wi] + ((extras > 0 && eligible[wi]) ? 1 : 0); }
  // False for an in-flight task (planned, not handed out this round).
  bool is_real(Slot s) const { return in_flight.empty() || !in_flight[static_cast<size_t>(s)]; }
  void give(size_t wi, Slot s);
  void hand(size_t from, size_t to, Slot sl);
  void load_counts(const PoolGroup& g);
  void clear_counts(const PoolGroup& g);
  int64_t ceil_of(int32_t c) const;
  int64_t count_of(size_t wi, int32_t c) const;
};

// The placement's phases in order. Changes: workers' placed_tasks (and, for
// augmenting paths through running tasks, next_tasks / revoked_tasks and
// next.revoked_in_previous).
void TaskPlacement::run() {
  plan_in_flight();
  compute_quotas();
  round.build_holders();
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
// workers' next_tasks, planned. Sets: load, quota, eligible, extras, total.
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
  prefer_returning_for_extras();
  total = load;
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

// count[] = tasks of g's connector per worker: held plus given in phase 1.
void TaskPlacement::load_counts(const PoolGroup& g) {
  const auto c = static_cast<size_t>(g.conn);
  for (int32_t h = hold_off[c]; h < hold_off[c + 1]; ++h)
    count[static_cast<size_t>(hold[static_cast<size_t>(h)].worker)] += hold[static_cast<size_t>(h)].count;
  for (size_t k = g.phase1_begin; k < g.phase1_end; ++k) ++count[static_cast<size_t>(p1[k])];
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
  const int64_t n = cfg_n[static_cast<size_t>(g.conn)];
  const int64_t ceil = n / static_cast<int64_t>(W) + (n % static_cast<int64_t>(W) > 0 ? 1 : 0);
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
}

// Running tasks that augmenting paths revoked: they count as this round's
// load-balancing revocations (for the backoff). Changes: workers'
// revoked_tasks / next_tasks, next.revoked_in_previous.
void TaskPlacement::revoke_augmented() {
  if (extra_revoked.empty()) return;
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

// 3.6 for tasks. Augmenting paths in the placement may also revoke running
// tasks when no delay is pending (the planned spread is then part of this
// round's load-balancing revocations). Changes: revoking_round, and what
// TaskPlacement changes.
void Round::assign_tasks() {
  if (delay == 0) revoking_round = true;
  if (W > 0 && (!pool_tasks.empty() || revoking_round)) TaskPlacement(*this).run();
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
  // A draining member that stopped its work before joining (it owns nothing)
  // is left out of the round. The work it ran is then unowned, and leaving it
  // among the previous members would make the core see a departed worker and
  // hold that work for the scheduled delay. Without it, the core's rule for
  // "every previous member is still here" places the work now.
  LeaderState core_state = state;
  for (size_t i = 0; i < members.size(); ++i)
    if (split->index[i] < 0) std::erase(core_state.previous_members, members[i].member_id);
  return merge_drained(assign_core(core_state, split->members, config, split->ctx), members, *split, config, ctx,
                       version);
}

AssignmentResult IncrementalCooperativeAssignor::assign_core(const LeaderState& state,
                                                             const std::vector<MemberReport>& members,
                                                             const ConfigSnapshot& config,
                                                             const RoundContext& ctx) const {
  const int64_t max_offset = max_config_offset(members);
  if (config.offset < max_offset) return config_mismatch(state, members, ctx, version_for(ctx.protocol), max_offset);
  return Round(state, members, config, ctx, max_delay_ms_).run();
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
