// REST over HTTPS, client certificates, TLS forwarding, basic
// authentication, admin listeners and rest.health.auth, against the real
// RestServer on ephemeral ports with a small in-memory HerderApi and a
// throwaway PKI (tests/support/tls_test_util.h).
#include <catch2/catch.hpp>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>

#include "config/worker_config.h"
#include "tests/support/tls_test_util.h"
#include "worker/herder/internal_client.h"
#include "worker/rest/basic_auth.h"
#include "worker/rest/console_routes.h"
#include "worker/rest/rest_security.h"
#include "worker/rest/rest_server.h"
#include "worker/api/rest_tls.h"

using namespace kc::rest;
using kc::test::http_call;
using kc::test::HttpResult;
using kc::test::TestPki;
using nlohmann::json;
namespace http = boost::beast::http;

namespace {

/// A herder with a fixed connector list; writes either land here or answer
/// NotLeader with `leader_url`. Everything else is 404. Answers inline.
class TinyHerder : public HerderApi {
 public:
  std::string leader_url;  // non-empty: writes are refused with not_leader(leader_url)
  std::mutex mu;
  std::set<std::string> connectors{"existing"};

  void list_connectors(Callback<std::vector<std::string>> cb) override {
    std::lock_guard<std::mutex> lock(mu);
    cb(std::vector<std::string>(connectors.begin(), connectors.end()));
  }
  void put_connector_config(PutConnectorRequest req, Callback<PutConnectorResult> cb) override {
    if (!leader_url.empty()) return cb(RestError::not_leader(leader_url));
    std::lock_guard<std::mutex> lock(mu);
    connectors.insert(req.name);
    cb(PutConnectorResult{true, ConnectorInfo{req.name, req.config, {}, ConnectorType::Source}});
  }
  void health(Callback<Health> cb) override { cb(Health{HealthStatus::Healthy, "ok"}); }
  void worker_info(Callback<WorkerInfo> cb) override { cb(WorkerInfo{"w:1", "http://w:1/", "cid"}); }
  void accept_drain_request(const std::string& m, SignatureHeaders, std::string, StatusCallback done) override {
    done(404, m);
  }
  void accept_task_reconfiguration(const std::string& c, SignatureHeaders, std::string, StatusCallback done) override {
    done(404, c);
  }
  void accept_fence_request(const std::string& c, SignatureHeaders, std::string, StatusCallback done) override {
    done(404, c);
  }
  std::vector<RebalanceRecord> rebalance_history() const override { return {}; }

  void connector_info(const std::string& n, Callback<ConnectorInfo> cb) override { cb(nf(n)); }
  void connector_config(const std::string& n, Callback<ConnectorConfig> cb) override { cb(nf(n)); }
  void delete_connector(const std::string& n, Callback<Done> cb) override { cb(nf(n)); }
  void connector_status(const std::string& n, Callback<ConnectorStateInfo> cb) override { cb(nf(n)); }
  void task_configs(const std::string& n, Callback<std::vector<TaskInfo>> cb) override { cb(nf(n)); }
  void task_status(const TaskId& id, Callback<TaskStatus> cb) override { cb(nf(id.connector)); }
  void restart_connector(const std::string& n, RestartRequest, Callback<std::optional<ConnectorStateInfo>> cb) override {
    cb(nf(n));
  }
  void restart_task(const TaskId& id, Callback<Done> cb) override { cb(nf(id.connector)); }
  void set_target_state(const std::string& n, TargetState, Callback<Done> cb) override { cb(nf(n)); }
  void connector_offsets(const std::string& n, Callback<std::vector<ConnectorOffset>> cb) override { cb(nf(n)); }
  void modify_connector_offsets(const std::string& n, std::optional<std::vector<ConnectorOffset>>,
                                Callback<std::string> cb) override {
    cb(nf(n));
  }
  void connector_active_topics(const std::string& n, Callback<std::vector<std::string>> cb) override { cb(nf(n)); }
  void reset_connector_active_topics(const std::string& n, Callback<Done> cb) override { cb(nf(n)); }
  void connector_plugins(bool, Callback<std::vector<PluginInfo>> cb) override { cb(std::vector<PluginInfo>{}); }
  void connector_plugin_config(const std::string& p, Callback<std::vector<ConfigKeyInfo>> cb) override { cb(nf(p)); }
  void validate_connector_config(ConnectorConfig, Callback<ConfigInfos> cb) override { cb(nf("validate")); }

