// MirrorSourceConnector: replication policies, topic filtering, the split
// of partitions over tasks, config errors, and the connector and task
// against an in-process mock source cluster.
#include <catch2/catch.hpp>

#include <chrono>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>

#include "tests/integration/protocol_sasl/sasl_test_broker.h"
#include "tests/support/admin_broker.h"
#include "worker/connectors/mirror/mirror_policy.h"
#include "worker/connectors/mirror/mirror_source.h"
#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"
#include "worker/storage/kafka_client.h"
#include "worker/storage/mock_cluster.h"

using namespace kc::connectors;
using namespace kc::connectors::mirror;

namespace {

ConfigMap base_config() {
  return {{"connector.class", "MirrorSource"},
          {"source.cluster.alias", "primary"},
          {"target.cluster.alias", "backup"},
          {"source.cluster.bootstrap.servers", "127.0.0.1:1"}};
}

std::string error_of(const ConfigMap& c) {
  try {
    parse_mirror_config(c);
  } catch (const kconnectd::Error& e) {
    return e.what();
  }
  return "";
}

class FakeTaskContext : public SourceTaskContext {
 public:
  std::map<std::string, OrderedJson> offsets;  // dump of partition -> offset
  std::optional<OrderedJson> offset(const OrderedJson& partition) const override {
    auto it = offsets.find(partition.dump());
    if (it == offsets.end()) return std::nullopt;
    return it->second;
  }
  const std::string& connector_name() const override { return name_; }
  int32_t task_number() const override { return 0; }

 private:
  std::string name_ = "mirror";
};

class CountingContext : public ConnectorContext {
 public:
  std::atomic<int> requests{0};
  const std::string& connector_name() const override { return name_; }
  void request_task_reconfiguration() override { ++requests; }
  void raise_error(const std::string&) override {}

 private:
  std::string name_ = "mirror";
};

}  // namespace

TEST_CASE("mirror: DefaultReplicationPolicy prefixes the alias and reads it back") {
  DefaultReplicationPolicy p;
  CHECK(p.format_remote_topic("primary", "orders") == "primary.orders");
  CHECK(p.topic_source("primary.orders") == "primary");
  CHECK(p.upstream_topic("primary.orders") == "orders");
  CHECK(p.topic_source("a.b.orders") == "a");
  CHECK(p.upstream_topic("a.b.orders") == "b.orders");
  CHECK_FALSE(p.topic_source("orders").has_value());
  CHECK_FALSE(p.upstream_topic("orders").has_value());
  DefaultReplicationPolicy dash("__");
  CHECK(dash.format_remote_topic("dc1", "t.x") == "dc1__t.x");
  CHECK(dash.topic_source("dc1__t.x") == "dc1");
  CHECK_FALSE(dash.topic_source("dc1.t").has_value());
}

TEST_CASE("mirror: IdentityReplicationPolicy keeps names and sees no remote topics") {
  IdentityReplicationPolicy p;
  CHECK(p.format_remote_topic("primary", "orders") == "orders");
  CHECK_FALSE(p.topic_source("primary.orders").has_value());
  auto byname = make_replication_policy("IdentityReplicationPolicy", ".");
  CHECK(byname->format_remote_topic("x", "t") == "t");
  auto full = make_replication_policy(kDefaultPolicyClass, "-");
  CHECK(full->format_remote_topic("x", "t") == "x-t");
  CHECK_THROWS_WITH(make_replication_policy("com.example.Nope", "."), Catch::Contains("replication.policy.class") &&
                                                                          Catch::Contains("com.example.Nope"));
}

