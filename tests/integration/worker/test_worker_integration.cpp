// DistributedHerder end to end against librdkafka's in-process mock cluster
// (issue 4 items 6/7). Each case starts its own mock cluster and several
// herders in this process; a TaskObserver shared by all of them fails the
// case if a task ever runs on two workers at once (DESIGN.md invariant 1).
//
// Timing: session.timeout.ms 6000 (the mock waits ~session − 1 s before it
// elects a leader when a member is missing), heartbeat 1000,
// scheduled.rebalance.max.delay.ms 4000 unless a case needs longer. Nothing
// sleeps to assert timing: every wait polls a condition with a deadline.
//
// Set KC_TEST_LOG=info (or debug) to see the herders' logs.
#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "tests/integration/worker/cluster_harness.h"
#include "worker/plugins/builtin.h"

namespace kc::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// FileStreamSource(input) → topic "lines" → FileStreamSink(output). A
/// writer thread appends numbered lines to the input while the test runs,
/// so rebalances happen mid-stream.
class FilePipeline {
 public:
  FilePipeline() {
    static std::atomic<int> counter{0};
    dir_ = fs::temp_directory_path() /
           ("kc-worker-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::create_directories(dir_);
    input_ = dir_ / "input.txt";
    output_ = dir_ / "output.txt";
    std::ofstream(input_).close();
  }
  ~FilePipeline() {
    stop_writing();
    std::error_code ec;
    if (!std::getenv("KC_TEST_KEEP")) fs::remove_all(dir_, ec);
  }
  FilePipeline(const FilePipeline&) = delete;
  FilePipeline& operator=(const FilePipeline&) = delete;

  void add_to(TestCluster& c, Expected& e) const {
    c.put_connector("file-src", {{"connector.class", connectors::kFileStreamSourceClass},
                                 {"file", input_.string()},
                                 {"topic", "lines"},
                                 {"batch.size", "500"}});
    c.put_connector("file-sink", {{"connector.class", connectors::kFileStreamSinkClass},
                                  {"file", output_.string()},
                                  {"topics", "lines"},
                                  {"tasks.max", "1"}});
    e.add("file-src", 1).add("file-sink", 1);
  }

  /// Appends `per_tick` lines every 100 ms until stop_writing().
  void start_writing(int per_tick = 100) {
    writer_ = std::thread([this, per_tick] {
      std::ofstream out(input_, std::ios::app);
      while (!stop_) {
        for (int i = 0; i < per_tick; ++i) out << "line " << next_++ << " of the kconnectd integration test\n";
        out.flush();
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  void stop_writing() {
    stop_ = true;
    if (writer_.joinable()) writer_.join();
  }
  int written() const { return next_; }

  /// Input lines not present in the output (at most `limit` listed).
  std::vector<std::string> missing(size_t limit = 20) const {
    std::set<std::string> seen;
    std::ifstream in(output_);
    for (std::string line; std::getline(in, line);) seen.insert(line);
    std::vector<std::string> out;
    std::ifstream src(input_);
    for (std::string line; std::getline(src, line);)
      if (!seen.count(line)) {
        out.push_back(line);
        if (out.size() >= limit) break;
      }
    return out;
  }

  /// Stops the writer and waits until every input line is in the output.
  void require_no_line_lost(std::chrono::milliseconds timeout = 90s) {
    stop_writing();
    const bool all = eventually([this] { return missing(1).empty(); }, timeout);
    auto m = missing();
    std::string list;
    for (const auto& l : m) list += "  " + l + "\n";
    INFO(next_ << " lines written; first missing lines:\n" << list);
    REQUIRE(all);
  }

 private:
  fs::path dir_, input_, output_;
  std::thread writer_;
  std::atomic<bool> stop_{false};
  std::atomic<int> next_{0};
};

/// Tasks whose owner is unchanged between two owner maps.
TaskSet unmoved(const std::map<ConnectorTaskId, std::string>& before,
                const std::map<ConnectorTaskId, std::string>& after) {
  TaskSet out;
  for (const auto& [t, o] : before)
    if (auto it = after.find(t); it != after.end() && it->second == o) out.insert(t);
  return out;
}

/// Invariant 4: none of `tasks` was stopped since `mark`.
void check_not_stopped(TestCluster& c, size_t mark, const TaskSet& tasks) {
  auto stops = c.observer().stops_since(mark);
  TaskSet stopped;
  for (const auto& t : tasks)
    if (stops.count(t)) stopped.insert(t);
  INFO("tasks that stayed put but were stopped: " << to_string(stopped));
  CHECK(stopped.empty());
}

/// Cooperative protocols: every task that moved was revoked in some
/// generation g. Without the hand-over (KIP-415) it is assigned to its new
/// owner only in a generation > g, and no generation both revokes and assigns
/// the same task. With it (rebalance.hand.over.enable) the new owner gets it
/// in g itself; that both never run it at once is the observer's invariant.
void check_revoke_then_assign(const TestCluster& c, int32_t after_gen,
                              const std::map<ConnectorTaskId, std::string>& before,
                              const std::map<ConnectorTaskId, std::string>& after, bool hand_over) {
  std::map<ConnectorTaskId, std::set<int32_t>> revoked;
  std::map<std::pair<ConnectorTaskId, std::string>, std::set<int32_t>> assigned;
  std::map<ConnectorTaskId, std::set<int32_t>> assigned_any;
  for (const auto& [w, r] : c.all_history()) {
    if (r.generation <= after_gen) continue;
    for (const auto& t : r.revoked_tasks) revoked[t].insert(r.generation);
    for (const auto& t : r.assigned_tasks) {
      assigned[{t, w}].insert(r.generation);
      assigned_any[t].insert(r.generation);
    }
  }
  for (const auto& [t, gens] : revoked)
    for (int32_t g : gens) {
      if (hand_over) continue;
      INFO("task " << t.to_string() << " revoked and assigned in generation " << g);
      CHECK(assigned_any[t].count(g) == 0);
    }
  for (const auto& [t, new_owner] : after) {
    auto b = before.find(t);
    if (b == before.end() || b->second == new_owner) continue;
    INFO("task " << t.to_string() << " moved " << b->second << " → " << new_owner);
    REQUIRE(!revoked[t].empty());
    const int32_t first_revoke = *revoked[t].begin();
    const auto& ag = assigned[{t, new_owner}];
    if (hand_over) CHECK(ag.count(first_revoke) == 1);
    else CHECK(std::any_of(ag.begin(), ag.end(), [&](int32_t g) { return g > first_revoke; }));
  }
}

struct JoinResult {
  int tasks = 0;             ///< configured tasks
  int distinct_stopped = 0;  ///< tasks stopped at least once while the 4th worker joined
  int stop_events = 0;       ///< all stop events in that window
  int moved = 0;             ///< tasks whose owner changed
  int generations = 0;       ///< rebalance rounds seen by w1 during the join
};

/// Three workers run `connectors`; a fourth joins. Returns what stopped.
JoinResult run_join_scenario(ConnectProtocol protocol, const std::vector<std::pair<std::string, int>>& connectors,
                             bool hand_over = true) {
  ClusterOptions o;
  o.protocol = protocol;
  o.hand_over_moves = hand_over;
  o.data_topics = {{"seq-data", 4}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  for (const auto& [name, n] : connectors) {
    c.put_connector(name, seq_config(n));
    e.add(name, n);
  }
  c.wait_stable(e);
  const auto before = c.task_owners();
  const int32_t gen0 = c.generation("w1");
  const size_t mark = c.observer().mark();
  const size_t w1_hist = c.worker("w1").rebalance_history().size();

  c.start_worker("w4");
  c.wait_stable(e);
  c.check_invariant();

  const auto after = c.task_owners();
  auto by_worker = c.tasks_by_worker();
  CHECK(!by_worker["w4"].empty());

  JoinResult res;
  res.tasks = static_cast<int>(e.tasks.size());
  for (const auto& [t, n] : c.observer().stops_since(mark)) {
    ++res.distinct_stopped;
    res.stop_events += n;
  }
  for (const auto& [t, o2] : after)
    if (before.at(t) != o2) ++res.moved;
  res.generations = static_cast<int>(c.worker("w1").rebalance_history().size() - w1_hist);

  if (protocol != ConnectProtocol::Eager) {
    const std::string expected_proto = connect::protocol_name(protocol);
    for (const auto& id : c.live()) CHECK(c.worker(id).assignment_state().protocol == expected_proto);
    // Two rounds at least: revoke (and, with the hand-over, assign), then
    // the old owners' follow-up.
    CHECK(res.generations >= 2);
    check_not_stopped(c, mark, unmoved(before, after));
    check_revoke_then_assign(c, gen0, before, after, hand_over);
    CHECK(res.distinct_stopped == res.moved);
  } else {
    for (const auto& id : c.live()) CHECK(c.worker(id).assignment_state().protocol == "default");
  }
  return res;
}

}  // namespace

TEST_CASE("initial assignment spreads connectors and tasks over three workers", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(4));
  c.put_connector("b", seq_config(3));
  c.put_connector("c", seq_config(2));
  e.add("a", 4).add("b", 3).add("c", 2);
  c.wait_stable(e);

  int leaders = 0;
  for (const auto& id : c.live()) {
    auto st = c.worker(id).assignment_state();
    leaders += st.is_leader ? 1 : 0;
    CHECK(st.protocol == "sessioned");
    CHECK(st.assigned_connectors.size() == 1);
    CHECK(st.assigned_tasks.size() == 3);
  }
  CHECK(leaders == 1);
  c.check_invariant();
}

TEST_CASE("a joining worker gets the moved tasks in the revoking round, after their stop, tasks that stay are not "
          "stopped",
          "[worker][integration]") {
  auto r = run_join_scenario(ConnectProtocol::Sessioned, {{"a", 5}, {"b", 4}});
  std::cout << "join (sessioned, hand-over, 9 tasks): " << r.moved << " moved, " << r.distinct_stopped
            << " stopped, " << r.generations << " rounds\n";
  CHECK(r.moved >= 1);
  CHECK(r.distinct_stopped <= 3);
}

TEST_CASE("rebalance.hand.over.enable=false: a joining worker takes tasks in two rounds (KIP-415)",
          "[worker][integration]") {
  auto r = run_join_scenario(ConnectProtocol::Sessioned, {{"a", 5}, {"b", 4}}, /*hand_over=*/false);
  std::cout << "join (sessioned, no hand-over, 9 tasks): " << r.moved << " moved, " << r.distinct_stopped
            << " stopped, " << r.generations << " rounds\n";
  CHECK(r.moved >= 1);
  CHECK(r.distinct_stopped <= 3);
}

TEST_CASE("a worker that leaves cleanly: the group rebalances at once and its tasks move", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}, {"lines", 2}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(6));
  e.add("a", 6);
  FilePipeline files;
  files.add_to(c, e);
  files.start_writing();
  c.wait_stable(e);

  const auto leader = c.leader();
  REQUIRE(leader);
  std::string victim;
  for (const auto& id : c.live())
    if (id != *leader) victim = id;
  const auto before = c.task_owners();
  const size_t mark = c.observer().mark();
  std::map<std::string, int32_t> gens;
  for (const auto& id : c.live())
    if (id != victim) gens[id] = c.generation(id);

  c.stop_worker(victim);
  const auto stopped_at = Clock::now();
  // LeaveGroup: the survivors rebalance without waiting for the session
  // timeout that a crash would need.
  const bool rebalanced = eventually(
      [&] {
        for (const auto& [id, g] : gens)
          if (c.generation(id) <= g) return false;
        return true;
      },
      std::chrono::milliseconds(o.session_timeout_ms));
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - stopped_at);
  INFO("first rebalance after LeaveGroup took " << took.count() << " ms\n" << c.dump());
  CHECK(rebalanced);

  c.wait_stable(e);
  const auto after = c.task_owners();
  for (const auto& [t, o2] : after) CHECK(o2 != victim);
  // Tasks the survivors already ran were never stopped.
  TaskSet kept;
  for (const auto& [t, w] : before)
    if (w != victim) kept.insert(t);
  check_not_stopped(c, mark, kept);
  files.require_no_line_lost();
  c.check_invariant();
}

TEST_CASE("a killed worker that returns within the delay gets its tasks back", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}, {"lines", 2}};
  o.scheduled_rebalance_max_delay_ms = 15000;
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(6));
  e.add("a", 6);
  FilePipeline files;
  files.add_to(c, e);
  files.start_writing();
  c.wait_stable(e);

  const auto leader = c.leader();
  REQUIRE(leader);
  std::string victim;
  for (const auto& id : c.live())
    if (id != *leader) victim = id;
  const TaskSet victim_tasks = c.tasks_by_worker()[victim];
  REQUIRE(!victim_tasks.empty());
  const auto before = c.task_owners();
  const size_t mark = c.observer().mark();
  const int32_t leader_gen = c.generation(*leader);

  c.crash_worker(victim);
  // Wait until the leader noticed the loss and scheduled the delay.
  const bool delayed = eventually(
      [&] {
        for (const auto& r : c.worker(*leader).rebalance_history())
          if (r.generation > leader_gen && r.delay_ms > 0) return true;
        return false;
      },
      60s);
  INFO(c.dump());
  REQUIRE(delayed);
  // The lost tasks are not reassigned while the delay runs.
  for (const auto& [t, w] : c.task_owners()) CHECK(victim_tasks.count(t) == 0);

  c.start_worker(victim);
  c.wait_stable(e);
  CHECK(c.tasks_by_worker()[victim] == victim_tasks);
  TaskSet kept;
  for (const auto& [t, w] : before)
    if (w != victim) kept.insert(t);
  check_not_stopped(c, mark, kept);
  files.require_no_line_lost();
  c.check_invariant();
}

