// Secrets out of sight (issue 13 item 4): the one rule of which keys are
// secret (common/secrets.h), and its users: the worker config dump and
// errors, connector validation (PUT .../config/validate and the 400 of an
// invalid create), client override refusals, JSON parse errors, and
// librdkafka's config errors.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "common/secrets.h"
#include "config/worker_config.h"
#include "worker/connectors/config_def.h"
#include "worker/plugins/registry.h"
#include "worker/herder/plugin_config.h"
#include "worker/providers/config_provider.h"
#include "worker/rest/json_codec.h"
#include "worker/storage/kafka_client.h"

namespace fs = std::filesystem;
using kc::secrets::is_secret_key;
using Map = std::map<std::string, std::string>;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const kc::connectors::ConfigEntry& entry(const kc::connectors::ConfigValidation& v, const std::string& key) {
  for (const auto& e : v.configs)
    if (e.definition.name == key) return e;
  FAIL("no validate entry for " << key);
  return v.configs.front();
}

/// Every error text of a validation, joined.
std::string all_errors(const kc::connectors::ConfigValidation& v) {
  std::string out;
  for (const auto& e : v.configs)
    for (const auto& m : e.value.errors) out += m + "\n";
  return out;
}

}  // namespace

TEST_CASE("Kafka's and librdkafka's password keys are secret under any client prefix", "[secrets]") {
  for (const char* k : {"ssl.key.password", "ssl.keystore.password", "ssl.truststore.password", "sasl.jaas.config",
                        "sasl.password", "ssl.keystore.key", "ssl.key.pem", "sasl.oauthbearer.client.secret",
                        "producer.ssl.key.password", "consumer.sasl.jaas.config", "admin.sasl.password",
                        "listeners.https.ssl.key.password", "listeners.https.ssl.keystore.password",
                        "producer.override.sasl.jaas.config", "consumer.override.sasl.password",
                        "admin.override.ssl.truststore.password", "listener.name.sasl_ssl.plain.sasl.jaas.config",
                        "value.converter.basic.auth.user.info", "connection.password", "database.password",
                        "aws.secret", "SSL.KEY.PASSWORD", "password"}) {
    INFO(k);
    CHECK(is_secret_key(k));
  }
  for (const char* k : {"ssl.keystore.location", "ssl.truststore.type", "sasl.mechanism", "sasl.username",
                        "security.protocol", "bootstrap.servers", "connection.user", "connection.url",
                        "password.encoder.iterations", "xsasl.jaas.config", "mypassword.file", "topics", ""}) {
    INFO(k);
    CHECK_FALSE(is_secret_key(k));
  }
}

TEST_CASE("redact, secret_values, scrub and describe_config hide exactly the secrets", "[secrets]") {
  using namespace kc::secrets;
  CHECK(redact("sasl.password", "pw-1234") == "[hidden]");
  CHECK(redact("sasl.username", "alice") == "alice");
  // A caller's predicate replaces the name rule (e.g. a ConfigDef's PASSWORD key).
  CHECK(redact("db.key", "k-9876", [](std::string_view k) { return k == "db.key"; }) == "[hidden]");
  CHECK(redact("sasl.password", "pw-1234", [](std::string_view) { return false; }) == "pw-1234");

  const Map config{{"sasl.password", "pw-long-secret"}, {"ssl.key.password", "pw-long"}, {"group.id", "g-1"},
                   {"producer.sasl.password", "abc"}};
  const auto red = redact_config(config);
  CHECK(red.at("sasl.password") == "[hidden]");
  CHECK(red.at("producer.sasl.password") == "[hidden]");
  CHECK(red.at("group.id") == "g-1");
  CHECK(red.size() == config.size());

  // Longest first (so "pw-long-secret" is replaced whole, not as "[hidden]-secret");
  // "abc" is too short to search for.
  const auto values = secret_values(config);
  REQUIRE(values.size() == 2);
  CHECK(values[0] == "pw-long-secret");
  CHECK(values[1] == "pw-long");
  CHECK(scrub("a pw-long-secret b pw-long c pw-long-secret", values) == "a [hidden] b [hidden] c [hidden]");
  CHECK(scrub("abc stays: too short to search", values) == "abc stays: too short to search");
  CHECK(scrub("nothing here", {}) == "nothing here");

  const auto dump = describe_config("x values", config);
  CHECK(dump == "x values:\n\tgroup.id = g-1\n\tproducer.sasl.password = [hidden]\n\tsasl.password = [hidden]"
                "\n\tssl.key.password = [hidden]");
}