 private:
  static RestError nf(const std::string& what) { return RestError::connector_not_found(what); }
};

TlsSettings server_settings(const TestPki& pki, ClientAuth auth = ClientAuth::None) {
  TlsSettings s;
  s.prefix = "listeners.https.";
  s.keystore_location = pki.server_keystore;
  s.truststore_location = pki.ca_pem;
  s.client_auth = auth;
  return s;
}

std::shared_ptr<TlsContext> client_ctx(const std::string& ca, const std::string& keystore = "",
                                       const std::string& endpoint_alg = "https") {
  TlsSettings s;
  s.truststore_location = ca;
  s.keystore_location = keystore;
  s.endpoint_identification_algorithm = endpoint_alg;
  auto ctx = TlsContext::client(s);
  REQUIRE(ctx);
  return ctx.value();
}

std::shared_ptr<TlsContext> server_ctx(const TlsSettings& s) {
  auto ctx = TlsContext::server(s);
  INFO((ctx ? std::string() : ctx.error().to_string()));
  REQUIRE(ctx);
  return ctx.value();
}

RestServerOptions base_options() {
  RestServerOptions o;
  o.io_timeout = std::chrono::milliseconds(5000);
  o.request_timeout = std::chrono::milliseconds(5000);
  o.forward_timeout = std::chrono::milliseconds(5000);
  return o;
}

/// A credentials file in the PKI dir.
std::string write_file(const TestPki& pki, const std::string& name, const std::string& text) {
  std::string path = pki.dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::shared_ptr<const BasicAuthenticator> users(const TestPki& pki) {
  auto path = write_file(pki, "users.properties", "# Connect's format\nalice: s3cret,admin\nbob=builder\n");
  auto a = BasicAuthenticator::from_file(path, "rest.basic.auth.credentials.file");
  REQUIRE(a);
  return std::make_shared<const BasicAuthenticator>(std::move(a.value()));
}

}  // namespace

TEST_CASE("TLS settings follow Connect's all-or-nothing listeners.https. prefix", "[security][rest]") {
  std::map<std::string, std::string> props{{"ssl.keystore.location", "/top.pem"},
                                           {"ssl.truststore.location", "/top-ca.pem"},
                                           {"ssl.client.auth", "required"}};
  auto top = tls_settings_from(props, "listeners.https.");
  REQUIRE(top);
  CHECK(top.value().prefix.empty());
  CHECK(top.value().keystore_location == "/top.pem");
  CHECK(top.value().client_auth == ClientAuth::Required);
  CHECK(top.value().endpoint_identification_algorithm == "https");

  // One prefixed key: only prefixed keys count; top-level ones are ignored.
  props["listeners.https.ssl.keystore.location"] = "/listener.pem";
  props["listeners.https.ssl.endpoint.identification.algorithm"] = "";
  auto pre = tls_settings_from(props, "listeners.https.");
  REQUIRE(pre);
  CHECK(pre.value().prefix == "listeners.https.");
  CHECK(pre.value().keystore_location == "/listener.pem");
  CHECK(pre.value().truststore_location.empty());
  CHECK(pre.value().client_auth == ClientAuth::None);
  CHECK(pre.value().endpoint_identification_algorithm.empty());

  props["listeners.https.ssl.client.auth"] = "sometimes";
  auto bad = tls_settings_from(props, "listeners.https.");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().field == "listeners.https.ssl.client.auth");
  props.erase("listeners.https.ssl.client.auth");
  props["listeners.https.ssl.keystore.type"] = "JKS";
  auto jks = tls_settings_from(props, "listeners.https.");
  REQUIRE_FALSE(jks);
  CHECK(jks.error().field == "listeners.https.ssl.keystore.type");
  CHECK_THAT(jks.error().message, Catch::Contains("PEM"));
}

