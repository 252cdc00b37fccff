#pragma once
// Internals of the incremental cooperative assignor, shared by its .cpp files
// (not part of the room's interface: only assignor.cpp, round.cpp and
// task_placement.cpp include it).
//
// Every connector name gets a dense index (names sorted, so index order is
// name order) and every task a dense "slot" (slots of one connector are
// contiguous and in task-number order, so slot order is the reference's
// (connector, task) order). Sets become flag arrays, and every step of a
// Round is a linear pass or a sort of one worker's items: no repeated scans
// of the group.

#include <algorithm>
#include <cstdint>
#include <deque>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "assignor/assignor.h"

namespace kc::assignor::detail {

using Slot = int32_t;  // dense task index (see Universe)

// Assignment version the incremental assignor writes for a protocol.
inline int16_t version_for(connect::ConnectProtocol p) {
  switch (p) {
    case connect::ConnectProtocol::Eager: return 1;  // incremental never writes V0
    case connect::ConnectProtocol::Compatible: return 1;
    case connect::ConnectProtocol::Sessioned: return 2;
  }
  return 1;
}

// The leader's URL: ctx.leader_url, or the leader's own report when empty
// (as Connect does).
std::string leader_url_of(const std::vector<MemberReport>& members, const RoundContext& ctx);

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
  /// -1 for a name the round did not note (lookup() needs a noted one).
  int32_t conn_or_none(std::string_view name) const {
    const Entry* e = const_cast<Universe*>(this)->find(name, false);
    return e == nullptr ? -1 : e->index;
  }
  /// -1 for a task of a connector not noted or beyond its slots.
  Slot slot_or_none(const ConnectorTaskId& t) const {
    const int32_t c = conn_or_none(t.connector);
    if (c < 0 || t.task < 0 || base_[static_cast<size_t>(c)] + t.task >= base_[static_cast<size_t>(c) + 1]) return -1;
    return static_cast<Slot>(base_[static_cast<size_t>(c)] + t.task);
  }
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

// ItemTable::flags bits: configured (3.3 step 2), in the previous assignment
// (after the generation guard and the failed-revocation check).
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
  // The reference's sets as predicates: configured (3.3 step 2), previous,
  // active (step 3), lost (step 7: previous - active - deleted) and created
  // (step 8: configured - previous - active).
  bool configured(size_t i) const { return flags[i] & kConfigured; }
  bool previous(size_t i) const { return flags[i] & kPrevious; }
  bool active(size_t i) const { return holders[i] > 0; }
  bool lost(size_t i) const { return previous(i) && configured(i) && !active(i); }
  bool created(size_t i) const { return configured(i) && !previous(i) && !active(i); }
};

// One member during a round (Connect's WorkerLoad, split by what happens to
// each item): connector indices and task slots.
struct Worker {
  int32_t input_index = 0;               // position in the members vector
  std::vector<int32_t> cur_conns;        // reported, de-duplicated (3.3 step 9)
  std::vector<Slot> cur_tasks;
  std::vector<int32_t> next_conns;       // cur minus revoked (step 11); placed items are apart
  std::vector<Slot> next_tasks;
  std::vector<int32_t> revoked_conns;    // toRevoke (steps 10 and 13)
  std::vector<Slot> revoked_tasks;
  std::vector<int32_t> placed_conns;     // newly assigned (step 14)
  std::vector<Slot> placed_tasks;
};

// Per-worker caps for load-balancing revocations: with T items over W workers,
// min = T / W and the `T % W` extra slots go to the workers that hold the most
// (ties: member id order), so as little as possible moves. Returns the number
// to revoke per worker (0 for most).
std::vector<int64_t> excess_per_worker(const std::vector<int64_t>& load, int64_t total);

// Connect's water-filling (assignConnectors/assignTasks) in counts only:
// workers sorted by (load, preference descending, member order), and each pass gives one item to every
// worker of the lowest level. Returns how many items each worker receives.
std::vector<int64_t> water_fill_quota(const std::vector<int64_t>& load, int64_t items,
                                      std::vector<int32_t>* order_out, const std::vector<uint8_t>& preference);

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

  // Whether anything at all would be revoked.
  [[nodiscard]] bool any() const {
    return spread_revocation || std::any_of(conn_excess.begin(), conn_excess.end(), [](int64_t e) { return e > 0; }) ||
           std::any_of(task_excess.begin(), task_excess.end(), [](int64_t e) { return e > 0; });
  }
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
  size_t W;                    // number of members (fewer in place_revoked_now's follow-up)
  // Members that leave before the follow-up round (draining ones that still
  // run work: the caller revokes all of it). Only place_revoked_now reads it.
  std::vector<std::string> leaving;

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

  // Return to owner (ctx.return_lost_to_owner; all empty when off). Per
  // item: the index in owner_ids of the identity that ran it (-1: unknown),
  // and whether this round gives it back (it is then in that worker's
  // cur_* and next_*, and output() lists it as assigned).
  std::vector<std::string> owner_ids;
  std::vector<int32_t> conn_owner, task_owner;
  std::vector<uint8_t> returned_conn, returned_task;
  std::vector<int32_t> replace_conns;  // given back, revoked for balance: placed now
  std::vector<Slot> replace_tasks;

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
  void return_lost_to_owners();
  void place_expired_static_now();
  // Owner bookkeeping (owner_ids, *_owner, record_owners) is kept for either switch.
  [[nodiscard]] bool tracks_owners() const { return ctx.return_lost_to_owner || ctx.no_delay_for_expired_static; }
  void record_owners();
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
  void replace_revoked_returns();
  void collect_to_assign();
  void assign_connectors();
  void assign_tasks();
  void update_leader_state();
  [[nodiscard]] AssignmentResult output();
  void output_returned(const Worker& w, Assignment& a) const;
  void place_revoked_now(AssignmentResult& out);
};

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
  // (worker, connector) of each running task an augmenting path planned for
  // a worker, when of another connector than the group being placed: that
  // connector's group (if later) counts it in load_counts. Rare, so a list.
  std::vector<std::pair<int32_t, int32_t>> moved_running;

  void run();
  void plan_in_flight();
  void compute_quotas();
  void reserve_extras_for_floor();
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

}  // namespace kc::assignor::detail
