// storage/group_admin against librdkafka's in-process mock cluster: the
// calls the sink offsets API (KIP-875) makes. The mock (librdkafka 2.0.2)
// implements OffsetCommit and OffsetFetch but neither DeleteGroups nor
// OffsetDelete; those two must fail with a clear error, and the OffsetDelete
// guard must keep librdkafka from aborting the process (librdkafka #3663).
#include <catch2/catch.hpp>

#include "worker/storage/group_admin.h"
#include "worker/storage/mock_cluster.h"

using namespace kc::storage;

namespace {
std::unique_ptr<MockCluster> cluster_with(const std::vector<std::pair<std::string, int>>& topics) {
  auto mc = MockCluster::start(1);
  REQUIRE(mc);
  for (const auto& [t, n] : topics) REQUIRE(mc.value()->create_topic(t, n));
  return std::move(mc).value();
}
constexpr int kTimeoutMs = 10000;
}  // namespace

TEST_CASE("group admin: offsets committed with alter are listed per partition, sorted") {
  auto mc = cluster_with({{"t1", 2}, {"t0", 1}});
  auto props = mc->client_props();
  std::vector<GroupOffset> out;
  // A group that never committed has no offsets (not an error).
  REQUIRE(list_group_offsets(props, "g1", {{"t1", 0}}, kTimeoutMs, out).ok());
  CHECK(out.empty());

  auto st = alter_group_offsets(props, "g1", {{"t1", 1, 7}, {"t0", 0, 3}, {"t1", 0, 0}}, kTimeoutMs);
  REQUIRE(st.ok());
  std::vector<TopicPartition> parts;
  REQUIRE(topic_partitions(props, {"t0", "t1", "missing"}, kTimeoutMs, parts).ok());
  CHECK(parts == std::vector<TopicPartition>{{"t0", 0}, {"t1", 0}, {"t1", 1}});
  REQUIRE(list_group_offsets(props, "g1", parts, kTimeoutMs, out).ok());
  CHECK(out == std::vector<GroupOffset>{{"t0", 0, 3}, {"t1", 0, 0}, {"t1", 1, 7}});

  // Altering again moves the offset back; other groups are untouched.
  REQUIRE(alter_group_offsets(props, "g1", {{"t1", 1, 2}}, kTimeoutMs).ok());
  REQUIRE(list_group_offsets(props, "g1", {{"t1", 1}}, kTimeoutMs, out).ok());
  CHECK(out == std::vector<GroupOffset>{{"t1", 1, 2}});
  REQUIRE(list_group_offsets(props, "g2", parts, kTimeoutMs, out).ok());
  CHECK(out.empty());
}

TEST_CASE("group admin: the mock lacks DeleteGroups and OffsetDelete and both fail cleanly") {
  auto mc = cluster_with({{"t", 1}});
  auto props = mc->client_props();
  REQUIRE(alter_group_offsets(props, "g", {{"t", 0, 5}}, kTimeoutMs).ok());

  // The probe asks the group's coordinator with kconnectd's own client.
  BrokerApis apis;
  REQUIRE(broker_apis(props, "g", kTimeoutMs, apis).ok());
  CHECK(apis.count(8) == 1);  // OffsetCommit
  CHECK(apis.count(9) == 1);  // OffsetFetch
  CHECK(apis.count(kApiDeleteGroups) == 0);
  CHECK(apis.count(kApiOffsetDelete) == 0);

  auto del = delete_group_offsets(props, "g", {{"t", 0}}, kTimeoutMs);
  CHECK(del.code == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE);
  CHECK(del.message.find("OffsetDelete API (KIP-496) not supported by the broker") != std::string::npos);

  auto dg = delete_group(props, "g", kTimeoutMs);
  CHECK(dg.code == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE);
  CHECK(dg.message.find("DeleteGroups API (KIP-229) not supported by the broker") != std::string::npos);

  // Nothing was deleted.
  std::vector<GroupOffset> out;
  REQUIRE(list_group_offsets(props, "g", {{"t", 0}}, kTimeoutMs, out).ok());
  CHECK(out == std::vector<GroupOffset>{{"t", 0, 5}});
}

TEST_CASE("group admin: no broker is an error, not a hang or a crash") {
  ClientProps props{{"bootstrap.servers", "127.0.0.1:1"}};
  std::vector<GroupOffset> out;
  auto st = list_group_offsets(props, "g", {}, 1500, out);
  CHECK_FALSE(st.ok());
  CHECK_FALSE(st.message.empty());
  BrokerApis apis;
  auto probe = broker_apis(props, "g", 1500, apis);
  CHECK(probe.code == RD_KAFKA_RESP_ERR__TRANSPORT);
  CHECK(probe.message.find("127.0.0.1:1") != std::string::npos);
  CHECK(apis.empty());
}
