// ConnectorConfig::parse (worker/runtime/connector_config.h): the one read
// of a connector's config map into typed fields, with each part's error in
// Connect's wording; tasks.max through the one reader of it.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"
#include "worker/runtime/connector_config.h"
#include "worker/runtime/worker.h"
#include "worker/storage/mock_cluster.h"
#include "tests/support/worker_test_util.h"

using kc::connectors::ConfigMap;
using kc::connectors::ConnectorType;
using kc::connectors::PluginRegistry;
using kc::runtime::ClientOverridePolicy;
using kc::runtime::ConnectorConfig;
using kc::runtime::ConnectorConfigInputs;

namespace {

ConnectorConfigInputs inputs() {
  ConnectorConfigInputs in;
  in.tasks_max_limit = 50;
  in.key_converter = {"org.apache.kafka.connect.storage.StringConverter", {}};
  in.value_converter = {"org.apache.kafka.connect.json.JsonConverter", {{"schemas.enable", "false"}}};
  in.header_converter = {"org.apache.kafka.connect.storage.SimpleHeaderConverter", {}};
  in.worker_offsets_topic = "connect-offsets";
  return in;
}

ConnectorConfig parse(const ConfigMap& config, const ConnectorConfigInputs& in = inputs()) {
  return ConnectorConfig::parse("c", config, config, {}, PluginRegistry::builtin(), in);
}

ConfigMap sink(ConfigMap extra = {}) {
  ConfigMap c{{"connector.class", kc::connectors::kFileStreamSinkClass}, {"topics", "in"}, {"file", "/tmp/x"}};
  for (auto& [k, v] : extra) c[k] = v;
  return c;
}

}  // namespace

TEST_CASE("ConnectorConfig: a valid sink config becomes typed fields", "[connector_config]") {
  auto c = parse(sink({{"tasks.max", "3"},
                       {"value.converter", "org.apache.kafka.connect.storage.StringConverter"},
                       {"value.converter.encoding", "UTF-16"},
                       {"transforms", "r"},
                       {"transforms.r.type", "org.apache.kafka.connect.transforms.RegexRouter"},
                       {"transforms.r.regex", ".*"},
                       {"transforms.r.replacement", "x"},
                       {"predicates", "p"},
                       {"predicates.p.type", "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"},
                       {"errors.tolerance", "all"},
                       {"errors.deadletterqueue.topic.name", "dlq"},
                       {"consumer.override.max.poll.records", "10"},
                       {"producer.override.linger.ms", "5"},
                       {"admin.override.request.timeout.ms", "100"}}));
  CHECK(c.name == "c");
  CHECK(c.connector_class == kc::connectors::kFileStreamSinkClass);
  CHECK(c.type == ConnectorType::Sink);
  CHECK_FALSE(c.tasks_error);
  CHECK(c.tasks.max_tasks == 3);
  CHECK(c.tasks.enforce);
  // The worker's key converter; the connector's value converter replaces
  // the worker's class and sub-configs together.
  CHECK(c.key_converter.class_name == "org.apache.kafka.connect.storage.StringConverter");
  CHECK(c.value_converter.class_name == "org.apache.kafka.connect.storage.StringConverter");
  CHECK(c.value_converter.config == ConfigMap{{"encoding", "UTF-16"}});
  CHECK(c.transform_chain == ConfigMap{{"transforms", "r"},
                                       {"transforms.r.type", "org.apache.kafka.connect.transforms.RegexRouter"},
                                       {"transforms.r.regex", ".*"},
                                       {"transforms.r.replacement", "x"},
                                       {"predicates", "p"},
                                       {"predicates.p.type",
                                        "org.apache.kafka.connect.transforms.predicates.TopicNameMatches"}});
  CHECK_FALSE(c.errors_error);
  CHECK(c.errors.tolerate_all);
  CHECK(c.errors.dlq_topic == "dlq");
  CHECK(c.consumer_overrides == std::map<std::string, std::string>{{"max.poll.records", "10"}});
  CHECK(c.producer_overrides == std::map<std::string, std::string>{{"linger.ms", "5"}});
  CHECK(c.admin_overrides == std::map<std::string, std::string>{{"request.timeout.ms", "100"}});
  CHECK(c.override_violations.empty());
  CHECK(c.sink_group_id == "connect-c");
  CHECK(c.sink_topics == std::vector<std::string>{"in"});
}

