// KIP-875 sink offsets rules (Connect's SinkUtils) and KIP-458 connector
// client overrides: pure functions, no broker.
#include <catch2/catch.hpp>

#include "worker/herder/plugin_config.h"
#include "worker/herder/sink_offsets.h"
#include "worker/runtime/client_overrides.h"

using kc::herder::parse_sink_offsets;
using kc::rest::ConnectorOffset;
using json = nlohmann::ordered_json;

namespace {
ConnectorOffset entry(json partition, std::optional<json> offset) { return {std::move(partition), std::move(offset)}; }
std::string error_of(const std::vector<ConnectorOffset>& e) {
  auto r = parse_sink_offsets(e);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().http_status() == 400);
  return r.error().message;
}
}  // namespace

TEST_CASE("sink offsets: GET shape is Connect's kafka_topic/kafka_partition -> kafka_offset") {
  auto rest = kc::herder::sink_offsets_to_rest({{"t", 0, 5}, {"u", 3, 0}});
  REQUIRE(rest.size() == 2);
  CHECK(rest[0].partition.dump() == R"({"kafka_topic":"t","kafka_partition":0})");
  CHECK(rest[0].offset->dump() == R"({"kafka_offset":5})");
  CHECK(rest[1].partition.dump() == R"({"kafka_topic":"u","kafka_partition":3})");
}

TEST_CASE("sink offsets: PATCH entries parse numbers, digit strings and null offsets") {
  auto r = parse_sink_offsets({entry({{"kafka_topic", "t"}, {"kafka_partition", 1}}, json{{"kafka_offset", 10}}),
                               entry({{"kafka_topic", "t"}, {"kafka_partition", "2"}}, json{{"kafka_offset", "+7"}}),
                               entry({{"kafka_topic", "u"}, {"kafka_partition", 0}}, std::nullopt)});
  REQUIRE(r.ok());
  REQUIRE(r.value().size() == 3);
  CHECK(r.value()[0].partition == kc::storage::TopicPartition{"t", 1});
  CHECK(r.value()[0].offset == 10);
  CHECK(r.value()[1].partition == kc::storage::TopicPartition{"t", 2});
  CHECK(r.value()[1].offset == 7);
  CHECK(r.value()[2].partition == kc::storage::TopicPartition{"u", 0});
  CHECK_FALSE(r.value()[2].offset.has_value());
}

TEST_CASE("sink offsets: a partition listed twice keeps its last entry") {
  auto r = parse_sink_offsets({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", 1}}),
                               entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", 9}})});
  REQUIRE(r.ok());
  REQUIRE(r.value().size() == 1);
  CHECK(r.value()[0].offset == 9);
}

TEST_CASE("sink offsets: bad entries get Connect's 400 messages") {
  CHECK(error_of({entry({{"kafka_partition", 0}}, json{{"kafka_offset", 1}})}) ==
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'");
  CHECK(error_of({entry({{"kafka_topic", "t"}}, json{{"kafka_offset", 1}})}) ==
        "The partition for a sink connector offset must contain the keys 'kafka_topic' and 'kafka_partition'");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", "zero"}}, json{{"kafka_offset", 1}})}) ==
        "Failed to parse the following Kafka partition value in the provided offsets: 'zero'. Partition values for "
        "sink connectors need to be integers.");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 1.5}}, json{{"kafka_offset", 1}})}) ==
        "Failed to parse the following Kafka partition value in the provided offsets: '1.5'. Partition values for "
        "sink connectors need to be integers.");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 4294967296LL}}, json{{"kafka_offset", 1}})})
            .starts_with("Failed to parse the following Kafka partition value in the provided offsets: '4294967296'"));
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"offset", 1}})}) ==
        "The offset for a sink connector should either be null or contain the key 'kafka_offset'");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", "1x"}})}) ==
        "Failed to parse the following Kafka offset value in the provided offsets: '1x'. Offset values for sink "
        "connectors need to be integers.");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", nullptr}})}) ==
        "Failed to parse the following Kafka offset value in the provided offsets: 'null'. Offset values for sink "
        "connectors need to be integers.");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", "+-1"}})})
            .starts_with("Failed to parse the following Kafka offset value"));
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", 0}}, json{{"kafka_offset", -3}})}) ==
        "Invalid negative Kafka offset value in the provided offsets: '-3'. Offset values for sink connectors need "
        "to be non-negative integers.");
  CHECK(error_of({entry({{"kafka_topic", "t"}, {"kafka_partition", -1}}, json{{"kafka_offset", 0}})}) ==
        "Invalid Kafka partition value in the provided offsets: '-1'. Partition values for sink connectors need to "
        "be non-negative integers.");
}