TEST_CASE("mirror: topic filter applies topics, topics.exclude, internal topics and cycles") {
  auto cfg = parse_mirror_config(base_config());
  TopicFilter f(cfg);
  CHECK(f.should_replicate("orders"));
  CHECK_FALSE(f.should_replicate("__consumer_offsets"));     // exclude default and internal
  CHECK_FALSE(f.should_replicate("connect-offsets-internal"));
  CHECK_FALSE(f.should_replicate("x.replica"));
  CHECK_FALSE(f.should_replicate(".hidden"));
  CHECK_FALSE(f.should_replicate("backup.orders"));           // came from the target: cycle
  CHECK_FALSE(f.should_replicate("third.backup.orders"));     // through another cluster: still a cycle
  CHECK(f.should_replicate("third.orders"));                  // remote of another cluster: mirrored
  CHECK(f.is_cycle("backup.orders"));
  CHECK_FALSE(f.is_cycle("primary.orders"));

  auto c = base_config();
  c["topics"] = "orders.*, events";
  c["topics.exclude"] = "orders-secret";
  TopicFilter g(parse_mirror_config(c));
  CHECK(g.should_replicate("orders"));
  CHECK(g.should_replicate("orders-eu"));
  CHECK(g.should_replicate("events"));
  CHECK_FALSE(g.should_replicate("events2"));        // whole-name match, as Java's matches()
  CHECK_FALSE(g.should_replicate("my-orders"));
  CHECK_FALSE(g.should_replicate("orders-secret"));  // exclude wins
  CHECK_FALSE(g.should_replicate("__orders"));       // exclude list replaced, internal still skipped

  // Without target.cluster.alias nothing is a cycle by alias.
  auto n = base_config();
  n.erase("target.cluster.alias");
  CHECK(TopicFilter(parse_mirror_config(n)).should_replicate("backup.orders"));
}

TEST_CASE("mirror: partitions are split round-robin in topic then partition order") {
  std::vector<TopicPartition> tps;
  for (int p = 0; p < 4; ++p) tps.emplace_back("b", p);
  for (int p = 0; p < 2; ++p) tps.emplace_back("a", p);
  auto groups = split_partitions(tps, 2);
  REQUIRE(groups.size() == 2);
  // Sorted: a-0 a-1 b-0 b-1 b-2 b-3.
  CHECK(groups[0] == std::vector<TopicPartition>{{"a", 0}, {"b", 0}, {"b", 2}});
  CHECK(groups[1] == std::vector<TopicPartition>{{"a", 1}, {"b", 1}, {"b", 3}});
  // MM2's own example: 3 tasks, t0 with 8 partitions, t1 and t2 with 2.
  std::vector<TopicPartition> mm2;
  for (int p = 0; p < 8; ++p) mm2.emplace_back("t0", p);
  for (const char* t : {"t1", "t2"})
    for (int p = 0; p < 2; ++p) mm2.emplace_back(t, p);
  auto three = split_partitions(mm2, 3);
  REQUIRE(three.size() == 3);
  CHECK(three[0] == std::vector<TopicPartition>{{"t0", 0}, {"t0", 3}, {"t0", 6}, {"t1", 1}});
  CHECK(three[1] == std::vector<TopicPartition>{{"t0", 1}, {"t0", 4}, {"t0", 7}, {"t2", 0}});
  CHECK(three[2] == std::vector<TopicPartition>{{"t0", 2}, {"t0", 5}, {"t1", 0}, {"t2", 1}});
  CHECK(split_partitions(tps, 10).size() == 6);  // never an empty task
  CHECK(split_partitions({}, 3).empty());
  CHECK(split_partitions(tps, 0).size() == 1);
  size_t total = 0;
  for (const auto& g : split_partitions(tps, 4)) total += g.size();
  CHECK(total == tps.size());
}

TEST_CASE("mirror: task partition lists and offsets round-trip") {
  std::vector<TopicPartition> tps{{"orders-eu", 3}, {"a.b", 0}};
  CHECK(encode_partitions(tps) == "orders-eu-3,a.b-0");
  CHECK(decode_partitions("orders-eu-3, a.b-0") == tps);
  CHECK_THROWS_WITH(decode_partitions("orders"), Catch::Contains("'orders'"));
  CHECK_THROWS_WITH(decode_partitions("orders-x"), Catch::Contains("topic-partition"));
  CHECK_THROWS(decode_partitions("-1"));
  CHECK(source_partition("primary", "t", 2).dump() == R"({"cluster":"primary","topic":"t","partition":2})");
  CHECK(resume_offset(OrderedJson{{"offset", 41}}) == 42);
  CHECK_FALSE(resume_offset(std::nullopt).has_value());
  CHECK_FALSE(resume_offset(OrderedJson{{"position", 3}}).has_value());
  CHECK_FALSE(resume_offset(OrderedJson{{"offset", "x"}}).has_value());
}