TEST_CASE("the worker config dump hides worker password keys and shows the rest", "[secrets][config]") {
  kc::config::Properties props{{"group.id", "grp"},
                               {"config.storage.topic", "c"},
                               {"offset.storage.topic", "o"},
                               {"status.storage.topic", "s"},
                               {"sasl.password", "wsec-sasl-1"},
                               {"ssl.key.password", "wsec-key-2"},
                               {"producer.ssl.keystore.password", "wsec-ks-3"},
                               {"consumer.sasl.jaas.config", "wsec-jaas-4"},
                               {"listeners.https.ssl.key.password", "wsec-https-5"},
                               {"sasl.username", "alice"}};
  auto wc = kc::config::WorkerConfig::from_properties(props);
  const std::string dump = wc.describe();
  for (const char* s : {"wsec-sasl-1", "wsec-key-2", "wsec-ks-3", "wsec-jaas-4", "wsec-https-5"}) {
    INFO(s);
    CHECK_FALSE(contains(dump, s));
  }
  CHECK(contains(dump, "\n\tsasl.password = [hidden]"));
  CHECK(contains(dump, "\n\tproducer.ssl.keystore.password = [hidden]"));
  CHECK(contains(dump, "\n\tlisteners.https.ssl.key.password = [hidden]"));
  CHECK(contains(dump, "\n\tsasl.username = alice"));
  CHECK(contains(dump, "\n\tgroup.id = grp"));
  CHECK(contains(dump, "\n\tsession.timeout.ms = 10000"));  // defaults are shown too, as Connect does
  CHECK(contains(dump, "\n\trest.advertised.host.name = null"));
  CHECK(kc::config::is_secret_option("admin.ssl.key.password"));
  CHECK_FALSE(kc::config::is_secret_option("group.id"));
  // The clients still get the real values.
  CHECK(wc.common_client_config().at("ssl.key.password") == "wsec-key-2");
  // Kafka's keystore password has no PEM meaning; librdkafka never gets it.
  CHECK(wc.producer_config().count("ssl.keystore.password") == 0);
  CHECK(wc.common_client_config().at("sasl.password") == "wsec-sasl-1");
}

TEST_CASE("validate shows PASSWORD values as [hidden] and never quotes a secret in an error", "[secrets][validate]") {
  using namespace kc::connectors;
  ConfigKeyDef pw = config_key("db.pass", ConfigType::Password, false, std::nullopt, ConfigImportance::High, "pw");
  pw.check = [](const std::string& v) -> std::optional<std::string> {
    if (v.size() < 20) return std::string("Password too short");
    return std::nullopt;
  };
  ConfigKeyDef dflt = config_key("db.default.pass", ConfigType::Password, false, "dflt-secret-9", ConfigImportance::Low, "pw");
  ConfigKeyDef user = config_key("db.user", ConfigType::String, false, std::nullopt, ConfigImportance::High, "user");
  ConfigKeyDef n = config_key("batch", ConfigType::Int, false, "1", ConfigImportance::Low, "n");
  // A rule that quotes every value it saw, like a careless plugin.
  ConfigRule echo = [](const Map& c, ConfigErrors& e) {
    for (const auto& [k, v] : c) e["db.user"].push_back("saw " + k + "=" + v);
  };
  const Map config{{"db.pass", "short-pw-77"}, {"db.user", "alice"}, {"batch", "many"},
                   {"producer.override.sasl.password", "ovr-pw-55"}};
  auto v = validate_config("C", {pw, dflt, user, n}, echo, config);
  CHECK(entry(v, "db.pass").value.value == std::optional<std::string>("[hidden]"));
  CHECK(entry(v, "db.default.pass").value.value == std::optional<std::string>("[hidden]"));  // its default too
  CHECK(entry(v, "db.user").value.value == std::optional<std::string>("alice"));
  CHECK(entry(v, "batch").value.value == std::optional<std::string>("many"));
  REQUIRE(entry(v, "db.pass").value.errors.size() == 1);
  CHECK(entry(v, "db.pass").value.errors[0] ==
        "Invalid value [hidden] for configuration db.pass: Password too short");  // Connect's ConfigException text
  CHECK(entry(v, "batch").value.errors.at(0) == "Invalid value many for configuration batch: Not a number of type INT");
  const std::string errors = all_errors(v) + v.invalid_message();
  CHECK_FALSE(contains(errors, "short-pw-77"));
  CHECK_FALSE(contains(errors, "ovr-pw-55"));
  CHECK(contains(errors, "saw db.user=alice"));
  CHECK(contains(errors, "saw db.pass=[hidden]"));
  CHECK(is_secret_connector_key({pw}, "db.pass"));
  CHECK(is_secret_connector_key({}, "producer.override.sasl.jaas.config"));
  CHECK_FALSE(is_secret_connector_key({pw}, "db.user"));
}

TEST_CASE("the PostgreSQL sink's connection.password reads [hidden] in validate and in the 400 of a create",
          "[secrets][validate]") {
  const auto& registry = kc::connectors::PluginRegistry::builtin();
  const Map config{{"name", "pg"},
                   {"connector.class", "PostgresSink"},
                   {"topics", "t"},
                   {"connection.url", "postgresql://127.0.0.1:1/db"},
                   {"connection.password", "pg-secret-123"},
                   {"batch.size", "0"}};
  auto v = kc::herder::validate_resolved(registry, nullptr, config);
  CHECK(entry(v, "connection.password").value.value == std::optional<std::string>("[hidden]"));
  CHECK(entry(v, "connection.url").value.value == config.at("connection.url"));
  CHECK(v.error_count == 1);
  auto rest = kc::herder::to_rest(v);
  const std::string body = kc::rest::to_json(rest).dump();
  CHECK_FALSE(contains(body, "pg-secret-123"));
  CHECK(contains(body, "[hidden]"));
  auto rejected = kc::herder::reject_invalid_config(registry, nullptr, config);
  REQUIRE(rejected);
  CHECK(contains(rejected->message, "Invalid value 0 for configuration batch.size"));
  CHECK_FALSE(contains(rejected->message, "pg-secret-123"));
  // The secret rule of a connector config comes from its class's ConfigDef.
  auto secret = registry.secret_predicate(config);
  CHECK(secret("connection.password"));
  CHECK_FALSE(secret("connection.user"));
  CHECK(registry.secret_predicate(config, {"connection.user"})("connection.user"));
}

