#pragma once
// What both herders (DistributedHerder, StandaloneHerder) do the same way,
// as free functions over HerderConfig, so that the two modes build the
// same runtime Worker, list the same plugins, validate connector configs
// with the same bounded validate() and find a sink connector's consumer
// group in the same place. No state; any thread unless noted.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "worker/api/herder_api.h"
#include "worker/connectors/config_def.h"
#include "worker/herder/connector_config_cache.h"
#include "worker/herder/distributed_herder.h"
#include "worker/herder/reconciler.h"
#include "worker/herder/sink_offsets.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/call_watchdog.h"
#include "worker/runtime/connector_config.h"
#include "worker/runtime/worker.h"

namespace kc::herder {

/// A status-store state in the REST layer's terms.
inline rest::ConnectState to_rest(storage::StatusState s) {
  switch (s) {
    case storage::StatusState::Unassigned: return rest::ConnectState::Unassigned;
    case storage::StatusState::Running: return rest::ConnectState::Running;
    case storage::StatusState::Paused: return rest::ConnectState::Paused;
    case storage::StatusState::Failed: return rest::ConnectState::Failed;
    case storage::StatusState::Restarting: return rest::ConnectState::Restarting;
    case storage::StatusState::Stopped: return rest::ConnectState::Stopped;
    case storage::StatusState::Destroyed: return rest::ConnectState::Destroyed;
  }
  return rest::ConnectState::Unassigned;
}

/// A REST target state (pause/resume/stop, initial_state) in storage terms.
inline storage::TargetState to_storage(rest::TargetState t) {
  switch (t) {
    case rest::TargetState::Started: return storage::TargetState::Started;
    case rest::TargetState::Paused: return storage::TargetState::Paused;
    case rest::TargetState::Stopped: return storage::TargetState::Stopped;
  }
  return storage::TargetState::Started;
}

/// Starts connector `c` from its config as written, parsed once through
/// `cache` (providers resolved); a config that cannot be read is a refused
/// start (Worker::refuse_start, counted in the metrics). Returns the
/// failure, for the caller to report FAILED. Blocking while a provider
/// reads: the herder's apply strand.
Status start_connector_cached(runtime::Worker& worker, ConnectorConfigCache& cache, const std::string& c,
                              const storage::ConfigMap& conf, storage::TargetState target);

/// The same for task `t` of a connector whose config as written is
/// `connector_conf`; `eos` (may be empty) gives the exactly-once checks
/// around its producer from the parsed connector config.
Status start_task_cached(runtime::Worker& worker, ConnectorConfigCache& cache, const connect::ConnectorTaskId& t,
                         const storage::ConfigMap& connector_conf, const storage::ConfigMap& task_conf,
                         storage::TargetState target,
                         const std::function<runtime::ExactlyOnceTaskChecks(const runtime::ConnectorConfig&)>& eos = {});

/// The apply strand's record of what it started (`connectors`, `tasks`),
/// brought in line with what `worker` runs: an instance that ended on its
/// own (abandoned after a graceful timeout) is forgotten unless its start
/// failed (`failed_c`, `failed_t`: kept so it is not retried in a loop), and
/// one running without a record gets an empty one (unknown config:
/// restarted if assigned). Returns the reconciler's ActualState with the
/// given statuses. Apply strand.
ActualState sync_actual_state(const runtime::Worker& worker, std::map<std::string, RunningConnector>& connectors,
                              std::map<connect::ConnectorTaskId, RunningTask>& tasks,
                              const std::set<std::string>& failed_c,
                              const std::set<connect::ConnectorTaskId>& failed_t,
                              std::map<std::string, storage::StatusValue> connector_statuses,
                              std::map<connect::ConnectorTaskId, storage::StatusValue> task_statuses);

/// The runtime Worker's settings from the herder's (worker id, client
/// settings and overrides, flush and shutdown timeouts, converters,
/// providers, metrics, producer sharing, exactly-once). A running
/// connector's requestTaskReconfiguration calls `on_task_reconfiguration`
/// with its name, on the connector's own thread (post it to the herder's
/// io thread).
runtime::WorkerOptions worker_options_from(const HerderConfig& cfg,
                                           std::function<void(const std::string&)> on_task_reconfiguration);

/// "source", "sink" or "unknown" for a connector config: its
/// connector.class looked up in `registry` (GET /connectors/{c}'s "type").
rest::ConnectorType connector_type_of(const connectors::PluginRegistry& registry, const storage::ConfigMap& conf);

/// GET /connector-plugins: the connector plugins of `registry`; unless
/// `connectors_only`, also every converter (under each interface it
/// implements, as Connect lists them), transformation and predicate.
std::vector<rest::PluginInfo> plugin_infos(const connectors::PluginRegistry& registry, bool connectors_only);

/// Key prefix of a validate() call in AbandonedCalls: "plugin <class>".
inline constexpr const char* kValidateKey = "plugin ";

/// The one watchdog of every herder's validate() calls. Never destroyed: a
/// deadline callback may drop the last reference to a herder, which must
/// not join the thread it runs on.
runtime::CallWatchdog& validate_watchdog();

/// The plugin's validate() with every worker-side check
/// (validate_resolved, apply_override_policy, exactly-once and
/// tasks.max.limit from `cfg`) on a thread of its own under
/// connector.call.timeout.ms, keyed kValidateKey + connector.class in
/// `abandoned`. `done` runs once, from any thread: the validation, or 500
/// naming the plugin and the call (deadline passed, or refused because an
/// earlier validate() of the plugin, or too many calls, are still stuck),
/// or 500 with a failure that escaped the plugin. Non-blocking.
void validate_bounded(const HerderConfig& cfg, const connectors::PluginRegistry& registry,
                      const std::shared_ptr<runtime::AbandonedCalls>& abandoned, rest::ConnectorConfig config,
                      std::function<void(rest::Reply<connectors::ConfigValidation>)> done);

/// Where a sink connector's offsets live (KIP-875): its consumer group, an
/// admin client with the worker's client settings, admin.* and (when the
/// override policy allows them all) the connector's admin.override.*, its
/// named topics, and worker.sync.timeout.ms × 3 per admin call.
SinkGroup sink_group_of(const HerderConfig& cfg, const runtime::ConnectorConfig& conf);

}  // namespace kc::herder