TEST_CASE("a killed worker's tasks move to the others when the delay expires", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}, {"lines", 2}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(6));
  e.add("a", 6);
  FilePipeline files;
  files.add_to(c, e);
  files.start_writing();
  c.wait_stable(e);

  const auto leader = c.leader();
  REQUIRE(leader);
  std::string victim;
  for (const auto& id : c.live())
    if (id != *leader) victim = id;
  const auto before = c.task_owners();
  const size_t mark = c.observer().mark();
  const int32_t leader_gen = c.generation(*leader);

  c.crash_worker(victim);
  c.wait_stable(e);
  bool saw_delay = false;
  for (const auto& r : c.worker(*leader).rebalance_history())
    if (r.generation > leader_gen && r.delay_ms > 0) saw_delay = true;
  CHECK(saw_delay);
  for (const auto& [t, w] : c.task_owners()) CHECK(w != victim);
  TaskSet kept;
  for (const auto& [t, w] : before)
    if (w != victim) kept.insert(t);
  check_not_stopped(c, mark, kept);
  files.require_no_line_lost();
  c.check_invariant();
}

TEST_CASE("the leader is killed: a new leader takes over and every task runs", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}, {"lines", 2}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(6));
  e.add("a", 6);
  FilePipeline files;
  files.add_to(c, e);
  files.start_writing();
  c.wait_stable(e);

  const auto old_leader = c.leader();
  REQUIRE(old_leader);
  c.crash_worker(*old_leader);
  c.wait_stable(e);
  const auto new_leader = c.leader();
  REQUIRE(new_leader);
  CHECK(*new_leader != *old_leader);
  for (const auto& [t, w] : c.task_owners()) CHECK(w != *old_leader);

  // The new leader accepts writes.
  c.put_connector("b", seq_config(2));
  e.add("b", 2);
  c.wait_stable(e);
  files.require_no_line_lost();
  c.check_invariant();
}