TEST_CASE("bad PEM settings fail with the key and the file named", "[security][rest]") {
  TestPki pki;
  TlsSettings s = server_settings(pki);

  SECTION("no keystore at all") {
    s.keystore_location.clear();
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK(c.error().field == "listeners.https.ssl.keystore.location");
  }
  SECTION("missing file") {
    s.keystore_location = pki.dir + "/nope.pem";
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK(c.error().field == "listeners.https.ssl.keystore.location");
    CHECK_THAT(c.error().message, Catch::Contains(pki.dir + "/nope.pem") && Catch::Contains("No such file"));
  }
  SECTION("not PEM") {
    s.keystore_location = pki.not_pem;
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK_THAT(c.error().to_string(), Catch::Contains("listeners.https.ssl.keystore.location") &&
                                          Catch::Contains(pki.not_pem) && Catch::Contains("not PEM"));
  }
  SECTION("key that does not match the certificate") {
    s.keystore_location.clear();
    s.keystore_certificate_chain = TestPki::read(pki.server_cert);
    s.keystore_key = TestPki::read(pki.client_keystore);  // the client's key
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK(c.error().field == "listeners.https.ssl.keystore.key");
    CHECK_THAT(c.error().message, Catch::Contains("does not match"));
  }
  SECTION("encrypted key: right and wrong ssl.key.password") {
    s.keystore_location.clear();
    s.keystore_certificate_chain = TestPki::read(pki.server_cert);
    s.keystore_key = TestPki::read(pki.server_key_encrypted);
    s.key_password = "changeit";
    CHECK(TlsContext::server(s));
    s.key_password = "wrong";
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK(c.error().field == "listeners.https.ssl.keystore.key");
    CHECK_THAT(c.error().message, Catch::Contains("listeners.https.ssl.key.password"));
  }
  SECTION("truststore that is not PEM") {
    s.client_auth = ClientAuth::Required;
    s.truststore_location = pki.not_pem;
    auto c = TlsContext::server(s);
    REQUIRE_FALSE(c);
    CHECK_THAT(c.error().to_string(),
               Catch::Contains("listeners.https.ssl.truststore.location") && Catch::Contains(pki.not_pem));
  }
}

TEST_CASE("https listener: the right CA gets GET /connectors, a wrong CA or host fails the verify", "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"https://127.0.0.1:0", "http://127.0.0.1:0"};
  o.https_tls = server_ctx(server_settings(pki));
  RestServer server(o, herder);
  REQUIRE(server.start());
  REQUIRE(server.ports().size() == 2);
  CHECK(server.url().rfind("https://127.0.0.1:", 0) == 0);
  const uint16_t https_port = server.ports()[0];
  const uint16_t http_port = server.ports()[1];

  auto good = client_ctx(pki.ca_pem);
  HttpResult ok = http_call(https_port, http::verb::get, "/connectors", "", good.get());
  INFO(ok.error);
  CHECK(ok.status == 200);
  CHECK(json::parse(ok.body) == json::array({"existing"}));
  // Same by name: the certificate's SAN has localhost too.
  CHECK(http_call(https_port, http::verb::get, "/connectors", "", good.get(), "", "localhost").status == 200);

  auto wrong = client_ctx(pki.other_ca_pem);
  HttpResult bad = http_call(https_port, http::verb::get, "/connectors", "", wrong.get());
  CHECK(bad.status == 0);
  CHECK_THAT(bad.error, Catch::Contains("certificate verify failed"));

  // Plain HTTP on the https port is not answered with data.
  CHECK(http_call(https_port, http::verb::get, "/connectors").status != 200);
  // The mixed-in http listener keeps working.
  CHECK(http_call(http_port, http::verb::get, "/connectors").status == 200);

  // curl, as an independent client, when installed.
  if (std::system("command -v curl >/dev/null 2>&1") == 0) {
    std::string url = "https://localhost:" + std::to_string(https_port) + "/connectors";
    CHECK(std::system(("curl -sf -o /dev/null --cacert " + pki.ca_pem + " " + url).c_str()) == 0);
    CHECK(std::system(("curl -sf -o /dev/null --cacert " + pki.other_ca_pem + " " + url + " 2>/dev/null").c_str()) != 0);
  }
}

TEST_CASE("host name check: on by default, off with an empty endpoint identification algorithm", "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"https://127.0.0.1:0"};
  o.https_tls = server_ctx(server_settings(pki));
  RestServer server(o, herder);
  REQUIRE(server.start());
  // The certificate names localhost and 127.0.0.1; check it against another name.
  auto checked = client_ctx(pki.ca_pem);
  boost::asio::io_context ioc;
  auto call_as = [&](const std::shared_ptr<TlsContext>& ctx, const std::string& name) -> std::string {
    namespace beast = boost::beast;
    try {
      beast::ssl_stream<beast::tcp_stream> stream(ioc, ctx->native());
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
      beast::get_lowest_layer(stream).connect(
          boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server.port()));
      auto st = ctx->prepare_client(stream.native_handle(), name);
      if (!st) return st.error().message;
      stream.handshake(boost::asio::ssl::stream_base::client);
      return "ok";
    } catch (const std::exception& e) {
      return e.what();
    }
  };
  CHECK(call_as(checked, "localhost") == "ok");
  CHECK_THAT(call_as(checked, "worker9.example"), Catch::Contains("certificate verify failed"));
  auto unchecked = client_ctx(pki.ca_pem, "", "");
  CHECK(call_as(unchecked, "worker9.example") == "ok");
}