TEST_CASE("sink offsets: busy-group messages are Connect's") {
  CHECK(kc::herder::sink_group_busy_message("s", true).starts_with(
      "Failed to reset consumer group offsets for connector s either because its tasks haven't stopped completely "
      "yet or the connector was resumed before the request to reset its offsets could be successfully completed."));
  CHECK(kc::herder::sink_group_busy_message("s", false).starts_with(
      "Failed to alter consumer group offsets for connector s either because"));
}

TEST_CASE("client overrides: one group id rule for sinks") {
  using kc::runtime::sink_consumer_group_id;
  CHECK(sink_consumer_group_id("s", {}, {}) == "connect-s");
  CHECK(sink_consumer_group_id("s", {{"consumer.override.group.id", "mine"}}, {{"group.id", "w"}}) == "mine");
  CHECK(sink_consumer_group_id("s", {}, {{"group.id", "w"}}) == "w");
  CHECK(sink_consumer_group_id("s", {{"consumer.group.id", "not-an-override"}}, {}) == "connect-s");
}

TEST_CASE("client overrides: prefix stripping and the three policies") {
  using namespace kc::runtime;
  const std::map<std::string, std::string> conf{{"consumer.override.group.id", "g"},
                                                {"consumer.override.max.poll.records", "5"},
                                                {"producer.override.sasl.mechanism", "PLAIN"},
                                                {"admin.override.security.protocol", "SSL"},
                                                {"topics", "t"}};
  CHECK(connector_client_overrides(conf, kConsumerOverridePrefix) ==
        std::map<std::string, std::string>{{"group.id", "g"}, {"max.poll.records", "5"}});
  CHECK(override_violations(ClientOverridePolicy::All, conf).empty());

  auto none = override_violations(ClientOverridePolicy::None, conf);
  REQUIRE(none.size() == 4);
  CHECK(none[1].key == "consumer.override.group.id");
  CHECK(none[1].message == "The 'None' policy does not allow 'group.id' to be overridden in the connector configuration.");

  auto principal = override_violations(ClientOverridePolicy::Principal, conf);
  REQUIRE(principal.size() == 2);
  CHECK(principal[0].key == "consumer.override.group.id");
  CHECK(principal[1].key == "consumer.override.max.poll.records");
  CHECK(principal[1].message ==
        "The 'Principal' policy does not allow 'max.poll.records' to be overridden in the connector configuration.");

  CHECK(parse_client_override_policy("All") == ClientOverridePolicy::All);
  CHECK(parse_client_override_policy("PrincipalConnectorClientConfigOverridePolicy") == ClientOverridePolicy::Principal);
  CHECK(parse_client_override_policy("org.apache.kafka.connect.connector.policy.NoneConnectorClientConfigOverridePolicy") ==
        ClientOverridePolicy::None);
  CHECK_FALSE(parse_client_override_policy("all").has_value());
  CHECK_FALSE(parse_client_override_policy("Some").has_value());
}

TEST_CASE("client overrides: a refused override is a validation error naming the key") {
  const auto& reg = kc::connectors::PluginRegistry::builtin();
  std::map<std::string, std::string> conf{{"name", "s"},
                                          {"connector.class", "FileStreamSink"},
                                          {"topics", "t"},
                                          {"consumer.override.group.id", "g"}};
  CHECK_FALSE(kc::herder::reject_invalid_config(reg, nullptr, conf, kc::runtime::ClientOverridePolicy::All));
  auto err = kc::herder::reject_invalid_config(reg, nullptr, conf, kc::runtime::ClientOverridePolicy::None);
  REQUIRE(err);
  CHECK(err->http_status() == 400);
  CHECK(err->message.find("The 'None' policy does not allow 'group.id' to be overridden in the connector "
                          "configuration.") != std::string::npos);

  auto v = kc::herder::validate_resolved(reg, nullptr, conf);
  kc::herder::apply_override_policy(v, kc::runtime::ClientOverridePolicy::Principal, conf);
  CHECK(v.error_count == 1);
  auto it = std::find_if(v.configs.begin(), v.configs.end(),
                         [](const auto& c) { return c.definition.name == "consumer.override.group.id"; });
  REQUIRE(it != v.configs.end());
  CHECK(it->value.errors.size() == 1);
}
