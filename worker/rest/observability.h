#pragma once
// The worker's observability endpoints, added to the REST server next to the
// Connect API (issue 5):
//   GET /metrics     Prometheus text exposition of the worker's metrics
//                    (Content-Type text/plain; version=0.0.4);
//   GET /rebalances  the last rebalances seen by this worker, oldest first
//                    (newest last), as a JSON array; ?limit=N (1..256,
//                    default 50).
// GET /health is a built-in route of the REST server (HerderApi::health).
//
// Threads: both handlers run on the REST io thread and only take copies
// (registry render under its mutex, HerderApi::rebalance_history() under the
// herder's mutex); nothing touches the herder's io_context.

#include <cstddef>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/api/herder_api.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/rest/rest_server.h"

namespace kc::rest {

/// Default number of records GET /rebalances returns.
inline constexpr std::size_t kDefaultRebalanceLimit = 50;

/// One RebalanceRecord as JSON: generation, reason, protocol, leader,
/// leader_url, is_leader, error, config_offset, delay_ms, the timestamps
/// (join_started_ms, sync_done_ms, assignment_applied_ms; wall-clock ms,
/// null when not reached), durations derived from them, assigned and
/// revoked connectors/tasks ("conn-0" style task ids) and task_stops
/// ([{"task":"c-0","stop_ms":12,"timed_out":false}]).
nlohmann::json rebalance_to_json(const RebalanceRecord& r);

/// The last `limit` records of `history` (oldest first, newest last) as a
/// JSON array.
nlohmann::json rebalances_to_json(const std::vector<RebalanceRecord>& history,
                                  std::size_t limit = kDefaultRebalanceLimit);

/// Adds GET /metrics (rendering `metrics`; 503 if null) and GET /rebalances
/// (from `herder.rebalance_history()`) to `server`. `herder` must outlive
/// the server's stop().
void add_observability_routes(RestServer& server, const HerderApi& herder,
                              std::shared_ptr<metrics::WorkerMetrics> metrics);

}  // namespace kc::rest
