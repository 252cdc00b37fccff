#include "worker/herder/admin_routes.h"

#include <nlohmann/json.hpp>
#include <string>

#include "common/json_bounds.h"

namespace kc::herder {

void add_drain_routes(rest::RestServer& server, DistributedHerder& herder, std::string worker_id,
                      std::function<void()> begin_drain_shutdown) {
  server.add_route(rest::Method::Post, "/admin/drain",
                   [worker_id, begin = std::move(begin_drain_shutdown)](const rest::RestRequest&, rest::Responder r) {
                     begin();
                     r(rest::RestResponse::json(202, nlohmann::json{{"worker_id", worker_id}, {"draining", true}}.dump()));
                   });
  DistributedHerder* h = &herder;
  server.add_route(rest::Method::Post, "/admin/drain/members", [h](const rest::RestRequest& req, rest::Responder r) {
    // Outside bytes: bounded; a refused body is null here, so it gets the 400 below.
    auto body = kc::parse_json_bounded<nlohmann::json>(req.body).value;
    if (!body.is_object() || !body.contains("member_id") || !body["member_id"].is_string() ||
        body["member_id"].get<std::string>().empty())
      return r(rest::RestResponse::error(400, "drain request needs a JSON object with a non-empty \"member_id\""));
    const std::string member = body["member_id"].get<std::string>();
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_drain_request(member, std::move(sig), req.body, [r, member](int status, const std::string& why) {
      if (status == 202)
        return r(rest::RestResponse::json(202, nlohmann::json{{"member_id", member}, {"message", why}}.dump()));
      r(rest::RestResponse::error(status, why));
    });
  });
}

void add_task_reconfiguration_route(rest::RestServer& server, DistributedHerder& herder) {
  DistributedHerder* h = &herder;
  server.add_route(rest::Method::Post, "/connectors/{connector}/tasks", [h](const rest::RestRequest& req,
                                                                             rest::Responder r) {
    const std::string connector = req.params.at("connector");
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_task_reconfiguration(connector, std::move(sig), req.body, [r](int status, const std::string& why) {
      if (status == 204) return r(rest::RestResponse::empty(204));
      r(rest::RestResponse::error(status, why));
    });
  });
  // KIP-618's zombie fencing request, signed the same way.
  server.add_route(rest::Method::Put, "/connectors/{connector}/fence", [h](const rest::RestRequest& req,
                                                                           rest::Responder r) {
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_fence_request(req.params.at("connector"), std::move(sig), req.body,
                            [r](int status, const std::string& why) {
                              if (status == 204) return r(rest::RestResponse::empty(204));
                              r(rest::RestResponse::error(status, why));
                            });
  });
}

}  // namespace kc::herder
