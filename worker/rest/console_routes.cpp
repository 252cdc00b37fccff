#include "worker/rest/console_routes.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <utility>

#include "common/json_bounds.h"
#include "common/secrets.h"
#include "worker/rest/json_codec.h"
#include "worker/rest/observability.h"
#include "worker/rest/ui_assets.h"

namespace kc::rest {

namespace {

using nlohmann::json;

int64_t wall_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

/// The "message" of a peer's Connect error body, else the first 200 bytes
/// of the body.
std::string error_message(const RestResponse& res) {
  auto parsed = parse_json_bounded<json>(res.body);
  if (parsed && parsed.value.is_object() && parsed.value.contains("message") && parsed.value["message"].is_string())
    return parsed.value["message"].get<std::string>();
  return res.body.substr(0, 200);
}

/// This worker's GET /worker body, built after the herder's health answer.
void local_worker(HerderApi& herder, const std::shared_ptr<metrics::WorkerMetrics>& metrics, std::size_t limit,
                  std::function<void(Reply<json>)> done) {
  herder.member_view([&herder, metrics, limit, done = std::move(done)](Reply<MemberView> view) mutable {
    if (!view) return done(view.error());
    herder.health([&herder, metrics, limit, view = std::move(view.value()), done = std::move(done)](
                      Reply<Health> health) mutable {
      Health h = health ? health.value() : Health{HealthStatus::Unhealthy, health.error().message, ""};
      const auto process = metrics::read_process_stats();
      const auto records = metrics ? metrics->task_record_totals() : std::map<std::string, double>{};
      done(worker_to_json(view, h, herder.rebalance_history(), limit, process, records, wall_ms()));
    });
  });
}

/// The bodies of every member's GET /worker, sorted by URL. The leader's own
/// entry is built locally; the others are asked over REST.
class MemberGather : public std::enable_shared_from_this<MemberGather> {
 public:
  using Done = std::function<void(std::vector<json>)>;

  MemberGather(RestServer& server, std::string authorization, std::size_t limit,
               std::chrono::milliseconds timeout, Done done)
      : server_(server), authorization_(std::move(authorization)), limit_(limit), timeout_(timeout),
        done_(std::move(done)) {}

  void run(const MemberView& leader, json leader_body) {
    pending_ = leader.members.size();
    for (const auto& m : leader.members) {
      if (m.member_id == leader.member_id) {
        add(leader_body);
        continue;
      }
      const std::string path = "/worker?rebalances=" + std::to_string(limit_);
      server_.send(
          m.url, Method::Get, path, authorization_, "",
          [self = shared_from_this(), m](RestResponse res) { self->add(member_entry(m, res)); }, timeout_);
    }
  }

 private:
  /// A member's answer as its entry: the body when it is a JSON object,
  /// else {"url","member_id","error"} naming what went wrong.
  static json member_entry(const GroupMember& m, const RestResponse& res) {
    auto failed = [&](const std::string& why) {
      return json{{"url", m.url}, {"member_id", m.member_id}, {"error", why}};
    };
    if (res.status != 200) return failed("HTTP " + std::to_string(res.status) + ": " + error_message(res));
    auto parsed = parse_json_bounded<json>(res.body);
    if (!parsed || !parsed.value.is_object()) return failed("the answer is not a JSON object");
    json body = std::move(parsed.value);
    body["member_id"] = m.member_id;
    body["url"] = m.url;
    return body;
  }

  void add(json entry) {
    std::vector<json> all;
    {
      std::lock_guard lk(mu_);
      workers_.push_back(std::move(entry));
      if (--pending_ != 0) return;
      all = std::move(workers_);
    }
    std::sort(all.begin(), all.end(), [](const json& a, const json& b) {
      return a.value("url", std::string()) < b.value("url", std::string());
    });
    done_(std::move(all));
  }

