// Operations that span workers (issue 9), in process: two or three
// DistributedHerders on librdkafka's mock cluster, every operation sent
// through a follower, and every check made on EVERY worker: its status view
// (GET /connectors/{c}/status as that worker answers it) and what its
// runtime really does (its own metrics: task_status gauges, records polled).
//
// Set KC_TEST_LOG=info to see the herders' logs.
#include <cstdlib>
#include <future>
#include <sstream>
#include <thread>

#include <catch2/catch.hpp>
#include <spdlog/spdlog.h>

#include "tests/integration/worker/cluster_harness.h"
#include "worker/rest/json_codec.h"
#include "worker/plugins/builtin.h"

namespace kc::test {
namespace {

using namespace std::chrono_literals;
using rest::ConnectState;

/// "CONNECTOR_STATE tasks 0=STATE@worker,1=..." from one worker's view.
std::string status_text(DistributedHerder& h, const std::string& c) {
  auto r = herder_reply<rest::ConnectorStateInfo>([&](auto cb) { h.connector_status(c, cb); });
  if (!r) return "error: " + r.error().message;
  std::string s = std::string(rest::to_string(r.value().connector.state)) + " tasks";
  for (const auto& t : r.value().tasks) s.append(" ").append(std::to_string(t.id)).append("=").append(rest::to_string(t.state));
  return s;
}

/// The value of `family{...labels...}` in a worker's metrics text, summed
/// over the series that contain every `needle`.
double metric(DistributedHerder& h, const std::string& family, const std::vector<std::string>& needles) {
  std::istringstream in(h.config().metrics->render());
  std::string line;
  double sum = 0;
  while (std::getline(in, line)) {
    if (line.rfind("kconnectd_" + family + "{", 0) != 0) continue;
    bool all = true;
    for (const auto& n : needles) all = all && line.find(n) != std::string::npos;
    if (all) sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

/// Tasks of `c` whose runtime state on worker `h` is `state` (metrics).
int tasks_in_state(DistributedHerder& h, const std::string& c, const std::string& state) {
  return static_cast<int>(metric(h, "task_status", {"connector=\"" + c + "\"", "state=\"" + state + "\""}));
}

double polled(TestCluster& cl, const std::string& c) {
  double sum = 0;
  for (const auto& id : cl.live()) sum += metric(cl.worker(id), "source_task_records_polled_total", {"connector=\"" + c + "\""});
  return sum;
}

/// Waits until every live worker reports `want` for `c`; fails with each view.
void wait_views(TestCluster& cl, const std::string& c, const std::string& want, std::chrono::milliseconds timeout = 60s) {
  std::string views;
  bool ok = eventually(
      [&] {
        views.clear();
        bool all = true;
        for (const auto& id : cl.live()) {
          auto v = status_text(cl.worker(id), c);
          views += id + ": " + v + "\n";
          all = all && v == want;
        }
        return all;
      },
      timeout);
  INFO("want: " << want << "\nviews:\n" << views);
  REQUIRE(ok);
}

std::string follower(TestCluster& cl) {
  auto leader = cl.leader();
  for (const auto& id : cl.live())
    if (!leader || id != *leader) return id;
  return cl.live().front();
}

/// Sends a leader-only write through `via`, following not_leader like the
/// REST layer's forwarding does.
template <typename T, typename F>
rest::Reply<T> forwarded(TestCluster& cl, const std::string& via, F&& f) {
  auto r = herder_reply<T>([&](auto cb) { f(cl.worker(via), cb); });
  if (!r.ok() && r.error().kind == rest::ErrorKind::NotLeader) {
    auto leader = cl.leader();
    REQUIRE(leader);
    r = herder_reply<T>([&](auto cb) { f(cl.worker(*leader), cb); });
  }
  return r;
}

/// Two workers, connector "c" with 2 tasks: the connector and one task on
/// one worker, the other task on the other.
struct TwoWorkers {
  TestCluster cl{[] {
    ClusterOptions o;
    o.data_topics = {{"seq-data", 2}};
    return o;
  }()};
  Expected e;
  TwoWorkers() {
    cl.start_workers({"w1", "w2"});
    cl.put_connector("c", seq_config(2, 50));
    e.add("c", 2);
    cl.wait_stable(e);
    auto by = cl.tasks_by_worker();
    REQUIRE(by["w1"].size() == 1);
    REQUIRE(by["w2"].size() == 1);
    wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");
  }
};

}  // namespace

TEST_CASE("pause through a follower pauses every task on every worker, resume restarts polling",
          "[worker][integration][operations]") {
  TwoWorkers t;
  auto& cl = t.cl;
  const auto via = follower(cl);
  REQUIRE(herder_reply<rest::Done>([&](auto cb) { cl.worker(via).set_target_state("c", rest::TargetState::Paused, cb); }));
  wait_views(cl, "c", "PAUSED tasks 0=PAUSED 1=PAUSED");
  for (const auto& id : cl.live()) CHECK(tasks_in_state(cl.worker(id), "c", "paused") == 1);
  // Nothing polls while paused.
  const double before = polled(cl, "c");
  std::this_thread::sleep_for(1500ms);
  CHECK(polled(cl, "c") == before);

  REQUIRE(herder_reply<rest::Done>([&](auto cb) { cl.worker(via).set_target_state("c", rest::TargetState::Started, cb); }));
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");
  for (const auto& id : cl.live()) CHECK(tasks_in_state(cl.worker(id), "c", "running") == 1);
  CHECK(eventually([&] { return polled(cl, "c") > before; }, 10s));
  cl.check_invariant();
}

TEST_CASE("stop shows STOPPED with no tasks on every worker, resume through a follower regenerates the tasks",
          "[worker][integration][operations]") {
  TwoWorkers t;
  auto& cl = t.cl;
  const auto via = follower(cl);
  auto r = forwarded<rest::Done>(cl, via, [](DistributedHerder& h, auto cb) {
    h.set_target_state("c", rest::TargetState::Stopped, cb);
  });
  REQUIRE(r.ok());
  wait_views(cl, "c", "STOPPED tasks");
  for (const auto& id : cl.live()) {
    CHECK(tasks_in_state(cl.worker(id), "c", "running") == 0);
    CHECK(cl.worker(id).assignment_state().running_tasks.empty());
  }
  const double before = polled(cl, "c");
  std::this_thread::sleep_for(1500ms);
  CHECK(polled(cl, "c") == before);

  // Resume on a follower: the leader regenerates the task configs.
  REQUIRE(herder_reply<rest::Done>([&](auto cb) { cl.worker(follower(cl)).set_target_state("c", rest::TargetState::Started, cb); }));
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING", 90s);
  // GET /tasks answers Connect's 500 "rebalance is expected" while the new
  // task configs wait for their round; it answers once that round is over.
  rest::Reply<std::vector<rest::TaskInfo>> tasks = rest::RestError::internal("not asked yet");
  const bool answered = eventually(
      [&] {
        tasks = herder_reply<std::vector<rest::TaskInfo>>([&](auto cb) { cl.worker(follower(cl)).task_configs("c", cb); });
        return tasks.ok();
      },
      30s);
  INFO("GET /connectors/c/tasks on a follower: " << (tasks.ok() ? "ok" : tasks.error().message));
  REQUIRE(answered);
  CHECK(tasks.value().size() == 2);
  cl.wait_stable(t.e);
  cl.check_invariant();
}

TEST_CASE("shrinking tasks.max removes the stale task statuses on every worker",
          "[worker][integration][operations]") {
  ClusterOptions o;
  o.data_topics = {{"seq-data", 4}};
  TestCluster cl(o);
  cl.start_workers({"w1", "w2"});
  Expected e;
  cl.put_connector("c", seq_config(4, 50));
  e.add("c", 4);
  cl.wait_stable(e);
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING 2=RUNNING 3=RUNNING");
  cl.put_connector("c", seq_config(2, 50));
  e.remove("c").add("c", 2);
  cl.wait_stable(e);
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");
  for (const auto& id : cl.live()) CHECK(metric(cl.worker(id), "task_status", {"task=\"2\""}) == 0);
  cl.check_invariant();
}

TEST_CASE("pause, a worker joins and the work moves, resume: nothing stays paused",
          "[worker][integration][operations]") {
  TwoWorkers t;
  auto& cl = t.cl;
  REQUIRE(herder_reply<rest::Done>([&](auto cb) { cl.worker(follower(cl)).set_target_state("c", rest::TargetState::Paused, cb); }));
  wait_views(cl, "c", "PAUSED tasks 0=PAUSED 1=PAUSED");
  cl.start_worker("w3");
  cl.wait_stable(t.e);
  wait_views(cl, "c", "PAUSED tasks 0=PAUSED 1=PAUSED");
  REQUIRE(herder_reply<rest::Done>([&](auto cb) { cl.worker("w3").set_target_state("c", rest::TargetState::Started, cb); }));
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");
  for (const auto& id : cl.live()) CHECK(tasks_in_state(cl.worker(id), "c", "paused") == 0);
  cl.check_invariant();
}

TEST_CASE("KIP-745 restart with includeTasks: 202 plan with RESTARTING, each instance restarts once on its owner",
          "[worker][integration][operations]") {
  TwoWorkers t;
  auto& cl = t.cl;
  const size_t mark = cl.observer().mark();
  auto owners = cl.task_owners();
  auto r = forwarded<std::optional<rest::ConnectorStateInfo>>(cl, follower(cl), [](DistributedHerder& h, auto cb) {
    h.restart_connector("c", rest::RestartRequest{true, false}, cb);
  });
  REQUIRE(r.ok());
  REQUIRE(r.value().has_value());
  const auto& plan = *r.value();
  CHECK(plan.connector.state == ConnectState::Restarting);
  REQUIRE(plan.tasks.size() == 2);
  for (const auto& ts : plan.tasks) CHECK(ts.state == ConnectState::Restarting);
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");
  REQUIRE(eventually([&] { return cl.observer().starts_since(mark).size() == 2; }, 20s));
  std::this_thread::sleep_for(1500ms);  // no second restart follows
  auto starts = cl.observer().starts_since(mark);
  for (const auto& [task, n] : starts) CHECK(n == 1);
  CHECK(cl.task_owners() == owners);  // restarted in place, no rebalance moved them
  // The restart's RESTARTING and RUNNING records may still be on their way
  // (asynchronous status writes); the next plan reads the settled state.
  wait_views(cl, "c", "RUNNING tasks 0=RUNNING 1=RUNNING");

  // onlyFailed with nothing FAILED: nothing restarts; the plan shows current states.
  const size_t mark2 = cl.observer().mark();
  auto r2 = forwarded<std::optional<rest::ConnectorStateInfo>>(cl, follower(cl), [](DistributedHerder& h, auto cb) {
    h.restart_connector("c", rest::RestartRequest{true, true}, cb);
  });
  REQUIRE(r2.ok());
  REQUIRE(r2.value().has_value());
  CHECK(r2.value()->connector.state == ConnectState::Running);
  for (const auto& ts : r2.value()->tasks) CHECK(ts.state == ConnectState::Running);
  std::this_thread::sleep_for(2s);
  CHECK(cl.observer().starts_since(mark2).empty());
  cl.check_invariant();
}

}  // namespace kc::test
