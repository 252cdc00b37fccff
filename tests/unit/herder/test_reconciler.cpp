// Table tests of reconcile(desired, actual) -> actions (worker/herder/reconciler.h).
// Each row names a Kafka Connect behaviour (issue 9's scenarios among them).
#include <catch2/catch.hpp>

#include "worker/herder/reconciler.h"

#include <set>
#include <string>

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_reconciler {

using namespace kc::herder;
using kc::storage::StatusState;
using kc::storage::StatusValue;
using kc::storage::TargetState;

namespace {

const std::string kMe = "w1:8083";
const std::string kOther = "w2:8083";

ConfigMap conf(const std::string& v) { return {{"connector.class", "SequenceSource"}, {"k", v}}; }

/// Connector `c` with `n` tasks whose configs are {"task": "<c>-<i>"}.
DesiredConnector connector(int n, TargetState target = TargetState::Started, const std::string& v = "1") {
  DesiredConnector d;
  d.config = conf(v);
  d.target = target;
  for (int i = 0; i < n; ++i) d.tasks[i] = {{"task", std::to_string(i)}, {"v", v}};
  return d;
}

RunningTask running_task(int i, TargetState target = TargetState::Started, const std::string& v = "1") {
  return RunningTask{{{"task", std::to_string(i)}, {"v", v}}, target};
}

std::vector<std::string> texts(const std::vector<Action>& actions) {
  std::vector<std::string> out;
  for (const auto& a : actions) out.push_back(to_string(a));
  return out;
}

struct Row {
  std::string name;
  DesiredState desired;
  ActualState actual;
  std::vector<std::string> expected;
};

DesiredState base() {
  DesiredState d;
  d.worker_id = kMe;
  return d;
}

std::vector<Row> rows() {
  std::vector<Row> r;
  {  // Fresh assignment: start what is assigned, with its target state.
    Row x{"start assigned connector and tasks"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2, TargetState::Paused);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 1}};
    x.expected = {"start-connector c PAUSED", "start-task c-1 PAUSED"};
    r.push_back(x);
  }
  {  // Scenario 1: pause reaches a task whose connector runs elsewhere.
    Row x{"pause applies to a task without its connector"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2, TargetState::Paused);
    x.desired.assigned_tasks = {{"c", 1}};
    x.actual.tasks[{"c", 1}] = running_task(1);
    x.expected = {"set-task-target c-1 PAUSED"};
    r.push_back(x);
  }
  {  // Scenario 4: resume after a rebalance, task started while paused.
    Row x{"resume applies to tasks started paused"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}, {"c", 1}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Paused};
    x.actual.tasks[{"c", 0}] = running_task(0, TargetState::Paused);
    x.actual.tasks[{"c", 1}] = running_task(1, TargetState::Paused);
    x.expected = {"set-connector-target c STARTED", "set-task-target c-0 STARTED", "set-task-target c-1 STARTED"};
    r.push_back(x);
  }
  {  // Scenario 2: STOPPED stops everything here and reports STOPPED; task statuses go.
    Row x{"stop: connector and tasks stopped, STOPPED written, task statuses removed"};
    x.desired = base();
    x.desired.connectors["c"] = connector(0, TargetState::Stopped);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.actual.connector_statuses["c"] = StatusValue{StatusState::Running, std::nullopt, kMe, 3};
    x.actual.task_statuses[{"c", 0}] = StatusValue{StatusState::Running, std::nullopt, kMe, 3};
    x.expected = {"stop-connector c", "stop-task c-0 (remove status)", "write-connector-status c STOPPED"};
    r.push_back(x);
  }
  {  // STOPPED status written once only.
    Row x{"stopped connector already reported: nothing to do"};
    x.desired = base();
    x.desired.connectors["c"] = connector(0, TargetState::Stopped);
    x.desired.assigned_connectors = {"c"};
    x.actual.connector_statuses["c"] = StatusValue{StatusState::Stopped, std::nullopt, kMe, 3};
    x.expected = {};
    r.push_back(x);
  }
  {  // Scenario 3: resume after stop: tasks exist again and start.
    Row x{"resume after stop starts connector and regenerated tasks"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}};
    x.actual.connector_statuses["c"] = StatusValue{StatusState::Stopped, std::nullopt, kMe, 3};
    x.expected = {"start-connector c STARTED", "start-task c-0 STARTED"};
    r.push_back(x);
  }
  {  // Scenario 5: shrink 4 -> 2: removed ids stop and lose their status, on every worker.
    Row x{"shrink: removed task ids stopped, statuses removed"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2);
    x.desired.assigned_tasks = {{"c", 0}, {"c", 2}};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.actual.tasks[{"c", 2}] = running_task(2);
    x.actual.task_statuses[{"c", 2}] = StatusValue{StatusState::Running, std::nullopt, kMe, 5};
    x.actual.task_statuses[{"c", 3}] = StatusValue{StatusState::Unassigned, std::nullopt, kMe, 5};
    x.expected = {"stop-task c-2 (remove status)", "remove-task-status c-3"};
    r.push_back(x);
  }
  {  // A follower leaves other workers' stale statuses to the leader.
    Row x{"follower does not remove another worker's status"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2);
    x.actual.task_statuses[{"c", 3}] = StatusValue{StatusState::Running, std::nullopt, kOther, 5};
    x.expected = {};
    r.push_back(x);
  }
  {  // The leader removes statuses of deleted connectors and task ids, whoever wrote them.
    Row x{"leader removes stale statuses of every worker"};
    x.desired = base();
    x.desired.is_leader = true;
    x.desired.connectors["c"] = connector(2);
    x.actual.task_statuses[{"c", 3}] = StatusValue{StatusState::Running, std::nullopt, kOther, 5};
    x.actual.task_statuses[{"c", 1}] = StatusValue{StatusState::Running, std::nullopt, kOther, 5};
    x.actual.connector_statuses["gone"] = StatusValue{StatusState::Running, std::nullopt, kOther, 5};
    x.expected = {"remove-connector-status gone", "remove-task-status c-3"};
    r.push_back(x);
  }
  {  // Deleted connector: stopped with its status, its tasks too.
    Row x{"deleted connector stops with status removal"};
    x.desired = base();
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.expected = {"stop-connector c (remove status)", "stop-task c-0 (remove status)"};
    r.push_back(x);
  }
  {  // Revoked (still configured): stopped, status kept (the runtime writes UNASSIGNED).
    Row x{"revoked connector and task stop without status removal"};
    x.desired = base();
    x.desired.connectors["c"] = connector(1);
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.expected = {"stop-connector c", "stop-task c-0"};
    r.push_back(x);
  }
  {  // Config changes restart the changed instances only.
    Row x{"changed connector config and task config restart"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2, TargetState::Started, "2");
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}, {"c", 1}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0, TargetState::Started, "2");
    x.actual.tasks[{"c", 1}] = running_task(1, TargetState::Started, "1");
    x.expected = {"restart-connector c STARTED", "restart-task c-1 STARTED"};
    r.push_back(x);
  }
  {  // Not applied yet: no starts, but stops and pauses go on.
    Row x{"assignment not applied: no starts, pause still applied"};
    x.desired = base();
    x.desired.may_start = false;
    x.desired.connectors["c"] = connector(2, TargetState::Paused);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}, {"c", 1}};
    x.actual.tasks[{"c", 1}] = running_task(1);
    x.expected = {"set-task-target c-1 PAUSED"};
    r.push_back(x);
  }
  {  // KIP-745 includeTasks=true onlyFailed=false: every instance here restarts once.
    Row x{"restart request with tasks restarts all local instances"};
    x.desired = base();
    x.desired.connectors["c"] = connector(3);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}, {"c", 2}};
    x.desired.restarts = {{"c", true, false}, {"c", true, false}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.actual.tasks[{"c", 2}] = running_task(2);
    x.expected = {"restart-connector c STARTED (restart request)", "restart-task c-0 STARTED (restart request)",
                  "restart-task c-2 STARTED (restart request)"};
    r.push_back(x);
  }
  {  // KIP-745 onlyFailed=true: only FAILED instances of this worker.
    Row x{"restart request onlyFailed selects failed instances"};
    x.desired = base();
    x.desired.connectors["c"] = connector(3);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}, {"c", 2}};
    x.desired.restarts = {{"c", true, true}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.actual.tasks[{"c", 2}] = running_task(2);
    x.actual.connector_statuses["c"] = StatusValue{StatusState::Running, std::nullopt, kMe, 2};
    x.actual.task_statuses[{"c", 0}] = StatusValue{StatusState::Running, std::nullopt, kMe, 2};
    x.actual.task_statuses[{"c", 2}] = StatusValue{StatusState::Failed, std::string("boom"), kMe, 2};
    x.expected = {"restart-task c-2 STARTED (restart request)"};
    r.push_back(x);
  }
  {  // KIP-745 without includeTasks: the connector only; a worker owning only tasks does nothing.
    Row x{"restart request without tasks on a tasks-only worker"};
    x.desired = base();
    x.desired.connectors["c"] = connector(2);
    x.desired.assigned_tasks = {{"c", 1}};
    x.desired.restarts = {{"c", false, false}};
    x.actual.tasks[{"c", 1}] = running_task(1);
    x.expected = {};
    r.push_back(x);
  }
  {  // Quiet cluster: nothing to do.
    Row x{"converged: no actions"};
    x.desired = base();
    x.desired.connectors["c"] = connector(1);
    x.desired.assigned_connectors = {"c"};
    x.desired.assigned_tasks = {{"c", 0}};
    x.actual.connectors["c"] = RunningConnector{conf("1"), TargetState::Started};
    x.actual.tasks[{"c", 0}] = running_task(0);
    x.actual.connector_statuses["c"] = StatusValue{StatusState::Running, std::nullopt, kMe, 2};
    x.actual.task_statuses[{"c", 0}] = StatusValue{StatusState::Running, std::nullopt, kOther, 2};
    x.expected = {};
    r.push_back(x);
  }
  return r;
}

}  // namespace

