// The herder's sink offsets path (KIP-875) end to end below REST: a worker
// on the mock cluster, a FileStreamSink created STOPPED whose
// admin.override.bootstrap.servers (KIP-458) points at the scripted admin
// broker of tests/support/admin_broker.h, which has the OffsetDelete and
// DeleteGroups the mock lacks. GET, PATCH with a null offset and DELETE go
// through HerderApi (what the REST handlers call), on a follower and the
// leader.
#include <catch2/catch.hpp>

#include <future>

#include "tests/integration/worker/cluster_harness.h"
#include "tests/support/admin_broker.h"
#include "worker/plugins/builtin.h"

using namespace kc;
using namespace kc::test;

namespace {

template <typename T>
std::optional<rest::Reply<T>> call(const std::function<void(rest::Callback<T>)>& fn) {
  auto p = std::make_shared<std::promise<rest::Reply<T>>>();
  auto f = p->get_future();
  fn([p](rest::Reply<T> r) { p->set_value(std::move(r)); });
  if (f.wait_for(std::chrono::seconds(60)) != std::future_status::ready) return std::nullopt;
  return f.get();
}

rest::ConnectorOffset null_entry(const std::string& topic, int partition) {
  rest::ConnectorOffset e;
  e.partition = nlohmann::ordered_json{{"kafka_topic", topic}, {"kafka_partition", partition}};
  e.offset = nlohmann::ordered_json(nullptr);
  return e;
}

}  // namespace

TEST_CASE("herder: sink offsets GET, PATCH null and DELETE reach a broker with OffsetDelete and DeleteGroups",
          "[worker][integration]") {
  AdminBroker admin;
  admin.set_topic("in", 2);
  admin.set_offset("connect-snk", "in", 0, 5);
  admin.set_offset("connect-snk", "in", 1, 6);

  ClusterOptions o;
  o.data_topics = {{"in", 2}};
  TestCluster c(o);
  c.start_workers({"w1", "w2"});
  std::optional<std::string> leader;
  REQUIRE(eventually([&] { return (leader = c.leader()).has_value(); }, std::chrono::seconds(60)));
  const std::string follower = c.live().front() == *leader ? c.live().back() : c.live().front();

  rest::PutConnectorRequest req;
  req.name = "snk";
  req.config = {{"name", "snk"},
                {"connector.class", connectors::kFileStreamSinkClass},
                {"topics", "in"},
                {"file", "/dev/null"},
                {"tasks.max", "1"},
                {"admin.override.bootstrap.servers", admin.bootstrap()}};
  req.initial_state = rest::TargetState::Stopped;
  auto put = call<rest::PutConnectorResult>(
      [&](rest::Callback<rest::PutConnectorResult> cb) { c.worker(*leader).put_connector_config(req, cb); });
  REQUIRE(put);
  REQUIRE(put->ok());

  // GET on the follower, once it has read the config.
  std::optional<rest::Reply<std::vector<rest::ConnectorOffset>>> got;
  REQUIRE(eventually(
      [&] {
        got = call<std::vector<rest::ConnectorOffset>>(
            [&](rest::Callback<std::vector<rest::ConnectorOffset>> cb) { c.worker(follower).connector_offsets("snk", cb); });
        return got && got->ok();
      },
      std::chrono::seconds(30)));
  REQUIRE(got->value().size() == 2);
  CHECK(got->value()[1].partition.dump() == R"({"kafka_topic":"in","kafka_partition":1})");
  CHECK(got->value()[1].offset->dump() == R"({"kafka_offset":6})");

  // PATCH with a null offset, through the leader (once the STOPPED state
  // has reached it): OffsetDelete of that partition only.
  std::optional<rest::Reply<std::string>> patched;
  REQUIRE(eventually(
      [&] {
        patched = call<std::string>([&](rest::Callback<std::string> cb) {
          c.worker(*leader).modify_connector_offsets("snk", std::vector<rest::ConnectorOffset>{null_entry("in", 0)}, cb);
        });
        return patched && patched->ok();
      },
      std::chrono::seconds(30)));
  CHECK(patched->value() == "The offsets for this connector have been altered successfully");
  CHECK(admin.group("connect-snk") == AdminBroker::Offsets{{{"in", 1}, 6}});
  auto deletes = admin.requests(api::kOffsetDelete);
  REQUIRE(deletes.size() == 1);
  CHECK(deletes[0].partitions == std::vector<std::pair<std::string, int32_t>>{{"in", 0}});
  CHECK(deletes[0].client_id == "connector-worker-adminclient-snk");

  // DELETE: the whole group.
  auto reset = call<std::string>([&](rest::Callback<std::string> cb) {
    c.worker(*leader).modify_connector_offsets("snk", std::nullopt, cb);
  });
  REQUIRE(reset);
  REQUIRE(reset->ok());
  CHECK(reset->value() == "The offsets for this connector have been reset successfully");
  CHECK_FALSE(admin.group("connect-snk").has_value());
  auto dels = admin.requests(api::kDeleteGroups);
  REQUIRE(dels.size() == 1);
  CHECK(dels[0].group == "connect-snk");
  c.check_invariant();
}
