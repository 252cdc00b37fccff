// Connection tests against a FakeBroker we control: version negotiation,
// several requests in flight, per-request timeouts, failure on disconnect.
#include <catch2/catch.hpp>

#include <map>
#include <optional>

#include "protocol/kafka/connection.h"
#include "worker/coordinator/group_member.h"
#include "tests/integration/protocol/connection_test_util.h"

using namespace kc::kafka;
using kc::test::FakeBroker;
using kc::test::FakeRequest;
using kc::test::run_until;
using std::chrono::milliseconds;

namespace {

ConnectionOptions fast_options() {
  ConnectionOptions o;
  o.connect_timeout = milliseconds(2000);
  o.request_timeout = milliseconds(2000);
  o.client_id = "test-client";
  return o;
}

std::shared_ptr<Connection> connect_to(boost::asio::io_context& io, FakeBroker& broker,
                                       ConnectionOptions opts = fast_options()) {
  auto conn = Connection::create(io, opts);
  std::optional<NetStatus> result;
  conn->connect("127.0.0.1", broker.port(), [&](NetStatus st) { result = st; });
  REQUIRE(run_until(io, [&] { return result.has_value(); }, milliseconds(5000)));
  INFO((result->ok() ? std::string("ok") : result->error().to_string()));
  REQUIRE(result->ok());
  REQUIRE(conn->is_open());
  return conn;
}

HeartbeatRequest hb(int32_t generation) {
  HeartbeatRequest r;
  r.group_id = "g";
  r.generation_id = generation;
  r.member_id = "m";
  return r;
}

// Answers a Heartbeat with error_code = the request's generation id, so the
// test can tell which response reached which handler.
void answer_heartbeat(FakeRequest& req) {
  auto decoded = decode_HeartbeatRequest(req.body, req.header.api_version);
  REQUIRE(decoded.ok());
  HeartbeatResponse resp;
  resp.error_code = static_cast<int16_t>(decoded->generation_id);
  req.reply(resp);
}

}  // namespace

TEST_CASE("select_version picks the highest version both sides support", "[connection]") {
  auto v = select_version(ApiKey::JoinGroup, VersionRange{0, 9}, VersionRange{0, 5});
  REQUIRE(v.ok());
  CHECK(v.value() == 5);
  v = select_version(ApiKey::Heartbeat, VersionRange{0, 4}, VersionRange{2, 7});
  REQUIRE(v.ok());
  CHECK(v.value() == 4);
  v = select_version(ApiKey::SyncGroup, VersionRange{3, 5}, VersionRange{0, 3});
  REQUIRE(v.ok());
  CHECK(v.value() == 3);
}

TEST_CASE("select_version without overlap names the API and both ranges", "[connection]") {
  auto v = select_version(ApiKey::JoinGroup, VersionRange{0, 9}, VersionRange{10, 12});
  REQUIRE_FALSE(v.ok());
  CHECK(v.error().kind == NetErrorKind::Unsupported);
  CHECK(v.error().message == "JoinGroup: no common version (ours 0-9, broker 10-12)");

  auto missing = select_version(ApiKey::LeaveGroup, VersionRange{0, 5}, std::nullopt);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().kind == NetErrorKind::Unsupported);
  CHECK(missing.error().message == "LeaveGroup: not supported by the broker (ours 0-5)");
}

TEST_CASE("ApiVersionTable::negotiate applies supported_versions() per API", "[connection]") {
  // The librdkafka mock's limits.
  auto t = ApiVersionTable::negotiate(
      {{18, 0, 2}, {10, 0, 2}, {11, 0, 5}, {12, 0, 3}, {13, 0, 1}, {14, 0, 3}});
  CHECK(t.version_for(ApiKey::JoinGroup).value() == 5);
  CHECK(t.version_for(ApiKey::SyncGroup).value() == 3);
  CHECK(t.version_for(ApiKey::Heartbeat).value() == 3);
  CHECK(t.version_for(ApiKey::LeaveGroup).value() == 1);
  CHECK(t.version_for(ApiKey::FindCoordinator).value() == 2);
  CHECK(t.version_for(ApiKey::ApiVersions).value() == 2);

  auto none = ApiVersionTable::negotiate({{18, 0, 3}});
  REQUIRE_FALSE(none.version_for(ApiKey::JoinGroup).ok());
  CHECK(none.version_for(ApiKey::JoinGroup).error().kind == NetErrorKind::Unsupported);
}