TEST_CASE("mirror: config errors are specific") {
  auto c = base_config();
  c.erase("source.cluster.alias");
  CHECK_THAT(error_of(c), Catch::Contains("source.cluster.alias"));
  c = base_config();
  c.erase("source.cluster.bootstrap.servers");
  CHECK_THAT(error_of(c), Catch::Contains("source.cluster.bootstrap.servers"));
  c = base_config();
  c["topics"] = "ok, (unclosed";
  CHECK_THAT(error_of(c), Catch::Contains("configuration topics:") && Catch::Contains("(unclosed"));
  c = base_config();
  c["refresh.topics.interval.ms"] = "soon";
  CHECK_THAT(error_of(c), Catch::Contains("refresh.topics.interval.ms"));
  c["refresh.topics.interval.ms"] = "0";
  CHECK_THAT(error_of(c), Catch::Contains("at least 1"));
  c = base_config();
  c["target.cluster.alias"] = "primary";
  CHECK_THAT(error_of(c), Catch::Contains("must differ"));
  c = base_config();
  c["replication.policy.class"] = "Nope";
  CHECK_THAT(error_of(c), Catch::Contains("replication.policy.class"));
  CHECK(error_of(base_config()).empty());

  // Through the registry's validation: the error lands on the key.
  auto v = PluginRegistry::builtin().validate(
      {{"name", "m"}, {"connector.class", "MirrorSource"}, {"source.cluster.alias", "primary"},
       {"source.cluster.bootstrap.servers", "h:1"}, {"topics.exclude", "[bad"}});
  CHECK(v.error_count >= 1);
  bool on_key = false;
  for (const auto& e : v.configs)
    if (e.definition.name == "topics.exclude" && !e.value.errors.empty()) on_key = true;
  CHECK(on_key);
}

TEST_CASE("mirror: registered under its MM2 class name and aliases") {
  auto& reg = PluginRegistry::builtin();
  for (const char* name : {"org.apache.kafka.connect.mirror.MirrorSourceConnector", "MirrorSourceConnector", "MirrorSource"}) {
    auto d = reg.find(name);
    REQUIRE(d.has_value());
    CHECK(d->class_name == kMirrorSourceClass);
    CHECK(d->type == ConnectorType::Source);
  }
}

TEST_CASE("mirror: every key is in group Mirror, ordered as defined") {
  auto d = PluginRegistry::builtin().find(std::string(kMirrorSourceClass));
  REQUIRE(d.has_value());
  REQUIRE(d->config_defs.size() >= 12);
  for (size_t i = 0; i < d->config_defs.size(); ++i) {
    INFO(d->config_defs[i].name);
    CHECK(d->config_defs[i].group == "Mirror");
    CHECK(d->config_defs[i].order_in_group == static_cast<int32_t>(i + 1));
  }
  CHECK(d->config_defs.front().name == "source.cluster.alias");
}

