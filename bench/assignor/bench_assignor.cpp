// Google Benchmark: one full assignment round of the incremental cooperative
// assignor (and the eager one, for comparison) at (workers, tasks) =
// (10, 1k), (100, 10k), (1k, 100k), (10k, 1M), for three events:
//   initial   every worker empty, everything is new;
//   join      one empty worker joins a balanced group (revoking round);
//   lost      one worker vanished and its delay has expired (lost work placed).
// Connectors have 10 tasks each. Counters: peak_MB is the peak heap in use
// during one round above the heap before it (counted by the replaced global
// operator new/delete below), ns_per_task the time per configured task.
// BM_Ratio times both assignors on the same input and reports coop/eager.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

namespace {
std::atomic<int64_t> g_heap{0}, g_peak{0};
void note_alloc(void* p) {
  const auto now = g_heap.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) + static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak.load();
  while (now > peak && !g_peak.compare_exchange_weak(peak, now)) {
  }
}
void note_free(void* p) { g_heap.fetch_sub(static_cast<int64_t>(malloc_usable_size(p))); }
void* counted_alloc(size_t n) {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p == nullptr) throw std::bad_alloc();
  note_alloc(p);
  return p;
}
void counted_free(void* p) {
  if (p == nullptr) return;
  note_free(p);
  std::free(p);
}
}  // namespace

void* operator new(size_t n) { return counted_alloc(n); }
void* operator new[](size_t n) { return counted_alloc(n); }
void operator delete(void* p) noexcept { counted_free(p); }
void operator delete[](void* p) noexcept { counted_free(p); }
void operator delete(void* p, size_t) noexcept { counted_free(p); }
void operator delete[](void* p, size_t) noexcept { counted_free(p); }

#include "assignor/assignor.h"

using namespace kc::assignor;

