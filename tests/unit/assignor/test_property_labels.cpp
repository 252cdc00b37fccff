// Property tests of placement labels (issue 29), driven through the
// simulator. Random clusters: workers join with labels (host=hN, zone=zM) or
// none (an unlabelled worker, or one of an older build: the leader cannot
// tell them apart), connectors are created, resized, deleted and re-pinned
// with `placement.labels` and `placement.tasks=spread|pack`, workers leave,
// bounce and come back, time advances, syncs are lost. Checked:
//   every round: every connector and task runs only on a worker its
//     placement.labels match (the simulator's placement check), besides the
//     safety checks (a), (b), (d) of test_property.cpp;
//   every round: no task moves unless it must: a configured task is revoked
//     from a worker it may run on only when its placement group (same
//     placement.labels) changed since the group was last stable: a worker
//     the group matches joined or left, or one of the group's connectors was
//     created, resized, deleted or re-pinned (or a sync was lost). Changes of
//     other groups and unlabelled workers never move it;
//   at every `stabilize`: everything some worker may run runs exactly once;
//     within each placement group, over the workers it matches, connector
//     and task counts differ by <= 1 and so do each spread connector's task
//     counts; pack tasks run with their connector; exactly the connectors no
//     worker matches are reported unplaced.
// KC_PROPERTY_SEED / KC_PROPERTY_RUNS select another base seed / a longer
// run (default 1,250 x 2 flavours per ctest run).
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "assignor/simulator.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_property_labels {

using kc::Labels;
using kc::assignor::sim::Command;
using kc::assignor::sim::Simulator;
using kc::assignor::sim::to_scenario_text;
using K = Command::Kind;

namespace {

struct LabelFlavour {
  int max_workers, max_connectors, max_tasks, length;
};

uint64_t env_u64(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  return std::strtoull(v, nullptr, 10);
}

Command cmd(K kind, std::string name = {}, int64_t a = 0) {
  Command c;
  c.kind = kind;
  c.name = std::move(name);
  c.a = a;
  return c;
}

std::vector<Command> generate(uint64_t seed, const LabelFlavour& f) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<uint64_t>(n)); };
  // Labels of worker i: fixed per seed (a bounce keeps them), some none.
  std::vector<Labels> worker_labels(static_cast<size_t>(f.max_workers) + 1);
  for (auto& l : worker_labels) {
    if (pick(4) == 0) continue;  // unlabelled / older build
    l["host"] = "h" + std::to_string(1 + pick(3));
    if (pick(2) == 0) l["zone"] = "z" + std::to_string(1 + pick(2));
  }
  auto random_selector = [&]() {
    Labels s;
    switch (pick(5)) {
      case 0: s["host"] = "h" + std::to_string(1 + pick(4)); break;  // h4: maybe nobody
      case 1: s["zone"] = "z" + std::to_string(1 + pick(2)); break;
      case 2:
        s["host"] = "h" + std::to_string(1 + pick(3));
        s["zone"] = "z" + std::to_string(1 + pick(2));
        break;
      default: break;  // unconstrained
    }
    return s;
  };
  auto connector = [&](const std::string& name, int64_t tasks) {
    Command c = cmd(K::Connector, name, tasks);
    c.labels = random_selector();
    c.pack = pick(4) == 0;
    return c;
  };
  std::vector<Command> out;
  static const int64_t delays[] = {0, 1, 100, 10000, 300000};
  const int64_t delay = delays[pick(5)];
  out.push_back(cmd(K::SetDelay, {}, delay));
  if (pick(2) == 0) {
    Command p = cmd(K::SetProtocol);
    p.protocol = kc::connect::ConnectProtocol::Compatible;
    out.push_back(p);
  }
  auto join = [&](int i) {
    Command j = cmd(K::Join, "w" + std::to_string(i));
    j.labels = worker_labels[static_cast<size_t>(i)];
    return j;
  };
  out.push_back(join(1));
  out.push_back(connector("c1", 1 + pick(f.max_tasks)));
  out.push_back(cmd(K::Rebalance));
  std::vector<int> present = {1}, absent;
  for (int i = 2; i <= f.max_workers; ++i) absent.push_back(i);
  for (int i = 0; i < f.length; ++i) {
    switch (pick(10)) {
      case 0:
      case 1:
        if (!absent.empty()) {
          const int j = pick(static_cast<int>(absent.size()));
          out.push_back(join(absent[static_cast<size_t>(j)]));
          present.push_back(absent[static_cast<size_t>(j)]);
          absent.erase(absent.begin() + j);
        }
        break;
      case 2:
        if (!present.empty()) {
          const int j = pick(static_cast<int>(present.size()));
          out.push_back(cmd(K::Leave, "w" + std::to_string(present[static_cast<size_t>(j)])));
          absent.push_back(present[static_cast<size_t>(j)]);
          present.erase(present.begin() + j);
        }
        break;
      case 3:
        if (!present.empty()) {
          const int w = present[static_cast<size_t>(pick(static_cast<int>(present.size())))];
          out.push_back(cmd(K::Leave, "w" + std::to_string(w)));
          if (pick(2) == 0) out.push_back(cmd(K::Rebalance));
          out.push_back(join(w));
        }
        break;
      case 4:  // create, resize or re-pin
        out.push_back(connector("c" + std::to_string(1 + pick(f.max_connectors)), pick(f.max_tasks + 1)));
        break;
      case 5: out.push_back(cmd(K::Delete, "c" + std::to_string(1 + pick(f.max_connectors)))); break;
      case 6: {
        static const int64_t steps[] = {0, 1, 40, 1600};
        const int r = pick(6);
        out.push_back(cmd(K::Advance, {}, r < 4 ? steps[r] : (r == 4 ? delay / 2 : delay)));
        break;
      }
      case 7:
        out.push_back(cmd(K::LoseSync));
        out.push_back(cmd(K::Rebalance));
        break;
      case 8: out.push_back(cmd(pick(4) == 0 ? K::Stabilize : K::Rebalance)); break;
      default: out.push_back(cmd(K::Rebalance)); break;
    }
  }
  out.push_back(cmd(K::Stabilize));
  return out;
}

