#include "worker/herder/reconciler.h"

#include <algorithm>

namespace kc::herder {

namespace {

using K = Action::Kind;

/// Rank of a kind in the execution order.
int rank(K k) {
  switch (k) {
    case K::StopConnector:
    case K::StopTask: return 0;
    case K::RemoveConnectorStatus:
    case K::RemoveTaskStatus:
    case K::WriteConnectorStatus: return 1;
    case K::RestartConnector:
    case K::RestartTask: return 2;
    case K::StartConnector:
    case K::StartTask: return 3;
    case K::SetConnectorTarget:
    case K::SetTaskTarget: return 4;
  }
  return 5;
}

/// The desired connector, or null when it is not configured.
const DesiredConnector* find(const DesiredState& d, const std::string& c) {
  auto it = d.connectors.find(c);
  return it == d.connectors.end() ? nullptr : &it->second;
}

/// The committed config of task `t`, or null when the id does not exist
/// (connector gone, id beyond the task count, or the connector is STOPPED).
const ConfigMap* task_config(const DesiredState& d, const ConnectorTaskId& t) {
  const auto* dc = find(d, t.connector);
  if (!dc || dc->target == TargetState::Stopped) return nullptr;
  auto it = dc->tasks.find(t.task);
  return it == dc->tasks.end() ? nullptr : &it->second;
}

template <typename Key>
bool failed_here(const std::map<Key, StatusValue>& statuses, const Key& k, const std::string& worker_id) {
  auto it = statuses.find(k);
  return it != statuses.end() && it->second.state == StatusState::Failed && it->second.worker_id == worker_id;
}

Action connector_action(K kind, const std::string& c, TargetState target = TargetState::Started) {
  Action a{kind, c};
  a.target = target;
  return a;
}

Action task_action(K kind, const ConnectorTaskId& t, TargetState target = TargetState::Started) {
  Action a{kind, t.connector, t};
  a.target = target;
  return a;
}

}  // namespace

const char* kind_name(Action::Kind k) {
  switch (k) {
    case K::StopConnector: return "stop-connector";
    case K::StopTask: return "stop-task";
    case K::RemoveConnectorStatus: return "remove-connector-status";
    case K::RemoveTaskStatus: return "remove-task-status";
    case K::WriteConnectorStatus: return "write-connector-status";
    case K::RestartConnector: return "restart-connector";
    case K::RestartTask: return "restart-task";
    case K::StartConnector: return "start-connector";
    case K::StartTask: return "start-task";
    case K::SetConnectorTarget: return "set-connector-target";
    case K::SetTaskTarget: return "set-task-target";
  }
  return "?";
}

std::string to_string(const Action& a) {
  std::string s = kind_name(a.kind);
  s += " " + (a.task ? a.task->to_string() : a.connector);
  switch (a.kind) {
    case K::StartConnector:
    case K::StartTask:
    case K::RestartConnector:
    case K::RestartTask:
    case K::SetConnectorTarget:
    case K::SetTaskTarget: s += std::string(" ") + storage::target_state_name(a.target); break;
    case K::WriteConnectorStatus: s += " STOPPED"; break;
    default: break;
  }
  if (a.remove_status) s += " (remove status)";
  if (a.restarting) s += " (restart request)";
  return s;
}

std::vector<Action> reconcile(const DesiredState& d, const ActualState& a) {
  std::vector<Action> out;
  std::set<std::string> acted_c;       // connectors with a stop/start/restart already
  std::set<ConnectorTaskId> acted_t;   // tasks likewise

  // Connectors this worker runs.
  for (const auto& [c, run] : a.connectors) {
    const auto* dc = find(d, c);
    if (!dc) {
      Action s = connector_action(K::StopConnector, c);
      s.remove_status = true;  // deleted: its status goes too
      out.push_back(s);
    } else if (!d.assigned_connectors.count(c) || dc->target == TargetState::Stopped) {
      out.push_back(connector_action(K::StopConnector, c));
    } else if (run.config != dc->config) {
      out.push_back(connector_action(K::RestartConnector, c, dc->target));
    } else if (run.target != dc->target) {
      out.push_back(connector_action(K::SetConnectorTarget, c, dc->target));
      continue;
    } else {
      continue;
    }
    acted_c.insert(c);
  }
  // Connectors assigned here and not running.
  for (const auto& c : d.assigned_connectors) {
    if (a.connectors.count(c)) continue;
    const auto* dc = find(d, c);
    if (!dc || dc->target == TargetState::Stopped || !d.may_start) continue;
    out.push_back(connector_action(K::StartConnector, c, dc->target));
    acted_c.insert(c);
  }
  // STOPPED connectors assigned here report STOPPED (KIP-875), once.
  for (const auto& c : d.assigned_connectors) {
    const auto* dc = find(d, c);
    if (!dc || dc->target != TargetState::Stopped) continue;
    auto st = a.connector_statuses.find(c);
    if (st != a.connector_statuses.end() && st->second.state == StatusState::Stopped &&
        st->second.worker_id == d.worker_id)
      continue;
    Action w = connector_action(K::WriteConnectorStatus, c);
    w.status = StatusState::Stopped;
    out.push_back(w);
  }

  // Tasks this worker runs.
  for (const auto& [t, run] : a.tasks) {
    const ConfigMap* tc = task_config(d, t);
    if (!tc) {
      Action s = task_action(K::StopTask, t);
      s.remove_status = true;  // the id no longer exists
      out.push_back(s);
    } else if (!d.assigned_tasks.count(t)) {
      out.push_back(task_action(K::StopTask, t));
    } else if (run.config != *tc) {
      out.push_back(task_action(K::RestartTask, t, find(d, t.connector)->target));
    } else if (run.target != find(d, t.connector)->target) {
      out.push_back(task_action(K::SetTaskTarget, t, find(d, t.connector)->target));
      continue;
    } else {
      continue;
    }
    acted_t.insert(t);
  }
  // Tasks assigned here and not running.
  for (const auto& t : d.assigned_tasks) {
    if (a.tasks.count(t) || !d.may_start) continue;
    if (!task_config(d, t)) continue;
    out.push_back(task_action(K::StartTask, t, find(d, t.connector)->target));
    acted_t.insert(t);
  }

  // Restart requests (KIP-745): each selected instance once, on its owner.
  for (const auto& r : d.restarts) {
    const auto* dc = find(d, r.connector);
    if (!dc || dc->target == TargetState::Stopped) continue;
    if (d.assigned_connectors.count(r.connector) && !acted_c.count(r.connector) &&
        (!r.only_failed || failed_here(a.connector_statuses, r.connector, d.worker_id))) {
      Action x = connector_action(K::RestartConnector, r.connector, dc->target);
      x.restarting = true;
      out.push_back(x);
      acted_c.insert(r.connector);
    }
    if (!r.include_tasks) continue;
    for (const auto& t : d.assigned_tasks) {
      if (t.connector != r.connector || acted_t.count(t) || !task_config(d, t)) continue;
      if (r.only_failed && !failed_here(a.task_statuses, t, d.worker_id)) continue;
      Action x = task_action(K::RestartTask, t, dc->target);
      x.restarting = true;
      out.push_back(x);
      acted_t.insert(t);
    }
  }

  // Statuses of what no longer exists: our own always, everyone's on the leader.
  for (const auto& [c, st] : a.connector_statuses) {
    if (find(d, c) || a.connectors.count(c)) continue;
    if (d.is_leader || st.worker_id == d.worker_id) out.push_back(connector_action(K::RemoveConnectorStatus, c));
  }
  for (const auto& [t, st] : a.task_statuses) {
    if (task_config(d, t) || a.tasks.count(t)) continue;
    if (d.is_leader || st.worker_id == d.worker_id) out.push_back(task_action(K::RemoveTaskStatus, t));
  }

  std::stable_sort(out.begin(), out.end(), [](const Action& x, const Action& y) { return rank(x.kind) < rank(y.kind); });
  return out;
}

}  // namespace kc::herder
