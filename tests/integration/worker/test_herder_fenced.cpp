// A static member fenced by the group (FENCED_INSTANCE_ID: another process
// took over its group.instance.id) as the herder reports it: its lifecycle
// becomes Fenced and GET /health answers unhealthy with worker_state
// "Fenced". The fence is injected on librdkafka's mock cluster as the
// Heartbeat error (rd_kafka_mock_push_request_errors), as the broker
// answers a member whose instance id a newer member holds.
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <atomic>
#include <mutex>

#include <catch2/catch.hpp>

#include "protocol/kafka/messages.h"
#include "tests/integration/worker/cluster_harness.h"

namespace kc::test {
namespace {

using namespace std::chrono_literals;

rest::Health health_of(DistributedHerder& h) {
  auto r = herder_reply<rest::Health>([&](auto cb) { h.health(std::move(cb)); });
  REQUIRE(r);
  return r.value();
}

}  // namespace

TEST_CASE("herder: FENCED_INSTANCE_ID makes the worker Fenced, and /health reports worker_state Fenced",
          "[worker][integration][fenced]") {
  std::mutex mu;
  std::vector<std::string> fatal;  // guarded by mu: on_fatal's reasons
  ClusterOptions o;
  o.configure = [&](const std::string& id, HerderConfig& c) {
    c.group_instance_id = "connect-" + id;
    c.on_fatal = [&](const std::string& why) {
      std::lock_guard lk(mu);
      fatal.push_back(why);
    };
  };
  TestCluster c(o);
  auto& w = c.start_worker("w1");
  Expected e;
  c.put_connector("a", seq_config(2));
  e.add("a", 2);
  c.wait_stable(e);
  REQUIRE(eventually([&] { return health_of(w).worker_state == "Running"; }, 10s));
  CHECK(health_of(w).status == rest::HealthStatus::Healthy);

  // The next Heartbeat is answered as the broker answers a fenced instance.
  rd_kafka_mock_push_request_errors(c.mock().handle(), static_cast<int16_t>(kafka::ApiKey::Heartbeat), 1,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID);
  REQUIRE(eventually([&] { return health_of(w).worker_state == "Fenced"; }, 30s));
  const auto h = health_of(w);
  CHECK(h.status == rest::HealthStatus::Unhealthy);
  CHECK_THAT(h.message, Catch::Contains("Group membership failed") && Catch::Contains("FENCED_INSTANCE_ID") &&
                            Catch::Contains("connect-w1"));
  {
    std::lock_guard lk(mu);
    REQUIRE(fatal.size() == 1);  // reported once, for the process to stop
    CHECK_THAT(fatal[0], Catch::Contains("FENCED_INSTANCE_ID"));
  }
  c.stop_worker("w1");
}

}  // namespace kc::test
