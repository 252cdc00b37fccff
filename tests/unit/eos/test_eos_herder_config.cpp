// exactly.once.source.support as the herder reads it (KIP-618): `preparing`
// and `enabled` give the transactional leader (Connect's
// transactionalLeaderEnabled), only `enabled` gives exactly-once tasks and
// the read_committed config topic reader (exactlyOnceSourceEnabled).

#include <catch2/catch.hpp>

#include "config/worker_config.h"
#include "worker/herder/herder_config.h"
#include "worker/storage/config_store.h"

using namespace kc::config;  // NOLINT

TEST_CASE("exactly.once.source.support: preparing and enabled use the transactional leader", "[eos][herder]") {
  auto with = [](const char* support) {
    Properties p{{"group.id", "g"},
                 {"config.storage.topic", "c"},
                 {"offset.storage.topic", "o"},
                 {"status.storage.topic", "s"}};
    if (support) p["exactly.once.source.support"] = support;
    return kc::herder::herder_config_from(WorkerConfig::from_properties(p), "localhost");
  };
  auto def = with(nullptr);
  CHECK_FALSE(def.transactional_leader);
  CHECK_FALSE(def.exactly_once_source);
  auto disabled = with("disabled");
  CHECK_FALSE(disabled.transactional_leader);
  CHECK_FALSE(disabled.exactly_once_source);
  auto preparing = with("preparing");
  CHECK(preparing.transactional_leader);
  CHECK_FALSE(preparing.exactly_once_source);
  auto enabled = with("enabled");
  CHECK(enabled.transactional_leader);
  CHECK(enabled.exactly_once_source);
  // DistributedConfig.transactionalProducerId.
  CHECK(kc::storage::config_topic_transactional_id("g") == "connect-cluster-g");
}