TEST_CASE("ConnectorConfig: defaults when keys are absent", "[connector_config]") {
  auto c = parse(sink());
  CHECK(c.tasks.max_tasks == 1);
  CHECK(c.value_converter.class_name == "org.apache.kafka.connect.json.JsonConverter");
  CHECK(c.value_converter.config == ConfigMap{{"schemas.enable", "false"}});
  CHECK(c.transform_chain.empty());
  CHECK_FALSE(c.errors.tolerate_all);
  // A blank transforms= is no chain.
  CHECK(parse(sink({{"transforms", " "}})).transform_chain.empty());
  // topics.regex is anchored.
  auto rx = parse({{"connector.class", kc::connectors::kFileStreamSinkClass}, {"topics.regex", "in.*"}});
  CHECK(rx.sink_topics == std::vector<std::string>{"^in.*"});
  CHECK(rx.sink_topics_regex);
  CHECK_FALSE(parse(sink()).sink_topics_regex);
}

TEST_CASE("ConnectorConfig: tasks.max has one reader and Connect's messages", "[connector_config]") {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"0", "Invalid value 0 for configuration tasks.max: Value must be at least 1"},
      {"-1", "Invalid value -1 for configuration tasks.max: Value must be at least 1"},
      {"abc", "Invalid value abc for configuration tasks.max: Not a number of type INT"},
      {"1e999", "Invalid value 1e999 for configuration tasks.max: Not a number of type INT"},
      {"51",
       "Invalid value 51 for configuration tasks.max: Value must be no more than 50 (the worker's tasks.max.limit)"},
  };
  for (const auto& [value, message] : bad) {
    INFO("tasks.max=" << value);
    auto c = parse(sink({{"tasks.max", value}}));
    REQUIRE(c.tasks_error);
    CHECK(c.tasks_error->field == "tasks.max");
    CHECK(c.tasks_error->message == message);
  }
  CHECK(parse(sink({{"tasks.max", "50"}})).tasks.max_tasks == 50);
  CHECK(parse(sink({{"tasks.max", " 7 "}})).tasks.max_tasks == 7);
  auto enforce = parse(sink({{"tasks.max.enforce", "maybe"}}));
  REQUIRE(enforce.tasks_error);
  CHECK(enforce.tasks_error->message ==
        "Invalid value maybe for configuration tasks.max.enforce: Expected value to be either true or false");
  CHECK_FALSE(parse(sink({{"tasks.max.enforce", "FALSE"}})).tasks.enforce);
}

TEST_CASE("ConnectorConfig: each part keeps its own error", "[connector_config]") {
  auto c = parse(sink({{"errors.tolerance", "some"}, {"tasks.max", "2"}}));
  REQUIRE(c.errors_error);
  CHECK(c.errors_error->field == "errors.tolerance");
  CHECK(c.errors_error->message ==
        "Invalid value some for configuration errors.tolerance: String must be one of: none, all");
  CHECK_FALSE(c.tasks_error);  // the rest is still read
  CHECK(c.tasks.max_tasks == 2);

  auto dlq = parse(sink({{"topics", "in,dlq"}, {"errors.deadletterqueue.topic.name", "dlq"}}));
  REQUIRE(dlq.errors_error);
  CHECK(dlq.errors_error->message ==
        "The DLQ topic 'dlq' may not be included in the list of topics ('topics=in,dlq') consumed by the connector");

  // A source connector's DLQ keys are ignored, as in Connect.
  auto src = parse({{"connector.class", kc::connectors::kFileStreamSourceClass},
                    {"topic", "t"},
                    {"errors.deadletterqueue.topic.name", "dlq"}});
  CHECK(src.type == ConnectorType::Source);
  CHECK_FALSE(src.errors_error);
  CHECK(src.errors.dlq_topic.empty());
}

