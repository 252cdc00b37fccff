#include "worker/rest/observability.h"

#include <algorithm>
#include <string>

namespace kc::rest {

namespace {

using nlohmann::json;

json ts_or_null(int64_t ms) { return ms > 0 ? json(ms) : json(nullptr); }

json dur_or_null(int64_t from, int64_t to) { return from > 0 && to >= from ? json(to - from) : json(nullptr); }

json task_list(const std::vector<connect::ConnectorTaskId>& ids) {
  json a = json::array();
  for (const auto& id : ids) a.push_back(id.to_string());
  return a;
}

}  // namespace

json rebalance_to_json(const RebalanceRecord& r) {
  json stops = json::array();
  for (const auto& s : r.task_stops)
    stops.push_back({{"task", s.id.to_string()}, {"stop_ms", s.stop_ms}, {"timed_out", s.timed_out}});
  return json{
      {"generation", r.generation},
      {"reason", r.reason},
      {"protocol", r.protocol},
      {"leader", r.leader_id},
      {"leader_url", r.leader_url},
      {"is_leader", r.is_leader},
      {"error", r.error},
      {"config_offset", r.config_offset},
      {"delay_ms", r.delay_ms},
      {"join_started_ms", ts_or_null(r.started_ms)},
      {"sync_done_ms", ts_or_null(r.assigned_ms)},
      {"assignment_applied_ms", ts_or_null(r.applied_ms)},
      {"join_to_sync_ms", dur_or_null(r.started_ms, r.assigned_ms)},
      {"sync_to_applied_ms", dur_or_null(r.assigned_ms, r.applied_ms)},
      {"assigned", {{"connectors", r.assigned_connectors}, {"tasks", task_list(r.assigned_tasks)}}},
      {"revoked", {{"connectors", r.revoked_connectors}, {"tasks", task_list(r.revoked_tasks)}}},
      {"task_stops", stops},
  };
}

json rebalances_to_json(const std::vector<RebalanceRecord>& history, std::size_t limit) {
  json out = json::array();
  const std::size_t first = history.size() > limit ? history.size() - limit : 0;
  for (std::size_t i = first; i < history.size(); ++i) out.push_back(rebalance_to_json(history[i]));
  return out;
}

void add_observability_routes(RestServer& server, const HerderApi& herder,
                              std::shared_ptr<metrics::WorkerMetrics> metrics) {
  server.add_route(Method::Get, "/metrics", [metrics](const RestRequest&, Responder r) {
    if (!metrics) return r(RestResponse::error(503, "Metrics are not available"));
    RestResponse resp;
    resp.status = 200;
    resp.body = metrics->render();
    resp.content_type = metrics::Registry::kContentType;
    r(std::move(resp));
  });
  const HerderApi* h = &herder;
  server.add_route(Method::Get, "/rebalances", [h](const RestRequest& req, Responder r) {
    std::size_t limit = kDefaultRebalanceLimit;
    if (auto q = req.query_value("limit")) {
      try {
        std::size_t pos = 0;
        long v = std::stol(*q, &pos);
        if (pos != q->size() || v < 1 || v > 256) throw std::out_of_range("limit");
        limit = static_cast<std::size_t>(v);
      } catch (const std::exception&) {
        return r(RestResponse::error(400, "limit must be an integer between 1 and 256"));
      }
    }
    r(RestResponse::json(200, rebalances_to_json(h->rebalance_history(), limit).dump()));
  });
}

}  // namespace kc::rest
