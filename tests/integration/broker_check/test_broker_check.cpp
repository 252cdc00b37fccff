// The startup broker check (worker/storage/broker_check.h) end to end: a
// real librdkafka client against each test broker misconfigured one way,
// and `kconnectd run` itself exiting within 10 s with the named cause.
//
// Partners: librdkafka's mock cluster (plaintext; topic errors injected
// with rd_kafka_mock_topic_set_error), the TLS proxy in front of it
// (tests/support/tls_proxy.h: the server certificate for localhost, or the
// one for wrong.example), the scripted SASL broker over TCP and over TLS
// (tests/integration/protocol_sasl/sasl_test_broker.h,
// tests/integration/protocol/tls_test_broker.h, which can also require a
// client certificate), a closed port, and a CA file that is not PEM.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <cstdlib>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <spdlog/spdlog.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include "tests/integration/protocol/tls_test_broker.h"
#include "tests/integration/protocol_sasl/sasl_test_broker.h"
#include "tests/support/admin_broker.h"
#include "tests/support/free_port.h"
#include "tests/support/test_pki.h"
#include "tests/support/tls_proxy.h"
#include "worker/storage/broker_check.h"
#include "worker/storage/mock_cluster.h"

using kc::storage::BrokerCheckCause;
using kc::storage::BrokerCheckOptions;
using kc::storage::BrokerCheckVerdict;
using kc::storage::ClientProps;
using kc::test::TestPki;
using Clock = std::chrono::steady_clock;

namespace {

const std::vector<std::string> kTopics = {"connect-configs", "connect-offsets", "connect-status"};

/// One attempt, no retries; how long it took (ms) in `elapsed_ms`.
BrokerCheckVerdict check(const ClientProps& props, int64_t& elapsed_ms) {
  if (std::getenv("KC_BROKER_CHECK_DEBUG")) spdlog::set_level(spdlog::level::debug);  // librdkafka's lines
  const auto t0 = Clock::now();
  BrokerCheckOptions o;
  o.attempt_timeout_ms = 8000;
  auto v = kc::storage::check_brokers(props, kTopics, "connect-cluster", o);
  elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  return v;
}

std::string cause(const BrokerCheckVerdict& v) { return std::string(kc::storage::broker_check_cause_name(v.cause)); }

/// A mock cluster with the three internal topics.
std::unique_ptr<kc::storage::MockCluster> mock() {
  auto mc = kc::storage::MockCluster::start(1);
  REQUIRE(mc);
  auto c = std::move(mc).value();
  for (const auto& t : kTopics) REQUIRE(c->create_topic(t, 1));
  return c;
}

std::vector<uint16_t> ports_of(const std::string& bootstrap) {
  std::vector<uint16_t> out;
  size_t pos = 0;
  while (pos < bootstrap.size()) {
    auto comma = bootstrap.find(',', pos);
    if (comma == std::string::npos) comma = bootstrap.size();
    const std::string hp = bootstrap.substr(pos, comma - pos);
    out.push_back(static_cast<uint16_t>(std::stoi(hp.substr(hp.rfind(':') + 1))));
    pos = comma + 1;
  }
  return out;
}

/// Runs a scripted broker's io_context on its own thread for the test.
struct IoThread {
  boost::asio::io_context& io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
  std::thread t;
  explicit IoThread(boost::asio::io_context& i) : io(i), guard(i.get_executor()), t([this] { io.run(); }) {}
  ~IoThread() {
    io.stop();
    t.join();
  }
};

ClientProps tls_props(const std::string& bootstrap, const std::string& ca) {
  return {{"bootstrap.servers", bootstrap},
          {"security.protocol", "SSL"},
          {"ssl.ca.location", ca},
          {"ssl.endpoint.identification.algorithm", "https"}};
}

ClientProps sasl_props(uint16_t port, const std::string& mechanism, const std::string& password) {
  return {{"bootstrap.servers", "127.0.0.1:" + std::to_string(port)},
          {"security.protocol", "SASL_PLAINTEXT"},
          {"sasl.mechanism", mechanism},
          {"sasl.username", "connect"},
          {"sasl.password", password}};
}

}  // namespace

TEST_CASE("broker check: a reachable plaintext cluster is ok", "[broker_check][mock]") {
  auto c = mock();
  int64_t ms = 0;
  auto v = check(c->client_props(), ms);
  INFO(v.message);
  CHECK(cause(v) == "ok");
  CHECK_FALSE(v.fatal);
}