TEST_CASE("connectors are added and reconfigured and deleted while the group is stable", "[worker][integration]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(3));
  e.add("a", 3);
  c.wait_stable(e);

  SECTION("add, reconfigure, delete") {
    // Add: the new tasks go to the workers; a's tasks keep running.
    size_t mark = c.observer().mark();
    c.put_connector("b", seq_config(3));
    e.add("b", 3);
    c.wait_stable(e);
    {
      TaskSet a_tasks;
      for (const auto& t : e.tasks)
        if (t.connector == "a") a_tasks.insert(t);
      check_not_stopped(c, mark, a_tasks);
    }

    // Reconfigure a: 5 tasks. b's tasks are untouched.
    mark = c.observer().mark();
    auto before = c.task_owners();
    c.put_connector("a", seq_config(5, 30));
    e.add("a", 5);
    c.wait_stable(e);
    {
      TaskSet b_tasks;
      for (const auto& t : unmoved(before, c.task_owners()))
        if (t.connector == "b") b_tasks.insert(t);
      check_not_stopped(c, mark, b_tasks);
      auto starts = c.observer().starts_since(mark);
      CHECK(starts.count(ConnectorTaskId{"a", 3}) == 1);
      CHECK(starts.count(ConnectorTaskId{"a", 4}) == 1);
    }

    // Delete b: its tasks stop everywhere and nobody runs them again.
    mark = c.observer().mark();
    c.delete_connector("b");
    e.remove("b");
    c.wait_stable(e);
    for (const auto& [t, owners] : c.observer().owners()) CHECK(t.connector != "b");
    for (int i = 0; i < 3; ++i) CHECK(c.observer().stops_since(mark).count(ConnectorTaskId{"b", i}) == 1);
    CHECK(c.observer().starts_since(mark).count(ConnectorTaskId{"b", 0}) == 0);
  }
  c.check_invariant();
}