struct LabelStats {
  int64_t sequences = 0, rounds = 0, stable_checks = 0, revoked_tasks = 0, must_moves = 0, unplaced_seen = 0;
};

// Placement group (selector text) of a connector now; "" = unconstrained.
std::string group_of(const Simulator& sim, const std::string& connector) {
  auto p = sim.placements().find(connector);
  return p == sim.placements().end() ? std::string() : kc::format_labels(p->second.labels);
}

// The stable-state checks; "" when they hold.
std::string stable_failure(const Simulator& sim) {
  const auto s = sim.summary();
  if (!sim.complete()) return "not complete, unassigned=" + std::to_string(s.unassigned);
  if (!s.balanced || s.per_connector_task_spread > 1)
    return "not balanced within a placement group, connector_spread=" + std::to_string(s.connector_spread) +
           " task_spread=" + std::to_string(s.task_spread) +
           " per_connector_task_spread=" + std::to_string(s.per_connector_task_spread);
  if (s.pack_split != 0) return "pack tasks away from their connector: " + std::to_string(s.pack_split);
  std::vector<std::string> expect;
  for (const auto& [name, count] : sim.config())
    if (!sim.placeable(name)) expect.push_back(name);
  if (expect != sim.unplaced()) return "unplaced list differs from the connectors nobody matches";
  return {};
}

