// What the herder hands the group client and librdkafka for SASL: the
// sasl.jaas.config credentials, after ${...} config-provider references are
// resolved, become the group client's SaslSettings and librdkafka's
// sasl.username / sasl.password.

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "config/jaas.h"
#include "config/worker_config.h"
#include "worker/herder/herder_config.h"

using namespace kc::config;  // NOLINT

namespace {

Properties base() {
  return Properties{{"group.id", "g"},
                    {"config.storage.topic", "c"},
                    {"offset.storage.topic", "o"},
                    {"status.storage.topic", "s"}};
}

}  // namespace

TEST_CASE("herder config: JAAS resolved through config providers, translated for librdkafka", "[jaas][herder]") {
  const std::string dir = std::string(KC_BINARY_DIR) + "/config_sasl_test";
  std::filesystem::create_directories(dir);
  const std::string secrets = dir + "/secrets.properties";
  {
    std::ofstream f(secrets);
    f << "password=from-a-file\n";
  }
  auto p = base();
  p["security.protocol"] = "SASL_PLAINTEXT";
  p["sasl.mechanism"] = "SCRAM-SHA-256";
  p["config.providers"] = "file";
  p["config.providers.file.class"] = "org.apache.kafka.common.config.provider.FileConfigProvider";
  p["sasl.jaas.config"] = std::string(kScramLoginModule) + " required username=\"connect\" password=\"${file:" +
                          secrets + ":password}\";";
  p["producer.sasl.jaas.config"] =
      std::string(kScramLoginModule) + " required username=\"producer\" password=\"other\";";
  auto wc = WorkerConfig::from_properties(p);
  auto h = kc::herder::herder_config_from(wc, "localhost");
  REQUIRE(h.group_sasl.has_value());
  CHECK(h.group_sasl->mechanism == "SCRAM-SHA-256");
  CHECK(h.group_sasl->username == "connect");
  CHECK(h.group_sasl->password == "from-a-file");
  // librdkafka does not read JAAS: it gets sasl.username / sasl.password.
  CHECK(h.client_props.count("sasl.jaas.config") == 0);
  CHECK(h.client_props.at("sasl.username") == "connect");
  CHECK(h.client_props.at("sasl.password") == "from-a-file");
  CHECK(h.client_props.at("sasl.mechanism") == "SCRAM-SHA-256");
  CHECK(h.client_props.at("security.protocol") == "SASL_PLAINTEXT");
  CHECK(h.producer_overrides.count("sasl.jaas.config") == 0);
  CHECK(h.producer_overrides.at("sasl.username") == "producer");
  CHECK(h.producer_overrides.at("sasl.password") == "other");

  // A reference that cannot be resolved is an error naming the key.
  p["sasl.jaas.config"] =
      std::string(kScramLoginModule) + " required username=\"connect\" password=\"${file:" + dir + "/missing:pw}\";";
  auto wc2 = WorkerConfig::from_properties(p);
  try {
    (void)kc::herder::herder_config_from(wc2, "localhost");
    FAIL("expected a ConfigError");
  } catch (const ConfigError& e) {
    CHECK(std::string(e.what()).find("sasl.jaas.config") != std::string::npos);
  }

  // No SASL selected: no group credentials, nothing translated.
  auto h3 = kc::herder::herder_config_from(WorkerConfig::from_properties(base()), "localhost");
  CHECK_FALSE(h3.group_sasl.has_value());
  CHECK(h3.client_props.count("sasl.username") == 0);
}
