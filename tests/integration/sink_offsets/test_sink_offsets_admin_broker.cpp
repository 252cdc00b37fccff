// Sink connector offsets (KIP-875) against the scripted admin broker of
// tests/support/admin_broker.h, which implements what librdkafka's mock
// lacks: OffsetDelete (PATCH with null offsets) and DeleteGroups (DELETE).
// Each case calls the functions the herder's REST handlers run on its pool
// (herder/sink_offsets.h) and checks both the answer and the broker's
// state and the requests it received.
#include <catch2/catch.hpp>

#include <tuple>

#include <algorithm>
#include <cstdio>

#include "tests/support/admin_broker.h"
#include "worker/herder/sink_offsets.h"
#include "worker/runtime/client_overrides.h"
#include "worker/storage/group_admin.h"

// Its own namespace: the unity build compiles this file with others of the
// suite, which have helpers of the same names.
namespace unity_test_sink_offsets_admin_broker {

using namespace kc;
using kc::test::AdminBroker;
namespace api = kc::test::api;

namespace {

constexpr int kTimeoutMs = 10000;

herder::SinkGroup sink_on(const AdminBroker& broker, const std::string& name, const std::string& group) {
  herder::SinkGroup s;
  s.connector = name;
  s.group = group;
  s.admin_props = {{"bootstrap.servers", broker.bootstrap()}, {"client.id", "connector-worker-adminclient-" + name}};
  s.topics = {"t"};
  s.timeout_ms = kTimeoutMs;
  return s;
}

rest::ConnectorOffset entry(const std::string& topic, int partition, std::optional<int64_t> offset) {
  rest::ConnectorOffset e;
  e.partition = nlohmann::ordered_json{{"kafka_topic", topic}, {"kafka_partition", partition}};
  if (offset) e.offset = nlohmann::ordered_json{{"kafka_offset", *offset}};
  else e.offset = nlohmann::ordered_json(nullptr);
  return e;
}

using Partitions = std::vector<std::pair<std::string, int32_t>>;
Partitions sorted(Partitions p) {
  std::sort(p.begin(), p.end());
  return p;
}

const std::string kBusyAlter =
    "Failed to alter consumer group offsets for connector s either because its tasks haven't stopped completely yet";
const std::string kBusyReset =
    "Failed to reset consumer group offsets for connector s either because its tasks haven't stopped completely yet";

}  // namespace

TEST_CASE("admin broker: librdkafka and the probe use exactly the scripted versions") {
  AdminBroker broker;
  broker.set_topic("t", 2);
  auto sink = sink_on(broker, "s", "connect-s");
  REQUIRE(herder::alter_sink_offsets(sink, {entry("t", 0, 4), entry("t", 1, 9)}));
  REQUIRE(herder::read_sink_offsets(sink));
  REQUIRE(herder::alter_sink_offsets(sink, {entry("t", 1, std::nullopt)}));
  REQUIRE(herder::reset_sink_offsets(sink));

  std::set<std::pair<int16_t, int16_t>> seen;
  for (const auto& r : broker.requests()) {
    INFO("api " << r.api_key << " v" << r.api_version << " from " << r.client_id);
    CHECK(r.handled);
    seen.emplace(r.api_key, r.api_version);
    if (r.api_key != api::kApiVersions) CHECK(test::admin_broker_versions().at(r.api_key) == r.api_version);
  }
  std::string summary;
  for (const auto& [k, v] : seen) summary.append(" ").append(std::to_string(k)).append("v").append(std::to_string(v));
  WARN("request versions seen (api key v version):" << summary);
  for (int16_t key : {api::kOffsetCommit, api::kOffsetFetch, api::kOffsetDelete, api::kDeleteGroups,
                      api::kFindCoordinator})
    CHECK(!broker.requests(key).empty());
}

TEST_CASE("sink offsets: GET lists the group's committed offsets in Connect's shape") {
  AdminBroker broker;
  broker.set_topic("t", 3);
  broker.set_offset("connect-s", "t", 2, 7);
  broker.set_offset("connect-s", "t", 0, 5);
  broker.set_offset("other", "t", 1, 99);
  auto got = herder::read_sink_offsets(sink_on(broker, "s", "connect-s"));
  REQUIRE(got);
  REQUIRE(got.value().size() == 2);
  CHECK(got.value()[0].partition.dump() == R"({"kafka_topic":"t","kafka_partition":0})");
  CHECK(got.value()[0].offset->dump() == R"({"kafka_offset":5})");
  CHECK(got.value()[1].partition.dump() == R"({"kafka_topic":"t","kafka_partition":2})");
  CHECK(got.value()[1].offset->dump() == R"({"kafka_offset":7})");
  auto fetches = broker.requests(api::kOffsetFetch);
  REQUIRE(!fetches.empty());
  CHECK(fetches.front().group == "connect-s");

  // A group that never committed: no offsets, not an error.
  auto none = herder::read_sink_offsets(sink_on(broker, "n", "connect-n"));
  REQUIRE(none);
  CHECK(none.value().empty());
}

TEST_CASE("sink offsets: PATCH with offsets commits them for exactly those partitions") {
  AdminBroker broker;
  broker.set_topic("t", 3);
  broker.set_offset("connect-s", "t", 1, 50);
  auto st = herder::alter_sink_offsets(sink_on(broker, "s", "connect-s"), {entry("t", 0, 10), entry("t", 2, 3)});
  REQUIRE(st);
  CHECK(st.value() == "The offsets for this connector have been altered successfully");
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 10}, {{"t", 1}, 50}, {{"t", 2}, 3}});
  auto commits = broker.requests(api::kOffsetCommit);
  REQUIRE(commits.size() == 1);
  CHECK(commits[0].group == "connect-s");
  CHECK(sorted(commits[0].partitions) == Partitions{{"t", 0}, {"t", 2}});
  CHECK(broker.requests(api::kOffsetDelete).empty());
}

