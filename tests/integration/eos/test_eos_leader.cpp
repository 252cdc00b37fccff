// KIP-618's transactional leader against librdkafka's in-process mock
// cluster: with exactly.once.source.support=preparing (or enabled) the
// leader writes the config topic through the fencable producer
// "connect-cluster-<group.id>", one transaction per privileged write, as
// Kafka Connect's KafkaConfigBackingStore.
//
// The mock (librdkafka 2.0.2) runs the transactions (InitProducerId,
// AddPartitionsToTxn, EndTxn) but does not fence an older producer when a
// newer one of the same id initialises, and writes no commit markers. So
// fencing is shown by injecting PRODUCER_FENCED on EndTxn, which only a
// transactional writer sends: a write that fails on it went through a
// transaction, and the store's counters say how many committed.
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>  // must follow rdkafka.h

#include "tests/integration/worker/cluster_harness.h"
#include "tests/integration/worker/rest_cluster.h"
#include "worker/herder/internal_client.h"
#include "worker/rest/json_codec.h"
#include "worker/rest/rest_server.h"
#include "worker/storage/config_store.h"
#include "worker/storage/mock_cluster.h"

using namespace kc;
using namespace kc::test;
using namespace std::chrono_literals;

namespace {

constexpr int16_t kEndTxn = 26;  // Kafka protocol ApiKey of EndTxn (librdkafka keeps RD_KAFKAP_* private)

std::unique_ptr<storage::ConfigBackingStore> open_store(const storage::MockCluster& m, const std::string& txn_id) {
  storage::ConfigBackingStore::Options o;
  o.client = {{"bootstrap.servers", m.bootstrap_servers()}};
  o.topic = "cfg";
  o.replication_factor = 1;
  o.client_id = "txl-test";
  o.timeout_ms = 15000;
  o.transactional_id = txn_id;
  auto s = storage::ConfigBackingStore::open(o);
  INFO((s ? std::string() : s.error().to_string()));
  REQUIRE(s);
  return std::move(s).value();
}

/// "CONNECTOR_STATE@worker tasks 0=STATE@worker ..." from one worker's view.
std::string status_text(DistributedHerder& h, const std::string& c) {
  auto r = herder_reply<rest::ConnectorStateInfo>([&](auto cb) { h.connector_status(c, cb); });
  if (!r) return "error: " + r.error().message;
  std::string s = std::string(rest::to_string(r.value().connector.state)) + "@" + r.value().connector.worker_id + " tasks";
  for (const auto& t : r.value().tasks)
    s += " " + std::to_string(t.id) + "=" + rest::to_string(t.state) + "@" + t.worker_id;
  return s;
}

/// Workers with exactly.once.source.support=preparing (transactional
/// leader, at-least-once tasks) and REST servers; ids "127.0.0.1:<port>".
struct PreparingCluster : RestCluster {
  static ClusterOptions options() {
    ClusterOptions o;
    o.data_topics = {{"txl-out", 1}};
    o.configure = [](const std::string&, herder::HerderConfig& c) {
      c.exactly_once_source = false;  // preparing: tasks stay at-least-once
      c.transactional_leader = true;
    };
    return o;
  }
  PreparingCluster() : RestCluster(options()) {}
  /// PUT /connectors/{name}/config through worker `id`'s REST server.
  static herder::InternalResponse put_config(const std::string& id, const std::string& name, const std::string& body) {
    auto r = herder::put_internal(url(id), "/connectors/" + name + "/config", body, 30000);
    INFO((r ? std::string("ok") : r.error().to_string()));
    REQUIRE(r);
    return *r;
  }
};

const std::string kSeqBody = R"({"connector.class":"SequenceSource","tasks.max":"2","topic":"txl-out","throughput":"50"})";

}  // namespace

