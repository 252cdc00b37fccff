// Two workers of one group, each behind an https REST listener that requires
// client certificates and basic authentication (SecuredCluster):
//  - a connector created through the follower is forwarded to the leader
//    over HTTPS (with the worker's trust settings and client certificate,
//    keeping the caller's Authorization) and then shows on both workers;
//  - the internal drain request (POST /admin/drain/members, follower to
//    leader) is signed under `sessioned` and accepted without basic
//    credentials; unsigned without credentials it is 401, unsigned with
//    them 400 (a signature is required), forged 403.
#include <catch2/catch.hpp>

#include <fstream>
#include <future>
#include <nlohmann/json.hpp>

#include <boost/asio/ip/tcp.hpp>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/support/tls_test_util.h"
#include "worker/plugins/builtin.h"
#include "worker/rest/admin_routes.h"
#include "worker/herder/internal_client.h"
#include "worker/rest/basic_auth.h"
#include "worker/rest/rest_server.h"
#include "worker/api/rest_tls.h"

using namespace kc::test;
using nlohmann::json;
using namespace std::chrono_literals;
namespace http = boost::beast::http;
namespace rest = kc::rest;

namespace {

std::shared_ptr<rest::TlsContext> must(kc::Result<std::shared_ptr<rest::TlsContext>> r) {
  INFO((r ? std::string() : r.error().to_string()));
  REQUIRE(r);
  return r.value();
}

/// Two workers ("localhost:<port>", sessioned) with https REST servers that
/// require client certificates and basic authentication (user admin,
/// password adminpw), plus an operator's TLS client. `internal_routes` adds
/// the drain and task reconfiguration routes, as `kconnectd run` does.
struct SecuredCluster {
  TestPki pki;
  std::shared_ptr<rest::TlsContext> worker_client_tls;
  std::shared_ptr<rest::TlsContext> operator_tls;
  std::unique_ptr<TestCluster> cluster;
  std::map<std::string, std::unique_ptr<rest::RestServer>> servers;
  const std::string admin = basic_auth_header("admin", "adminpw");

  explicit SecuredCluster(bool internal_routes) {
    rest::TlsSettings tls;
    tls.prefix = "listeners.https.";
    tls.keystore_location = pki.server_keystore;  // workers present it as client certificate too
    tls.truststore_location = pki.ca_pem;
    tls.client_auth = rest::ClientAuth::Required;
    auto server_tls = must(rest::TlsContext::server(tls));
    worker_client_tls = must(rest::TlsContext::client(tls));

    std::string creds = pki.dir + "/connect.password";
    std::ofstream(creds) << "admin: adminpw,admin\n";
    auto auth = rest::BasicAuthenticator::from_file(creds, "rest.basic.auth.credentials.file");
    REQUIRE(auth);
    auto users = std::make_shared<const rest::BasicAuthenticator>(std::move(auth.value()));

    ClusterOptions opts;
    opts.rest_scheme = "https";
    opts.rest_client_tls = worker_client_tls;
    cluster = std::make_unique<TestCluster>(opts);
    const std::string w1 = "localhost:" + std::to_string(free_port());
    const std::string w2 = "localhost:" + std::to_string(free_port());
    cluster->start_workers({w1, w2});
    cluster->wait_stable(Expected{});

    for (const auto& id : {w1, w2}) {
      rest::RestServerOptions o;
      o.listeners = {"https://127.0.0.1:" + id.substr(id.find(':') + 1)};
      o.https_tls = server_tls;
      o.forward_tls = worker_client_tls;
      o.basic_auth = users;
      o.request_timeout = std::chrono::milliseconds(30000);
      o.forward_timeout = std::chrono::milliseconds(30000);
      servers[id] = std::make_unique<rest::RestServer>(o, cluster->worker(id));
      if (internal_routes) {
        kc::rest::add_task_reconfiguration_route(*servers[id], cluster->worker(id));
        kc::rest::add_drain_routes(*servers[id], cluster->worker(id), id, [] {});
      }
      auto st = servers[id]->start();
      INFO((st ? std::string() : st.error().to_string()));
      REQUIRE(st);
    }

    // An operator's client: trusts the CA, has a client certificate.
    rest::TlsSettings op;
    op.truststore_location = pki.ca_pem;
    op.keystore_location = pki.client_keystore;
    operator_tls = must(rest::TlsContext::client(op));
  }
  ~SecuredCluster() {
    for (auto& [id, s] : servers) s->stop();
  }

  std::string leader() {
    auto l = cluster->leader();
    REQUIRE(l);
    return *l;
  }
  std::string follower_of(const std::string& leader) {
    for (const auto& [id, s] : servers)
      if (id != leader) return id;
    FAIL("no follower");
    return {};
  }
  /// One operator request to worker `id` (as "localhost", the certificate's name).
  HttpResult call(const std::string& id, http::verb verb, const std::string& target, const std::string& body,
                  const std::string& authorization) {
    return http_call(servers.at(id)->port(), verb, target, body, operator_tls.get(), authorization, "localhost");
  }
  /// A POST as a worker sends it (worker client certificate, no basic
  /// credentials unless `authorization`), with `headers`.
  kc::herder::InternalResponse post_as_worker(const std::string& id, const std::string& path, const std::string& body,
                                              const std::vector<std::pair<std::string, std::string>>& headers,
                                              const std::string& authorization = "") {
    auto h = headers;
    if (!authorization.empty()) h.emplace_back("Authorization", authorization);
    auto r = kc::herder::post_internal("https://" + id + "/", path, body, 10000, worker_client_tls.get(), h);
    INFO((r ? std::string() : r.error().to_string()));
    REQUIRE(r);
    return *r;
  }
};

json seq_connector(const std::string& name, int tasks) {
  return json{{"name", name},
              {"config", {{"connector.class", kc::connectors::kSequenceSourceClass}, {"tasks.max", std::to_string(tasks)},
                          {"topic", "seq-data"}, {"throughput", "5"}}}};
}

}  // namespace

