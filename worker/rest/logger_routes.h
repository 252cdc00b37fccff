#pragma once
// /admin/loggers (Connect's LoggingResource; KIP-495, KIP-976):
//   GET /admin/loggers            200 {"<logger>":{"level":"INFO","last_modified":<ms>|null},...}:
//                                 root and every logger with a level of its own
//   GET /admin/loggers/{logger}   200 {"level":..,"last_modified":..} (effective level);
//                                 404 "Logger <logger> not found."
//   PUT /admin/loggers/{logger}[?scope=worker|cluster]  body {"level":"DEBUG"}
//       scope=worker (default; an unknown scope falls back to it with a
//       warning, as Connect): sets the level here, 200 with the sorted names
//       changed; scope=cluster: writes logger-cluster-<logger> to the config
//       topic through HerderApi::set_cluster_logger_level, every worker
//       applies it when it reads it, 204.
//       400 for a body without a string "level", an unknown level
//       (Connect answers 404 there), or a bad logger name.
// The names and their effect: worker/metrics/log_levels.h. Like every
// /admin path these are served only on admin.listeners when that is set.
// Handlers run on the REST io thread; GET and scope=worker only touch the
// process's LoggerLevels (a short mutex); scope=cluster answers from the
// herder's pool.

#include "worker/api/herder_api.h"
#include "worker/rest/rest_server.h"

namespace kc::rest {

/// Adds the three routes above.
void add_logger_routes(RestServer& server, HerderApi& herder);

}  // namespace kc::rest
