#pragma once
// The drain endpoints (kconnectd's zero-downtime drain; not in Connect):
//   POST /admin/drain          operator: hand this worker's connectors and
//                              tasks to the others, then leave the group and
//                              exit (as SIGTERM with shutdown.drain.enable).
//                              202 {"worker_id":..,"draining":true}.
//   POST /admin/drain/members  internal, worker to leader: body
//                              {"member_id":"..","url":".."}; 202 when the
//                              leader marked the member draining, 409 when it
//                              is not the leader or no other worker could
//                              take the work, 400 on a bad body. Under
//                              `sessioned` the follower signs it (KIP-507
//                              headers, HMAC of the body) and the leader
//                              checks it as POST /connectors/{c}/tasks
//                              (400/403/503); when signed it needs no REST
//                              basic credentials, unsigned it does (401).
// Handlers run on the REST io thread and never block: the herder answers
// through its io thread. They reach the herder only through HerderApi
// (worker/api).

#include <functional>

#include <string>

#include "worker/api/herder_api.h"
#include "worker/rest/rest_server.h"

namespace kc::rest {

/// Adds both routes. `begin_drain_shutdown` is called (on the REST io
/// thread, once per request) to start the process's drain-then-stop path;
/// it must not block.
void add_drain_routes(RestServer& server, HerderApi& herder, std::string worker_id,
                      std::function<void()> begin_drain_shutdown);

/// Connect's internal POST /connectors/{connector}/tasks: a follower whose
/// running connector asked for a task reconfiguration forwards it to the
/// leader, which generates and writes the task configs itself (the body is
/// only signed, not used; see worker/herder's DistributedHerder). Under the
/// `sessioned` protocol the KIP-507 signature headers are checked first: 400 when
/// missing or for an unknown/unaccepted algorithm or bad base64, 503 before
/// the session key is known, 403 for a bad signature (Connect's statuses
/// and messages). Then 204 when scheduled, 404 for an unknown connector,
/// 409 when this worker is not the leader. Never blocks.
/// Also adds PUT /connectors/{c}/fence (KIP-618's zombie fencing request
/// a follower's exactly-once source task forwards to the leader), signed
/// and checked the same way (HerderApi::accept_fence_request):
/// 204 once the connector's older task generations are fenced out.
void add_task_reconfiguration_route(RestServer& server, HerderApi& herder);

}  // namespace kc::rest