TEST_CASE("Connection negotiates at v3 and falls back to ApiVersions v0", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  broker.api_versions_max = 2;  // like Kafka < 2.4: v3 gets UNSUPPORTED_VERSION
  broker.api_versions = {{18, 0, 2}, {10, 0, 2}, {11, 0, 5}, {12, 0, 3}, {13, 0, 1}, {14, 0, 3}};
  auto conn = connect_to(io, broker);
  CHECK(broker.api_versions_seen == std::vector<int16_t>{3, 0});
  CHECK(conn->versions().version_for(ApiKey::JoinGroup).value() == 5);
  CHECK(conn->versions().version_for(ApiKey::Heartbeat).value() == 3);
  CHECK(conn->broker_versions().size() == 6);

  SECTION("a modern broker is answered at v3 on the first try") {
    FakeBroker modern(io);
    auto c2 = connect_to(io, modern);
    CHECK(modern.api_versions_seen == std::vector<int16_t>{3});
    CHECK(c2->versions().version_for(ApiKey::JoinGroup).value() == 9);
    CHECK(c2->versions().version_for(ApiKey::Heartbeat).value() == 4);
  }
}

TEST_CASE("Connection matches several in-flight responses by correlation id", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  // Hold the requests, then answer them in reverse order.
  broker.on_request = [&](FakeRequest&) {
    if (broker.requests.size() < 3) return;
    for (auto it = broker.requests.rbegin(); it != broker.requests.rend(); ++it) answer_heartbeat(*it);
  };
  auto conn = connect_to(io, broker);
  std::map<int32_t, int16_t> got;  // generation sent -> error code received
  for (int32_t gen : {1, 2, 3}) {
    conn->send(hb(gen), [&got, gen](NetResult<HeartbeatResponse> r) {
      REQUIRE(r.ok());
      got[gen] = r->error_code;
    });
  }
  CHECK(conn->in_flight() == 3);
  REQUIRE(run_until(io, [&] { return got.size() == 3; }, milliseconds(5000)));
  CHECK(got[1] == 1);
  CHECK(got[2] == 2);
  CHECK(got[3] == 3);
  CHECK(conn->in_flight() == 0);
  // Heartbeat went out at the negotiated version (ours 0-4, broker 0-4).
  for (const auto& r : broker.requests) CHECK(r.header.api_version == 4);
  for (const auto& r : broker.requests) CHECK(r.header.client_id == std::optional<std::string>("test-client"));
}

TEST_CASE("Connection times a request out on its own and discards the late response", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  auto conn = connect_to(io, broker);

  std::optional<NetResult<HeartbeatResponse>> first;
  conn->send(hb(7), [&](NetResult<HeartbeatResponse> r) { first = std::move(r); }, milliseconds(150));
  const auto t0 = std::chrono::steady_clock::now();
  REQUIRE(run_until(io, [&] { return first.has_value(); }, milliseconds(3000)));
  const auto waited = std::chrono::steady_clock::now() - t0;
  REQUIRE_FALSE(first->ok());
  CHECK(first->error().kind == NetErrorKind::Timeout);
  CHECK(waited >= milliseconds(140));
  CHECK(waited < milliseconds(2000));
  CHECK(conn->is_open());

  // The broker now answers the timed-out request late, then a new one: the
  // late answer is dropped, the new request completes normally.
  std::optional<NetResult<HeartbeatResponse>> second;
  conn->send(hb(8), [&](NetResult<HeartbeatResponse> r) { second = std::move(r); });
  REQUIRE(run_until(io, [&] { return broker.requests.size() == 2; }, milliseconds(3000)));
  answer_heartbeat(broker.requests[0]);
  answer_heartbeat(broker.requests[1]);
  REQUIRE(run_until(io, [&] { return second.has_value(); }, milliseconds(3000)));
  REQUIRE(second->ok());
  CHECK(second->value().error_code == 8);
  CHECK(conn->is_open());
}

