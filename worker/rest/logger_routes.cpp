#include "worker/rest/logger_routes.h"

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/json_bounds.h"
#include "worker/metrics/log_levels.h"

namespace kc::rest {

namespace {

/// Longest logger name accepted: it becomes a config-topic key.
constexpr size_t kMaxLoggerName = 255;

nlohmann::json level_json(const metrics::LoggerLevel& l) {
  nlohmann::json j{{"level", metrics::log4j_level_name(l.level)}};
  j["last_modified"] = l.last_modified_ms ? nlohmann::json(*l.last_modified_ms) : nlohmann::json(nullptr);
  return j;
}

/// Why `name` cannot name a logger, or "" when it can: printable ASCII
/// only (it is a config-topic key and shows in log lines), 1..255 bytes.
std::string logger_name_error(const std::string& name) {
  if (name.empty() || name.size() > kMaxLoggerName)
    return "Logger name must be 1 to " + std::to_string(kMaxLoggerName) + " characters long";
  for (unsigned char c : name)
    if (c <= 0x20 || c >= 0x7f) return "Logger name may hold only printable ASCII characters without spaces";
  return "";
}

int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

void add_logger_routes(RestServer& server, HerderApi& herder) {
  server.add_route(Method::Get, "/admin/loggers", [](const RestRequest&, Responder r) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [name, level] : metrics::LoggerLevels::instance().all()) out[name] = level_json(level);
    r(RestResponse::json(200, out.dump()));
  });
  server.add_route(Method::Get, "/admin/loggers/{logger}", [](const RestRequest& req, Responder r) {
    const auto& name = req.params.at("logger");
    auto level = metrics::LoggerLevels::instance().get(name);
    if (!level) return r(RestResponse::error(404, "Logger " + name + " not found."));
    r(RestResponse::json(200, level_json(*level).dump()));
  });
  HerderApi* h = &herder;
  server.add_route(Method::Put, "/admin/loggers/{logger}", [h](const RestRequest& req, Responder r) {
    const auto& name = req.params.at("logger");
    if (auto why = logger_name_error(name); !why.empty()) return r(RestResponse::error(400, why));
    // Outside bytes: bounded; a refused body is null here, so it gets the 400 below.
    auto body = kc::parse_json_bounded<nlohmann::json>(req.body).value;
    if (!body.is_object() || !body.contains("level") || !body["level"].is_string())
      return r(RestResponse::error(400, "Desired 'level' parameter was not specified in request."));
    const auto text = body["level"].get<std::string>();
    auto level = metrics::parse_log4j_level(text);
    if (!level)
      return r(RestResponse::error(400, "invalid log level '" + text +
                                            "'; expected one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF"));
    std::string scope = req.query_value("scope").value_or("worker");
    for (auto& c : scope) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scope == "cluster") {
      return h->set_cluster_logger_level(name, metrics::log4j_level_name(*level), [r](Reply<Done> done) {
        if (!done.ok()) return r(RestResponse::error(done.error().http_status(), done.error().message));
        r(RestResponse::empty(204));
      });
    }
    if (scope != "worker")
      spdlog::warn("rest: unknown scope '{}' in a log level change; using scope 'worker'", scope);
    auto changed = metrics::LoggerLevels::instance().set(name, *level, now_ms());
    spdlog::info("rest: log level of {} set to {} on this worker ({} loggers)", name,
                 metrics::log4j_level_name(*level), changed.size());
    r(RestResponse::json(200, nlohmann::json(changed).dump()));
  });
}

}  // namespace kc::rest
