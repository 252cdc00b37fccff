// The group client over TLS against the scripted TLS broker
// (tests/integration/protocol/tls_test_broker.h) with a throwaway PKI made by
// the `openssl` command: the happy path with host name verification and SNI,
// an untrusted CA, a host name mismatch (fatal) and the same certificate
// accepted with endpoint identification off, mutual TLS with a PEM keystore
// from the worker properties, a broker closing mid-handshake (retried, not
// fatal), and bad PEM files (errors naming the file and OpenSSL's reason).
#include <catch2/catch.hpp>

#include <fstream>

#include "config/security_config.h"
#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"
#include "tests/integration/protocol/recording_member.h"
#include "tests/integration/protocol/scripted_coordinator.h"
#include "tests/integration/protocol/tls_test_broker.h"
#include "worker/storage/kafka_security.h"

using namespace kc::kafka;
using kc::test::run_until;
using kc::test::ScriptedCoordinator;
using kc::test::TestPki;
using kc::test::TlsBroker;
using kc::test::TlsBrokerOptions;
using std::chrono::milliseconds;

namespace {

/// A RecordingMember of group "tls" against `port` on `host` with `tls`.
struct Member : kc::test::RecordingMember {
  Member(boost::asio::io_context& io, const std::string& host, uint16_t port, std::optional<TlsOptions> tls) {
    auto cfg = config("tls", host + ":" + std::to_string(port));
    cfg.tls = std::move(tls);
    start(io, cfg);
  }
};

TlsOptions trusting(const std::string& ca_file, bool verify_hostname = true) {
  TlsOptions o;
  o.ca = PemSource{ca_file, "", "ssl.truststore.location"};
  o.verify_hostname = verify_hostname;
  return o;
}

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = TestPki::get().dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

}  // namespace

TEST_CASE("TLS group client joins through the TLS broker with host name verification and SNI",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  ScriptedCoordinator coord{broker.port(), "localhost"};
  broker.on_request = [&](kc::test::FakeRequest& r) { coord.handle(r); };

  Member m(io, "localhost", broker.port(), trusting(pki.ca_pem));
  REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
  CHECK(m.joined[0].is_leader);
  CHECK(m.joined[0].assignment == Bytes{7});
  CHECK(m.member->state() == GroupState::Stable);
  // Bootstrap and coordinator connections both went through TLS, both with
  // SNI = the host name, and the group requests arrived over them.
  CHECK(broker.handshakes == 2);
  CHECK(broker.server_names == std::vector<std::string>{"localhost", "localhost"});
  CHECK(broker.handshake_errors.empty());
  CHECK(coord.syncs.size() == 1);
  CHECK(m.fatal_error() == nullptr);
  // Heartbeats flow over the TLS connection.
  REQUIRE(run_until(io, [&] { return coord.heartbeats.size() >= 3; }, milliseconds(5000)));
  CHECK(m.member->state() == GroupState::Stable);
}

TEST_CASE("TLS group client: an IP address is verified against the certificate's IP SAN, without SNI",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  ScriptedCoordinator coord{broker.port(), "127.0.0.1"};
  broker.on_request = [&](kc::test::FakeRequest& r) { coord.handle(r); };
  Member m(io, "127.0.0.1", broker.port(), trusting(pki.ca_pem));
  REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
  REQUIRE_FALSE(broker.server_names.empty());
  CHECK(broker.server_names[0].empty());  // RFC 6066: no IP addresses in SNI
}

TEST_CASE("TLS group client: a broker certificate from an untrusted CA is a fatal verify failure",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  Member m(io, "localhost", broker.port(), trusting(pki.other_ca_pem));
  REQUIRE(run_until(io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(10000)));
  const GroupError* e = m.fatal_error();
  REQUIRE(e != nullptr);
  CHECK(e->net == NetErrorKind::Tls);
  CHECK(e->action == ErrorAction::Fatal);
  CHECK_THAT(e->message, Catch::Contains("localhost:" + std::to_string(broker.port())));
  CHECK_THAT(e->message, Catch::Contains("TLS handshake failed"));
  CHECK_THAT(e->message, Catch::Contains("certificate verify failed"));
  CHECK_THAT(e->message, Catch::Contains("unable to get local issuer certificate"));
  CHECK(m.joined.empty());
  // Fatal: no reconnect loop.
  const int accepted = broker.accepted;
  kc::test::run_for(io, milliseconds(300));
  CHECK(broker.accepted == accepted);
  CHECK(accepted == 1);
}

TEST_CASE("TLS group client: a certificate for another host name is a fatal host name mismatch",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.wrong_cert, pki.wrong_key, "", false});
  Member m(io, "localhost", broker.port(), trusting(pki.ca_pem));
  REQUIRE(run_until(io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(10000)));
  const GroupError* e = m.fatal_error();
  REQUIRE(e != nullptr);
  CHECK(e->net == NetErrorKind::Tls);
  CHECK_THAT(e->message, Catch::Contains("host name mismatch"));
  CHECK_THAT(e->message, Catch::Contains("'localhost'"));
  CHECK(broker.accepted == 1);
}