TEST_CASE("Connection fails every in-flight request once when the broker disconnects", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  broker.on_request = [&](FakeRequest& req) {
    if (broker.requests.size() == 3) req.session->close();
  };
  auto conn = connect_to(io, broker);
  std::optional<NetError> closed;
  conn->on_close([&](const NetError& e) { closed = e; });
  std::map<int32_t, std::vector<NetErrorKind>> failures;
  for (int32_t gen : {1, 2, 3}) {
    conn->send(hb(gen), [&failures, gen](NetResult<HeartbeatResponse> r) {
      REQUIRE_FALSE(r.ok());
      failures[gen].push_back(r.error().kind);
    });
  }
  REQUIRE(run_until(io, [&] { return failures.size() == 3 && closed.has_value(); }, milliseconds(5000)));
  kc::test::run_for(io, milliseconds(100));  // nothing is delivered twice
  for (int32_t gen : {1, 2, 3}) {
    REQUIRE(failures[gen].size() == 1);
    CHECK(failures[gen][0] == NetErrorKind::Disconnected);
  }
  CHECK(closed->kind == NetErrorKind::Disconnected);
  CHECK_FALSE(conn->is_open());

  // Later sends fail at once with Disconnected (posted, not inline).
  bool inline_call = true;
  std::optional<NetError> later;
  conn->send(hb(4), [&](NetResult<HeartbeatResponse> r) {
    CHECK_FALSE(inline_call);
    later = r.error();
  });
  inline_call = false;
  REQUIRE(run_until(io, [&] { return later.has_value(); }, milliseconds(1000)));
  CHECK(later->kind == NetErrorKind::Disconnected);
}

TEST_CASE("Connection::close fails in-flight requests with Disconnected", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  auto conn = connect_to(io, broker);
  std::vector<NetError> errs;
  conn->send(hb(1), [&](NetResult<HeartbeatResponse> r) { errs.push_back(r.error()); });
  conn->send(hb(2), [&](NetResult<HeartbeatResponse> r) { errs.push_back(r.error()); });
  REQUIRE(run_until(io, [&] { return broker.requests.size() == 2; }, milliseconds(3000)));
  conn->close("test says stop");
  CHECK(errs.empty());  // failures are posted, never delivered inside close()
  REQUIRE(run_until(io, [&] { return errs.size() == 2; }, milliseconds(1000)));
  for (const auto& e : errs) {
    CHECK(e.kind == NetErrorKind::Disconnected);
    CHECK(e.message.find("test says stop") != std::string::npos);
  }
}

TEST_CASE("Connection reports Unsupported for an API without a common version", "[connection]") {
  boost::asio::io_context io;
  FakeBroker broker(io);
  broker.api_versions = {{18, 0, 3}, {10, 0, 4}, {11, 10, 12}, {12, 0, 4}, {13, 0, 5}, {14, 0, 5}};
  auto conn = connect_to(io, broker);
  std::optional<NetError> err;
  JoinGroupRequest req;
  req.group_id = "g";
  req.protocol_type = "connect";
  conn->send(req, [&](NetResult<JoinGroupResponse> r) { err = r.error(); });
  REQUIRE(run_until(io, [&] { return err.has_value(); }, milliseconds(1000)));
  CHECK(err->kind == NetErrorKind::Unsupported);
  CHECK(err->message == "JoinGroup: no common version (ours 0-9, broker 10-12)");
  CHECK(broker.requests.empty());  // nothing was sent
  CHECK(conn->is_open());          // other APIs still work
}