TEST_CASE("ssl.client.auth: required refuses a client without a certificate, accepts one with it",
          "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto no_cert = client_ctx(pki.ca_pem);
  auto with_cert = client_ctx(pki.ca_pem, pki.client_keystore);

  SECTION("required") {
    auto o = base_options();
    o.listeners = {"https://127.0.0.1:0"};
    o.https_tls = server_ctx(server_settings(pki, ClientAuth::Required));
    RestServer server(o, herder);
    REQUIRE(server.start());
    HttpResult refused = http_call(server.port(), http::verb::get, "/connectors", "", no_cert.get());
    CHECK(refused.status == 0);
    CHECK_FALSE(refused.error.empty());
    HttpResult admitted = http_call(server.port(), http::verb::get, "/connectors", "", with_cert.get());
    INFO(admitted.error);
    CHECK(admitted.status == 200);
    // A client certificate from a CA the server does not trust is refused too.
    auto server_trusting_other = server_settings(pki, ClientAuth::Required);
    server_trusting_other.truststore_location = pki.other_ca_pem;
    auto o2 = base_options();
    o2.listeners = {"https://127.0.0.1:0"};
    o2.https_tls = server_ctx(server_trusting_other);
    RestServer server2(o2, herder);
    REQUIRE(server2.start());
    CHECK(http_call(server2.port(), http::verb::get, "/connectors", "", with_cert.get()).status == 0);
  }
  SECTION("requested admits both") {
    auto o = base_options();
    o.listeners = {"https://127.0.0.1:0"};
    o.https_tls = server_ctx(server_settings(pki, ClientAuth::Requested));
    RestServer server(o, herder);
    REQUIRE(server.start());
    CHECK(http_call(server.port(), http::verb::get, "/connectors", "", no_cert.get()).status == 200);
    CHECK(http_call(server.port(), http::verb::get, "/connectors", "", with_cert.get()).status == 200);
  }
}

TEST_CASE("an https listener without TLS settings does not start", "[security][rest]") {
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"https://127.0.0.1:0"};
  RestServer server(o, herder);
  auto st = server.start();
  REQUIRE_FALSE(st);
  CHECK(st.error().field == "listeners");
  CHECK_THAT(st.error().message, Catch::Contains("https://127.0.0.1:0"));
}

TEST_CASE("basic authentication: 401 without or with wrong credentials, 200 with the right ones",
          "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"http://127.0.0.1:0"};
  o.basic_auth = users(pki);
  RestServer server(o, herder);
  server.add_route(Method::Post, "/connectors/{connector}/tasks",
                   [](const RestRequest&, Responder r) { r(RestResponse::empty(204)); });
  server.add_route(Method::Put, "/connectors/{connector}/fence",
                   [](const RestRequest&, Responder r) { r(RestResponse::empty(204)); });
  REQUIRE(server.start());
  const auto port = server.port();

  HttpResult none = http_call(port, http::verb::get, "/connectors");
  CHECK(none.status == 401);
  CHECK(none.body == "User cannot access the resource.");
  CHECK(none.www_authenticate.empty());  // Connect's filter sends no challenge
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr, kc::test::basic_auth_header("alice", "wrong"))
            .status == 401);
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr, kc::test::basic_auth_header("mallory", "s3cret"))
            .status == 401);
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr, "Bearer abc").status == 401);
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr, "Basic !!notbase64!!").status == 401);
  // The role list is not part of the password.
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr,
                  kc::test::basic_auth_header("alice", "s3cret,admin"))
            .status == 401);
  HttpResult alice =
      http_call(port, http::verb::get, "/connectors", "", nullptr, kc::test::basic_auth_header("alice", "s3cret"));
  CHECK(alice.status == 200);
  CHECK(json::parse(alice.body) == json::array({"existing"}));
  CHECK(http_call(port, http::verb::get, "/connectors", "", nullptr, "basic " +
                  kc::test::basic_auth_header("bob", "builder").substr(6))
            .status == 200);  // scheme is case-insensitive

  // Connect's internal requests pass without credentials (KIP-507 signs them) ...
  CHECK(http_call(port, http::verb::post, "/connectors/c1/tasks", "[]").status == 204);
  CHECK(http_call(port, http::verb::put, "/connectors/c1/fence").status == 204);
  // ... but only those: a GET of the same path, or a write elsewhere, is not.
  CHECK(http_call(port, http::verb::get, "/connectors/c1/tasks").status == 401);
  CHECK(http_call(port, http::verb::post, "/connectors", R"({"name":"x","config":{"connector.class":"A"}})").status ==
        401);
  // /health follows the default rest.health.auth=true.
  CHECK(http_call(port, http::verb::get, "/health").status == 401);
}

