#pragma once
// The herder's reconciler: one pure function from (desired state, actual
// state) to the actions that make this worker run what it should
// (DESIGN.md "The herder as a reconciler"). No I/O, no clock, no threads:
// the DistributedHerder builds both states on its apply strand, calls
// reconcile() and carries the actions out in the order they are returned.
//
// Connect behaviours it matches (DistributedHerder / Worker / AbstractHerder):
//   * target states (STARTED / PAUSED / STOPPED, KIP-875) are applied by every
//     worker to the connectors AND tasks it runs, wherever the connector runs;
//   * a STOPPED connector runs nothing and reports status STOPPED with no tasks;
//   * a task whose committed config changed is restarted; a task id that no
//     longer exists is stopped and its status is removed (tombstone);
//   * restart requests (KIP-745, `restart-connector-<name>`) restart, on their
//     own worker, the selected instances: the connector unless onlyFailed and
//     it is not FAILED, its tasks when includeTasks (onlyFailed: FAILED ones);
//   * the leader removes statuses of connectors and tasks that no longer
//     exist (Connect's onAssigned tombstones), so every worker's view converges.

#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "protocol/connect/types.h"
#include "worker/storage/records.h"

namespace kc::herder {

using connect::ConnectorTaskId;
using storage::ConfigMap;
using storage::StatusState;
using storage::StatusValue;
using storage::TargetState;

/// One connector as the config topic describes it.
struct DesiredConnector {
  ConfigMap config;                          ///< `connector-<name>` properties
  TargetState target = TargetState::Started; ///< `target-state-<name>` (STARTED when absent)
  std::map<int32_t, ConfigMap> tasks;        ///< committed task configs, ids 0..N-1
};

/// A restart request read from the config topic (KIP-745).
struct RestartRequest {
  std::string connector;
  bool include_tasks = false;  ///< includeTasks
  bool only_failed = false;    ///< onlyFailed
};

/// What this worker should run: the config snapshot plus its assignment.
struct DesiredState {
  std::string worker_id;                        ///< this worker ("host:port"), as in status records
  bool is_leader = false;                       ///< leader of the current generation
  /// False while the current assignment is not yet applied (revocations or
  /// config catch-up pending): nothing new is started then (Connect starts
  /// work only once the rebalance completed, reference 4.4).
  bool may_start = true;
  std::map<std::string, DesiredConnector> connectors;  ///< every configured connector
  std::set<std::string> assigned_connectors;           ///< this worker's connectors
  std::set<ConnectorTaskId> assigned_tasks;            ///< this worker's tasks
  std::vector<RestartRequest> restarts;                ///< pending restart requests, oldest first
};

/// A connector instance this worker runs, with what it was started with.
struct RunningConnector {
  ConfigMap config;
  TargetState target = TargetState::Started;
};

/// A task instance this worker runs, with what it was started with.
struct RunningTask {
  ConfigMap config;  ///< the task config it runs
  TargetState target = TargetState::Started;
};

/// What this worker runs now, plus the status-topic view (the cached status
/// of every connector and task, from every worker).
struct ActualState {
  std::map<std::string, RunningConnector> connectors;
  std::map<ConnectorTaskId, RunningTask> tasks;
  std::map<std::string, StatusValue> connector_statuses;
  std::map<ConnectorTaskId, StatusValue> task_statuses;
};

/// One step for the herder. Kinds and their fields:
///   StopConnector / StopTask: stop the instance (graceful timeout);
///     `remove_status` = afterwards write a status tombstone, because the
///     connector or task id no longer exists (or the connector is STOPPED);
///   StartConnector / StartTask: start with `target`;
///   RestartConnector / RestartTask: stop, write RESTARTING when `restarting`
///     (KIP-745 requests), start again with `target`;
///   SetConnectorTarget / SetTaskTarget: pause or resume in place;
///   WriteConnectorStatus: write `status` for the connector (STOPPED);
///   RemoveConnectorStatus / RemoveTaskStatus: write a status tombstone.
struct Action {
  enum class Kind {
    StopConnector,
    StopTask,
    RemoveConnectorStatus,
    RemoveTaskStatus,
    WriteConnectorStatus,
    RestartConnector,
    RestartTask,
    StartConnector,
    StartTask,
    SetConnectorTarget,
    SetTaskTarget,
  };
  Kind kind;
  std::string connector;                      ///< connector name (every kind)
  std::optional<ConnectorTaskId> task;        ///< task kinds only
  TargetState target = TargetState::Started;  ///< Start*, Restart*, Set*Target
  StatusState status = StatusState::Stopped;  ///< WriteConnectorStatus
  bool remove_status = false;                 ///< Stop*: tombstone afterwards
  bool restarting = false;                    ///< Restart*: from a KIP-745 request
  bool plain_restart = false;                 ///< Restart*: a plain REST restart (no RESTARTING write)

  bool operator==(const Action&) const = default;
};

/// Short text of an action, e.g. "stop-task c-1 (remove status)", for logs and test failures.
std::string to_string(const Action& a);

/// The short name of an action kind, e.g. "stop-task" (the first word of to_string).
const char* kind_name(Action::Kind k);

/// Every Action::Kind in declaration order, for tests that must see each
/// one; the static_assert fails when a kind is added and not listed here.
inline constexpr std::array<Action::Kind, 11> kAllActionKinds{
    Action::Kind::StopConnector,   Action::Kind::StopTask,         Action::Kind::RemoveConnectorStatus,
    Action::Kind::RemoveTaskStatus, Action::Kind::WriteConnectorStatus, Action::Kind::RestartConnector,
    Action::Kind::RestartTask,     Action::Kind::StartConnector,   Action::Kind::StartTask,
    Action::Kind::SetConnectorTarget, Action::Kind::SetTaskTarget};
static_assert(static_cast<size_t>(Action::Kind::SetTaskTarget) + 1 == kAllActionKinds.size(),
              "a new Action::Kind must be listed in kAllActionKinds");

/// The actions that turn `actual` into `desired`, in execution order:
/// stops, status tombstones and writes, restarts, starts, target changes.
/// Each instance appears in at most one start/stop/restart action. Restart
/// requests are all consumed (the caller clears them after executing).
/// Pure and deterministic: sorted by connector name and task id.
std::vector<Action> reconcile(const DesiredState& desired, const ActualState& actual);

}  // namespace kc::herder