TEST_CASE("mirror: connector lists and splits source partitions, task mirrors records byte for byte") {
  auto mock = kc::storage::MockCluster::start(1);
  REQUIRE(mock);
  auto& mc = **mock;
  REQUIRE(mc.create_topic("orders", 4, 1));
  REQUIRE(mc.create_topic("backup.orders", 2, 1));   // cycle: not mirrored
  REQUIRE(mc.create_topic("__internal_x", 1, 1));    // internal: not mirrored
  const std::string bs = mc.bootstrap_servers();

  auto producer = kc::storage::Producer::create({{"bootstrap.servers", bs}});
  REQUIRE(producer);
  kc::storage::RecordHeaders headers{{"h1", std::string("a\0b", 3)}, {"h2", std::nullopt}, {"h1", std::string("c")}};
  for (int i = 0; i < 8; ++i) {
    auto st = (*producer)->send("orders", i == 7 ? std::optional<std::string>() : "k" + std::to_string(i),
                                std::string("v\0", 2) + std::to_string(i), [](std::optional<kc::Error>) {}, i % 4,
                                &headers, 1600000000000LL + i);
    REQUIRE(st);
  }
  REQUIRE((*producer)->flush(10000));

  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = bs;
  config["refresh.topics.enabled"] = "false";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);
  auto tasks = conn->task_configs(2);
  conn->stop();
  REQUIRE(tasks.size() == 2);
  CHECK(tasks[0][kTaskPartitionsKey] == "orders-0,orders-2");
  CHECK(tasks[1][kTaskPartitionsKey] == "orders-1,orders-3");

  // Task 0 resumes partition 0 after committed offset 0 and reads
  // partition 2 from the beginning.
  FakeTaskContext tctx;
  tctx.offsets[source_partition("primary", "orders", 0).dump()] = OrderedJson{{"offset", 0}};
  auto task = conn->create_source_task();
  task->start(tasks[0], tctx);
  std::vector<SourceRecord> got;
  for (int i = 0; i < 40 && got.size() < 3; ++i)
    for (auto& r : task->poll()) got.push_back(std::move(r));
  task->stop();
  REQUIRE(got.size() == 3);  // orders-0: offset 1 (record 4); orders-2: records 2 and 6
  std::map<std::string, const SourceRecord*> by_key;
  for (const auto& r : got) {
    CHECK(r.topic == "primary.orders");
    REQUIRE(r.key.value.is<kc::data::Bytes>());
    by_key[r.key.value.as<kc::data::Bytes>().data] = &r;
  }
  REQUIRE(by_key.count("k4"));
  const auto& r4 = *by_key["k4"];
  CHECK(r4.kafka_partition == 0);
  CHECK(r4.source_partition.get() == source_partition("primary", "orders", 0));
  CHECK(r4.source_offset == OrderedJson{{"offset", 1}});
  CHECK(r4.timestamp_ms == 1600000000004LL);
  CHECK(r4.value.value.as<kc::data::Bytes>().data == std::string("v\0", 2) + "4");
  REQUIRE(r4.headers.size() == 3);
  CHECK(r4.headers.list()[0].key == "h1");
  CHECK(r4.headers.list()[0].value.as<kc::data::Bytes>().data == std::string("a\0b", 3));
  CHECK(r4.headers.list()[1].key == "h2");
  CHECK(r4.headers.list()[1].value.is_null());
  CHECK(r4.headers.list()[2].value.as<kc::data::Bytes>().data == "c");
  REQUIRE(by_key.count("k2"));
  CHECK(by_key["k2"]->kafka_partition == 2);
  CHECK(by_key["k2"]->source_offset == OrderedJson{{"offset", 0}});
}

TEST_CASE("mirror: a running connector asks for a reconfiguration when a topic appears") {
  auto mock = kc::storage::MockCluster::start(1);
  REQUIRE(mock);
  REQUIRE((*mock)->create_topic("orders", 2, 1));
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = (*mock)->bootstrap_servers();
  config["refresh.topics.interval.ms"] = "200";
  config["topics"] = "orders.*";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);
  auto wait_requests = [&](int n) {
    for (int i = 0; i < 200 && cctx.requests.load() < n; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return cctx.requests.load();
  };
  CHECK(wait_requests(1) == 1);  // the first listing always asks
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(cctx.requests.load() == 1);  // nothing changed: no more requests
  REQUIRE((*mock)->create_topic("events", 3, 1));  // not matched by topics
  std::this_thread::sleep_for(std::chrono::milliseconds(800));
  CHECK(cctx.requests.load() == 1);
  REQUIRE((*mock)->create_topic("orders-new", 3, 1));
  CHECK(wait_requests(2) == 2);
  auto tasks = conn->task_configs(1);
  REQUIRE(tasks.size() == 1);
  CHECK(decode_partitions(tasks[0][kTaskPartitionsKey]).size() == 5);
  conn->stop();
}

// librdkafka's mock has no CreateTopics (no controller): topic creation
// fails, is logged, and the task configs are still generated. On a real
// broker the same call creates primary.orders with 3 partitions.
TEST_CASE("mirror: a target without CreateTopics does not stop task-config generation") {
  auto source = kc::storage::MockCluster::start(1);
  auto target = kc::storage::MockCluster::start(1);
  REQUIRE(source);
  REQUIRE(target);
  REQUIRE((*source)->create_topic("orders", 3, 1));
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = (*source)->bootstrap_servers();
  config["target.cluster.bootstrap.servers"] = (*target)->bootstrap_servers();
  config["refresh.topics.enabled"] = "false";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);
  auto tasks = conn->task_configs(4);
  conn->stop();
  CHECK(tasks.size() == 3);
  auto probe = kc::storage::make_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", (*target)->bootstrap_servers()}});
  REQUIRE(probe);
  auto n = kc::storage::topic_partition_count(probe->get(), "primary.orders", 5000);
  REQUIRE(n);
  CHECK_FALSE(n->has_value());  // not created (and not auto-created by the listing)
}

