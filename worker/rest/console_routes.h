#pragma once
// The web console and the cluster view it reads (issue 28; ours, not
// Connect's), added next to the Connect API:
//   GET  /ui, /ui/<file>      the console's files, compiled into the binary
//                             (ui_assets.h); not registered when
//                             rest.ui.enable=false (then 404)
//   GET  /ui/api/connectors/{connector}/config
//                             the connector config with every secret value
//                             shown as "[hidden]" (common/secrets.h)
//   GET  /worker              this worker's place in the group: MemberView,
//                             health, uptime, RSS, threads, records per task,
//                             and its last rebalances (?rebalances=N, 0..256,
//                             default 50)
//   GET  /cluster             every member's GET /worker, gathered by the
//                             leader over the members' advertised URLs of its
//                             last round (a follower forwards it, as Connect
//                             forwards leader-only requests); a member that
//                             does not answer within `member_timeout` is an
//                             entry with "error"; when the leader itself
//                             cannot be reached, a follower answers 200 with
//                             only its own entry and "partial": true, "error"
//   POST /cluster/workers/{worker}/drain
//                             the leader relays POST /admin/drain to the
//                             member whose worker id is {worker}
// Every route passes the REST server's checks (basic auth, TLS listeners),
// and the member requests carry the caller's Authorization header. A 401 on
// /ui carries a Basic challenge (rest_server.cpp) so that a browser asks.
//
// Threads: the handlers run on the REST io thread and never block; the herder
// answers member_view and health at once, and peers answer through
// RestServer::send.

#include <chrono>
#include <cstdint>
#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "worker/api/herder_api.h"
#include "worker/metrics/worker_metrics.h"
#include "worker/rest/rest_server.h"

namespace kc::rest {

/// Settings of the console routes.
struct ConsoleOptions {
  bool ui_enabled = true;  ///< rest.ui.enable: serve GET /ui
  /// How long the leader waits for each member's GET /worker during GET
  /// /cluster, ms; the console polls every second, so a hung member must
  /// not hold the whole answer.
  std::chrono::milliseconds member_timeout{3000};
};

/// Default number of rebalance records in GET /worker and GET /cluster.
inline constexpr std::size_t kConsoleRebalanceLimit = 50;

/// What GET /worker answers, as JSON (shape in docs/reference/rest-api.md):
/// worker_id, url, member_id, is_leader, leader_url, generation, protocol,
/// health {status, message, worker_state}, uptime_ms, now_ms (wall clock,
/// ms since the epoch), connectors, tasks ("c-0"), draining, rss_bytes,
/// threads, task_records {"c-0": records}, rebalances (the last `limit`).
nlohmann::json worker_to_json(const MemberView& view, const Health& health, const std::vector<RebalanceRecord>& history,
                              std::size_t limit, const metrics::ProcessStats& process,
                              const std::map<std::string, double>& task_records, int64_t now_ms);

/// Parses ?rebalances=N: 0..256, default kConsoleRebalanceLimit; nullopt
/// when it is not an integer in range.
std::optional<std::size_t> parse_rebalance_limit(const RestRequest& req);

/// Adds the routes above to `server`. `herder` and `server` must outlive the
/// server's stop(); `metrics` may be null (then rss_bytes, threads and
/// task_records are 0 / empty).
void add_console_routes(RestServer& server, HerderApi& herder, std::shared_ptr<metrics::WorkerMetrics> metrics,
                        ConsoleOptions options = {});

}  // namespace kc::rest