TEST_CASE("sink offsets: PATCH with null offsets deletes exactly those partitions (OffsetDelete)") {
  AdminBroker broker;
  broker.set_topic("t", 2);
  broker.set_topic("u", 1);
  broker.set_offset("connect-s", "t", 0, 5);
  broker.set_offset("connect-s", "t", 1, 7);
  broker.set_offset("connect-s", "u", 0, 1);
  auto sink = sink_on(broker, "s", "connect-s");
  auto st = herder::alter_sink_offsets(sink, {entry("t", 1, std::nullopt), entry("u", 0, std::nullopt)});
  REQUIRE(st);
  CHECK(st.value() == "The offsets for this connector have been altered successfully");
  auto deletes = broker.requests(api::kOffsetDelete);
  REQUIRE(deletes.size() == 1);
  CHECK(deletes[0].group == "connect-s");
  CHECK(sorted(deletes[0].partitions) == Partitions{{"t", 1}, {"u", 0}});
  CHECK(broker.requests(api::kOffsetCommit).empty());
  CHECK(broker.requests(api::kDeleteGroups).empty());
  // The group stays, with only the partition not named.
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 5}});
  auto got = herder::read_sink_offsets(sink);
  REQUIRE(got);
  REQUIRE(got.value().size() == 1);
  CHECK(got.value()[0].partition.dump() == R"({"kafka_topic":"t","kafka_partition":0})");

  // Mixed: one committed, one deleted, in one PATCH.
  REQUIRE(herder::alter_sink_offsets(sink, {entry("t", 0, std::nullopt), entry("t", 1, 2)}));
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 1}, 2}});
}

TEST_CASE("sink offsets: DELETE deletes connect-<name>, or the consumer.override.group.id group") {
  AdminBroker broker;
  broker.set_topic("t", 1);
  broker.set_offset("connect-s", "t", 0, 5);
  broker.set_offset("custom", "t", 0, 8);
  broker.set_offset("connect-o", "t", 0, 9);

  auto st = herder::reset_sink_offsets(sink_on(broker, "s", "connect-s"));
  REQUIRE(st);
  CHECK(st.value() == "The offsets for this connector have been reset successfully");
  CHECK_FALSE(broker.group("connect-s").has_value());
  auto dels = broker.requests(api::kDeleteGroups);
  REQUIRE(dels.size() == 1);
  CHECK(dels[0].group == "connect-s");

  // Idempotent: the group is gone, the broker says GROUP_ID_NOT_FOUND, the
  // reset still succeeds (as Connect).
  REQUIRE(herder::reset_sink_offsets(sink_on(broker, "s", "connect-s")));
  CHECK(broker.requests(api::kDeleteGroups).size() == 2);

  // The override group, resolved as the sink task resolves it.
  const std::string group =
      runtime::sink_consumer_group_id("o", {{"consumer.override.group.id", "custom"}}, {});
  REQUIRE(group == "custom");
  REQUIRE(herder::reset_sink_offsets(sink_on(broker, "o", group)));
  CHECK_FALSE(broker.group("custom").has_value());
  CHECK(broker.group("connect-o") == AdminBroker::Offsets{{{"t", 0}, 9}});
  CHECK(broker.requests(api::kDeleteGroups).back().group == "custom");
}