TEST_CASE("broker check: TLS with the right CA through the TLS proxy is ok", "[broker_check][tls]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.server_cert, pki.server_key);
  int64_t ms = 0;
  auto v = check(tls_props(proxy.bootstrap_servers(), pki.ca_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "ok");
  CHECK(proxy.handshakes >= 1);
}

TEST_CASE("broker check: a closed port is unreachable, transient, and retried up to the bound",
          "[broker_check]") {
  const std::string bootstrap = "127.0.0.1:" + std::to_string(kc::test::free_port());
  int64_t ms = 0;
  auto v = check({{"bootstrap.servers", bootstrap}}, ms);
  INFO(v.message);
  CHECK(cause(v) == "unreachable");
  CHECK_FALSE(v.fatal);
  CHECK_THAT(v.message, Catch::Contains(bootstrap) && Catch::Contains("Connection refused"));
  CHECK(ms < 8000);  // all brokers down ends the attempt early

  BrokerCheckOptions o;
  o.attempt_timeout_ms = 2000;
  o.retry_bound_ms = 4000;
  o.retry_backoff_ms = 200;
  std::vector<int> attempts;
  std::vector<int64_t> reported_ms, real_ms;  // per attempt: as reported, as measured here
  const auto t0 = Clock::now();
  auto attempt_began = t0;
  auto last = kc::storage::wait_for_brokers({{"bootstrap.servers", bootstrap}}, kTopics, "g", o,
                                            [&](int n, const BrokerCheckVerdict& each, int attempt_ms) {
                                              attempts.push_back(n);
                                              CHECK(each.cause == BrokerCheckCause::Unreachable);
                                              const auto now = Clock::now();
                                              reported_ms.push_back(attempt_ms);
                                              real_ms.push_back(std::chrono::duration_cast<
                                                  std::chrono::milliseconds>(now - attempt_began).count());
                                              attempt_began = now + std::chrono::milliseconds(o.retry_backoff_ms);
                                            });
  const auto total = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  INFO(last.message);
  CHECK(last.cause == BrokerCheckCause::Unreachable);
  CHECK(last.fatal);  // out of retries
  CHECK_THAT(last.message, Catch::Contains("gave up after"));
  REQUIRE(attempts.size() >= 1);
  CHECK(attempts.front() == 1);
  CHECK(total < 4000 + 3000);  // the bound, plus one attempt's teardown
  // The attempt time each call reports is the real one (the log line says
  // it, with the pause after it): within 150 ms of what was measured here.
  for (size_t i = 0; i < reported_ms.size(); ++i) {
    INFO("attempt " << i + 1 << ": reported " << reported_ms[i] << " ms, measured " << real_ms[i] << " ms");
    CHECK(reported_ms[i] > 0);
    CHECK(std::abs(reported_ms[i] - real_ms[i]) < 150);
  }
}

TEST_CASE("broker check: a host name that does not resolve is unreachable, transient", "[broker_check]") {
  int64_t ms = 0;
  auto v = check({{"bootstrap.servers", "no-such-broker.invalid:9092"}}, ms);
  INFO(v.message);
  CHECK(cause(v) == "unreachable");
  CHECK_FALSE(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("no-such-broker.invalid:9092") && Catch::Contains("resolve"));
  CHECK(ms < 8000);
}

TEST_CASE("broker check: TLS spoken to a plaintext port is said so", "[broker_check][tls]") {
  auto c = mock();
  int64_t ms = 0;
  auto v = check(tls_props(c->bootstrap_servers(), TestPki::get().ca_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "tls-to-plaintext-port");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("is a plaintext listener"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: plaintext spoken to a TLS port is said so", "[broker_check][tls]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.server_cert, pki.server_key);
  int64_t ms = 0;
  auto v = check({{"bootstrap.servers", proxy.bootstrap_servers()}}, ms);
  INFO(v.message);
  CHECK(cause(v) == "plaintext-to-tls-port");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("is a TLS listener") && Catch::Contains("security.protocol=SSL"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: a broker certificate from an untrusted CA", "[broker_check][tls]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.server_cert, pki.server_key);
  int64_t ms = 0;
  auto v = check(tls_props(proxy.bootstrap_servers(), pki.other_ca_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "certificate-not-trusted");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("unable to get local issuer certificate") &&
                            Catch::Contains("ssl.ca.location " + pki.other_ca_pem));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: a broker certificate for another host name", "[broker_check][tls]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.wrong_cert, pki.wrong_key);
  int64_t ms = 0;
  auto v = check(tls_props(proxy.bootstrap_servers(), pki.ca_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "hostname-mismatch");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("mismatch") && Catch::Contains(proxy.bootstrap_servers()));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: a CA file that is not PEM fails the TLS setup, naming the file", "[broker_check][tls]") {
  const auto& pki = TestPki::get();
  int64_t ms = 0;
  auto v = check(tls_props("127.0.0.1:" + std::to_string(kc::test::free_port()), pki.not_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "tls-handshake-failed");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("ssl.ca.location") && Catch::Contains(pki.not_pem));
}

TEST_CASE("broker check: a broker that requires a client certificate, none configured", "[broker_check][tls]") {
  boost::asio::io_context io;
  const auto& pki = TestPki::get();
  kc::test::TlsBroker broker(io, kc::test::TlsBrokerOptions{pki.server_cert, pki.server_key, pki.ca_pem, false});
  IoThread thread(io);
  int64_t ms = 0;
  auto v = check(tls_props("127.0.0.1:" + std::to_string(broker.port()), pki.ca_pem), ms);
  INFO(v.message);
  CHECK(cause(v) == "tls-handshake-failed");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("ssl.certificate.location not set"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: a SASL mechanism the broker does not enable, with its list", "[broker_check][sasl]") {
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  broker.enabled = {"PLAIN", "SCRAM-SHA-256"};
  IoThread thread(io);
  int64_t ms = 0;
  auto v = check(sasl_props(broker.port(), "SCRAM-SHA-512", "connect-secret"), ms);
  INFO(v.message);
  CHECK(cause(v) == "sasl-mechanism-not-enabled");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("SCRAM-SHA-512") && Catch::Contains("PLAIN,SCRAM-SHA-256"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: a wrong SCRAM password names broker and mechanism, never the password",
          "[broker_check][sasl]") {
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  int64_t ms = 0;
  auto v = check(sasl_props(broker.port(), "SCRAM-SHA-512", "hunter2-wrong"), ms);
  INFO(v.message);
  CHECK(cause(v) == "authentication-failed");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("127.0.0.1:" + std::to_string(broker.port())) &&
                            Catch::Contains("SCRAM-SHA-512") && Catch::Contains("invalid credentials"));
  CHECK_THAT(v.message, !Catch::Contains("hunter2"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: SSL without SASL against a SASL_SSL listener", "[broker_check][sasl][tls]") {
  boost::asio::io_context io;
  const auto& pki = TestPki::get();
  kc::test::BasicSaslBroker<kc::test::TlsBroker> broker(
      io, kc::test::TlsBrokerOptions{pki.server_cert, pki.server_key, "", false});
  // A Kafka broker lists Metadata; the script cuts the connection at any
  // request other than ApiVersions and SASL's before SASL, as a SASL
  // listener does.
  broker.broker.api_versions.push_back({3, 0, 2});
  auto thread = std::make_unique<IoThread>(io);
  int64_t ms = 0;
  auto v = check(tls_props("127.0.0.1:" + std::to_string(broker.port()), pki.ca_pem), ms);
  thread.reset();  // the broker's counters may be read now
  INFO(v.message);
  CHECK(cause(v) == "sasl-required");
  CHECK(broker.broker.handshakes >= 2);  // TLS held, each connection was cut after it
  CHECK(broker.handshakes.empty());      // no SASL was tried
  CHECK(broker.authenticated.empty());
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("security.protocol=SASL_SSL"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: an internal topic the ACLs deny", "[broker_check][mock]") {
  auto c = mock();
  rd_kafka_mock_topic_set_error(c->handle(), "connect-offsets", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  int64_t ms = 0;
  auto v = check(c->client_props(), ms);
  INFO(v.message);
  CHECK(cause(v) == "not-authorized");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("topic connect-offsets") && Catch::Contains("group connect-cluster"));
  CHECK(ms < 10000);
}

TEST_CASE("broker check: the worker's group the ACLs deny", "[broker_check]") {
  // The scripted admin broker answers Metadata and FindCoordinator (the
  // mock cluster cannot refuse a group).
  kc::test::AdminBroker broker;
  for (const auto& t : kTopics) broker.set_topic(t, 1);
  int64_t ms = 0;
  auto allowed = check({{"bootstrap.servers", broker.bootstrap()}}, ms);
  INFO(allowed.message);
  CHECK(cause(allowed) == "ok");
  broker.deny_group("connect-cluster");
  auto v = check({{"bootstrap.servers", broker.bootstrap()}}, ms);
  INFO(v.message);
  CHECK(cause(v) == "not-authorized");
  CHECK(v.fatal);
  CHECK_THAT(v.message, Catch::Contains("GROUP_AUTHORIZATION_FAILED") &&
                            Catch::Contains("Read on group connect-cluster"));
  CHECK(broker.requests(kc::test::api::kFindCoordinator).size() >= 2);
  CHECK(ms < 10000);
}

// ------------------------------------------------------- kconnectd run

namespace {

struct RunResult {
  int status = -1;
  std::string output;  ///< stderr and stdout
  int64_t ms = 0;
};

/// Runs `kconnectd run` on a properties file holding `props` (plus a
/// group, the topics and a free REST port) under `timeout 30`.
RunResult run_worker(const std::map<std::string, std::string>& props) {
  const auto& pki = TestPki::get();
  const std::string file = pki.dir + "/worker-" + std::to_string(kc::test::free_port()) + ".properties";
  {
    std::ofstream out(file);
    out << "group.id=connect-cluster\nconfig.storage.topic=connect-configs\noffset.storage.topic=connect-offsets\n"
           "status.storage.topic=connect-status\nlisteners=http://127.0.0.1:"
        << kc::test::free_port() << "\n";
    for (const auto& [k, v] : props) out << k << "=" << v << "\n";
  }
  RunResult r;
  const auto t0 = Clock::now();
  FILE* p = popen(("timeout 30 " KC_KCONNECTD " run " + file + " 2>&1").c_str(), "r");
  REQUIRE(p != nullptr);
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

std::string last_line(const std::string& text) {
  auto end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  auto start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1, end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

TEST_CASE("kconnectd run: a wrong password exits 1 within 10 s naming the cause", "[broker_check][sasl][cli]") {
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  auto r = run_worker({{"bootstrap.servers", "127.0.0.1:" + std::to_string(broker.port())},
                       {"security.protocol", "SASL_PLAINTEXT"},
                       {"sasl.mechanism", "SCRAM-SHA-512"},
                       {"sasl.jaas.config", "org.apache.kafka.common.security.scram.ScramLoginModule required "
                                            "username=\"connect\" password=\"hunter2-wrong\";"}});
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.ms < 10000);
  CHECK_THAT(last_line(r.output), Catch::StartsWith("kconnectd run: cannot use the Kafka cluster "
                                                     "(authentication-failed): SASL authentication failed at broker"));
  CHECK_THAT(r.output, !Catch::Contains("hunter2"));
  CHECK_THAT(r.output, !Catch::Contains("Broker transport failure"));
}

TEST_CASE("kconnectd run: plaintext against a TLS port exits 1 within 10 s naming the cause", "[broker_check][tls][cli]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.server_cert, pki.server_key);
  auto r = run_worker({{"bootstrap.servers", proxy.bootstrap_servers()}});
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.ms < 10000);
  CHECK_THAT(last_line(r.output),
             Catch::StartsWith("kconnectd run: cannot use the Kafka cluster (plaintext-to-tls-port): "));
}

TEST_CASE("kconnectd run: an untrusted CA exits 1 within 10 s naming the cause", "[broker_check][tls][cli]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.server_cert, pki.server_key);
  auto r = run_worker({{"bootstrap.servers", proxy.bootstrap_servers()},
                       {"security.protocol", "SSL"},
                       {"ssl.truststore.type", "PEM"},
                       {"ssl.truststore.location", pki.other_ca_pem}});
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.ms < 10000);
  CHECK_THAT(last_line(r.output),
             Catch::StartsWith("kconnectd run: cannot use the Kafka cluster (certificate-not-trusted): "));
}

// The other causes of item 1 through `kconnectd run` (acceptance: each of
// the seven exits within 10 s, its last line naming the cause).

/// Checks a fatal `kconnectd run`: exit 1 within 10 s, last line naming `cause`.
void check_fatal_run(const RunResult& r, const std::string& cause) {
  INFO(r.output);
  CHECK(r.status == 1);
  CHECK(r.ms < 10000);
  CHECK_THAT(last_line(r.output),
             Catch::StartsWith("kconnectd run: cannot use the Kafka cluster (" + cause + "): "));
}

TEST_CASE("kconnectd run: TLS against a plaintext port exits 1 within 10 s naming the cause",
          "[broker_check][tls][cli]") {
  auto c = mock();
  auto r = run_worker(tls_props(c->bootstrap_servers(), TestPki::get().ca_pem));
  check_fatal_run(r, "tls-to-plaintext-port");
}

TEST_CASE("kconnectd run: a broker certificate for another host name exits 1 within 10 s naming the cause",
          "[broker_check][tls][cli]") {
  auto c = mock();
  const auto& pki = TestPki::get();
  kc::test::TlsProxy proxy(ports_of(c->bootstrap_servers()), pki.wrong_cert, pki.wrong_key);
  auto r = run_worker(tls_props(proxy.bootstrap_servers(), pki.ca_pem));
  check_fatal_run(r, "hostname-mismatch");
}

TEST_CASE("kconnectd run: a TLS handshake the broker refuses (no client certificate) exits 1 within 10 s",
          "[broker_check][tls][cli]") {
  boost::asio::io_context io;
  const auto& pki = TestPki::get();
  kc::test::TlsBroker broker(io, kc::test::TlsBrokerOptions{pki.server_cert, pki.server_key, pki.ca_pem, false});
  IoThread thread(io);
  auto r = run_worker(tls_props("127.0.0.1:" + std::to_string(broker.port()), pki.ca_pem));
  check_fatal_run(r, "tls-handshake-failed");
  CHECK_THAT(last_line(r.output), Catch::Contains("ssl.certificate.location not set"));
}

TEST_CASE("kconnectd run: a CA file that is not PEM exits 1 within 10 s naming the file", "[broker_check][tls][cli]") {
  const auto& pki = TestPki::get();
  auto r = run_worker(tls_props("127.0.0.1:" + std::to_string(kc::test::free_port()), pki.not_pem));
  check_fatal_run(r, "tls-handshake-failed");
  CHECK_THAT(last_line(r.output), Catch::Contains(pki.not_pem));
}

TEST_CASE("kconnectd run: a SASL mechanism the broker does not enable exits 1 within 10 s with its list",
          "[broker_check][sasl][cli]") {
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  broker.enabled = {"PLAIN", "SCRAM-SHA-256"};
  IoThread thread(io);
  auto r = run_worker(sasl_props(broker.port(), "SCRAM-SHA-512", "connect-secret"));
  check_fatal_run(r, "sasl-mechanism-not-enabled");
  CHECK_THAT(last_line(r.output), Catch::Contains("PLAIN,SCRAM-SHA-256"));
}

TEST_CASE("kconnectd run: an internal topic the ACLs deny exits 1 within 10 s naming the ACLs",
          "[broker_check][mock][cli]") {
  auto c = mock();
  rd_kafka_mock_topic_set_error(c->handle(), "connect-status", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto r = run_worker(c->client_props());
  check_fatal_run(r, "not-authorized");
  CHECK_THAT(last_line(r.output), Catch::Contains("topic connect-status") && Catch::Contains("Read on group"));
}

TEST_CASE("kconnectd run: the worker's group the ACLs deny exits 1 within 10 s naming the ACL",
          "[broker_check][cli]") {
  kc::test::AdminBroker broker;
  for (const auto& t : kTopics) broker.set_topic(t, 1);
  broker.deny_group("connect-cluster");
  auto r = run_worker({{"bootstrap.servers", broker.bootstrap()}});
  check_fatal_run(r, "not-authorized");
  CHECK_THAT(last_line(r.output), Catch::Contains("Read on group connect-cluster"));
}

// ------------------------------------------- a task's own client (item 1)

namespace {

/// `cmd`'s stdout (curl's answer), "" when it could not run.
std::string shell_output(const std::string& cmd) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  pclose(p);
  return out;
}

/// `kconnectd run` in the background (output to `log`), killed and reaped
/// by the destructor.
struct BackgroundWorker {
  pid_t pid = -1;
  BackgroundWorker(const std::string& props_file, const std::string& log) {
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f) dup2(fileno(stdout), 2);
      execl(KC_KCONNECTD, KC_KCONNECTD, "run", props_file.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  ~BackgroundWorker() {
    if (pid > 0) {
      kill(pid, SIGTERM);
      int st = 0;
      for (int i = 0; i < 100 && waitpid(pid, &st, WNOHANG) == 0; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      if (waitpid(pid, &st, WNOHANG) == 0) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
      }
    }
  }
};

/// Polls `f` every 200 ms until it is true or `timeout_ms` passed.
template <typename F>
bool eventually(F f, int timeout_ms) {
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  while (Clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return f();
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

namespace {

/// What run_failing_task saw.
struct TaskCase {
  bool failed = false;  ///< a task of the connector reached FAILED
  int64_t ms = 0;       ///< from the connector's creation to FAILED (or giving up)
  std::string status;   ///< GET /connectors/<name>/status, the last answer
  std::string log;      ///< the worker's output
};

/// Runs `kconnectd run` in the background against mock cluster `c`
/// (plaintext, policy All, String converters; the internal topics must
/// exist), creates connector `name` whose config object holds
/// `config_members` (JSON members without the braces), and polls its
/// status for up to 20 s until a task is FAILED.
TaskCase run_failing_task(kc::storage::MockCluster& c, const std::string& name, const std::string& config_members) {
  const auto& pki = TestPki::get();
  const uint16_t rest = kc::test::free_port();
  const std::string url = "http://127.0.0.1:" + std::to_string(rest);
  const std::string tag = std::to_string(rest);
  const std::string file = pki.dir + "/task-worker-" + tag + ".properties";
  const std::string log = pki.dir + "/task-worker-" + tag + ".log";
  {
    std::ofstream out(file);
    out << "bootstrap.servers=" << c.bootstrap_servers() << "\ngroup.id=task-override-" << tag
        << "\nconfig.storage.topic=connect-configs\nconfig.storage.replication.factor=1\n"
           "offset.storage.topic=connect-offsets\noffset.storage.replication.factor=1\noffset.storage.partitions=25\n"
           "status.storage.topic=connect-status\nstatus.storage.replication.factor=1\nstatus.storage.partitions=5\n"
           "listeners=" << url << "\nrest.advertised.host.name=127.0.0.1\n"
           "connector.client.config.override.policy=All\n"
           "key.converter=org.apache.kafka.connect.storage.StringConverter\n"
           "value.converter=org.apache.kafka.connect.storage.StringConverter\n";
  }
  BackgroundWorker worker(file, log);
  const bool up = eventually(
      [&] { return shell_output("curl -s -m 2 " + url + "/").find("version") != std::string::npos; }, 30000);
  INFO(file_text(log));
  REQUIRE(up);

  const std::string body = R"({"name":")" + name + R"(","config":{)" + config_members + "}}";
  const std::string body_file = pki.dir + "/" + name + "-" + tag + ".json";
  std::ofstream(body_file) << body;
  // Retried while the worker answers 409 (its first rebalance).
  std::string answer;
  const bool accepted = eventually(
      [&] {
        answer = shell_output("curl -s -m 10 -X POST -H 'Content-Type: application/json' --data @" + body_file +
                              " " + url + "/connectors");
        return answer.find("\"name\":\"" + name + "\"") != std::string::npos;
      },
      30000);
  const auto created = Clock::now();
  INFO(answer);
  REQUIRE(accepted);

  TaskCase out;
  out.failed = eventually(
      [&] {
        out.status = shell_output("curl -s -m 2 " + url + "/connectors/" + name + "/status");
        return out.status.find("\"FAILED\"") != std::string::npos;
      },
      20000);
  out.ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - created).count();
  out.log = file_text(log);
  return out;
}

/// A plaintext mock cluster with the internal topics and `topics` (one
/// partition each).
std::unique_ptr<kc::storage::MockCluster> task_cluster(const std::vector<std::string>& topics) {
  auto started = kc::storage::MockCluster::start(1);
  REQUIRE(started);
  auto c = std::move(started).value();
  for (const auto& [t, n] :
       std::vector<std::pair<std::string, int>>{{"connect-configs", 1}, {"connect-offsets", 25}, {"connect-status", 5}})
    REQUIRE(c->create_topic(t, n));
  for (const auto& t : topics) REQUIRE(c->create_topic(t, 1));
  return c;
}

/// The JSON members that point a connector's `client` ("producer" or
/// "consumer") at the scripted SASL broker on `port` with a wrong SCRAM
/// password, as librdkafka's keys or (`jaas`) as Kafka's sasl.jaas.config.
std::string wrong_password_overrides(const std::string& client, uint16_t port, bool jaas) {
  const std::string p = "\"" + client + ".override.";
  std::string out = p + R"(bootstrap.servers":"127.0.0.1:)" + std::to_string(port) + "\"," + p +
                    R"(security.protocol":"SASL_PLAINTEXT",)" + p + R"(sasl.mechanism":"SCRAM-SHA-512",)";
  if (jaas)
    out += p + R"(sasl.jaas.config":"org.apache.kafka.common.security.scram.ScramLoginModule required )"
               R"(username=\"connect\" password=\"hunter2-wrong\";")";
  else
    out += p + R"(sasl.username":"connect",)" + p + R"(sasl.password":"hunter2-wrong")";
  return out;
}

/// The checks every "task fails naming the cause" case shares: FAILED in
/// time, the trace is `client`'s classified line naming the scripted
/// broker and the mechanism, no password anywhere, the connector runs.
void check_auth_failure(const TaskCase& r, const std::string& client, uint16_t port) {
  INFO(r.status);
  INFO(r.log);
  REQUIRE(r.failed);
  CHECK(r.ms < 20000);
  CHECK_THAT(r.status, Catch::Contains(client + ": SASL authentication failed at broker 127.0.0.1:" +
                                       std::to_string(port)) &&
                           Catch::Contains("SCRAM-SHA-512") && Catch::Contains("invalid credentials"));
  CHECK_THAT(r.status, !Catch::Contains("hunter2"));
  CHECK_THAT(r.log, !Catch::Contains("hunter2"));
  // The worker itself is fine: the connector runs, only the task failed.
  CHECK_THAT(r.status, Catch::Contains(R"("connector":{"state":"RUNNING")"));
}

}  // namespace

TEST_CASE("kconnectd run: a sink task whose consumer override has a wrong password fails naming the cause",
          "[broker_check][sasl][cli][task]") {
  // The worker's own settings are right (the mock cluster, plaintext); the
  // connector points its consumer at the scripted SASL broker with a wrong
  // SCRAM password through consumer.override.* (policy All).
  auto c = task_cluster({"orders"});
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  const std::string file = TestPki::get().dir + "/sink-" + std::to_string(broker.port()) + ".txt";
  auto r = run_failing_task(*c, "sasl-sink",
                            R"("connector.class":"FileStreamSink","tasks.max":"1","topics":"orders","file":")" +
                                file + "\"," + wrong_password_overrides("consumer", broker.port(), false));
  check_auth_failure(r, "consumer", broker.port());
  // The error callback's line is logged once per report (one callback
  // logs and classifies), under the consumer's client id.
  CHECK_THAT(r.log, Catch::Contains("connector-consumer-sasl-sink-0"));
}

TEST_CASE("kconnectd run: a sink task whose consumer override gives sasl.jaas.config with a wrong password fails "
          "naming the cause",
          "[broker_check][sasl][cli][task]") {
  // Kafka's sasl.jaas.config in a connector override is translated for
  // librdkafka (sasl.username / sasl.password), as the worker's own is:
  // without that, librdkafka refuses the key and the task fails with
  // "No such configuration property".
  auto c = task_cluster({"orders"});
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  const std::string file = TestPki::get().dir + "/sink-jaas-" + std::to_string(broker.port()) + ".txt";
  auto r = run_failing_task(*c, "sasl-jaas-sink",
                            R"("connector.class":"FileStreamSink","tasks.max":"1","topics":"orders","file":")" +
                                file + "\"," + wrong_password_overrides("consumer", broker.port(), true));
  check_auth_failure(r, "consumer", broker.port());
  CHECK_THAT(r.status, !Catch::Contains("No such configuration property"));
}

TEST_CASE("kconnectd run: a source task whose producer override has a wrong password fails naming the cause",
          "[broker_check][sasl][cli][task]") {
  // The source task's own producer takes the connector's producer.override.*
  // (KIP-458), with Kafka's sasl.jaas.config translated; its librdkafka
  // errors are classified as the sink consumer's are.
  auto c = task_cluster({"numbers"});
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  auto r = run_failing_task(*c, "sasl-source",
                            R"("connector.class":"SequenceSource","tasks.max":"1","topic":"numbers",)" +
                                wrong_password_overrides("producer", broker.port(), true));
  check_auth_failure(r, "producer", broker.port());
  CHECK_THAT(r.log, Catch::Contains("connector-producer-sasl-source-0"));
}

TEST_CASE("kconnectd run: a sink task whose dead letter queue producer has a wrong password fails naming the cause",
          "[broker_check][sasl][cli][task]") {
  // The sink consumes from the mock cluster (the worker's settings); each
  // record fails its JSON conversion and goes to the dead letter queue,
  // whose producer takes producer.override.* (Connect's DLQ producer): the
  // scripted SASL broker with a wrong password. Its classified failure
  // fails the task instead of losing the records quietly.
  auto c = task_cluster({"orders", "orders-dlq"});
  {
    auto p = kc::storage::Producer::create({{"bootstrap.servers", c->bootstrap_servers()}});
    REQUIRE(p);
    REQUIRE((*p)->send_and_wait("orders", {{"k1", std::string("not json")}, {"k2", std::string("{oops")}}, 10000));
  }
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  IoThread thread(io);
  const std::string file = TestPki::get().dir + "/sink-dlq-" + std::to_string(broker.port()) + ".txt";
  auto r = run_failing_task(
      *c, "sasl-dlq-sink",
      R"("connector.class":"FileStreamSink","tasks.max":"1","topics":"orders","file":")" + file +
          R"(","value.converter":"org.apache.kafka.connect.json.JsonConverter",)"
          R"("value.converter.schemas.enable":"false","errors.tolerance":"all",)"
          R"("errors.deadletterqueue.topic.name":"orders-dlq",)"
          R"("errors.deadletterqueue.topic.replication.factor":"1",)" +
          wrong_password_overrides("producer", broker.port(), false));
  check_auth_failure(r, "dead letter queue producer", broker.port());
}

TEST_CASE("kconnectd run: an unreachable cluster is retried with a line per attempt, not a fatal exit",
          "[broker_check][cli]") {
  // Transient: kconnectd retries for its documented bound (60 s, cmd_run.cpp;
  // the bound itself is tested on wait_for_brokers above), one warning per
  // attempt. Here: still running after several attempts, each logged.
  const auto& pki = TestPki::get();
  const std::string tag = std::to_string(kc::test::free_port());
  const std::string bootstrap = "127.0.0.1:" + std::to_string(kc::test::free_port());
  const std::string file = pki.dir + "/unreachable-" + tag + ".properties";
  const std::string log = pki.dir + "/unreachable-" + tag + ".log";
  std::ofstream(file) << "bootstrap.servers=" << bootstrap
                      << "\ngroup.id=connect-cluster\nconfig.storage.topic=connect-configs\n"
                         "offset.storage.topic=connect-offsets\nstatus.storage.topic=connect-status\n"
                         "listeners=http://127.0.0.1:" << kc::test::free_port() << "\n";
  BackgroundWorker worker(file, log);
  const bool retried = eventually([&] { return file_text(log).find("broker check attempt 2 (unreachable)") !=
                                               std::string::npos; }, 15000);
  const std::string text = file_text(log);
  INFO(text);
  CHECK(retried);
  CHECK_THAT(text, Catch::Contains("broker check attempt 1 (unreachable) took ") &&
                       Catch::Contains(" ms: no broker reachable") && Catch::Contains(bootstrap) &&
                       Catch::Contains("; next attempt in 1000 ms, ") && Catch::Contains("for up to 60 s in all"));
  // The line's "<n> ms after this one began" is the real spacing: attempt
  // 2's line comes about that long after attempt 1's (attempt 2 is about
  // as long as attempt 1: both end when all brokers are down).
  const auto first = text.find("broker check attempt 1 (unreachable) took ");
  REQUIRE(first != std::string::npos);
  const auto after = text.find(" ms after this one began", first);
  REQUIRE(after != std::string::npos);
  const auto num_start = text.rfind(", ", after) + 2;
  const int spacing_ms = std::stoi(text.substr(num_start, after - num_start));
  CHECK(spacing_ms >= 1000 + 1000);  // the attempt itself (>= 1 s until all brokers are down) plus the 1 s pause
  CHECK(spacing_ms < 8000 + 1000 + 1000);
  CHECK_THAT(text, !Catch::Contains("cannot use the Kafka cluster"));
  int st = 0;
  CHECK(waitpid(worker.pid, &st, WNOHANG) == 0);  // still running: not a fatal exit
}