// Against the scripted admin broker (tests/support/admin_broker.h), which
// has the CreateTopics and CreatePartitions the mock lacks: as MM2, the
// remote topic is created with the source partition count, and grown when
// the source topic grows.
TEST_CASE("mirror: the remote topic is created with the source partition count and grown with it") {
  kc::test::AdminBroker source, target;
  source.set_topic("orders", 3);
  source.set_topic("__consumer_offsets", 2);  // internal: never mirrored
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = source.bootstrap();
  config["target.cluster.bootstrap.servers"] = target.bootstrap();
  config["refresh.topics.enabled"] = "false";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);

  auto tasks = conn->task_configs(4);
  CHECK(tasks.size() == 3);
  CHECK(target.topics() == std::map<std::string, int32_t>{{"primary.orders", 3}});
  auto creates = target.requests(kc::test::api::kCreateTopics);
  REQUIRE(creates.size() == 1);
  CHECK(creates[0].api_version == 4);
  CHECK(creates[0].counts == std::vector<std::pair<std::string, int32_t>>{{"primary.orders", 3}});
  CHECK(creates[0].replication_factors == std::vector<int16_t>{-1});  // replication.factor default: broker's
  CHECK(target.requests(kc::test::api::kCreatePartitions).empty());

  // The source grows: the remote topic grows to match (CreatePartitions).
  source.set_topic("orders", 5);
  tasks = conn->task_configs(1);
  REQUIRE(tasks.size() == 1);
  CHECK(decode_partitions(tasks[0][kTaskPartitionsKey]).size() == 5);
  CHECK(target.topics() == std::map<std::string, int32_t>{{"primary.orders", 5}});
  auto grows = target.requests(kc::test::api::kCreatePartitions);
  REQUIRE(grows.size() == 1);
  CHECK(grows[0].api_version == 0);
  CHECK(grows[0].counts == std::vector<std::pair<std::string, int32_t>>{{"primary.orders", 5}});

  // Nothing changed: neither is asked again. A target topic with more
  // partitions than its source is left alone (partitions never shrink).
  target.set_topic("primary.orders", 6);
  conn->task_configs(1);
  CHECK(target.requests(kc::test::api::kCreateTopics).size() == 1);
  CHECK(target.requests(kc::test::api::kCreatePartitions).size() == 1);
  CHECK(target.topics() == std::map<std::string, int32_t>{{"primary.orders", 6}});
  conn->stop();
  for (const auto& r : target.requests()) CHECK(r.handled);
}