TEST_CASE("reconcile: table of Connect behaviours", "[herder][reconciler]") {
  for (const auto& row : rows()) {
    SECTION(row.name) {
      INFO(row.name);
      CHECK(texts(reconcile(row.desired, row.actual)) == row.expected);
    }
  }
}

TEST_CASE("reconcile: applying the actions converges (second pass is empty)", "[herder][reconciler]") {
  // Simulate carrying out the actions on the actual state, then reconcile again.
  for (const auto& row : rows()) {
    INFO(row.name);
    ActualState a = row.actual;
    const auto& d = row.desired;
    for (const auto& act : reconcile(d, a)) {
      using K = Action::Kind;
      switch (act.kind) {
        case K::StopConnector: a.connectors.erase(act.connector);
          if (act.remove_status) a.connector_statuses.erase(act.connector);
          break;
        case K::StopTask: a.tasks.erase(*act.task);
          if (act.remove_status) a.task_statuses.erase(*act.task);
          break;
        case K::RemoveConnectorStatus: a.connector_statuses.erase(act.connector); break;
        case K::RemoveTaskStatus: a.task_statuses.erase(*act.task); break;
        case K::WriteConnectorStatus: a.connector_statuses[act.connector] = StatusValue{act.status, std::nullopt, kMe, 0}; break;
        case K::RestartConnector:
        case K::StartConnector:
        case K::SetConnectorTarget:
          a.connectors[act.connector] = RunningConnector{d.connectors.at(act.connector).config, act.target};
          break;
        case K::RestartTask:
        case K::StartTask:
        case K::SetTaskTarget:
          a.tasks[*act.task] = RunningTask{d.connectors.at(act.connector).tasks.at(act.task->task), act.target};
          break;
      }
    }
    DesiredState d2 = d;
    d2.restarts.clear();  // consumed
    CHECK(texts(reconcile(d2, a)).empty());
  }
}


TEST_CASE("reconcile plan: the reconciler's table yields every action kind", "[herder][reconciler]") {
  // Issue 25's acceptance: the table covers starts and stops of connectors
  // and tasks, restarts, target states, status writes and tombstones (the
  // rebalance decisions are tabled in test_rebalance_plan.cpp).
  std::set<std::string> seen;
  std::set<std::string> stops_removing_status;
  for (const auto& row : rows())
    for (const auto& a : reconcile(row.desired, row.actual)) {
      seen.insert(kind_name(a.kind));
      if (a.remove_status) stops_removing_status.insert(kind_name(a.kind));
      if (a.restarting) seen.insert(std::string(kind_name(a.kind)) + " (restart request)");
    }
  for (auto k : kAllActionKinds) {
    INFO(kind_name(k));
    CHECK(seen.count(kind_name(k)) == 1);
  }
  // A stop with its tombstone (deleted connector, removed task id), and a
  // KIP-745 restart (RESTARTING written first), each have a row too.
  CHECK(stops_removing_status == std::set<std::string>{"stop-connector", "stop-task"});
  CHECK(seen.count("restart-connector (restart request)") == 1);
  CHECK(seen.count("restart-task (restart request)") == 1);
}

}  // namespace unity_test_reconciler