TEST_CASE("the web console is under basic authentication, and its 401 asks the browser for credentials",
          "[security][rest][ui]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"http://127.0.0.1:0"};
  o.basic_auth = users(pki);
  RestServer server(o, herder);
  kc::rest::add_console_routes(server, herder, nullptr);
  REQUIRE(server.start());
  const auto port = server.port();
  for (const char* path : {"/ui", "/ui/", "/ui/app.js", "/ui/api/connectors/c1/config"}) {
    INFO(path);
    HttpResult none = http_call(port, http::verb::get, path);
    CHECK(none.status == 401);
    CHECK(none.body == "User cannot access the resource.");
    CHECK(none.www_authenticate == R"(Basic realm="kconnectd", charset="UTF-8")");
    CHECK(http_call(port, http::verb::get, path, "", nullptr, kc::test::basic_auth_header("alice", "wrong")).status ==
          401);
  }
  // The console's data routes answer 401 as Connect's API does: no challenge.
  for (const char* path : {"/worker", "/cluster"}) {
    INFO(path);
    HttpResult none = http_call(port, http::verb::get, path);
    CHECK(none.status == 401);
    CHECK(none.www_authenticate.empty());
  }
  HttpResult page = http_call(port, http::verb::get, "/ui", "", nullptr, kc::test::basic_auth_header("alice", "s3cret"));
  CHECK(page.status == 200);
  CHECK(page.body.find("<html") != std::string::npos);
}

TEST_CASE("the web console over an https listener, with basic authentication", "[security][rest][ui]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"https://127.0.0.1:0"};
  o.https_tls = server_ctx(server_settings(pki));
  o.basic_auth = users(pki);
  RestServer server(o, herder);
  kc::rest::add_console_routes(server, herder, nullptr);
  REQUIRE(server.start());
  auto ca = client_ctx(pki.ca_pem);
  HttpResult none = http_call(server.port(), http::verb::get, "/ui", "", ca.get());
  CHECK(none.status == 401);
  CHECK(none.www_authenticate.rfind("Basic", 0) == 0);
  HttpResult page =
      http_call(server.port(), http::verb::get, "/ui", "", ca.get(), kc::test::basic_auth_header("alice", "s3cret"));
  INFO(page.error);
  CHECK(page.status == 200);
  CHECK(page.body.find("<html") != std::string::npos);
  HttpResult js = http_call(server.port(), http::verb::get, "/ui/app.js", "", ca.get(),
                            kc::test::basic_auth_header("alice", "s3cret"));
  CHECK(js.status == 200);
  // Plain HTTP on the https port gets no page.
  CHECK(http_call(server.port(), http::verb::get, "/ui").status != 200);
}

TEST_CASE("rest.health.auth=false lets GET /health through without credentials, nothing else", "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"http://127.0.0.1:0"};
  o.basic_auth = users(pki);
  o.health_auth = false;
  RestServer server(o, herder);
  REQUIRE(server.start());
  HttpResult h = http_call(server.port(), http::verb::get, "/health");
  CHECK(h.status == 200);
  CHECK(json::parse(h.body)["status"] == "healthy");
  CHECK(http_call(server.port(), http::verb::get, "/connectors").status == 401);
  CHECK(http_call(server.port(), http::verb::get, "/").status == 401);
}

TEST_CASE("an empty credentials file admits every request, as Connect", "[security][rest]") {
  TestPki pki;
  auto path = write_file(pki, "empty.properties", "# nobody\n");
  auto a = BasicAuthenticator::from_file(path, "rest.basic.auth.credentials.file");
  REQUIRE(a);
  CHECK(a.value().is_open());
  CHECK(a.value().authenticate(""));
  auto missing = BasicAuthenticator::from_file(pki.dir + "/absent.properties", "rest.basic.auth.credentials.file");
  REQUIRE_FALSE(missing);
  CHECK(missing.error().field == "rest.basic.auth.credentials.file");
  CHECK_THAT(missing.error().message, Catch::Contains("absent.properties"));
}

TEST_CASE("JAAS file: the KafkaConnect entry's PropertyFileLoginModule names the credentials file",
          "[security][rest]") {
  const std::string good = R"(
    // other services may share the file
    KafkaServer { org.apache.kafka.common.security.plain.PlainLoginModule required username="a" password="b"; };
    /* Connect's REST extension reads this entry */
    KafkaConnect {
      org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required
      file="/etc/kafka/connect.password";
    };
  )";
  auto f = jaas_credentials_file(good, "jaas.conf");
  REQUIRE(f);
  CHECK(f.value() == "/etc/kafka/connect.password");

  auto no_entry = jaas_credentials_file("KafkaServer { x required; };", "jaas.conf");
  REQUIRE_FALSE(no_entry);
  CHECK_THAT(no_entry.error().message, Catch::Contains("jaas.conf") && Catch::Contains("no KafkaConnect entry"));
  auto other_module = jaas_credentials_file("KafkaConnect { com.example.Ldap required url=\"x\"; };", "j");
  REQUIRE_FALSE(other_module);
  CHECK_THAT(other_module.error().message, Catch::Contains("PropertyFileLoginModule"));
  auto no_file = jaas_credentials_file(
      "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule required; };", "j");
  REQUIRE_FALSE(no_file);
  CHECK_THAT(no_file.error().message, Catch::Contains("file="));
  auto broken = jaas_credentials_file("KafkaConnect { a required file=\"x\" ", "j");
  REQUIRE_FALSE(broken);
}