  RestServer& server_;
  std::string authorization_;
  std::size_t limit_;
  std::chrono::milliseconds timeout_;
  Done done_;
  std::mutex mu_;
  std::vector<json> workers_;
  std::size_t pending_ = 0;
};

/// Runs `then` with the leader's view and the gathered members; a follower
/// forwards the request to the leader instead (RestServer::fail).
void with_members(RestServer& server, HerderApi& herder, const std::shared_ptr<metrics::WorkerMetrics>& metrics,
                  const ConsoleOptions& opts, const RestRequest& req, const Responder& r, std::size_t limit,
                  std::function<void(const MemberView&, std::vector<json>)> then) {
  herder.member_view([&server, &herder, metrics, opts, req, r, limit, then = std::move(then)](
                         Reply<MemberView> view) mutable {
    if (!view) return server.fail(req, r, view.error());
    if (!view.value().is_leader) return server.fail(req, r, RestError::not_leader(view.value().leader_url));
    if (view.value().members.empty())
      return r(RestResponse::error(503, "The leader has not assigned a generation yet; try again after the rebalance"));
    local_worker(herder, metrics, limit,
                 [&server, opts, req, r, limit, view = std::move(view.value()), then = std::move(then)](
                     Reply<json> self) mutable {
                   if (!self) return server.fail(req, r, self.error());
                   auto gather = std::make_shared<MemberGather>(
                       server, req.authorization, limit, opts.member_timeout,
                       [view, then = std::move(then)](std::vector<json> workers) { then(view, std::move(workers)); });
                   gather->run(view, std::move(self.value()));
                 });
  });
}

/// GET /cluster on the leader: every member's /worker (a follower that
/// reaches this forwards through RestServer::fail).
void cluster_from_leader(RestServer& server, HerderApi& herder, const std::shared_ptr<metrics::WorkerMetrics>& metrics,
                         const ConsoleOptions& opts, const RestRequest& req, const Responder& r, std::size_t limit) {
  with_members(server, herder, metrics, opts, req, r, limit, [r](const MemberView& leader, std::vector<json> workers) {
    json out{{"served_by", leader.worker_id},
             {"leader_url", leader.url},
             {"generation", leader.generation},
             {"now_ms", wall_ms()},
             {"workers", std::move(workers)}};
    r(RestResponse::json(200, dump_json(out)));
  });
}

RestResponse asset_response(const UiAsset& a) {
  RestResponse res;
  res.status = 200;
  res.body = std::string(a.bytes);
  res.content_type = std::string(ui_content_type(a.name));
  // Served from the binary: an upgrade changes them, so revalidate.
  res.headers.emplace_back("Cache-Control", "no-cache");
  res.headers.emplace_back("X-Content-Type-Options", "nosniff");
  res.headers.emplace_back("X-Frame-Options", "DENY");
  res.headers.emplace_back("Content-Security-Policy",
                           "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
                           "frame-ancestors 'none'");
  return res;
}

}  // namespace

json worker_to_json(const MemberView& view, const Health& health, const std::vector<RebalanceRecord>& history,
                    std::size_t limit, const metrics::ProcessStats& process,
                    const std::map<std::string, double>& task_records, int64_t now_ms) {
  json records = json::object();
  for (const auto& [id, n] : task_records) records[id] = static_cast<int64_t>(n);
  return json{
      {"worker_id", view.worker_id},
      {"url", view.url},
      {"member_id", view.member_id},
      {"is_leader", view.is_leader},
      {"leader_url", view.leader_url},
      {"generation", view.generation},
      {"protocol", view.protocol},
      {"health", to_json(health)},
      {"uptime_ms", process.start_ms > 0 ? now_ms - process.start_ms : 0},
      {"now_ms", now_ms},
      {"connectors", view.connectors},
      {"tasks", view.tasks},
      {"draining", view.draining},
      {"rss_bytes", process.rss_bytes},
      {"threads", process.threads},
      {"task_records", records},
      {"rebalances", limit == 0 ? json::array() : rebalances_to_json(history, limit)},
  };
}

std::optional<std::size_t> parse_rebalance_limit(const RestRequest& req) {
  auto q = req.query_value("rebalances");
  if (!q) return kConsoleRebalanceLimit;
  std::size_t v = 0;
  auto [p, ec] = std::from_chars(q->data(), q->data() + q->size(), v);
  if (ec != std::errc() || p != q->data() + q->size() || v > 256) return std::nullopt;
  return v;
}

void add_console_routes(RestServer& server, HerderApi& herder, std::shared_ptr<metrics::WorkerMetrics> metrics,
                        ConsoleOptions opts) {
  static constexpr const char* kBadLimit = "rebalances must be an integer between 0 and 256";
  if (opts.ui_enabled) {
    // Before "/ui/*": extra routes are tried in the order added.
    server.add_route(Method::Get, "/ui/api/connectors/{connector}/config",
                     [&server, &herder](const RestRequest& req, Responder r) {
                       herder.connector_config(req.params.at("connector"),
                                               [&server, req, r](Reply<ConnectorConfig> config) {
                                                 if (!config) return server.fail(req, r, config.error());
                                                 json out = secrets::redact_config(config.value());
                                                 r(RestResponse::json(200, dump_json(out)));
                                               });
                     });
    server.add_route(Method::Get, "/ui", [](const RestRequest&, Responder r) {
      const UiAsset* a = find_ui_asset("index.html");
      if (a == nullptr) return r(RestResponse::error(404, "The web console was not built into this binary"));
      r(asset_response(*a));
    });
    server.add_route(Method::Get, "/ui/*", [](const RestRequest& req, Responder r) {
      const std::string& name = req.params.at("*");
      const UiAsset* a = find_ui_asset(name.empty() ? "index.html" : name);
      if (a == nullptr) return r(RestResponse::error(404, "No such file in the web console: " + name));
      r(asset_response(*a));
    });
  }

  server.add_route(Method::Get, "/worker", [&herder, metrics](const RestRequest& req, Responder r) {
    auto limit = parse_rebalance_limit(req);
    if (!limit) return r(RestResponse::error(400, kBadLimit));
    local_worker(herder, metrics, *limit, [r](Reply<json> body) {
      if (!body) return r(RestResponse::error(body.error().http_status(), body.error().message));
      r(RestResponse::json(200, dump_json(body.value())));
    });
  });

  server.add_route(Method::Get, "/cluster", [&server, &herder, metrics, opts](const RestRequest& req, Responder r) {
    auto limit = parse_rebalance_limit(req);
    if (!limit) return r(RestResponse::error(400, kBadLimit));
    // A follower forwards to the leader. When the leader cannot answer (it
    // just left, or no leader is known during a rebalance), the console
    // still gets this worker's own entry, marked partial, rather than an
    // error at the moment an operator most wants to look.
    herder.member_view([&server, &herder, metrics, opts, req, r, limit = *limit](Reply<MemberView> v) {
      if (!v || v.value().is_leader) return cluster_from_leader(server, herder, metrics, opts, req, r, limit);
      Responder leader_or_partial = [&herder, metrics, limit, r, view = v.value()](RestResponse res) {
        if (res.status == 200) return r(std::move(res));
        const std::string why = "HTTP " + std::to_string(res.status) + ": " + error_message(res);
        local_worker(herder, metrics, limit, [r, view, why](Reply<json> self) {
          if (!self) return r(RestResponse::error(self.error().http_status(), self.error().message));
          json out{{"served_by", view.worker_id},
                   {"leader_url", view.leader_url},
                   {"generation", view.generation},
                   {"now_ms", wall_ms()},
                   {"partial", true},
                   {"error", "the leader did not answer (" + why + "); only this worker is shown"},
                   {"workers", json::array({std::move(self.value())})}};
          r(RestResponse::json(200, dump_json(out)));
        });
      };
      server.fail(req, leader_or_partial, RestError::not_leader(v.value().leader_url));
    });
  });

  server.add_route(Method::Post, "/cluster/workers/{worker}/drain",
                   [&server, &herder, metrics, opts](const RestRequest& req, Responder r) {
                     const std::string worker = req.params.at("worker");
                     const std::string auth = req.authorization;
                     with_members(server, herder, metrics, opts, req, r, 0,
                                  [&server, worker, auth, r](const MemberView&, std::vector<json> workers) {
                                    std::string ids;
                                    for (const auto& w : workers) {
                                      const std::string id = w.value("worker_id", std::string());
                                      if (id == worker)
                                        return server.send(w.value("url", std::string()), Method::Post,
                                                           "/admin/drain", auth, "", r);
                                      ids += (ids.empty() ? "" : ", ") + (id.empty() ? w.value("url", "?") : id);
                                    }
                                    r(RestResponse::error(404, "Worker " + worker +
                                                                   " is not a member of the group (members: " + ids +
                                                                   ")"));
                                  });
                   });
}

}  // namespace kc::rest
