// security.protocol=SASL_SSL end to end for the group client: worker
// properties (TLS trust store, SCRAM-SHA-512 credentials in sasl.jaas.config)
// go through the herder's own translation (herder_config_from) into the
// group client, which joins the scripted TLS broker's group after the TLS
// handshake and the SCRAM exchange; a wrong password is the documented fatal
// error. group_admin's ApiVersions probe (storage::broker_apis, before
// DeleteGroups/OffsetDelete) uses the same settings: TLS + SCRAM, a wrong
// password is __AUTHENTICATION, an untrusted CA __SSL. The broker is the TLS
// transport of tls_test_broker.h running the SASL script of
// sasl_test_broker.h.
#include <catch2/catch.hpp>

#include <thread>

#include "config/worker_config.h"
#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/recording_member.h"
#include "tests/integration/protocol/tls_test_broker.h"
#include "tests/integration/protocol_sasl/sasl_test_broker.h"
#include "worker/herder/herder_config.h"
#include "worker/storage/group_admin.h"
#include "worker/storage/kafka_security.h"

using namespace kc::kafka;
using kc::test::run_until;
using kc::test::TestPki;
using kc::test::TlsBroker;
using kc::test::TlsBrokerOptions;
using std::chrono::milliseconds;

namespace {

using SaslSslBroker = kc::test::BasicSaslBroker<TlsBroker>;

/// The herder's settings for a worker whose properties name `broker` with
/// SASL_SSL, SCRAM-SHA-512 and `password`, trusting `ca` (default: the
/// test CA that signed the broker).
kc::herder::HerderConfig worker_settings(uint16_t port, const std::string& password, std::string ca = "") {
  const auto& pki = TestPki::get();
  if (ca.empty()) ca = pki.ca_pem;
  kc::config::Properties props{
      {"bootstrap.servers", "localhost:" + std::to_string(port)},
      {"group.id", "sasl-ssl"},
      {"config.storage.topic", "c"},
      {"offset.storage.topic", "o"},
      {"status.storage.topic", "s"},
      {"security.protocol", "SASL_SSL"},
      {"ssl.truststore.type", "PEM"},
      {"ssl.truststore.location", ca},
      {"sasl.mechanism", "SCRAM-SHA-512"},
      {"sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"connect\" "
                           "password=\"" + password + "\";"}};
  return kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(props), "localhost");
}

/// A group member configured as the herder configures its group client.
struct Member : kc::test::RecordingMember {
  Member(boost::asio::io_context& io, const kc::herder::HerderConfig& hc) {
    auto cfg = config(hc.group_id, hc.bootstrap_servers);
    cfg.tls = hc.group_tls;
    REQUIRE(hc.group_sasl.has_value());
    auto sasl = kc::storage::connection_sasl_settings(*hc.group_sasl);
    REQUIRE(sasl);
    cfg.sasl = sasl.value();
    start(io, cfg);
  }
};

/// What the herder hands group_admin for a sink connector's offsets
/// (sink_admin_props without overrides): the worker's client properties.
kc::storage::ClientProps admin_props(const kc::herder::HerderConfig& hc) {
  auto p = hc.client_props;
  p["bootstrap.servers"] = hc.bootstrap_servers;
  return p;
}

/// The SASL_SSL broker (certificate for localhost, signed by the test CA;
/// "localhost" in its FindCoordinator answers) on a test io_context.
struct SaslSslSetup {
  boost::asio::io_context io;
  SaslSslBroker broker{io, TlsBrokerOptions{TestPki::get().server_cert, TestPki::get().server_key, "", false}};
  kc::storage::BrokerApis apis;

  SaslSslSetup() { broker.host = "localhost"; }

  /// group_admin's broker_apis() for `group` with the admin properties of a
  /// worker using `password` and trusting `ca`, on this thread (it blocks
  /// on a private io_context) while `io` serves the broker on another; the
  /// broker's records may be read once this returns.
  kc::storage::AdminStatus probe(const std::string& password, const std::string& group, const std::string& ca = "") {
    const auto props = admin_props(worker_settings(broker.port(), password, ca));
    std::thread broker_thread([&] { io.run(); });
    auto st = kc::storage::broker_apis(props, group, 10000, apis);
    io.stop();
    broker_thread.join();
    return st;
  }
};

}  // namespace

