// WorkerConfig: defaults, typed values, error messages, warnings, derived
// values and client pass-through.
#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>

#include "config/option_importance.h"
#include "config/worker_config.h"

using namespace kc::config;

namespace {

Properties base() {
  return {{"group.id", "connect-cluster"},
          {"config.storage.topic", "connect-configs"},
          {"offset.storage.topic", "connect-offsets"},
          {"status.storage.topic", "connect-status"}};
}

std::string error_of(Properties p) {
  try {
    (void)WorkerConfig::from_properties(p);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

std::string error_with(const std::string& key, const std::string& value) {
  auto p = base();
  p[key] = value;
  return error_of(p);
}

}  // namespace

TEST_CASE("worker config: defaults from the reference", "[config]") {
  auto c = WorkerConfig::from_properties(base());
  CHECK(c.warnings().empty());
  CHECK(c.bootstrap_servers() == std::vector<std::string>{"localhost:9092"});
  CHECK(c.group_id() == "connect-cluster");
  CHECK(c.session_timeout_ms() == 10000);
  CHECK(c.heartbeat_interval_ms() == 3000);
  CHECK(c.rebalance_timeout_ms() == 60000);
  CHECK(c.connect_protocol() == "sessioned");
  CHECK(c.scheduled_rebalance_max_delay_ms() == 300000);
  CHECK(c.worker_sync_timeout_ms() == 3000);
  CHECK(c.worker_unsync_backoff_ms() == 300000);
  CHECK(c.config_storage_replication_factor() == 3);
  CHECK(c.offset_storage_partitions() == 25);
  CHECK(c.offset_storage_replication_factor() == 3);
  CHECK(c.status_storage_partitions() == 5);
  CHECK(c.status_storage_replication_factor() == 3);
  CHECK(c.offset_flush_interval_ms() == 60000);
  CHECK(c.offset_flush_timeout_ms() == 5000);
  CHECK(c.task_shutdown_graceful_timeout_ms() == 5000);
  CHECK(c.listeners() == std::vector<std::string>{"http://:8083"});
  CHECK_FALSE(c.rest_advertised_host_name().has_value());
  CHECK_FALSE(c.rest_advertised_port().has_value());
  CHECK_FALSE(c.rest_advertised_listener().has_value());
  CHECK(c.plugin_path().empty());
  CHECK(c.client_id().empty());
  CHECK(c.request_timeout_ms() == 40000);
  CHECK(c.retry_backoff_ms() == 100);
  CHECK(c.log_level() == "info");
  CHECK(c.log_format() == "text");
  CHECK(c.get_bool("topic.creation.enable"));
  CHECK(c.get_int("inter.worker.key.ttl.ms") == 3600000);
  CHECK(c.is_null("inter.worker.key.size"));
}

TEST_CASE("worker config: typed values are parsed and trimmed", "[config]") {
  auto p = base();
  p["bootstrap.servers"] = " b1:9092 , b2:9093 ";
  p["session.timeout.ms"] = " +45000 ";
  p["connect.protocol"] = "COMPATIBLE";
  p["topic.creation.enable"] = "FALSE";
  p["offset.storage.partitions"] = "-1";
  p["plugin.path"] = "/a,/b";
  p["log.level"] = "Debug";
  auto c = WorkerConfig::from_properties(p);
  CHECK(c.bootstrap_servers() == std::vector<std::string>{"b1:9092", "b2:9093"});
  CHECK(c.session_timeout_ms() == 45000);
  CHECK(c.connect_protocol() == "compatible");
  CHECK_FALSE(c.get_bool("topic.creation.enable"));
  CHECK(c.offset_storage_partitions() == -1);
  CHECK(c.plugin_path() == std::vector<std::string>{"/a", "/b"});
  CHECK(c.log_level() == "debug");
}

TEST_CASE("worker config: each bad value names key, value and expectation", "[config]") {
  CHECK(error_with("session.timeout.ms", "abc") ==
        "session.timeout.ms: 'abc' is not an integer (expected int, ms, 1..2147483647)");
  CHECK(error_with("session.timeout.ms", "0") ==
        "session.timeout.ms: '0' is out of range (expected int, ms, 1..2147483647)");
  CHECK(error_with("session.timeout.ms", "99999999999") ==
        "session.timeout.ms: '99999999999' is out of range (expected int, ms, 1..2147483647)");
  CHECK(error_with("offset.flush.interval.ms", "1.5") ==
        "offset.flush.interval.ms: '1.5' is not a long (expected long, ms, 0..9223372036854775807)");
  CHECK(error_with("config.storage.replication.factor", "0") ==
        "config.storage.replication.factor: '0' is out of range (expected short, -1 or 1..32767)");
  CHECK(error_with("offset.storage.replication.factor", "x") ==
        "offset.storage.replication.factor: 'x' is not a short (expected short, -1 or 1..32767)");
  CHECK(error_with("status.storage.partitions", "-2") ==
        "status.storage.partitions: '-2' is out of range (expected int, -1 or 1..2147483647)");
  CHECK(error_with("connect.protocol", "cooperative") ==
        "connect.protocol: 'cooperative' is not a valid value (expected string, one of eager|compatible|sessioned)");
  CHECK(error_with("topic.creation.enable", "yes") ==
        "topic.creation.enable: 'yes' is not a boolean (expected boolean, true|false)");
  CHECK(error_with("rest.advertised.port", "70000") ==
        "rest.advertised.port: '70000' is out of range (expected int, 0..65535)");
  CHECK(error_with("group.id", "  ") == "group.id: '  ' is empty (expected string, non-empty)");
  CHECK(error_with("listeners", "ftp://:21") ==
        "listeners: 'ftp://:21' is not a listener (expected list of SCHEME://[HOST]:PORT, scheme http or https)");
  CHECK(error_with("listeners", "http://host") ==
        "listeners: 'http://host' is not a listener (expected list of SCHEME://[HOST]:PORT, scheme http or https)");
  CHECK(error_with("log.format", "xml") == "log.format: 'xml' is not a valid value (expected string, one of text|json)");
}

TEST_CASE("worker config: required options", "[config]") {
  for (const char* key : {"group.id", "config.storage.topic", "offset.storage.topic", "status.storage.topic"}) {
    auto p = base();
    p.erase(key);
    CHECK(error_of(p) == std::string(key) + ": missing required option (expected string, non-empty)");
  }
}

TEST_CASE("worker config: cross-checks", "[config]") {
  auto p = base();
  p["heartbeat.interval.ms"] = "10000";
  CHECK(error_of(p) == "heartbeat.interval.ms: '10000' must be lower than session.timeout.ms (10000)");
  p = base();
  p["status.storage.topic"] = "connect-offsets";
  CHECK(error_of(p).find("must be three different topics") != std::string::npos);
  p = base();
  p["inter.worker.signature.algorithm"] = "HmacSHA512";
  CHECK(error_of(p).starts_with("inter.worker.signature.algorithm: 'HmacSHA512'"));
  p = base();
  p["session.timeout.ms"] = "5000";
  p["heartbeat.interval.ms"] = "1000";
  auto c = WorkerConfig::from_properties(p);
  REQUIRE(c.warnings().size() == 1);
  CHECK(c.warnings()[0].find("session.timeout.ms 5000 is outside") != std::string::npos);
}

TEST_CASE("worker config: unknown keys are warnings, pass-through prefixes are not", "[config]") {
  auto p = base();
  p["foo.bar"] = "1";
  p["sesion.timeout.ms"] = "1";
  p["producer.acks"] = "all";
  p["key.converter.schemas.enable"] = "false";
  p["ssl.truststore.location"] = "/x";
  auto c = WorkerConfig::from_properties(p);
  CHECK(c.warnings() == std::vector<std::string>{"unknown option 'foo.bar' is ignored",
                                                 "unknown option 'sesion.timeout.ms' is ignored (did you mean "
                                                 "'session.timeout.ms'?)"});
  CHECK(c.originals_with_prefix("key.converter.") == std::map<std::string, std::string>{{"schemas.enable", "false"}});
}

TEST_CASE("worker config: client pass-through", "[config]") {
  auto p = base();
  p["bootstrap.servers"] = "b1:9092,b2:9092";
  p["security.protocol"] = "sasl_ssl";
  p["sasl.mechanism"] = "PLAIN";
  p["sasl.username"] = "u";
  p["sasl.password"] = "pw";  // SASL_* needs both (or sasl.jaas.config)
  // TLS files are checked at startup: name one that exists (its content is
  // read by the group client, not here).
  const std::string ca = std::string(KC_BINARY_DIR) + "/pass-through-ca.pem";
  std::ofstream(ca) << "placeholder\n";
  p["ssl.ca.location"] = ca;
  p["producer.linger.ms"] = "5";
  p["producer.sasl.username"] = "pu";
  p["consumer.max.poll.records"] = "10";
  p["admin.request.timeout.ms"] = "9000";
  p["admin.listeners"] = "http://:8084";
  p["session.timeout.ms"] = "30000";
  auto c = WorkerConfig::from_properties(p);
  auto common = c.common_client_config();
  CHECK(common == std::map<std::string, std::string>{{"bootstrap.servers", "b1:9092,b2:9092"},
                                                     {"security.protocol", "SASL_SSL"},
                                                     {"sasl.mechanism", "PLAIN"},
                                                     {"sasl.password", "pw"},
                                                     {"sasl.username", "u"},
                                                     {"ssl.ca.location", ca}});
  auto prod = c.producer_config();
  CHECK(prod.at("linger.ms") == "5");
  CHECK(prod.at("sasl.username") == "pu");  // the prefixed override wins
  CHECK(prod.count("max.poll.records") == 0);
  CHECK(prod.count("session.timeout.ms") == 0);
  auto cons = c.consumer_config();
  CHECK(cons.at("max.poll.records") == "10");
  CHECK(cons.at("sasl.username") == "u");
  auto admin = c.admin_config();
  CHECK(admin.at("request.timeout.ms") == "9000");
  CHECK(admin.count("listeners") == 0);  // admin.listeners is a worker option
}

TEST_CASE("worker config: advertised URL and worker id", "[config]") {
  auto c = WorkerConfig::from_properties(base());
  CHECK(c.advertised_url("w1") == "http://w1:8083/");
  CHECK(c.worker_id("w1") == "w1:8083");
  CHECK(c.group_client_id("w1") == "connect-w1:8083");
  CHECK_FALSE(c.advertised_url().empty());

  auto p = base();
  p["listeners"] = "http://10.0.0.1:8083, HTTPS://myhost:8443";
  p["rest.advertised.listener"] = "https";
  p["client.id"] = "me";
  c = WorkerConfig::from_properties(p);
  CHECK(c.parsed_listeners().size() == 2);
  CHECK(c.parsed_listeners()[1].scheme == "https");
  CHECK(c.advertised_url("w1") == "https://myhost:8443/");
  CHECK(c.group_client_id("w1") == "me");

  p["rest.advertised.host.name"] = "public.example";
  p["rest.advertised.port"] = "443";
  c = WorkerConfig::from_properties(p);
  CHECK(c.advertised_url("w1") == "https://public.example:443/");
  CHECK(c.worker_id("w1") == "public.example:443");

  p = base();
  p["listeners"] = "http://[::1]:8083";
  c = WorkerConfig::from_properties(p);
  CHECK(c.advertised_url("w1") == "http://[::1]:8083/");
}

TEST_CASE("worker config: the README option table matches the declaration", "[config]") {
  std::ifstream in(KC_SOURCE_DIR "/config/README.md");
  REQUIRE(in.good());
  std::string readme((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(readme.find(options_markdown()) != std::string::npos);
}

TEST_CASE("worker config: from_file", "[config]") {
  const std::string path = KC_BINARY_DIR "/test_worker_config.properties";
  {
    std::ofstream out(path);
    out << "# sample\ngroup.id = g\nconfig.storage.topic: c\noffset.storage.topic o\nstatus.storage.topic=s\\\n"
           "  tatus\nunknown.key=1\n";
  }
  auto c = WorkerConfig::from_file(path);
  CHECK(c.status_storage_topic() == "status");
  CHECK(c.warnings().size() == 1);
}

TEST_CASE("worker config: topic tracking keys (Connect's WorkerConfig)", "[config]") {
  auto c = WorkerConfig::from_properties(base());
  CHECK(c.topic_tracking_enable());
  CHECK(c.topic_tracking_allow_reset());

  auto p = base();
  p["topic.tracking.enable"] = " False ";
  p["topic.tracking.allow.reset"] = "FALSE";
  c = WorkerConfig::from_properties(p);
  CHECK_FALSE(c.topic_tracking_enable());
  CHECK_FALSE(c.topic_tracking_allow_reset());

  // Reset may be disallowed while tracking stays on (Connect checks them apart).
  p["topic.tracking.enable"] = "true";
  c = WorkerConfig::from_properties(p);
  CHECK(c.topic_tracking_enable());
  CHECK_FALSE(c.topic_tracking_allow_reset());

  CHECK(error_with("topic.tracking.enable", "off") ==
        "topic.tracking.enable: 'off' is not a boolean (expected boolean, true|false)");
  CHECK(error_with("topic.tracking.allow.reset", "1") ==
        "topic.tracking.allow.reset: '1' is not a boolean (expected boolean, true|false)");
  CHECK(error_with("topic.tracking.allow.reset", "") ==
        "topic.tracking.allow.reset: '' is not a boolean (expected boolean, true|false)");
}

TEST_CASE("worker config: scheduled.rebalance.static.expiry.immediate (ours) is on by default", "[config]") {
  CHECK(WorkerConfig::from_properties(base()).scheduled_rebalance_static_expiry_immediate());
  auto p = base();
  p["scheduled.rebalance.static.expiry.immediate"] = "false";
  CHECK_FALSE(WorkerConfig::from_properties(p).scheduled_rebalance_static_expiry_immediate());
  CHECK(error_with("scheduled.rebalance.static.expiry.immediate", "yes") ==
        "scheduled.rebalance.static.expiry.immediate: 'yes' is not a boolean (expected boolean, true|false)");
}

TEST_CASE("worker config: producer.shared (ours) is a worker option, not a producer setting", "[config]") {
  auto c = WorkerConfig::from_properties(base());
  CHECK_FALSE(c.producer_shared());

  auto p = base();
  p["producer.shared"] = " TRUE ";
  p["producer.linger.ms"] = "5";
  c = WorkerConfig::from_properties(p);
  CHECK(c.producer_shared());
  CHECK(c.warnings().empty());
  // Not passed to librdkafka, which has no such property.
  auto prod = c.producer_config();
  CHECK(prod.count("shared") == 0);
  CHECK(prod.at("linger.ms") == "5");

  CHECK(error_with("producer.shared", "yes") == "producer.shared: 'yes' is not a boolean (expected boolean, true|false)");
}

TEST_CASE("worker config: validate reports every problem at once, not the first", "[config]") {
  Properties p = base();
  p.erase("group.id");                      // missing required
  p["session.timeout.ms"] = "abc";          // wrong type
  p["rest.advertised.port"] = "70000";      // out of range
  p["offset.storage.topic"] = "connect-configs";  // conflicting: same topic twice
  p["listeners"] = "ftp://:21,http://:8083,http://nohost";  // two bad listeners
  p["sesion.timeout.ms"] = "1";             // unknown: a warning with a suggestion
  auto r = WorkerConfig::validate(p);
  CHECK_FALSE(r.config.has_value());
  CHECK(r.errors == std::vector<std::string>{
                        "group.id: missing required option (expected string, non-empty)",
                        "session.timeout.ms: 'abc' is not an integer (expected int, ms, 1..2147483647)",
                        "rest.advertised.port: '70000' is out of range (expected int, 0..65535)",
                        "listeners: 'ftp://:21' is not a listener (expected list of SCHEME://[HOST]:PORT, scheme http "
                        "or https)",
                        "listeners: 'http://nohost' is not a listener (expected list of SCHEME://[HOST]:PORT, scheme "
                        "http or https)",
                        "config.storage.topic, offset.storage.topic and status.storage.topic must be three different "
                        "topics (got 'connect-configs', 'connect-configs', 'connect-status')"});
  CHECK(r.warnings ==
        std::vector<std::string>{"unknown option 'sesion.timeout.ms' is ignored (did you mean 'session.timeout.ms'?)"});
  // from_properties throws all of them, one per line.
  const std::string all = error_of(p);
  CHECK(std::count(all.begin(), all.end(), '\n') == 5);
}

TEST_CASE("worker config: a cross-check is skipped when an option it reads is already bad", "[config]") {
  auto p = base();
  p["session.timeout.ms"] = "x";
  p["heartbeat.interval.ms"] = "20000";  // would be >= the default session timeout, but that one is bad
  auto r = WorkerConfig::validate(p);
  CHECK(r.errors == std::vector<std::string>{"session.timeout.ms: 'x' is not an integer (expected int, ms, "
                                             "1..2147483647)"});
  p["session.timeout.ms"] = "10000";
  r = WorkerConfig::validate(p);
  CHECK(r.errors == std::vector<std::string>{"heartbeat.interval.ms: '20000' must be lower than session.timeout.ms "
                                             "(10000)"});
}

TEST_CASE("worker config: did-you-mean over the declared names and the pass-through prefixes", "[config]") {
  CHECK(suggest_option("sesion.timeout.ms") == "session.timeout.ms");
  CHECK(suggest_option("group.idd") == "group.id");
  CHECK(suggest_option("offset.storage.topics") == "offset.storage.topic");
  CHECK(suggest_option("consumr.max.poll.records") == "consumer.max.poll.records");
  CHECK(suggest_option("prodcer.acks") == "producer.acks");
  CHECK(suggest_option("completely.unrelated.thing") == std::nullopt);
  CHECK(suggest_option("x") == std::nullopt);
  // Keys clients and plugins read themselves are never unknown.
  for (const char* k : {"producer.acks", "consumer.max.poll.records", "admin.request.timeout.ms",
                        "ssl.truststore.location", "sasl.mechanism", "key.converter.schemas.enable",
                        "config.providers.file.class", "listeners.https.ssl.keystore.location"}) {
    CHECK(is_pass_through_key(k));
  }
  CHECK_FALSE(is_pass_through_key("sesion.timeout.ms"));
}

TEST_CASE("worker config: a properties path that is a directory or missing says so", "[config]") {
  auto message = [](const std::string& path) {
    try {
      (void)load_properties_file(path);
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(message(KC_BINARY_DIR) == std::string(KC_BINARY_DIR) + ": is a directory, not a properties file");
  const std::string missing = KC_BINARY_DIR "/no-such-dir/worker.properties";
  CHECK(message(missing).starts_with(missing + ": cannot open the properties file: "));
}

TEST_CASE("option_importance: every name it lists is a declared option", "[config][reference]") {
  // The lists live next to the table; a renamed option must not silently become Low.
  for (const char* n : {"bootstrap.servers", "group.id", "config.storage.topic", "key.converter",
                        "exactly.once.source.support"}) {
    INFO(n);
    REQUIRE(find_option(n) != nullptr);
    CHECK(option_importance(*find_option(n)) == OptionImportance::High);
  }
  REQUIRE(find_option("security.protocol") != nullptr);
  CHECK(option_importance(*find_option("security.protocol")) == OptionImportance::Medium);
  REQUIRE(find_option("log.format") != nullptr);
  CHECK(option_importance(*find_option("log.format")) == OptionImportance::Low);
  int high = 0, medium = 0;
  for (const auto& o : worker_options()) {
    high += option_importance(o) == OptionImportance::High;
    medium += option_importance(o) == OptionImportance::Medium;
  }
  CHECK(high == 11);    // every High name is declared (none misspelled)
  CHECK(medium == 17);  // the same for Medium
  CHECK(std::string(to_string(OptionImportance::Medium)) == "medium");
}

TEST_CASE("worker config: worker.labels parsed, bad syntax names the key", "[config][labels]") {
  auto p = base();
  CHECK(WorkerConfig::from_properties(p).worker_labels().empty());
  p["worker.labels"] = "host=a, zone=z1,disk=ssd";
  const auto labels = WorkerConfig::from_properties(p).worker_labels();
  CHECK(kc::format_labels(labels) == "disk=ssd,host=a,zone=z1");
  p["worker.labels"] = "host";
  CHECK(error_of(p).find("worker.labels") != std::string::npos);
  p["worker.labels"] = "host=a,host=b";
  CHECK(error_of(p).find("given twice") != std::string::npos);
}