TEST_CASE("internal requests exempt from basic auth are exactly Connect's two", "[security][rest]") {
  CHECK(is_internal_request("POST", {"connectors", "c", "tasks"}));
  CHECK(is_internal_request("PUT", {"connectors", "c", "fence"}));
  CHECK_FALSE(is_internal_request("GET", {"connectors", "c", "tasks"}));
  CHECK_FALSE(is_internal_request("POST", {"connectors", "c", "fence"}));
  CHECK_FALSE(is_internal_request("POST", {"connectors", "c", "tasks", "0", "restart"}));
  CHECK_FALSE(is_internal_request("POST", {"connectors"}));
}

TEST_CASE("a signed drain request skips basic auth, an unsigned one does not", "[security][rest]") {
  CHECK(signature_replaces_basic_auth("POST", {"admin", "drain", "members"}, true));
  CHECK_FALSE(signature_replaces_basic_auth("POST", {"admin", "drain", "members"}, false));
  CHECK_FALSE(signature_replaces_basic_auth("GET", {"admin", "drain", "members"}, true));
  CHECK_FALSE(signature_replaces_basic_auth("POST", {"admin", "drain"}, true));  // the operator's drain
  CHECK_FALSE(signature_replaces_basic_auth("POST", {"connectors"}, true));
  // Connect's two are exempt with or without headers (their route checks).
  CHECK(signature_replaces_basic_auth("POST", {"connectors", "c", "tasks"}, false));
  CHECK(signature_replaces_basic_auth("PUT", {"connectors", "c", "fence"}, false));
}

TEST_CASE("admin.listeners: admin endpoints only there, 404 elsewhere, and empty turns them off", "[security][rest]") {
  TinyHerder herder;
  auto admin_route = [](RestServer& s) {
    s.add_route(Method::Get, "/admin/loggers",
                [](const RestRequest&, Responder r) { r(RestResponse::json(200, R"({"root":{"level":"INFO"}})")); });
    s.add_route(Method::Post, "/admin/drain/members",
                [](const RestRequest&, Responder r) { r(RestResponse::json(202, "{}")); });
  };
  SECTION("unset: on the normal listeners (Connect's default)") {
    auto o = base_options();
    o.listeners = {"http://127.0.0.1:0"};
    RestServer server(o, herder);
    admin_route(server);
    REQUIRE(server.start());
    CHECK(http_call(server.port(), http::verb::get, "/admin/loggers").status == 200);
  }
  SECTION("set: only on the admin listener") {
    auto o = base_options();
    o.listeners = {"http://127.0.0.1:0"};
    o.admin_listeners = std::vector<std::string>{"http://127.0.0.1:0"};
    RestServer server(o, herder);
    admin_route(server);
    REQUIRE(server.start());
    REQUIRE(server.ports().size() == 2);
    const auto regular = server.ports()[0];
    const auto admin = server.ports()[1];
    HttpResult hidden = http_call(regular, http::verb::get, "/admin/loggers");
    CHECK(hidden.status == 404);
    CHECK(json::parse(hidden.body)["error_code"] == 404);
    CHECK(http_call(admin, http::verb::get, "/admin/loggers").status == 200);
    // The admin listener serves nothing else; the worker-to-leader drain
    // request stays on the normal listeners (peers know only those).
    CHECK(http_call(admin, http::verb::get, "/connectors").status == 404);
    CHECK(http_call(regular, http::verb::get, "/connectors").status == 200);
    CHECK(http_call(regular, http::verb::post, "/admin/drain/members", "{}").status == 202);
  }
  SECTION("empty: off everywhere") {
    auto o = base_options();
    o.listeners = {"http://127.0.0.1:0"};
    o.admin_listeners = std::vector<std::string>{};
    RestServer server(o, herder);
    admin_route(server);
    REQUIRE(server.start());
    REQUIRE(server.ports().size() == 1);
    CHECK(http_call(server.port(), http::verb::get, "/admin/loggers").status == 404);
    CHECK(http_call(server.port(), http::verb::get, "/connectors").status == 200);
  }
}

