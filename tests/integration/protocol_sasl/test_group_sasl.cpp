// The group client authenticates with SASL before anything else: GroupMember
// with PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 joins a scripted broker that
// checks the credentials (FindCoordinator, JoinGroup, SyncGroup follow on
// authenticated connections only); a wrong password and an unsupported
// mechanism stop the member with one clear fatal error and no reconnect loop;
// a broker closing mid-handshake gives a clear, retried error.

#include <catch2/catch.hpp>

#include <algorithm>

#include "protocol/kafka/connection.h"
#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/recording_member.h"
#include "tests/integration/protocol_sasl/sasl_test_broker.h"

using namespace kc::kafka;  // NOLINT
using kc::test::run_for;
using kc::test::run_until;
using kc::test::SaslScriptedBroker;
using std::chrono::milliseconds;

namespace {

struct Harness : kc::test::RecordingMember {
  boost::asio::io_context io;
  SaslScriptedBroker broker{io};

  // The base (and its member) would outlive `io`: close the member while
  // its sockets and timers still have their io_context (ASan use-after-free).
  ~Harness() { member.reset(); }

  void start(const SaslSettings& sasl) {
    auto cfg = config("sasl-group", broker.address());
    cfg.request_timeout = milliseconds(2000);
    cfg.sasl = sasl;
    RecordingMember::start(io, cfg, Bytes{1, 2, 3});
  }
};

}  // namespace

TEST_CASE("GroupMember authenticates with each SASL mechanism, then joins", "[sasl][group]") {
  const auto mech = GENERATE(SaslMechanism::Plain, SaslMechanism::ScramSha256, SaslMechanism::ScramSha512);
  INFO(sasl_mechanism_name(mech));
  Harness h;
  h.start(SaslSettings{mech, "connect", "connect-secret"});
  REQUIRE(run_until(h.io, [&] { return !h.joined.empty(); }, milliseconds(10000)));
  CHECK(h.member->state() == GroupState::Stable);
  CHECK(h.joined[0].assignment == Bytes{1, 2, 3});
  CHECK(h.joined[0].member_id == "member-1");
  CHECK(h.broker.group.syncs.size() == 1);
  // Bootstrap and coordinator connections both authenticated, each with
  // SaslHandshake first and no group request before SASL completed.
  CHECK(h.broker.authenticated.size() == 2);
  CHECK(h.broker.unauthenticated_requests == 0);
  CHECK(h.broker.failed_authentications == 0);
  CHECK(h.broker.handshakes == std::vector<std::string>(2, sasl_mechanism_name(mech)));
  for (const auto& [session, keys] : h.broker.order) {
    REQUIRE(keys.size() >= 2);
    CHECK(keys[0] == ApiKey::SaslHandshake);
    CHECK(keys[1] == ApiKey::SaslAuthenticate);
    const size_t rounds = mech == SaslMechanism::Plain ? 1 : 2;
    CHECK(std::count(keys.begin(), keys.end(), ApiKey::SaslAuthenticate) == static_cast<long>(rounds));
  }
  CHECK(h.errors.empty());
}

TEST_CASE("a wrong password is one fatal error naming the broker and the mechanism", "[sasl][group]") {
  const auto mech = GENERATE(SaslMechanism::Plain, SaslMechanism::ScramSha256, SaslMechanism::ScramSha512);
  INFO(sasl_mechanism_name(mech));
  Harness h;
  h.start(SaslSettings{mech, "connect", "wrong-password"});
  REQUIRE(run_until(h.io, [&] { return h.member->state() == GroupState::Closed; }, milliseconds(10000)));
  // No reconnect loop: a few retry backoffs later there is still one connection.
  run_for(h.io, milliseconds(300));
  CHECK(h.broker.broker.sessions.size() == 1);
  CHECK(h.broker.failed_authentications == 1);
  CHECK(h.broker.group.joins.empty());
  REQUIRE(h.errors.size() == 1);  // one fatal report, no retry warnings before it
  const GroupError& e = h.errors.back();
  CHECK(e.fatal);
  CHECK(e.net == NetErrorKind::Authentication);
  const std::string name = sasl_mechanism_name(mech);
  CHECK(e.message == "SASL authentication failed with broker " + h.broker.address() + " (" + name +
                         "): Authentication failed during authentication due to invalid credentials with SASL "
                         "mechanism " + name);
  CHECK(h.joined.empty());
}

TEST_CASE("an unsupported mechanism lists the broker's enabled mechanisms", "[sasl][group]") {
  Harness h;
  h.broker.enabled = {"PLAIN", "SCRAM-SHA-256"};
  h.start(SaslSettings{SaslMechanism::ScramSha512, "connect", "connect-secret"});
  REQUIRE(run_until(h.io, [&] { return h.member->state() == GroupState::Closed; }, milliseconds(10000)));
  REQUIRE_FALSE(h.errors.empty());
  const GroupError& e = h.errors.back();
  CHECK(e.fatal);
  CHECK(e.net == NetErrorKind::Authentication);
  CHECK(e.message == "SASL authentication failed with broker " + h.broker.address() +
                         " (SCRAM-SHA-512): the broker does not enable this mechanism; enabled mechanisms: "
                         "[PLAIN, SCRAM-SHA-256]");
  CHECK(h.broker.order.begin()->second == std::vector<ApiKey>{ApiKey::SaslHandshake});
}

