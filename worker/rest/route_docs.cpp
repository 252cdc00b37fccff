// The REST route table (route_docs.h). Statuses and shapes follow the
// handlers in rest_server.cpp, observability.cpp and admin_routes.cpp.
#include "worker/rest/route_docs.h"

#include <array>

namespace kc::rest {
namespace {

constexpr const char* kInfo = "ConnectorInfo `{name, config, tasks:[{connector, task}], type}`";
constexpr const char* kStatus =
    "`{name, connector:{state, worker_id, trace?}, tasks:[{id, state, worker_id, trace?}], type}`";

const std::array kRoutes = {
    RouteDoc{Method::Get, "/", "Worker version and Kafka cluster id.", "", "`{version, commit, kafka_cluster_id}`",
             "`200`"},
    RouteDoc{Method::Get, "/health",
             "Worker health (KIP-1017): healthy once it has joined the group and read the config topic.", "",
             "`{status, message, worker_state?}`",
             "`200` healthy; `503` starting, rebalancing or unavailable; `500` unhealthy or no answer within 10 s"},
    RouteDoc{Method::Get, "/connectors", "Connector names, or with `expand` their status and/or info.",
             "query `expand=status`, `expand=info` (repeatable)",
             "`[name...]`; with expand `{name: {status?, info?}}`", "`200`"},
    RouteDoc{Method::Post, "/connectors", "Creates a connector.",
             "`{name, config:{...}}` (`initial_state`: RUNNING, PAUSED or STOPPED, optional)", kInfo,
             "`201` created (Location header); `400` invalid config or name; `409` already exists, rebalance in "
             "progress or no leader known"},
    RouteDoc{Method::Get, "/connectors/{connector}", "One connector.", "", kInfo, "`200`; `404` unknown connector"},
    RouteDoc{Method::Delete, "/connectors/{connector}", "Deletes a connector (its offsets stay).", "", "",
             "`204`; `404` unknown connector; `409` rebalance in progress or no leader known"},
    RouteDoc{Method::Get, "/connectors/{connector}/config", "The connector's stored config.", "",
             "`{key: value}`", "`200`; `404` unknown connector"},
    RouteDoc{Method::Put, "/connectors/{connector}/config", "Creates or replaces a connector's config.",
             "`{key: value}`", kInfo,
             "`201` created; `200` updated; `400` invalid config, or name mismatch; `409` rebalance in progress or "
             "no leader known"},
    RouteDoc{Method::Patch, "/connectors/{connector}/config",
             "Merges keys into the stored config (KIP-477); a null value removes the key.", "`{key: value|null}`",
             kInfo, "`200`; `400` invalid result; `404` unknown connector; `409` rebalance in progress"},
    RouteDoc{Method::Get, "/connectors/{connector}/status", "State of the connector and each task.", "", kStatus,
             "`200`; `404` unknown connector"},
    RouteDoc{Method::Get, "/connectors/{connector}/tasks", "The task configs.", "",
             "`[{id:{connector, task}, config:{...}}]`", "`200`; `404` unknown connector; `409` rebalance in progress"},
    RouteDoc{Method::Get, "/connectors/{connector}/tasks/{task}/status", "State of one task.", "",
             "`{id, state, worker_id, trace?}`", "`200`; `404` unknown connector or task"},
    RouteDoc{Method::Post, "/connectors/{connector}/restart",
             "Restarts the connector, and with the query flags its (failed) tasks (KIP-745).",
             "query `includeTasks=true|false`, `onlyFailed=true|false` (both default false)",
             "with a flag set: the status to expect, as GET .../status, states RESTARTING",
             "`204` plain restart; `202` with includeTasks or onlyFailed; `404` unknown connector; `409` rebalance in "
             "progress"},
    RouteDoc{Method::Post, "/connectors/{connector}/tasks/{task}/restart", "Restarts one task.", "", "",
             "`204`; `404` unknown connector or task; `409` rebalance in progress"},
    RouteDoc{Method::Put, "/connectors/{connector}/pause", "Pauses the connector and its tasks.", "", "",
             "`202`; `404` unknown connector; `409` rebalance in progress or no leader known"},
    RouteDoc{Method::Put, "/connectors/{connector}/resume", "Resumes a paused or stopped connector.", "", "",
             "`202`; `404` unknown connector; `409` rebalance in progress or no leader known"},
    RouteDoc{Method::Put, "/connectors/{connector}/stop",
             "Stops the connector and removes its tasks, keeping its config (KIP-875).", "", "",
             "`204`; `404` unknown connector; `409` rebalance in progress or no leader known"},
    RouteDoc{Method::Get, "/connectors/{connector}/topics", "Topics the connector has used (KIP-558).", "",
             "`{name: {topics:[...]}}`", "`200`; `403` topic.tracking.enable=false; `404` unknown connector"},
    RouteDoc{Method::Put, "/connectors/{connector}/topics/reset", "Forgets the connector's active topics.", "", "",
             "`202`; `403` topic.tracking.enable or topic.tracking.allow.reset false; `404` unknown connector"},
    RouteDoc{Method::Get, "/connectors/{connector}/offsets", "The connector's committed offsets (KIP-875).", "",
             "`{offsets:[{partition:{...}, offset:{...}}]}`", "`200`; `404` unknown connector"},
    RouteDoc{Method::Patch, "/connectors/{connector}/offsets",
             "Alters the listed partitions' offsets of a STOPPED connector (KIP-875).",
             "`{offsets:[{partition:{...}, offset:{...}|null}]}`", "`{message}`",
             "`200`; `400` bad body, or the connector is not STOPPED; `404` unknown connector; `409` rebalance in "
             "progress"},
    RouteDoc{Method::Delete, "/connectors/{connector}/offsets",
             "Resets every offset of a STOPPED connector (KIP-875).", "", "`{message}`",
             "`200`; `400` the connector is not STOPPED; `404` unknown connector; `409` rebalance in progress"},
    RouteDoc{Method::Get, "/connector-plugins", "Installed plugins.",
             "query `connectorsOnly=false` adds converters, transformations and predicates",
             "`[{class, type, version}]`", "`200`"},
    RouteDoc{Method::Get, "/connector-plugins/{plugin}/config",
             "A plugin's config definition (KIP-769); docs/reference/connectors.md and transforms.md list them.", "",
             "`[{name, type, required, default_value, importance, documentation, group, order, width, display_name, "
             "dependents}]`",
             "`200`; `404` unknown plugin"},
    RouteDoc{Method::Put, "/connector-plugins/{plugin}/config/validate",
             "Validates a connector config without creating it.", "`{key: value}` (must name connector.class)",
             "ConfigInfos `{name, error_count, groups, configs:[{definition, value:{name, value, "
             "recommended_values, errors, visible}}]}`",
             "`200` (errors are in the body); `400` no connector.class, or not JSON"},
    RouteDoc{Method::Get, "/metrics", "Prometheus text exposition (docs/reference/metrics.md).", "",
             "text/plain; version=0.0.4", "`200`; `503` no metrics registry"},
    RouteDoc{Method::Get, "/rebalances", "This worker's recent rebalances, oldest first (ours).",
             "query `limit` 1..256 (default 50)",
             "`[{generation, reason, protocol, leader, leader_url, is_leader, error, ..., assigned, revoked, task_stops}]`",
             "`200`; `400` bad limit"},
    RouteDoc{Method::Get, "/worker", "This worker's place in the group, for the web console (ours).",
             "query `rebalances` 0..256 (default 50)",
             "`{worker_id, url, member_id, is_leader, leader_url, generation, protocol, health, uptime_ms, now_ms, "
             "connectors, tasks, draining, rss_bytes, threads, task_records, rebalances}`",
             "`200`; `400` bad rebalances"},
    RouteDoc{Method::Get, "/cluster", "Every member's `GET /worker`, gathered by the leader (ours; a follower forwards it).",
             "query `rebalances` 0..256 (default 50)",
             "`{served_by, leader_url, generation, now_ms, workers: [GET /worker body, or {url, member_id, error}]}`; "
             "from a follower whose leader does not answer, `partial: true`, `error` and only its own entry",
             "`200`; `400` bad rebalances; `503` before the leader's first round"},
    RouteDoc{Method::Post, "/cluster/workers/{worker}/drain",
             "The leader relays `POST /admin/drain` to the member with this worker id (ours; the console's drain).", "",
             "the member's `POST /admin/drain` answer", "the member's status; `404` no such member; `503` no round yet"},
    RouteDoc{Method::Get, "/ui/api/connectors/{connector}/config",
             "The connector config with every secret value shown as `[hidden]` (the web console's view; ours).", "",
             "`{key: value}`", "`200`; `404` unknown connector"},
    RouteDoc{Method::Get, "/ui", "The web console (ours; `rest.ui.enable`); a 401 here carries a Basic challenge.", "",
             "HTML", "`200`; `401` with `WWW-Authenticate: Basic`"},
    RouteDoc{Method::Get, "/ui/*", "The web console's files, compiled into the binary (ours).", "",
             "JavaScript, CSS", "`200`; `404` no such file"},
    RouteDoc{Method::Get, "/admin/loggers", "Every logger set on this worker, with its level (KIP-976 shape).",
             "", "`{logger: {level, last_modified}}` (`last_modified` ms since the epoch, null when never changed)",
             "`200`", true},
    RouteDoc{Method::Get, "/admin/loggers/{logger}", "One logger's level (KIP-976 shape).", "",
             "`{level, last_modified}`", "`200`; `404` unknown logger", true},
    RouteDoc{Method::Put, "/admin/loggers/{logger}",
             "Sets a logger's level: on this worker (`scope=worker`, the default), or on every worker through the "
             "config topic (`scope=cluster`, KIP-976).",
             "`{level}` (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF); query `scope=worker|cluster`",
             "scope=worker: `[logger...]` the names changed; scope=cluster: no body",
             "`200` (worker); `204` (cluster); `400` bad name, no level or unknown level", true},
    RouteDoc{Method::Post, "/admin/drain",
             "Drains this worker: its work moves to the others, then it shuts down (ours).", "",
             "`{worker_id, draining:true}`", "`202`", true},
    RouteDoc{Method::Post, "/admin/drain/members",
             "Asks the leader to drain a member (sent by a draining worker; KIP-507 signed under sessioned).",
             "`{member_id}`", "`{member_id, message}`",
             "`202`; `400` no member_id; `403` bad or missing signature; `409` not the leader or rebalancing", true},
    RouteDoc{Method::Post, "/connectors/{connector}/tasks",
             "Task configs a follower's connector generated, sent to the leader (KIP-507 signed).",
             "`[{config}]`", "", "`204`; `400` bad body; `403` bad or missing signature; `409` not the leader", true},
    RouteDoc{Method::Put, "/connectors/{connector}/fence",
             "Zombie fencing of an exactly-once source connector's tasks, sent to the leader (KIP-618, signed).", "",
             "", "`204`; `403` bad or missing signature; `404` unknown connector; `409` not the leader", true},
};

const std::array kCommon = {
    "`401` basic authentication (rest.extension.classes) refused the credentials",
    "`404` no route matches the path; `405` the path exists with another method",
    "`415` a body that is not `application/json` on POST, PUT or PATCH",
    "`500` the request timed out (90 s; a write may still be applied: read before retrying), or an unexpected "
    "error (the worker log has the request id)",
    "`409` a write reached a follower that could not forward it to the leader",
};

}  // namespace

std::span<const RouteDoc> route_docs() { return kRoutes; }

std::span<const char* const> common_statuses() { return kCommon; }

}  // namespace kc::rest