TEST_CASE("a follower forwards over HTTPS to an https leader, keeping Authorization", "[security][rest][forward]") {
  TestPki pki;
  TinyHerder leader_herder;
  auto lo = base_options();
  lo.listeners = {"https://127.0.0.1:0"};
  lo.https_tls = server_ctx(server_settings(pki, ClientAuth::Required));
  lo.basic_auth = users(pki);
  RestServer leader(lo, leader_herder);
  REQUIRE(leader.start());

  TinyHerder follower_herder;
  follower_herder.leader_url = "https://localhost:" + std::to_string(leader.port()) + "/";
  auto fo = base_options();
  fo.listeners = {"https://127.0.0.1:0"};
  fo.https_tls = server_ctx(server_settings(pki, ClientAuth::Required));
  fo.basic_auth = users(pki);
  SECTION("trusted leader, client certificate presented") {
    fo.forward_tls = client_ctx(pki.ca_pem, pki.client_keystore);
    RestServer follower(fo, follower_herder);
    REQUIRE(follower.start());
    auto client = client_ctx(pki.ca_pem, pki.client_keystore);
    const std::string body = R"({"name":"via-follower","config":{"connector.class":"A"}})";
    HttpResult denied = http_call(follower.port(), http::verb::post, "/connectors", body, client.get());
    CHECK(denied.status == 401);
    HttpResult created = http_call(follower.port(), http::verb::post, "/connectors", body, client.get(),
                                   kc::test::basic_auth_header("alice", "s3cret"));
    INFO(created.body << created.error);
    CHECK(created.status == 201);
    CHECK(leader_herder.connectors.count("via-follower") == 1);
  }
  SECTION("leader certificate not trusted: 500 IO Error naming the verify failure") {
    fo.forward_tls = client_ctx(pki.other_ca_pem, pki.client_keystore);
    RestServer follower(fo, follower_herder);
    REQUIRE(follower.start());
    auto client = client_ctx(pki.ca_pem, pki.client_keystore);
    HttpResult r = http_call(follower.port(), http::verb::post, "/connectors",
                             R"({"name":"x","config":{"connector.class":"A"}})", client.get(),
                             kc::test::basic_auth_header("alice", "s3cret"));
    CHECK(r.status == 500);
    CHECK_THAT(r.body, Catch::Contains("IO Error trying to forward REST request") &&
                           Catch::Contains("certificate verify failed"));
    CHECK(leader_herder.connectors.count("x") == 0);
  }
  SECTION("no TLS client settings: a clear 500") {
    RestServer follower(fo, follower_herder);
    REQUIRE(follower.start());
    auto client = client_ctx(pki.ca_pem, pki.client_keystore);
    HttpResult r = http_call(follower.port(), http::verb::post, "/connectors",
                             R"({"name":"x","config":{"connector.class":"A"}})", client.get(),
                             kc::test::basic_auth_header("alice", "s3cret"));
    CHECK(r.status == 500);
    CHECK_THAT(r.body, Catch::Contains("no TLS settings"));
  }
}

TEST_CASE("post_internal reaches an https leader with the worker's trust settings", "[security][rest]") {
  TestPki pki;
  TinyHerder herder;
  auto o = base_options();
  o.listeners = {"https://127.0.0.1:0"};
  o.https_tls = server_ctx(server_settings(pki, ClientAuth::Required));
  o.basic_auth = users(pki);
  RestServer server(o, herder);
  std::atomic<int> hits{0};
  server.add_route(Method::Post, "/connectors/{connector}/tasks", [&hits](const RestRequest&, Responder r) {
    ++hits;
    r(RestResponse::empty(204));
  });
  REQUIRE(server.start());
  const std::string url = "https://127.0.0.1:" + std::to_string(server.port()) + "/";
  auto with_cert = client_ctx(pki.ca_pem, pki.client_keystore);
  auto r = kc::herder::post_internal(url, "/connectors/c1/tasks", "", 5000, with_cert.get());
  INFO((r ? std::string() : r.error().to_string()));
  REQUIRE(r);
  CHECK(r.value().status == 204);  // internal: no basic auth credentials needed
  CHECK(hits == 1);
  auto wrong = client_ctx(pki.other_ca_pem, pki.client_keystore);
  auto bad = kc::herder::post_internal(url, "/connectors/c1/tasks", "", 5000, wrong.get());
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("certificate verify failed") && Catch::Contains(url));
  auto no_tls = kc::herder::post_internal(url, "/connectors/c1/tasks", "", 5000, nullptr);
  REQUIRE_FALSE(no_tls);
  CHECK(hits == 1);
}

