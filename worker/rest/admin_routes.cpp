#include "worker/rest/admin_routes.h"

#include <nlohmann/json.hpp>
#include <string>

#include "common/json_bounds.h"

namespace kc::rest {

void add_drain_routes(RestServer& server, HerderApi& herder, std::string worker_id,
                      std::function<void()> begin_drain_shutdown) {
  server.add_route(Method::Post, "/admin/drain",
                   [worker_id, begin = std::move(begin_drain_shutdown)](const RestRequest&, Responder r) {
                     begin();
                     r(RestResponse::json(202, nlohmann::json{{"worker_id", worker_id}, {"draining", true}}.dump()));
                   });
  HerderApi* h = &herder;
  server.add_route(Method::Post, "/admin/drain/members", [h](const RestRequest& req, Responder r) {
    // Outside bytes: bounded; a refused body is null here, so it gets the 400 below.
    auto body = kc::parse_json_bounded<nlohmann::json>(req.body).value;
    if (!body.is_object() || !body.contains("member_id") || !body["member_id"].is_string() ||
        body["member_id"].get<std::string>().empty())
      return r(RestResponse::error(400, "drain request needs a JSON object with a non-empty \"member_id\""));
    const std::string member = body["member_id"].get<std::string>();
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_drain_request(member, std::move(sig), req.body, [r, member](int status, const std::string& why) {
      if (status == 202)
        return r(RestResponse::json(202, nlohmann::json{{"member_id", member}, {"message", why}}.dump()));
      r(RestResponse::error(status, why));
    });
  });
}

void add_task_reconfiguration_route(RestServer& server, HerderApi& herder) {
  HerderApi* h = &herder;
  server.add_route(Method::Post, "/connectors/{connector}/tasks", [h](const RestRequest& req,
                                                                             Responder r) {
    const std::string connector = req.params.at("connector");
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_task_reconfiguration(connector, std::move(sig), req.body, [r](int status, const std::string& why) {
      if (status == 204) return r(RestResponse::empty(204));
      r(RestResponse::error(status, why));
    });
  });
  // KIP-618's zombie fencing request, signed the same way.
  server.add_route(Method::Put, "/connectors/{connector}/fence", [h](const RestRequest& req,
                                                                           Responder r) {
    SignatureHeaders sig{req.connect_signature, req.connect_signature_algorithm};
    h->accept_fence_request(req.params.at("connector"), std::move(sig), req.body,
                            [r](int status, const std::string& why) {
                              if (status == 204) return r(RestResponse::empty(204));
                              r(RestResponse::error(status, why));
                            });
  });
}

}  // namespace kc::rest
