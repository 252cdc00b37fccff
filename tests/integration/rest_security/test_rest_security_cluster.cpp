// Two workers of one group, each behind an https REST listener that requires
// client certificates and basic authentication. A connector created through
// the follower is forwarded to the leader over HTTPS (with the worker's trust
// settings and client certificate, keeping the caller's Authorization) and
// then shows on both workers.
#include <catch2/catch.hpp>

#include <fstream>
#include <nlohmann/json.hpp>

#include <boost/asio/ip/tcp.hpp>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/support/tls_test_util.h"
#include "worker/connectors/builtin.h"
#include "worker/rest/basic_auth.h"
#include "worker/rest/rest_server.h"
#include "worker/rest/rest_tls.h"

using namespace kc::test;
using nlohmann::json;
namespace http = boost::beast::http;
namespace rest = kc::rest;

namespace {

/// A port that was free a moment ago (the workers' advertised URLs must be
/// known before their REST servers start).
uint16_t free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

std::shared_ptr<rest::TlsContext> must(kc::Result<std::shared_ptr<rest::TlsContext>> r) {
  INFO((r ? std::string() : r.error().to_string()));
  REQUIRE(r);
  return r.value();
}

}  // namespace

TEST_CASE("https cluster: a follower forwards a connector create to the leader over HTTPS with basic auth",
          "[security][integration][mock]") {
  TestPki pki;
  rest::TlsSettings tls;
  tls.prefix = "listeners.https.";
  tls.keystore_location = pki.server_keystore;  // workers present it as client certificate too
  tls.truststore_location = pki.ca_pem;
  tls.client_auth = rest::ClientAuth::Required;
  auto server_tls = must(rest::TlsContext::server(tls));
  auto worker_client_tls = must(rest::TlsContext::client(tls));

  std::string creds = pki.dir + "/connect.password";
  std::ofstream(creds) << "admin: adminpw,admin\n";
  auto auth = rest::BasicAuthenticator::from_file(creds, "rest.basic.auth.credentials.file");
  REQUIRE(auth);
  auto users = std::make_shared<const rest::BasicAuthenticator>(std::move(auth.value()));

  ClusterOptions opts;
  opts.rest_scheme = "https";
  opts.rest_client_tls = worker_client_tls;
  TestCluster cluster(opts);
  const std::string w1 = "localhost:" + std::to_string(free_port());
  const std::string w2 = "localhost:" + std::to_string(free_port());
  cluster.start_workers({w1, w2});
  cluster.wait_stable(Expected{});

  std::map<std::string, std::unique_ptr<rest::RestServer>> servers;
  for (const auto& id : {w1, w2}) {
    rest::RestServerOptions o;
    o.listeners = {"https://127.0.0.1:" + id.substr(id.find(':') + 1)};
    o.https_tls = server_tls;
    o.forward_tls = worker_client_tls;
    o.basic_auth = users;
    o.request_timeout = std::chrono::milliseconds(30000);
    o.forward_timeout = std::chrono::milliseconds(30000);
    servers[id] = std::make_unique<rest::RestServer>(o, cluster.worker(id));
    auto st = servers[id]->start();
    INFO((st ? std::string() : st.error().to_string()));
    REQUIRE(st);
  }
  auto leader = cluster.leader();
  REQUIRE(leader);
  const std::string follower = *leader == w1 ? w2 : w1;
  const uint16_t follower_port = servers[follower]->port();
  const uint16_t leader_port = servers[*leader]->port();

  // An operator's client: trusts the CA, has a client certificate.
  rest::TlsSettings op;
  op.truststore_location = pki.ca_pem;
  op.keystore_location = pki.client_keystore;
  auto client = must(rest::TlsContext::client(op));
  const std::string admin = basic_auth_header("admin", "adminpw");
  const std::string body =
      json{{"name", "seq-https"},
           {"config", {{"connector.class", kc::connectors::kSequenceSourceClass}, {"tasks.max", "1"},
                       {"topic", "seq-data"}, {"throughput", "5"}}}}
          .dump();

  CHECK(http_call(follower_port, http::verb::post, "/connectors", body, client.get(), "", "localhost").status == 401);
  CHECK(http_call(follower_port, http::verb::post, "/connectors", body, client.get(),
                  basic_auth_header("admin", "nope"), "localhost")
            .status == 401);

  HttpResult created = http_call(follower_port, http::verb::post, "/connectors", body, client.get(), admin, "localhost");
  INFO(created.status << " " << created.body << " " << created.error);
  REQUIRE(created.status == 201);
  CHECK(json::parse(created.body)["name"] == "seq-https");

  Expected e;
  e.add("seq-https", 1);
  cluster.wait_stable(e);
  for (uint16_t port : {leader_port, follower_port}) {
    HttpResult list = http_call(port, http::verb::get, "/connectors", "", client.get(), admin, "localhost");
    REQUIRE(list.status == 200);
    CHECK(json::parse(list.body) == json::array({"seq-https"}));
  }
  cluster.check_invariant();
  for (auto& [id, s] : servers) s->stop();
}