TEST_CASE("refused client overrides and provider-resolved values are not echoed by validation", "[secrets][validate]") {
  const auto& registry = kc::connectors::PluginRegistry::builtin();
  Map config{{"name", "src"},
             {"connector.class", "SequenceSource"},
             {"topic", "t"},
             {"producer.override.sasl.jaas.config", "jaas-secret-42"},
             {"producer.override.acks", "all"}};
  auto v = kc::herder::validate_resolved(registry, nullptr, config);
  kc::herder::apply_override_policy(v, kc::runtime::ClientOverridePolicy::None, config);
  CHECK(v.error_count == 2);
  CHECK(entry(v, "producer.override.sasl.jaas.config").value.value == std::optional<std::string>("[hidden]"));
  CHECK(entry(v, "producer.override.acks").value.value == std::optional<std::string>("all"));
  CHECK_FALSE(contains(kc::rest::to_json(kc::herder::to_rest(v)).dump(), "jaas-secret-42"));

  // KIP-297: a value from a config provider is a secret wherever it lands.
  const auto dir = fs::temp_directory_path() / ("kc-secrets-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "s.properties") << "batch=provided-secret-31\n";
  auto t = kc::providers::ConfigTransformer::from_worker_config(
      {{"config.providers", "file"}, {"config.providers.file.class", "FileConfigProvider"}});
  REQUIRE(t);
  const std::string placeholder = "${file:" + (dir / "s.properties").string() + ":batch}";
  Map pg{{"name", "pg"},           {"connector.class", "PostgresSink"},
         {"topics", "t"},          {"connection.url", "postgresql://127.0.0.1:1/db"},
         {"batch.size", placeholder}, {"connection.password", placeholder}};
  auto pv = kc::herder::validate_resolved(registry, t->get(), pg);
  fs::remove_all(dir);
  CHECK(entry(pv, "batch.size").value.value == placeholder);  // as written
  CHECK(entry(pv, "connection.password").value.value == std::optional<std::string>("[hidden]"));
  REQUIRE(entry(pv, "batch.size").value.errors.size() == 1);
  CHECK(entry(pv, "batch.size").value.errors[0] ==
        "Invalid value [hidden] for configuration batch.size: Not a number of type INT");
  CHECK_FALSE(contains(kc::rest::to_json(kc::herder::to_rest(pv)).dump(), "provided-secret-31"));
}

TEST_CASE("a request body that is not JSON is refused without quoting what the parser read", "[secrets][rest]") {
  const std::string tab = "{\"name\": \"c\", \"config\": {\"connection.password\": \"body-secret-88\t\"}}";
  const std::string cut = "{\"name\": \"c\", \"config\": {\"connection.password\": \"body-secret-88";
  for (const auto& body : {tab, cut}) {
    auto r = kc::rest::parse_create_request(body);
    REQUIRE_FALSE(r);
    CHECK(r.error().http_status() == 400);
    CHECK(contains(r.error().message, "Invalid JSON in request body"));
    CHECK(contains(r.error().message, "line 1, column"));  // the position stays
    CHECK_FALSE(contains(r.error().message, "body-secret-88"));
    auto p = kc::rest::parse_put_config_request("c", body);
    REQUIRE_FALSE(p);
    CHECK_FALSE(contains(p.error().message, "body-secret-88"));
  }
}

TEST_CASE("librdkafka's config errors do not quote a secret value", "[secrets][storage]") {
  // librdkafka quotes a refused enum value ("Invalid value \"...\" for
  // configuration property \"compression.codec\""); text equal to a secret
  // must not come out.
  auto r = kc::storage::make_client(RD_KAFKA_PRODUCER,
                                    {{"bootstrap.servers", "127.0.0.1:1"}, {"sasl.password", "kafka-secret-64"}},
                                    {{"compression.type", "kafka-secret-64"}});
  REQUIRE_FALSE(r);
  CHECK(r.error().field == "compression.type");
  CHECK(contains(r.error().message, "[hidden]"));
  CHECK_FALSE(contains(r.error().message, "kafka-secret-64"));
  // A non-secret refused value is still named, so the error stays useful.
  auto plain = kc::storage::make_client(RD_KAFKA_PRODUCER, {{"bootstrap.servers", "127.0.0.1:1"}},
                                        {{"compression.type", "soon"}});
  REQUIRE_FALSE(plain);
  CHECK(contains(plain.error().message, "soon"));
}