TEST_CASE("mirror: the refresh thread creates a new source topic's remote topic and asks for new task configs") {
  kc::test::AdminBroker source, target;
  source.set_topic("orders", 2);
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = source.bootstrap();
  config["target.cluster.bootstrap.servers"] = target.bootstrap();
  config["refresh.topics.interval.ms"] = "100";
  config["replication.factor"] = "1";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);
  auto wait_for = [](auto pred) {
    for (int i = 0; i < 200 && !pred(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return pred();
  };
  // The first listing (within 1 s of start) creates primary.orders.
  CHECK(wait_for([&] { return target.topics().count("primary.orders") == 1; }));
  const int before = cctx.requests.load();
  source.set_topic("payments", 4);
  source.set_topic("orders", 3);
  CHECK(wait_for([&] {
    auto t = target.topics();
    return t.count("primary.payments") && t["primary.payments"] == 4 && t["primary.orders"] == 3;
  }));
  CHECK(wait_for([&] { return cctx.requests.load() > before; }));
  conn->stop();
  for (const auto& r : target.requests(kc::test::api::kCreateTopics))
    CHECK(r.replication_factors == std::vector<int16_t>(r.counts.size(), 1));
}

// An old target broker without CreateTopics / CreatePartitions: nothing is
// sent for them (librdkafka fails the admin call locally), the task
// configs are still generated.
TEST_CASE("mirror: a target that lists no CreateTopics gets no CreateTopics request") {
  kc::test::AdminBroker source;
  kc::test::AdminBroker target(std::set<int16_t>{kc::test::api::kMetadata});
  source.set_topic("orders", 2);
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = source.bootstrap();
  config["target.cluster.bootstrap.servers"] = target.bootstrap();
  config["refresh.topics.enabled"] = "false";
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(config);
  CHECK(conn->task_configs(2).size() == 2);
  conn->stop();
  CHECK(target.topics().empty());
  CHECK(target.requests(kc::test::api::kCreateTopics).empty());
  for (const auto& r : target.requests()) CHECK(r.handled);
}

namespace {

/// Runs the scripted SASL broker's io_context on its own thread.
struct SaslBrokerThread {
  boost::asio::io_context& io;
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type> guard;
  std::thread t;
  explicit SaslBrokerThread(boost::asio::io_context& i) : io(i), guard(i.get_executor()), t([this] { io.run(); }) {}
  ~SaslBrokerThread() {
    io.stop();
    t.join();
  }
};

/// A mirror config whose source cluster is the scripted SASL broker on
/// `port`, with a wrong SCRAM-SHA-512 password.
ConfigMap wrong_password_source(uint16_t port) {
  ConfigMap config = base_config();
  config["source.cluster.bootstrap.servers"] = "127.0.0.1:" + std::to_string(port);
  config["source.cluster.security.protocol"] = "SASL_PLAINTEXT";
  config["source.cluster.sasl.mechanism"] = "SCRAM-SHA-512";
  config["source.cluster.sasl.username"] = "connect";
  config["source.cluster.sasl.password"] = "hunter2-wrong";
  config["refresh.topics.enabled"] = "false";
  return config;
}

}  // namespace

TEST_CASE("mirror: a source cluster that refuses the credentials fails the task with the classified line",
          "[mirror][broker_check]") {
  // The task's own consumer is classified as the worker's clients are
  // (common/broker_classify): poll() throws the line naming the broker and
  // the mechanism, never the password, instead of warning on forever.
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  SaslBrokerThread thread(io);
  ConfigMap config = wrong_password_source(broker.port());
  config[kTaskPartitionsKey] = "orders-0";
  auto conn = make_mirror_source();
  FakeTaskContext tctx;
  auto task = conn->create_source_task();
  task->start(config, tctx);
  std::string failure;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 40 && failure.empty(); ++i) {
    try {
      (void)task->poll();
    } catch (const std::exception& e) {
      failure = e.what();
    }
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  task->stop();
  INFO(failure);
  CHECK_THAT(failure, Catch::StartsWith("source consumer: SASL authentication failed at broker 127.0.0.1:" +
                                        std::to_string(broker.port())) &&
                          Catch::Contains("SCRAM-SHA-512") && Catch::Contains("invalid credentials"));
  CHECK_THAT(failure, !Catch::Contains("hunter2"));
  CHECK(ms < 10000);
}

TEST_CASE("mirror: a source cluster that refuses the credentials fails task-config generation with the classified "
          "line, not a metadata timeout",
          "[mirror][broker_check]") {
  boost::asio::io_context io;
  kc::test::SaslScriptedBroker broker(io);
  SaslBrokerThread thread(io);
  auto conn = make_mirror_source();
  CountingContext cctx;
  conn->initialize(cctx);
  conn->start(wrong_password_source(broker.port()));
  std::string failure;
  const auto t0 = std::chrono::steady_clock::now();
  try {
    (void)conn->task_configs(1);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  conn->stop();
  INFO(failure);
  CHECK_THAT(failure, Catch::StartsWith("listing the topics of cluster primary failed: SASL authentication failed "
                                        "at broker 127.0.0.1:" + std::to_string(broker.port())) &&
                          Catch::Contains("SCRAM-SHA-512"));
  CHECK_THAT(failure, !Catch::Contains("hunter2") && !Catch::Contains("Timed out"));
  CHECK(ms < 5000);  // the 10 s metadata wait ends at the classified cause
}