TEST_CASE("Connection reports Connect errors for a refused connection", "[connection]") {
  boost::asio::io_context io;
  uint16_t port = 0;
  {
    FakeBroker gone(io);  // bind, learn the port, close again
    port = gone.port();
  }
  auto conn = Connection::create(io, fast_options());
  std::optional<NetStatus> result;
  conn->connect("127.0.0.1", port, [&](NetStatus st) { result = st; });
  REQUIRE(run_until(io, [&] { return result.has_value(); }, milliseconds(5000)));
  REQUIRE_FALSE(result->ok());
  CHECK(result->error().kind == NetErrorKind::Connect);
  CHECK_FALSE(conn->is_open());
}

TEST_CASE("Connection times out ApiVersions when the broker never answers", "[connection]") {
  boost::asio::io_context io;
  auto opts = fast_options();
  opts.request_timeout = milliseconds(200);
  // A raw acceptor that accepts and never answers.
  boost::asio::ip::tcp::acceptor silent(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
  boost::asio::ip::tcp::socket peer(io);
  silent.async_accept(peer, [](const boost::system::error_code&) {});
  auto conn = Connection::create(io, opts);
  std::optional<NetStatus> result;
  conn->connect("127.0.0.1", silent.local_endpoint().port(), [&](NetStatus st) { result = st; });
  REQUIRE(run_until(io, [&] { return result.has_value(); }, milliseconds(3000)));
  REQUIRE_FALSE(result->ok());
  CHECK(result->error().kind == NetErrorKind::Timeout);
  CHECK(result->error().message.find("ApiVersions") != std::string::npos);
}

TEST_CASE("group_decode_join_response keeps the error code of a mock error response", "[connection]") {
  // v5 error response as librdkafka's mock writes it: ThrottleTimeMs, ErrorCode
  // NOT_COORDINATOR, GenerationId -1, null ProtocolName/Leader/MemberId, 0 members.
  Bytes body = {0, 0, 0, 0, 0, 16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  auto r = group_decode_join_response(NetResult<Bytes>(body), 5);
  REQUIRE(r.ok());
  CHECK(r->error_code == static_cast<int16_t>(ErrorCode::NOT_COORDINATOR));

  Bytes garbage = {0, 0, 0, 0, 0, 0, 1};
  auto bad = group_decode_join_response(NetResult<Bytes>(garbage), 5);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().kind == NetErrorKind::Protocol);

  // SyncGroup v3 error with null Assignment bytes.
  Bytes sync = {0, 0, 0, 0, 0, 27, 0xff, 0xff, 0xff, 0xff};
  auto s = group_decode_sync_response(NetResult<Bytes>(sync), 3);
  REQUIRE(s.ok());
  CHECK(s->error_code == static_cast<int16_t>(ErrorCode::REBALANCE_IN_PROGRESS));
}

TEST_CASE("group_transition_allowed encodes the state machine", "[group]") {
  using S = GroupState;
  CHECK(group_transition_allowed(S::Unjoined, S::Discovering));
  CHECK(group_transition_allowed(S::Discovering, S::PreparingJoin));
  CHECK(group_transition_allowed(S::PreparingJoin, S::Joining));
  CHECK(group_transition_allowed(S::Joining, S::AwaitingAssignment));
  CHECK(group_transition_allowed(S::Joining, S::Syncing));
  CHECK(group_transition_allowed(S::AwaitingAssignment, S::Syncing));
  CHECK(group_transition_allowed(S::Syncing, S::Stable));
  CHECK(group_transition_allowed(S::Stable, S::PreparingJoin));
  CHECK(group_transition_allowed(S::Stable, S::Discovering));
  CHECK(group_transition_allowed(S::Stable, S::Leaving));
  CHECK(group_transition_allowed(S::Leaving, S::Closed));
  CHECK_FALSE(group_transition_allowed(S::Stable, S::Syncing));
  CHECK_FALSE(group_transition_allowed(S::Unjoined, S::Joining));
  CHECK_FALSE(group_transition_allowed(S::Leaving, S::Joining));
  CHECK_FALSE(group_transition_allowed(S::Closed, S::Discovering));
  CHECK_FALSE(group_transition_allowed(S::Closed, S::Closed));
}