TEST_CASE("SASL_SSL worker settings: the group client joins over TLS with SCRAM-SHA-512", "[security][sasl][tls]") {
  SaslSslSetup s;
  auto& broker = s.broker;
  const auto hc = worker_settings(broker.port(), "connect-secret");
  REQUIRE(hc.group_tls.has_value());
  Member m(s.io, hc);
  REQUIRE(run_until(s.io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
  CHECK(m.member->state() == GroupState::Stable);
  CHECK(m.joined[0].assignment == Bytes{7});
  // Both connections: TLS handshake with SNI, then SCRAM-SHA-512 before any group request.
  CHECK(broker.broker.handshakes == 2);
  CHECK(broker.broker.server_names == std::vector<std::string>{"localhost", "localhost"});
  CHECK(broker.handshakes == std::vector<std::string>(2, "SCRAM-SHA-512"));
  CHECK(broker.authenticated.size() == 2);
  CHECK(broker.unauthenticated_requests == 0);
  CHECK(broker.failed_authentications == 0);
  CHECK(m.errors.empty());
}

TEST_CASE("SASL_SSL worker settings: a wrong password is the documented fatal error", "[security][sasl][tls]") {
  SaslSslSetup s;
  auto& broker = s.broker;
  Member m(s.io, worker_settings(broker.port(), "not-the-password"));
  REQUIRE(run_until(s.io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(10000)));
  CHECK(broker.broker.handshakes == 1);  // TLS held; SASL refused; no reconnect
  CHECK(broker.failed_authentications == 1);
  CHECK(broker.group.joins.empty());
  REQUIRE(m.errors.size() == 1);
  CHECK(m.errors[0].fatal);
  CHECK(m.errors[0].net == NetErrorKind::Authentication);
  CHECK(m.errors[0].message == "SASL authentication failed with broker localhost:" + std::to_string(broker.port()) +
                                   " (SCRAM-SHA-512): Authentication failed during authentication due to invalid "
                                   "credentials with SASL mechanism SCRAM-SHA-512");
  CHECK(m.joined.empty());
}

TEST_CASE("SASL_SSL worker settings: group_admin's ApiVersions probe runs over TLS with SCRAM-SHA-512",
          "[security][sasl][tls]") {
  SaslSslSetup s;
  auto& broker = s.broker;
  const auto& apis = s.apis;
  auto st = s.probe("connect-secret", "sasl-ssl");
  INFO(st.message);
  REQUIRE(st.ok());
  // The broker's own list, SASL APIs included, read over the secured connection.
  CHECK(apis.count(17) == 1);
  CHECK(apis.at(36) == std::make_pair<int16_t, int16_t>(0, 2));
  CHECK(apis.count(10) == 1);
  REQUIRE(broker.broker.handshakes >= 1);
  CHECK(broker.broker.server_names.front() == "localhost");
  CHECK(broker.handshakes == std::vector<std::string>(broker.broker.handshakes, "SCRAM-SHA-512"));
  CHECK(broker.authenticated.size() == static_cast<size_t>(broker.broker.handshakes));
  CHECK(broker.unauthenticated_requests == 0);  // FindCoordinator only after SCRAM
}

TEST_CASE("SASL_SSL worker settings: group_admin's probe with a wrong password is an authentication error",
          "[security][sasl][tls]") {
  SaslSslSetup s;
  auto& broker = s.broker;
  auto st = s.probe("not-the-password", "sasl-ssl");
  CHECK(st.code == RD_KAFKA_RESP_ERR__AUTHENTICATION);
  CHECK_THAT(st.message, Catch::Contains("localhost:" + std::to_string(broker.port())) &&
                             Catch::Contains("SCRAM-SHA-512") && Catch::Contains("invalid credentials"));
  CHECK(broker.failed_authentications == 1);
  CHECK(s.apis.empty());
}

TEST_CASE("SASL_SSL worker settings: group_admin's probe refuses a broker certificate from an untrusted CA",
          "[security][tls]") {
  SaslSslSetup s;
  auto& broker = s.broker;
  auto st = s.probe("connect-secret", "", TestPki::get().other_ca_pem);
  CHECK(st.code == RD_KAFKA_RESP_ERR__SSL);
  CHECK_THAT(st.message, Catch::Contains("certificate verify failed"));
  CHECK(broker.broker.handshakes == 0);
  CHECK(broker.handshakes.empty());  // nothing sent before TLS held
}
