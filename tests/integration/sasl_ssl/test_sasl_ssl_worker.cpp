// security.protocol=SASL_SSL end to end for the group client: worker
// properties (TLS trust store, SCRAM-SHA-512 credentials in sasl.jaas.config)
// go through the herder's own translation (herder_config_from) into the
// group client, which joins the scripted TLS broker's group after the TLS
// handshake and the SCRAM exchange; a wrong password is the documented fatal
// error. The broker is the TLS transport of tls_test_broker.h running the
// SASL script of sasl_test_broker.h.
#include <catch2/catch.hpp>

#include "config/worker_config.h"
#include "protocol/kafka/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/tls_test_broker.h"
#include "tests/integration/protocol_sasl/sasl_test_broker.h"
#include "worker/herder/herder_config.h"

using namespace kc::kafka;
using kc::test::run_until;
using kc::test::TestPki;
using kc::test::TlsBroker;
using kc::test::TlsBrokerOptions;
using std::chrono::milliseconds;

namespace {

using SaslSslBroker = kc::test::BasicSaslBroker<TlsBroker>;

/// The herder's settings for a worker whose properties name `broker` with
/// SASL_SSL, SCRAM-SHA-512 and `password`.
kc::herder::HerderConfig worker_settings(uint16_t port, const std::string& password) {
  const auto& pki = TestPki::get();
  kc::config::Properties props{
      {"bootstrap.servers", "localhost:" + std::to_string(port)},
      {"group.id", "sasl-ssl"},
      {"config.storage.topic", "c"},
      {"offset.storage.topic", "o"},
      {"status.storage.topic", "s"},
      {"security.protocol", "SASL_SSL"},
      {"ssl.truststore.type", "PEM"},
      {"ssl.truststore.location", pki.ca_cert},
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
    auto mech = parse_sasl_mechanism(hc.group_sasl->mechanism);
    REQUIRE(mech.has_value());
    cfg.sasl = SaslSettings{*mech, hc.group_sasl->username, hc.group_sasl->password};
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