TEST_CASE("config store: privileged writes need claimed write privileges, are transactions, and a fenced one "
          "releases them",
          "[eos]") {
  auto m = storage::MockCluster::start();
  REQUIRE(m);
  auto& mock = *m.value();
  REQUIRE(mock.create_topic("cfg", 1, 1));
  CHECK(storage::config_topic_transactional_id("connect-cluster") == "connect-cluster-connect-cluster");

  auto plain = open_store(mock, "");
  auto txl = open_store(mock, storage::config_topic_transactional_id("g1"));
  CHECK_FALSE(plain->writer_stats().transactional);
  auto st0 = txl->writer_stats();
  CHECK(st0.transactional);
  CHECK_FALSE(st0.write_privileges);

  // No privileges yet: Connect's IllegalStateException.
  auto before = txl->put_session_key(storage::SessionKeyRecord{"a2V5", "HmacSHA256", 1}, 10000);
  REQUIRE_FALSE(before);
  CHECK(storage::is_privileged_write_error(before.error()));
  CHECK(before.error().message == "Cannot produce to config topic without claiming write privileges first");
  // Target states are not privileged: any worker writes them.
  CHECK(txl->put_target_state("c1", storage::TargetState::Paused, 10000));

  REQUIRE(txl->claim_write_privileges(15000));
  REQUIRE(txl->claim_write_privileges(15000));  // held: nothing to do
  CHECK(txl->writer_stats().claims == 1);
  REQUIRE(txl->put_connector_config("c1", {{"connector.class", "SequenceSource"}}, std::nullopt, 10000));
  REQUIRE(txl->put_task_configs("c1", {{{"k", "0"}}, {{"k", "1"}}}, 10000));
  auto st1 = txl->writer_stats();
  CHECK(st1.write_privileges);
  CHECK(st1.transactions == 3);  // the connector config; the task configs; the commit
  auto snap = plain->read_to_end(10000);
  REQUIRE(snap);
  CHECK(snap->contains("c1"));
  CHECK(snap->tasks("c1").size() == 2);
  CHECK(snap->target_state("c1") == storage::TargetState::Paused);

  // An EndTxn answered as to a fenced producer: only the transactional
  // writer sends EndTxn, so the plain store's write is untouched by it.
  rd_kafka_mock_push_request_errors(mock.handle(), kEndTxn, 1, RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  CHECK(plain->put_target_state("c1", storage::TargetState::Started, 10000));
  auto fenced = txl->put_connector_config("c2", {{"connector.class", "SequenceSource"}}, std::nullopt, 10000);
  REQUIRE_FALSE(fenced);
  INFO(fenced.error().to_string());
  CHECK(storage::is_privileged_write_error(fenced.error()));
  CHECK(fenced.error().message.find("Failed to perform fencable send to config topic") != std::string::npos);
  CHECK(fenced.error().message.find("transactional id connect-cluster-g1 was fenced out, most likely by a newer "
                                    "leader") != std::string::npos);
  auto st2 = txl->writer_stats();
  CHECK_FALSE(st2.write_privileges);
  CHECK(st2.failed_writes == 1);
  // Released: the next privileged write fails until they are claimed again.
  auto again = txl->put_restart_request("c1", storage::RestartFlags{}, 10000);
  REQUIRE_FALSE(again);
  CHECK(again.error().message == "Cannot produce to config topic without claiming write privileges first");

  REQUIRE(txl->claim_write_privileges(15000));
  REQUIRE(txl->put_task_count_record("c1", 2, 10000));
  auto st3 = txl->writer_stats();
  CHECK(st3.claims == 2);
  CHECK(st3.transactions == 4);
  auto snap2 = plain->read_to_end(10000);
  REQUIRE(snap2);
  CHECK(snap2->task_count_records.at("c1") == 2);

  txl->release_write_privileges();
  CHECK_FALSE(txl->writer_stats().write_privileges);
}

TEST_CASE("preparing: the leader writes configs in transactions, a follower's create, tasks and statuses work, a "
          "fenced leader write fails clearly and the leader reclaims",
          "[eos]") {
  PreparingCluster pc;
  const auto leader = pc.leader_id();
  const auto follower = pc.ids[0] == leader ? pc.ids[1] : pc.ids[0];
  pc.cluster.wait_stable(Expected{});
  // The leader claimed the privileges on its assignment and wrote the
  // session key in a transaction; the follower holds none.
  REQUIRE(eventually([&] { return pc.cluster.worker(leader).config_writer_info().transactions >= 1; }, 20s));
  auto li = pc.cluster.worker(leader).config_writer_info();
  CHECK(li.transactional);
  CHECK(li.write_privileges);
  CHECK(li.claims == 1);
  auto fi = pc.cluster.worker(follower).config_writer_info();
  CHECK(fi.transactional);
  CHECK_FALSE(fi.write_privileges);
  CHECK(fi.transactions == 0);

  // Create through the follower: forwarded to the leader, which writes it.
  const auto before = li.transactions;
  auto r = PreparingCluster::put_config(follower, "seq", kSeqBody);
  INFO(r.body);
  REQUIRE(r.status == 201);
  pc.cluster.wait_stable(Expected{}.add("seq", 2));
  // The connector config, the task configs and their commit.
  CHECK(pc.cluster.worker(leader).config_writer_info().transactions >= before + 3);
  CHECK(pc.cluster.worker(follower).config_writer_info().transactions == 0);
  std::string a, b;
  REQUIRE(eventually(
      [&] {
        a = status_text(pc.cluster.worker(leader), "seq");
        b = status_text(pc.cluster.worker(follower), "seq");
        return a == b && a.find("RUNNING@") == 0 && a.find("0=RUNNING@") != std::string::npos &&
               a.find("1=RUNNING@") != std::string::npos;
      },
      30s));
  INFO(a << " / " << b);

  // The leader's next privileged write is fenced: a clear 500, no crash.
  const auto failed_before = pc.cluster.worker(leader).config_writer_info().failed_writes;
  rd_kafka_mock_push_request_errors(pc.cluster.mock().handle(), kEndTxn, 1, RD_KAFKA_RESP_ERR_PRODUCER_FENCED);
  auto f = PreparingCluster::put_config(leader, "seq2", kSeqBody);
  INFO(f.body);
  CHECK(f.status == 500);
  CHECK(f.body.find("Failed to write to config topic; this may be due to a transient error and the request can be "
                    "safely retried") != std::string::npos);
  CHECK(f.body.find("transactional id connect-cluster-kc-it was fenced out") != std::string::npos);
  CHECK(pc.cluster.worker(leader).config_writer_info().failed_writes == failed_before + 1);
  // Still the leader: it claims the privileges again.
  REQUIRE(eventually(
      [&] {
        auto i = pc.cluster.worker(leader).config_writer_info();
        return i.write_privileges && !i.fenced && i.claims == 2;
      },
      20s));
  CHECK(pc.cluster.worker(leader).config_writer_info().last_error.find("was fenced out") != std::string::npos);
  // The retry (through the follower) succeeds.
  auto ok = PreparingCluster::put_config(follower, "seq2", kSeqBody);
  INFO(ok.body);
  CHECK((ok.status == 200 || ok.status == 201));
  pc.cluster.wait_stable(Expected{}.add("seq", 2).add("seq2", 2));
  pc.cluster.check_invariant();
}

TEST_CASE("preparing: a new leader claims the write privileges and its config writes are transactions", "[eos]") {
  PreparingCluster pc;
  const auto first = pc.leader_id();
  const auto second = pc.ids[0] == first ? pc.ids[1] : pc.ids[0];
  REQUIRE(eventually([&] { return pc.cluster.worker(first).config_writer_info().write_privileges; }, 20s));
  auto r = PreparingCluster::put_config(second, "seq", kSeqBody);
  INFO(r.body);
  REQUIRE(r.status == 201);
  pc.cluster.wait_stable(Expected{}.add("seq", 2));
  CHECK(pc.cluster.worker(second).config_writer_info().claims == 0);

  pc.rest.at(first)->stop();
  pc.rest.erase(first);
  pc.cluster.stop_worker(first);
  REQUIRE(eventually([&] { return pc.cluster.leader() == second; }, 60s));
  REQUIRE(eventually([&] { return pc.cluster.worker(second).config_writer_info().write_privileges; }, 20s));
  CHECK(pc.cluster.worker(second).config_writer_info().claims == 1);
  pc.cluster.wait_stable(Expected{}.add("seq", 2), 120s, 2500ms, false);
  const auto before = pc.cluster.worker(second).config_writer_info().transactions;
  auto r2 = PreparingCluster::put_config(second, "seq2", kSeqBody);
  INFO(r2.body);
  REQUIRE(r2.status == 201);
  pc.cluster.wait_stable(Expected{}.add("seq", 2).add("seq2", 2), 120s, 2500ms, false);
  CHECK(pc.cluster.worker(second).config_writer_info().transactions >= before + 3);
}