TEST_CASE("TLS group client: endpoint identification off accepts the mismatched certificate",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.wrong_cert, pki.wrong_key, "", false});
  ScriptedCoordinator coord{broker.port(), "localhost"};
  broker.on_request = [&](kc::test::FakeRequest& r) { coord.handle(r); };
  // From the worker properties, as `kconnectd run` builds it.
  auto settings = kc::config::tls_settings_from({{"security.protocol", "SSL"},
                                                 {"ssl.truststore.type", "PEM"},
                                                 {"ssl.truststore.location", pki.ca_pem},
                                                 {"ssl.endpoint.identification.algorithm", ""}});
  auto tls = kc::storage::connection_tls_options(settings);
  REQUIRE(tls.has_value());
  CHECK_FALSE(tls->verify_hostname);
  Member m(io, "localhost", broker.port(), tls);
  REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
  CHECK(m.fatal_error() == nullptr);
  // The chain is still verified: an untrusted CA fails even with the host check off.
  TlsBroker broker2(io, TlsBrokerOptions{pki.wrong_cert, pki.wrong_key, "", false});
  Member m2(io, "localhost", broker2.port(), trusting(pki.other_ca_pem, false));
  REQUIRE(run_until(io, [&] { return m2.member->state() == GroupState::Closed; }, milliseconds(10000)));
  REQUIRE(m2.fatal_error() != nullptr);
  CHECK_THAT(m2.fatal_error()->message, Catch::Contains("certificate verify failed"));
}

