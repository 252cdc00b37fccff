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
#include "protocol/kafka/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
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
  if (ca.empty()) ca = pki.ca_cert;
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
struct Member {
  std::vector<JoinedGroup> joined;
  std::vector<GroupError> errors;
  std::shared_ptr<GroupMember> member;

  Member(boost::asio::io_context& io, const kc::herder::HerderConfig& hc) {
    GroupMemberConfig cfg;
    cfg.group_id = hc.group_id;
    cfg.bootstrap_servers = {hc.bootstrap_servers};
    cfg.session_timeout = milliseconds(3000);
    cfg.rebalance_timeout = milliseconds(3000);
    cfg.heartbeat_interval = milliseconds(100);
    cfg.request_timeout = milliseconds(3000);
    cfg.connect_timeout = milliseconds(3000);
    cfg.retry_backoff = milliseconds(20);
    cfg.tls = hc.group_tls;
    REQUIRE(hc.group_sasl.has_value());
    auto sasl = kc::storage::connection_sasl_settings(*hc.group_sasl);
    REQUIRE(sasl);
    cfg.sasl = sasl.value();
    GroupMemberCallbacks cb;
    cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) {
      ready({JoinGroupProtocol{"sessioned", Bytes{1, 2, 3}}});
    };
    cb.on_assign = [](const LeaderAssignmentInput& in, AssignmentReady ready) {
      ready({SyncGroupAssignment{in.members[0].member_id, Bytes{7}}});
    };
    cb.on_joined = [this](const JoinedGroup& j) { joined.push_back(j); };
    cb.on_error = [this](const GroupError& e) { errors.push_back(e); };
    member = GroupMember::create(io, cfg, cb);
    member->start();
  }
};

/// What the herder hands group_admin for a sink connector's offsets
/// (sink_admin_props without overrides): the worker's client properties.
kc::storage::ClientProps admin_props(const kc::herder::HerderConfig& hc) {
  auto p = hc.client_props;
  p["bootstrap.servers"] = hc.bootstrap_servers;
  return p;
}

/// broker_apis() on this thread (it blocks on a private io_context) while
/// `io` serves the broker on another; the broker's records may be read
/// once this returns.
kc::storage::AdminStatus probe_apis(boost::asio::io_context& io, const kc::storage::ClientProps& props,
                                    const std::string& group, kc::storage::BrokerApis& apis) {
  std::thread broker_thread([&] { io.run(); });
  auto st = kc::storage::broker_apis(props, group, 10000, apis);
  io.stop();
  broker_thread.join();
  return st;
}

}  // namespace

TEST_CASE("SASL_SSL worker settings: the group client joins over TLS with SCRAM-SHA-512", "[security][sasl][tls]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  SaslSslBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  broker.host = "localhost";
  const auto hc = worker_settings(broker.port(), "connect-secret");
  REQUIRE(hc.group_tls.has_value());
  Member m(io, hc);
  REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
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
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  SaslSslBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  broker.host = "localhost";
  Member m(io, worker_settings(broker.port(), "not-the-password"));
  REQUIRE(run_until(io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(10000)));
  CHECK(broker.broker.handshakes == 1);  // TLS held; SASL refused; no reconnect
  CHECK(broker.failed_authentications == 1);
  CHECK(broker.joins == 0);
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
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  SaslSslBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  broker.host = "localhost";
  kc::storage::BrokerApis apis;
  auto st = probe_apis(io, admin_props(worker_settings(broker.port(), "connect-secret")), "sasl-ssl", apis);
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
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  SaslSslBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  broker.host = "localhost";
  kc::storage::BrokerApis apis;
  auto st = probe_apis(io, admin_props(worker_settings(broker.port(), "not-the-password")), "sasl-ssl", apis);
  CHECK(st.code == RD_KAFKA_RESP_ERR__AUTHENTICATION);
  CHECK_THAT(st.message, Catch::Contains("localhost:" + std::to_string(broker.port())) &&
                             Catch::Contains("SCRAM-SHA-512") && Catch::Contains("invalid credentials"));
  CHECK(broker.failed_authentications == 1);
  CHECK(apis.empty());
}

TEST_CASE("SASL_SSL worker settings: group_admin's probe refuses a broker certificate from an untrusted CA",
          "[security][tls]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  SaslSslBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  kc::storage::BrokerApis apis;
  auto st = probe_apis(io, admin_props(worker_settings(broker.port(), "connect-secret", pki.other_ca_cert)), "", apis);
  CHECK(st.code == RD_KAFKA_RESP_ERR__SSL);
  CHECK_THAT(st.message, Catch::Contains("certificate verify failed"));
  CHECK(broker.broker.handshakes == 0);
  CHECK(broker.handshakes.empty());  // nothing sent before TLS held
}