TEST_CASE("a broker closing mid-handshake gives a clear error and a retry, no crash", "[sasl][connection]") {
  boost::asio::io_context io;
  SaslScriptedBroker broker(io);
  broker.close_on_authenticate = true;
  ConnectionOptions opts;
  opts.request_timeout = milliseconds(2000);
  opts.sasl = SaslSettings{SaslMechanism::ScramSha256, "connect", "connect-secret"};
  auto conn = Connection::create(io, opts);
  std::optional<NetStatus> result;
  conn->connect("127.0.0.1", broker.port(), [&](NetStatus st) { result = st; });
  REQUIRE(run_until(io, [&] { return result.has_value(); }, milliseconds(5000)));
  REQUIRE_FALSE(result->ok());
  CHECK(result->error().kind == NetErrorKind::Disconnected);
  CHECK(result->error().message == "SASL authentication (SCRAM-SHA-256) with " + broker.address() +
                                       " interrupted: " + broker.address() + ": connection closed by the broker");
  CHECK_FALSE(conn->is_open());

  // GroupMember treats it as transient: it reconnects (and fails again).
  Harness h;
  h.broker.close_on_authenticate = true;
  h.start(SaslSettings{SaslMechanism::Plain, "connect", "connect-secret"});
  REQUIRE(run_until(h.io, [&] { return h.broker.broker.sessions.size() >= 3; }, milliseconds(5000)));
  CHECK(h.member->state() == GroupState::Discovering);
  REQUIRE_FALSE(h.errors.empty());
  CHECK_FALSE(h.errors.front().fatal);
  CHECK(h.errors.front().message.find("SASL authentication (PLAIN)") != std::string::npos);
  h.member->stop();
}

TEST_CASE("requests sent while SASL runs wait until it is done", "[sasl][connection]") {
  boost::asio::io_context io;
  SaslScriptedBroker broker(io);
  ConnectionOptions opts;
  opts.sasl = SaslSettings{SaslMechanism::ScramSha512, "connect", "connect-secret"};
  auto conn = Connection::create(io, opts);
  std::optional<NetResult<FindCoordinatorResponse>> early;
  bool sent_early = false;
  // The moment the handshake reaches the broker, the client is
  // authenticating: send a FindCoordinator right then.
  auto handler = broker.broker.on_request;
  broker.broker.on_request = [&](kc::test::FakeRequest& r) {
    if (r.header.api_key == ApiKey::SaslHandshake && !sent_early) {
      sent_early = true;
      conn->send(FindCoordinatorRequest{"g", 0},
                 [&](NetResult<FindCoordinatorResponse> resp) { early = std::move(resp); });
    }
    handler(r);
  };
  std::optional<NetStatus> connected;
  conn->connect("127.0.0.1", broker.port(), [&](NetStatus st) { connected = st; });
  REQUIRE(run_until(io, [&] { return early.has_value() && connected.has_value(); }, milliseconds(5000)));
  CHECK(sent_early);
  REQUIRE(connected->ok());
  REQUIRE(early->ok());
  CHECK(early->value().coordinators.front().port == broker.port());
  CHECK(broker.unauthenticated_requests == 0);
  const auto& keys = broker.order.begin()->second;
  CHECK(keys == std::vector<ApiKey>{ApiKey::SaslHandshake, ApiKey::SaslAuthenticate, ApiKey::SaslAuthenticate,
                                    ApiKey::FindCoordinator});
}

TEST_CASE("a SCRAM iteration count below Kafka's minimum is an authentication failure", "[sasl][connection]") {
  boost::asio::io_context io;
  SaslScriptedBroker broker(io);
  ConnectionOptions opts;
  opts.sasl = SaslSettings{SaslMechanism::ScramSha256, "connect", "connect-secret"};
  broker.iterations = 4000;  // the client refuses before it sends a proof
  auto conn = Connection::create(io, opts);
  std::optional<NetStatus> result;
  conn->connect("127.0.0.1", broker.port(), [&](NetStatus st) { result = st; });
  REQUIRE(run_until(io, [&] { return result.has_value(); }, milliseconds(5000)));
  REQUIRE_FALSE(result->ok());
  CHECK(result->error().kind == NetErrorKind::Authentication);
  CHECK(result->error().message == "SASL authentication failed with broker " + broker.address() +
                                       " (SCRAM-SHA-256): SCRAM-SHA-256: the iteration count 4000 is below the "
                                       "minimum 4096");
}