namespace {

constexpr int32_t kTasksPerConnector = 10;

ConfigSnapshot make_config(int64_t tasks) {
  ConfigSnapshot cfg;
  cfg.offset = 1;
  for (int64_t c = 0; c < tasks / kTasksPerConnector; ++c) cfg.connectors["conn" + std::to_string(c)] = kTasksPerConnector;
  return cfg;
}

std::vector<MemberReport> empty_members(int64_t workers) {
  std::vector<MemberReport> m;
  for (int64_t w = 0; w < workers; ++w) {
    std::string id = "worker-" + std::to_string(w);
    m.push_back({id, "http://" + id + ":8083/", 1, {}});
  }
  return m;
}

struct Setup {
  LeaderState state;
  std::vector<MemberReport> members;
  ConfigSnapshot config;
  RoundContext ctx;
};

// Runs the initial round and applies it, so members report a balanced group.
Setup balanced_group(int64_t workers, int64_t tasks) {
  Setup s;
  s.config = make_config(tasks);
  s.members = empty_members(workers);
  s.ctx.leader_id = s.members[0].member_id;
  s.ctx.generation = 1;
  s.ctx.now_ms = 1000;
  auto r = IncrementalCooperativeAssignor{}.assign(s.state, s.members, s.config, s.ctx);
  for (size_t i = 0; i < s.members.size(); ++i) {
    s.members[i].owned.connectors = r.assignments[i].assignment.connectors;
    s.members[i].owned.tasks = r.assignments[i].assignment.tasks;
  }
  s.state = r.state;
  s.ctx.last_completed_generation = 1;
  s.ctx.generation = 2;
  return s;
}

Setup make_event(int event, int64_t workers, int64_t tasks) {
  if (event == 0) {
    Setup s;
    s.config = make_config(tasks);
    s.members = empty_members(workers);
    s.ctx.leader_id = s.members[0].member_id;
    s.ctx.generation = 1;
    s.ctx.now_ms = 1000;
    return s;
  }
  // The balanced group has `workers` members; join adds one, lost removes one.
  Setup s = balanced_group(workers, tasks);
  if (event == 1) {
    std::string id = "worker-new";
    s.members.push_back({id, "http://" + id + ":8083/", 1, {}});
  } else {
    // Round 2: the last worker is gone, the delay starts.
    s.members.pop_back();
    auto r = IncrementalCooperativeAssignor{}.assign(s.state, s.members, s.config, s.ctx);
    s.state = r.state;
    s.ctx.last_completed_generation = 2;
    s.ctx.generation = 3;
    s.ctx.now_ms += kc::kScheduledRebalanceMaxDelayMsDefault;  // delay expired
  }
  return s;
}

template <class Assignor>
void run(benchmark::State& st, const Setup& s) {
  Assignor assignor;
  int64_t peak = 0;
  for (auto _ : st) {
    const int64_t before = g_heap.load();
    g_peak.store(before);
    auto r = assignor.assign(s.state, s.members, s.config, s.ctx);
    benchmark::DoNotOptimize(r);
    peak = std::max(peak, g_peak.load() - before);
  }
  const int64_t tasks = st.range(1);
  st.counters["workers"] = static_cast<double>(st.range(0));
  st.counters["tasks"] = static_cast<double>(tasks);
  st.counters["peak_MB"] = static_cast<double>(peak) / 1e6;
  st.counters["ns_per_task"] =
      benchmark::Counter(static_cast<double>(tasks), benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
}

void BM_Cooperative(benchmark::State& st) {
  const Setup s = make_event(static_cast<int>(st.range(2)), st.range(0), st.range(1));
  run<IncrementalCooperativeAssignor>(st, s);
}

void BM_Eager(benchmark::State& st) {
  const Setup s = make_event(static_cast<int>(st.range(2)), st.range(0), st.range(1));
  run<EagerAssignor>(st, s);
}

// Both assignors on the same input; the counter is cooperative time / eager time.
void BM_Ratio(benchmark::State& st) {
  const Setup s = make_event(static_cast<int>(st.range(2)), st.range(0), st.range(1));
  double coop = 0, eager = 0;
  for (auto _ : st) {
    auto t0 = std::chrono::steady_clock::now();
    auto a = IncrementalCooperativeAssignor{}.assign(s.state, s.members, s.config, s.ctx);
    benchmark::DoNotOptimize(a);
    auto t1 = std::chrono::steady_clock::now();
    auto b = EagerAssignor{}.assign(s.state, s.members, s.config, s.ctx);
    benchmark::DoNotOptimize(b);
    auto t2 = std::chrono::steady_clock::now();
    coop += std::chrono::duration<double>(t1 - t0).count();
    eager += std::chrono::duration<double>(t2 - t1).count();
  }
  st.counters["coop_over_eager"] = eager > 0 ? coop / eager : 0;
}

void sizes(benchmark::internal::Benchmark* b) {
  for (int event = 0; event < 3; ++event)
    for (auto [w, t] : {std::pair<int64_t, int64_t>{10, 1000}, {100, 10000}, {1000, 100000}, {10000, 1000000}})
      b->Args({w, t, event});
  b->ArgNames({"workers", "tasks", "event"});
  b->Unit(benchmark::kMillisecond);
}

}  // namespace

BENCHMARK(BM_Cooperative)->Apply(sizes);
BENCHMARK(BM_Eager)->Apply(sizes);
BENCHMARK(BM_Ratio)->Apply(sizes);

// One cooperative round outside the harness, for instruction counts:
//   valgrind --tool=callgrind --toggle-collect='*one_round*'
//            bench_assignor --one-round EVENT WORKERS TASKS
// (the setup rounds are not counted, only one_round).
[[gnu::noinline]] size_t one_round(const Setup& s) {
  auto r = IncrementalCooperativeAssignor{}.assign(s.state, s.members, s.config, s.ctx);
  size_t n = 0;
  for (const auto& a : r.assignments) n += a.assignment.tasks.size() + a.assignment.revoked_tasks.size();
  return n;
}

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--one-round") {
    const Setup s = make_event(std::atoi(argv[2]), std::atoll(argv[3]), std::atoll(argv[4]));
    std::printf("tasks assigned+revoked: %zu\n", one_round(s));
    return 0;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