TEST_CASE("ConnectorConfig: client override policy and sink group", "[connector_config]") {
  auto in = inputs();
  in.client_override_policy = ClientOverridePolicy::None;
  in.worker_consumer = {{"group.id", "worker-group"}};
  auto c = parse(sink({{"consumer.override.max.poll.records", "10"}}), in);
  REQUIRE(c.override_violations.size() == 1);
  CHECK(c.override_violations[0].key == "consumer.override.max.poll.records");
  CHECK(c.override_violations[0].message ==
        "The 'None' policy does not allow 'max.poll.records' to be overridden in the connector configuration.");
  CHECK(c.sink_group_id == "worker-group");
  CHECK(parse(sink({{"consumer.override.group.id", "mine"}}), in).sink_group_id == "mine");
}

TEST_CASE("ConnectorConfig: exactly-once source settings", "[connector_config]") {
  auto in = inputs();
  in.exactly_once_source = true;
  ConfigMap src{{"connector.class", kc::connectors::kFileStreamSourceClass},
                {"topic", "t"},
                {"transaction.boundary", " interval "},
                {"transaction.boundary.interval.ms", "250"},
                {"offsets.storage.topic", "own-offsets"}};
  auto c = parse(src, in);
  CHECK(c.transaction_boundary == "interval");
  CHECK(c.transaction_boundary_interval_ms == "250");
  CHECK(c.offsets_topic == std::optional<std::string>("own-offsets"));
  src["offsets.storage.topic"] = "connect-offsets";  // the worker's own topic
  CHECK_FALSE(parse(src, in).offsets_topic);
}

TEST_CASE("ConnectorConfig: one secret predicate, secret and provider-resolved values are hidden",
          "[connector_config][secrets]") {
  ConfigMap raw = sink({{"producer.override.sasl.jaas.config", "${file:/s:jaas}"},
                        {"db.password", "hunter2-long"},
                        {"note", "${env:NOTE}"}});
  ConfigMap resolved = raw;
  resolved["producer.override.sasl.jaas.config"] = "jaas-secret-value";
  resolved["note"] = "resolved-note";
  auto c = ConnectorConfig::parse("c", raw, resolved, {"note", "producer.override.sasl.jaas.config"},
                                  PluginRegistry::builtin(), inputs());
  REQUIRE(c.is_secret);
  CHECK(c.is_secret("db.password"));
  CHECK(c.is_secret("producer.override.sasl.jaas.config"));
  CHECK_FALSE(c.is_secret("topics"));
  CHECK(c.raw.at("note") == "${env:NOTE}");
  CHECK(c.values.at("note") == "resolved-note");
  // Longest first, for secrets::scrub.
  CHECK(c.secret_values == std::vector<std::string>{"jaas-secret-value", "resolved-note", "hunter2-long"});

  // A task's config: its own secret keys and provider-resolved keys join them.
  auto task = c.task_secret_values({{"task.password", "tp-value"}, {"plain", "shown"}, {"x", "from-provider-x"}},
                                   {"x"});
  CHECK(task == std::vector<std::string>{"jaas-secret-value", "from-provider-x", "resolved-note", "hunter2-long",
                                         "tp-value"});
}

TEST_CASE("a sink task reads the policy's refusal from its ConnectorConfig and fails with Connect's text",
          "[connector_config][worker]") {
  // A config written before the worker's policy changed: start_task's one
  // parse finds the refused override, and the sink loop fails on it.
  auto m = kc::test::start_mock_cluster(1, {{"connect-offsets", 5}, {"in", 1}});
  auto options = kc::test::mock_worker_options(*m, 100);
  options.client_override_policy = ClientOverridePolicy::None;
  kc::test::TaskStates states;
  kc::runtime::Worker w(options, nullptr, &states);
  const ConfigMap config = sink({{"consumer.override.max.poll.records", "10"}});
  REQUIRE(w.start_task(kc::connect::ConnectorTaskId{"c", 0}, config, config, kc::storage::TargetState::Started));
  REQUIRE(kc::test::eventually([&] { return states.state() == kc::storage::StatusState::Failed; }, 30000));
  CHECK(states.last_trace().find("Client Config Overrides not allowed: The 'None' policy does not allow "
                                 "'max.poll.records' to be overridden in the connector configuration.") !=
        std::string::npos);
  w.stop_all();
}