TEST_CASE("eager protocol: a clean leave moves the tasks and keeps one owner", "[worker][integration][eager]") {
  ClusterOptions o;
  o.protocol = ConnectProtocol::Eager;
  o.data_topics = {{"seq-data", 4}, {"lines", 2}};
  TestCluster c(o);
  c.start_workers({"w1", "w2", "w3"});
  Expected e;
  c.put_connector("a", seq_config(6));
  e.add("a", 6);
  FilePipeline files;
  files.add_to(c, e);
  files.start_writing();
  c.wait_stable(e);
  for (const auto& id : c.live()) CHECK(c.worker(id).assignment_state().protocol == "default");

  const size_t mark = c.observer().mark();
  const std::string survivor = c.live().front();
  const auto owned_before = c.worker(survivor).assignment_state().assigned_tasks;
  const size_t hist_before = c.worker(survivor).rebalance_history().size();
  c.stop_worker(c.live().back());
  c.wait_stable(e);
  // Eager: every task of the survivors was stopped and restarted.
  CHECK(c.observer().stops_since(mark).size() == e.tasks.size());
  // ... and the survivor's GET /rebalances lists what the round stopped.
  std::set<ConnectorTaskId> listed;
  const auto hist = c.worker(survivor).rebalance_history();
  for (size_t i = hist_before; i < hist.size(); ++i) listed.insert(hist[i].revoked_tasks.begin(), hist[i].revoked_tasks.end());
  for (const auto& t : owned_before) CHECK(listed.count(t) == 1);
  files.require_no_line_lost();
  c.check_invariant();
}

TEST_CASE("acceptance: a 4th worker joins 3 workers running 12 tasks", "[worker][integration][acceptance]") {
  const auto sessioned = run_join_scenario(ConnectProtocol::Sessioned, {{"seq", 12}});
  const auto eager = run_join_scenario(ConnectProtocol::Eager, {{"seq", 12}});
  std::cout << "sessioned: stopped " << sessioned.distinct_stopped << " of " << sessioned.tasks << " tasks ("
            << sessioned.moved << " moved, " << sessioned.generations << " rounds)\n"
            << "eager: stopped " << eager.distinct_stopped << " of " << eager.tasks << " tasks (" << eager.moved
            << " moved, " << eager.generations << " rounds)" << std::endl;
  CHECK(sessioned.tasks == 12);
  CHECK(sessioned.distinct_stopped <= 3);
  CHECK(sessioned.distinct_stopped >= 1);
  CHECK(eager.distinct_stopped == 12);
}

}  // namespace kc::test