TEST_CASE("https cluster: a follower forwards a connector create to the leader over HTTPS with basic auth",
          "[security][integration][mock]") {
  SecuredCluster sc(false);
  const auto leader = sc.leader();
  const auto follower = sc.follower_of(leader);
  const std::string body = seq_connector("seq-https", 1).dump();

  CHECK(sc.call(follower, http::verb::post, "/connectors", body, "").status == 401);
  CHECK(sc.call(follower, http::verb::post, "/connectors", body, basic_auth_header("admin", "nope")).status == 401);

  HttpResult created = sc.call(follower, http::verb::post, "/connectors", body, sc.admin);
  INFO(created.status << " " << created.body << " " << created.error);
  REQUIRE(created.status == 201);
  CHECK(json::parse(created.body)["name"] == "seq-https");

  Expected e;
  e.add("seq-https", 1);
  sc.cluster->wait_stable(e);
  for (const auto& id : {leader, follower}) {
    HttpResult list = sc.call(id, http::verb::get, "/connectors", "", sc.admin);
    REQUIRE(list.status == 200);
    CHECK(json::parse(list.body) == json::array({"seq-https"}));
  }
  sc.cluster->check_invariant();
}

TEST_CASE("basic auth cluster: the signed drain request needs no credentials, unsigned or forged ones are refused",
          "[security][integration][mock][kip507]") {
  SecuredCluster sc(true);
  const auto leader = sc.leader();
  const auto follower = sc.follower_of(leader);
  REQUIRE(sc.call(leader, http::verb::post, "/connectors", seq_connector("seq-drain", 2).dump(), sc.admin).status ==
          201);
  Expected e;
  e.add("seq-drain", 2);
  sc.cluster->wait_stable(e);
  auto& lh = sc.cluster->worker(leader);
  auto& fh = sc.cluster->worker(follower);
  REQUIRE(eventually([&] { return fh.session_key_info().present && lh.session_key_info().present; }, 60s));
  const auto before = sc.cluster->tasks_by_worker();
  REQUIRE(!before.at(follower).empty());
  const std::string drain_body = json{{"member_id", fh.assignment_state().member_id}, {"url", "https://" + follower + "/"}}.dump();

  // Neither signature nor credentials: basic authentication refuses it.
  auto unsigned_anon = sc.post_as_worker(leader, "/admin/drain/members", drain_body, {});
  CHECK(unsigned_anon.status == 401);
  CHECK(unsigned_anon.body == rest::kUnauthorizedMessage);
  // Credentials but no signature: under `sessioned` the leader wants one.
  const auto rejected_before = lh.internal_request_stats().rejected;
  auto unsigned_admin = sc.post_as_worker(leader, "/admin/drain/members", drain_body, {}, sc.admin);
  CHECK(unsigned_admin.status == 400);
  CHECK_THAT(unsigned_admin.body, Catch::Contains("Internal request missing required signature"));
  // A forged signature passes basic authentication's place, not the check.
  auto forged = sc.post_as_worker(
      leader, "/admin/drain/members", drain_body,
      {{"X-Connect-Authorization", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="},
       {"X-Connect-Request-Signature-Algorithm", "HmacSHA256"}});
  CHECK(forged.status == 403);
  CHECK_THAT(forged.body, Catch::Contains("Internal request contained invalid signature."));
  CHECK(lh.internal_request_stats().rejected == rejected_before + 2);  // the 400 and the 403
  // None of them started a drain: the follower still runs its share.
  std::this_thread::sleep_for(2s);
  CHECK(sc.cluster->tasks_by_worker().at(follower) == before.at(follower));
  CHECK_FALSE(fh.draining());

  // The follower's own drain: signed with the session key, sent without
  // basic credentials over HTTPS, accepted, and everything moves over.
  const auto verified_before = lh.internal_request_stats().verified;
  auto drained = std::make_shared<std::promise<std::pair<bool, std::string>>>();
  fh.drain(60000, [drained](bool ok, const std::string& why) { drained->set_value({ok, why}); });
  auto fut = drained->get_future();
  REQUIRE(fut.wait_for(90s) == std::future_status::ready);
  const auto [ok, why] = fut.get();
  INFO(why << "\n" << sc.cluster->dump());
  CHECK(ok);
  CHECK(fh.internal_request_stats().signed_requests >= 1);
  CHECK(lh.internal_request_stats().verified > verified_before);
  REQUIRE(eventually([&] { return sc.cluster->tasks_by_worker().at(leader) == e.tasks; }, 60s));
  CHECK(sc.cluster->tasks_by_worker().at(follower).empty());
  sc.cluster->check_invariant();
}