TEST_CASE("TLS group client: mutual TLS with a PEM keystore from ssl.keystore.* settings", "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, pki.ca_pem, false});
  ScriptedCoordinator coord{broker.port(), "localhost"};
  broker.on_request = [&](kc::test::FakeRequest& r) { coord.handle(r); };

  SECTION("ssl.keystore.location: one PEM file with the key and the certificate") {
    auto settings = kc::config::tls_settings_from({{"security.protocol", "SSL"},
                                                   {"ssl.truststore.location", pki.ca_pem},
                                                   {"ssl.keystore.type", "PEM"},
                                                   {"ssl.keystore.location", pki.client_keystore}});
    Member m(io, "localhost", broker.port(), kc::storage::connection_tls_options(settings));
    REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
    REQUIRE_FALSE(broker.client_subjects.empty());
    CHECK(broker.client_subjects[0] == "kconnectd-client");
  }
  SECTION("ssl.keystore.certificate.chain + ssl.keystore.key (encrypted) + ssl.key.password, inline") {
    auto read = [](const std::string& p) {
      std::ifstream in(p);
      return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    auto settings = kc::config::tls_settings_from({{"security.protocol", "SASL_SSL"},
                                                   {"ssl.truststore.certificates", read(pki.ca_pem)},
                                                   {"ssl.keystore.certificate.chain", read(pki.client_cert)},
                                                   {"ssl.keystore.key", read(pki.client_key_encrypted)},
                                                   {"ssl.key.password", pki.client_key_password}});
    Member m(io, "localhost", broker.port(), kc::storage::connection_tls_options(settings));
    REQUIRE(run_until(io, [&] { return !m.joined.empty(); }, milliseconds(10000)));
    REQUIRE_FALSE(broker.client_subjects.empty());
    CHECK(broker.client_subjects[0] == "kconnectd-client");
  }
  SECTION("no client certificate: the broker's alert is a fatal TLS error") {
    Member m(io, "localhost", broker.port(), trusting(pki.ca_pem));
    REQUIRE(run_until(io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(10000)));
    REQUIRE(m.fatal_error() != nullptr);
    CHECK(m.fatal_error()->net == NetErrorKind::Tls);
    CHECK_THAT(m.fatal_error()->message, Catch::Contains("certificate required"));
    CHECK(m.joined.empty());
  }
}

TEST_CASE("TLS group client: a broker closing mid-handshake is a clear, retried connect error", "[tls][security]") {
  const auto& pki = TestPki::get();
  boost::asio::io_context io;
  TlsBroker broker(io, TlsBrokerOptions{pki.server_cert, pki.server_key, "", true});

  // One Connection: the error names the broker and the handshake.
  ConnectionOptions opts;
  opts.tls = trusting(pki.ca_pem);
  auto conn = Connection::create(io, opts);
  std::optional<NetStatus> done;
  conn->connect("localhost", broker.port(), [&](NetStatus st) { done = st; });
  REQUIRE(run_until(io, [&] { return done.has_value(); }, milliseconds(5000)));
  REQUIRE_FALSE(done->ok());
  CHECK(done->error().kind == NetErrorKind::Connect);
  CHECK_THAT(done->error().message, Catch::Contains("localhost:" + std::to_string(broker.port())));
  CHECK_THAT(done->error().message, Catch::Contains("closed the connection during the handshake"));
  CHECK_FALSE(conn->is_open());

  // The group member reports it and keeps trying (a broker restart is not fatal).
  Member m(io, "localhost", broker.port(), trusting(pki.ca_pem));
  REQUIRE(run_until(io, [&] { return m.errors.size() >= 3; }, milliseconds(10000)));
  CHECK(m.fatal_error() == nullptr);
  CHECK(m.member->state() == GroupState::Discovering);
  CHECK(m.errors[0].net == NetErrorKind::Connect);
  CHECK_THAT(m.errors[0].message, Catch::Contains("TLS handshake failed"));
  m.member->stop();
  REQUIRE(run_until(io, [&] { return m.member->state() == GroupState::Closed; }, milliseconds(3000)));
}

TEST_CASE("TLS context: missing or garbage PEM files give errors naming the file and OpenSSL's reason",
          "[tls][security]") {
  const auto& pki = TestPki::get();
  SECTION("missing CA file") {
    auto r = make_tls_context(trusting(pki.dir + "/nope.pem"));
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().kind == NetErrorKind::Tls);
    CHECK_THAT(r.error().message, Catch::Contains("ssl.truststore.location '" + pki.dir + "/nope.pem'"));
    CHECK_THAT(r.error().message, Catch::Contains("No such file or directory"));
  }
  SECTION("garbage CA file") {
    const auto path = write_file("garbage-ca.pem", "this is not a certificate\n");
    auto r = make_tls_context(trusting(path));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("no PEM certificate in ssl.truststore.location '" + path + "'"));
    CHECK_THAT(r.error().message, Catch::Contains("no start line"));  // OpenSSL's reason
  }
  SECTION("garbage inside the PEM armour") {
    const auto path =
        write_file("bad-base64.pem", "-----BEGIN CERTIFICATE-----\nAAAA!!!!\n-----END CERTIFICATE-----\n");
    auto r = make_tls_context(trusting(path));
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains(path));
    CHECK_THAT(r.error().message, Catch::Contains("error:"));  // ERR_error_string form
  }
  SECTION("garbage key file") {
    TlsOptions o = trusting(pki.ca_pem);
    o.certificate = PemSource{pki.client_cert, "", "ssl.certificate.location"};
    o.key = PemSource{write_file("garbage.key", "-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n"), "",
                      "ssl.key.location"};
    auto r = make_tls_context(o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("cannot load the private key from ssl.key.location '" + o.key.file));
  }
  SECTION("encrypted key without or with a wrong ssl.key.password") {
    TlsOptions o = trusting(pki.ca_pem);
    o.certificate = PemSource{pki.client_cert, "", "ssl.certificate.location"};
    o.key = PemSource{pki.client_key_encrypted, "", "ssl.key.location"};
    auto none = make_tls_context(o);
    REQUIRE_FALSE(none.ok());
    CHECK_THAT(none.error().message, Catch::Contains("ssl.key.password is not set"));
    o.key_password = "wrong";
    auto wrong = make_tls_context(o);
    REQUIRE_FALSE(wrong.ok());
    CHECK_THAT(wrong.error().message, Catch::Contains(pki.client_key_encrypted));
    CHECK_THAT(wrong.error().message, Catch::Contains("is ssl.key.password right?"));
    o.key_password = pki.client_key_password;
    CHECK(make_tls_context(o).ok());
  }
  SECTION("key of another certificate") {
    TlsOptions o = trusting(pki.ca_pem);
    o.certificate = PemSource{pki.client_cert, "", "ssl.certificate.location"};
    o.key = PemSource{pki.server_key, "", "ssl.key.location"};
    auto r = make_tls_context(o);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().message, Catch::Contains("does not match the certificate"));
  }
  SECTION("GroupMember::create refuses bad TLS material up front") {
    boost::asio::io_context io;
    GroupMemberConfig cfg;
    cfg.group_id = "tls";
    cfg.bootstrap_servers = {"localhost:9093"};
    cfg.tls = trusting(write_file("garbage2.pem", "garbage"));
    GroupMemberCallbacks cb;
    cb.on_prepare_join = [](const JoinPrepare&, JoinReady ready) { ready({}); };
    cb.on_assign = [](const LeaderAssignmentInput&, AssignmentReady ready) { ready({}); };
    try {
      (void)GroupMember::create(io, cfg, cb);
      FAIL("create() accepted a garbage CA file");
    } catch (const std::invalid_argument& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains(cfg.tls->ca.file));
      CHECK_THAT(std::string(e.what()), Catch::Contains("no start line"));
    }
  }
}