TEST_CASE("sink offsets: a group with members answers Connect's messages and keeps its offsets") {
  AdminBroker broker;
  broker.set_topic("t", 2);
  broker.set_offset("connect-s", "t", 0, 5);
  broker.set_members("connect-s", std::set<std::string>{"t"});
  auto sink = sink_on(broker, "s", "connect-s");

  // DELETE: NON_EMPTY_GROUP.
  auto reset = herder::reset_sink_offsets(sink);
  REQUIRE_FALSE(reset);
  CHECK(reset.error().kind == rest::ErrorKind::Internal);
  CHECK(reset.error().message.rfind(kBusyReset, 0) == 0);
  CHECK(storage::delete_group(sink.admin_props, "connect-s", kTimeoutMs).code == RD_KAFKA_RESP_ERR_NON_EMPTY_GROUP);

  // PATCH with an offset: UNKNOWN_MEMBER_ID (commit from outside the group).
  auto alter = herder::alter_sink_offsets(sink, {entry("t", 0, 1)});
  REQUIRE_FALSE(alter);
  CHECK(alter.error().message.rfind(kBusyAlter, 0) == 0);

  // PATCH with null: GROUP_SUBSCRIBED_TO_TOPIC.
  auto del = herder::alter_sink_offsets(sink, {entry("t", 0, std::nullopt)});
  REQUIRE_FALSE(del);
  CHECK(del.error().message.rfind(kBusyAlter, 0) == 0);
  CHECK(storage::delete_group_offsets(sink.admin_props, "connect-s", {{"t", 0}}, kTimeoutMs).code ==
        RD_KAFKA_RESP_ERR_GROUP_SUBSCRIBED_TO_TOPIC);

  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 5}});

  // Once the members are gone, the same calls succeed.
  broker.set_members("connect-s", std::nullopt);
  REQUIRE(herder::alter_sink_offsets(sink, {entry("t", 0, 1)}));
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 1}});
  REQUIRE(herder::reset_sink_offsets(sink));
  CHECK_FALSE(broker.group("connect-s").has_value());
}

TEST_CASE("sink offsets: PATCH null on a group that does not exist fails as in Connect") {
  AdminBroker broker;
  broker.set_topic("t", 1);
  auto st = herder::alter_sink_offsets(sink_on(broker, "s", "connect-s"), {entry("t", 0, std::nullopt)});
  REQUIRE_FALSE(st);
  CHECK(st.error().message.rfind("Failed to alter consumer group offsets for connector s: ", 0) == 0);
}

TEST_CASE("sink offsets: a broker without DeleteGroups and OffsetDelete is refused before anything is sent") {
  // An old broker: no DeleteGroups (< 1.1) and no OffsetDelete (< 2.4).
  // librdkafka 2.0.2 would abort the process on either (librdkafka #3663);
  // the probe must stop us first.
  AdminBroker broker(std::set<int16_t>{api::kMetadata, api::kFindCoordinator, api::kOffsetCommit, api::kOffsetFetch});
  broker.set_topic("t", 1);
  broker.set_offset("connect-s", "t", 0, 5);
  auto sink = sink_on(broker, "s", "connect-s");

  auto reset = herder::reset_sink_offsets(sink);
  REQUIRE_FALSE(reset);
  CHECK(reset.error().message ==
        "Failed to reset consumer group offsets for sink connector s: DeleteGroups API (KIP-229) not supported by "
        "the broker, requires broker version >= 1.1.0");
  auto del = herder::alter_sink_offsets(sink, {entry("t", 0, std::nullopt)});
  REQUIRE_FALSE(del);
  CHECK(del.error().message ==
        "Failed to alter consumer group offsets for connector s: OffsetDelete API (KIP-496) not supported by the "
        "broker, requires broker version >= 2.4.0");
  CHECK(storage::delete_group(sink.admin_props, "connect-s", kTimeoutMs).code ==
        RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE);

  CHECK(broker.requests(api::kDeleteGroups).empty());
  CHECK(broker.requests(api::kOffsetDelete).empty());
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 5}});
  // What the broker does support still works.
  REQUIRE(herder::alter_sink_offsets(sink, {entry("t", 0, 6)}));
  CHECK(broker.group("connect-s") == AdminBroker::Offsets{{{"t", 0}, 6}});
}