TEST_CASE("rest_security_from reads the worker config: https, JAAS, credentials file, admin listeners",
          "[security][rest]") {
  TestPki pki;
  kc::config::Properties base{{"group.id", "g"},
                              {"config.storage.topic", "c"},
                              {"offset.storage.topic", "o"},
                              {"status.storage.topic", "s"}};
  auto creds = write_file(pki, "connect.password", "alice: s3cret\n");

  SECTION("https listener with listeners.https.ssl.* and Connect's basic auth extension via JAAS") {
    auto props = base;
    props["listeners"] = "https://127.0.0.1:0";
    props["listeners.https.ssl.keystore.type"] = "PEM";
    props["listeners.https.ssl.keystore.location"] = pki.server_keystore;
    props["listeners.https.ssl.truststore.location"] = pki.ca_pem;
    props["listeners.https.ssl.client.auth"] = "required";
    props["rest.extension.classes"] = kBasicAuthExtensionClass;
    props["java.security.auth.login.config"] =
        write_file(pki, "jaas.conf",
                   "KafkaConnect {\n  org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
                   "required\n  file=\"" + creds + "\";\n};\n");
    props["rest.health.auth"] = "false";
    props["admin.listeners"] = "";
    auto wc = kc::config::WorkerConfig::from_properties(props);
    CHECK(wc.advertised_url("h").rfind("https://", 0) == 0);
    auto sec = rest_security_from(wc);
    INFO((sec ? std::string() : sec.error().to_string()));
    REQUIRE(sec);
    CHECK(sec.value().https_tls);
    CHECK(sec.value().client_tls);
    REQUIRE(sec.value().basic_auth);
    CHECK(sec.value().basic_auth->authenticate(kc::test::basic_auth_header("alice", "s3cret")));
    CHECK_FALSE(sec.value().basic_auth->authenticate(kc::test::basic_auth_header("alice", "nope")));
    CHECK_FALSE(sec.value().health_auth);
    REQUIRE(sec.value().admin_listeners);
    CHECK(sec.value().admin_listeners->empty());
  }
  SECTION("the JAAS file from KAFKA_OPTS, as Connect's scripts pass it") {
    auto props = base;
    props["rest.extension.classes"] = kBasicAuthExtensionClass;
    auto jaas = write_file(pki, "jaas2.conf",
                           "KafkaConnect { org.apache.kafka.connect.rest.basic.auth.extension.PropertyFileLoginModule "
                           "required file=\"" + creds + "\"; };");
    auto sec = rest_security_from(kc::config::WorkerConfig::from_properties(props),
                                  "-Xmx1g -Djava.security.auth.login.config=" + jaas + " -Dx=y");
    REQUIRE(sec);
    REQUIRE(sec.value().basic_auth);
    CHECK(sec.value().basic_auth->size() == 1);
    CHECK_FALSE(sec.value().admin_listeners.has_value());
    CHECK(sec.value().health_auth);
  }
  SECTION("our rest.basic.auth.credentials.file") {
    auto props = base;
    props["rest.basic.auth.credentials.file"] = creds;
    auto sec = rest_security_from(kc::config::WorkerConfig::from_properties(props));
    REQUIRE(sec);
    REQUIRE(sec.value().basic_auth);
    CHECK(sec.value().basic_auth->authenticate(kc::test::basic_auth_header("alice", "s3cret")));
  }
  SECTION("errors name the key and the file") {
    auto props = base;
    props["listeners"] = "https://127.0.0.1:0";
    props["ssl.keystore.location"] = pki.dir + "/missing.pem";  // top-level fallback
    auto sec = rest_security_from(kc::config::WorkerConfig::from_properties(props));
    REQUIRE_FALSE(sec);
    CHECK_THAT(sec.error().to_string(),
               Catch::StartsWith("ssl.keystore.location") && Catch::Contains(pki.dir + "/missing.pem"));

    auto p2 = base;
    p2["rest.extension.classes"] = kBasicAuthExtensionClass;
    auto no_jaas = rest_security_from(kc::config::WorkerConfig::from_properties(p2));
    REQUIRE_FALSE(no_jaas);
    CHECK(no_jaas.error().field == "rest.extension.classes");

    p2["java.security.auth.login.config"] = pki.dir + "/no-jaas.conf";
    auto missing_jaas = rest_security_from(kc::config::WorkerConfig::from_properties(p2));
    REQUIRE_FALSE(missing_jaas);
    CHECK_THAT(missing_jaas.error().to_string(), Catch::Contains("no-jaas.conf"));
  }
}