std::string check(const std::vector<Command>& cmds, LabelStats* stats) {
  Simulator sim;
  std::set<std::string> dirty;  // placement groups changed since the last stable point
  bool all_dirty = false;       // a lost sync
  auto groups_of_worker = [&](const Labels& l) {
    std::set<std::string> g = {""};
    for (const auto& [name, p] : sim.placements())
      if (kc::labels_match(p.labels, l)) g.insert(kc::format_labels(p.labels));
    return g;
  };
  auto round = [&](size_t i, const kc::assignor::sim::RoundReport& r) -> std::string {
    if (stats != nullptr) ++stats->rounds;
    if (r.sync_lost) return {};
    for (const auto& w : r.workers) {
      const Labels l = sim.labels_of(w.name);
      for (const auto& t : w.revoked.tasks) {
        if (stats != nullptr) ++stats->revoked_tasks;
        auto cfg = sim.config().find(t.connector);
        if (cfg == sim.config().end() || t.task >= cfg->second) continue;  // deleted: must go
        auto p = sim.placements().find(t.connector);
        if (p != sim.placements().end() && !kc::labels_match(p->second.labels, l)) {
          if (stats != nullptr) ++stats->must_moves;
          continue;  // ineligible worker: must move
        }
        const std::string g = group_of(sim, t.connector);
        if (!all_dirty && dirty.count(g) == 0)
          return "command " + std::to_string(i + 1) + ": task " + t.to_string() + " revoked from " + w.name +
                 " although its placement group '" + g + "' did not change";
      }
    }
    return {};
  };
  for (size_t i = 0; i < cmds.size(); ++i) {
    const Command& c = cmds[i];
    // What a change touches, before it is applied (a re-pin touches both groups).
    switch (c.kind) {
      case K::Join:
        for (const auto& g : groups_of_worker(c.labels)) dirty.insert(g);
        break;
      case K::Leave:
        if (sim.running(c.name) != nullptr)
          for (const auto& g : groups_of_worker(sim.labels_of(c.name))) dirty.insert(g);
        break;
      case K::Connector:
      case K::Delete:
        dirty.insert(group_of(sim, c.name));
        if (c.kind == K::Connector) dirty.insert(kc::format_labels(c.labels));
        break;
      case K::LoseSync: all_dirty = true; break;
      default: break;
    }
    if (apply_change(sim, c)) continue;
    if (c.kind == K::Rebalance) {
      if (auto bad = round(i, sim.rebalance()); !bad.empty()) return bad;
    } else if (c.kind == K::Stabilize) {
      const auto rounds = sim.stabilize();
      for (const auto& r : rounds)
        if (auto bad = round(i, r); !bad.empty()) return bad;
      const auto& last = rounds.back();
      if (sim.members() > 0) {
        if (last.revoked_any || last.delay_ms != 0 || last.sync_lost)
          return "command " + std::to_string(i + 1) + ": not stable after 20 rounds";
        if (stats != nullptr) {
          ++stats->stable_checks;
          stats->unplaced_seen += static_cast<int64_t>(sim.unplaced().size());
        }
        if (auto bad = stable_failure(sim); !bad.empty()) return "command " + std::to_string(i + 1) + ": " + bad;
        dirty.clear();
        all_dirty = false;
      }
    }
    if (!sim.violations().empty()) return sim.violations().front();
  }
  return {};
}

std::vector<Command> shrink(std::vector<Command> cmds) {
  bool progress = true;
  while (progress) {
    progress = false;
    for (size_t i = cmds.size(); i-- > 0;) {
      auto candidate = cmds;
      candidate.erase(candidate.begin() + static_cast<std::ptrdiff_t>(i));
      if (!candidate.empty() && !check(candidate, nullptr).empty()) {
        cmds = std::move(candidate);
        progress = true;
      }
    }
  }
  return cmds;
}

void run_labels(uint64_t base_seed, uint64_t runs, const LabelFlavour& f, const char* name) {
  LabelStats stats;
  for (uint64_t i = 0; i < runs; ++i) {
    const uint64_t seed = base_seed + i;
    const auto cmds = generate(seed, f);
    const std::string failure = check(cmds, &stats);
    ++stats.sequences;
    if (!failure.empty()) {
      const auto small = shrink(cmds);
      FAIL("seed " << seed << ": " << failure << "\nshrunk scenario (" << check(small, nullptr) << "):\n"
                   << to_scenario_text(small));
    }
  }
  std::cout << "[property labels-" << name << "] base_seed=" << base_seed << " sequences=" << stats.sequences
            << " rounds=" << stats.rounds << " stable_checks=" << stats.stable_checks
            << " revoked_tasks=" << stats.revoked_tasks << " of_them_ineligible=" << stats.must_moves
            << " unplaced_at_stable=" << stats.unplaced_seen << '\n';
  CHECK(stats.sequences == static_cast<int64_t>(runs));
}

}  // namespace

TEST_CASE("property labels: small clusters", "[assignor][property][labels]") {
  run_labels(env_u64("KC_PROPERTY_SEED", 9000000), env_u64("KC_PROPERTY_RUNS", 1250), {5, 4, 5, 16}, "small");
}

TEST_CASE("property labels: long sequences", "[assignor][property][labels]") {
  run_labels(env_u64("KC_PROPERTY_SEED", 9500000), env_u64("KC_PROPERTY_RUNS", 1250), {7, 5, 6, 28}, "long");
}

}  // namespace unity_test_property_labels