TEST_CASE("broker_apis: the coordinator's ApiVersions answer counts, not the bootstrap broker's") {
  AdminBroker old_coordinator(std::set<int16_t>{api::kFindCoordinator, api::kOffsetCommit, api::kOffsetFetch});
  AdminBroker bootstrap;
  const auto coord = old_coordinator.bootstrap();
  bootstrap.set_coordinator("127.0.0.1", static_cast<uint16_t>(std::stoi(coord.substr(coord.rfind(':') + 1))));
  storage::ClientProps props{{"bootstrap.servers", bootstrap.bootstrap()}, {"client.id", "probe-test"}};

  storage::BrokerApis apis;
  REQUIRE(storage::broker_apis(props, "g", kTimeoutMs, apis).ok());
  CHECK(apis.count(storage::kApiDeleteGroups) == 0);
  CHECK(apis.count(storage::kApiOffsetDelete) == 0);
  CHECK(apis.count(api::kOffsetCommit) == 1);
  auto finds = bootstrap.requests(api::kFindCoordinator);
  REQUIRE(finds.size() == 1);
  CHECK(finds[0].group == "g");
  CHECK(finds[0].client_id == "probe-test");
  CHECK(old_coordinator.requests(api::kApiVersions).size() >= 1);

  // Without a group: the bootstrap broker's own answer, exact ranges.
  REQUIRE(storage::broker_apis(props, "", kTimeoutMs, apis).ok());
  CHECK(apis.at(storage::kApiDeleteGroups) == std::pair<int16_t, int16_t>{0, 0});
  CHECK(apis.at(storage::kApiOffsetDelete) == std::pair<int16_t, int16_t>{0, 0});
  CHECK(apis.at(api::kMetadata) == std::pair<int16_t, int16_t>{1, 1});

  // A second bootstrap entry is tried when the first does not answer.
  storage::ClientProps two{{"bootstrap.servers", "127.0.0.1:1, PLAINTEXT://" + bootstrap.bootstrap()}};
  REQUIRE(storage::broker_apis(two, "", kTimeoutMs, apis).ok());
  CHECK(apis.count(storage::kApiDeleteGroups) == 1);
}

TEST_CASE("broker_apis: bad settings give a specific error") {
  storage::BrokerApis apis;
  // The probe speaks TLS and SASL like the admin client; settings it
  // cannot use are refused before connecting, naming the key.
  for (const auto& [protocol, key, value, named] :
       {std::tuple{"SSL", "ssl.truststore.type", "JKS", "ssl.truststore.type"},
        std::tuple{"SASL_PLAINTEXT", "sasl.mechanism", "GSSAPI", "GSSAPI"}}) {
    auto st = storage::broker_apis(
        {{"bootstrap.servers", "127.0.0.1:9092"}, {"security.protocol", protocol}, {key, value}}, "g", 1000, apis);
    CHECK(st.code == RD_KAFKA_RESP_ERR__INVALID_ARG);
    CHECK(st.message.find(named) != std::string::npos);
  }
  auto bad = storage::broker_apis({{"bootstrap.servers", "localhost"}}, "g", 1000, apis);
  CHECK(bad.code == RD_KAFKA_RESP_ERR__INVALID_ARG);
  CHECK(bad.message == "invalid bootstrap.servers entry 'localhost'");
  auto empty = storage::broker_apis({{"bootstrap.servers", " , "}}, "g", 1000, apis);
  CHECK(empty.code == RD_KAFKA_RESP_ERR__INVALID_ARG);
  CHECK(apis.empty());
}

}  // namespace unity_test_sink_offsets_admin_broker
