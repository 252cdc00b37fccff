// config/security_config: reading TLS settings under Kafka's and librdkafka's
// names (PEM only, files checked at startup), the translation to librdkafka's
// names for every librdkafka client, and the herder's group TLS options.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include "config/security_config.h"
#include "config/worker_config.h"
#include "worker/herder/herder_config.h"

using kc::config::ConfigError;
using kc::config::Properties;
using kc::config::librdkafka_ssl_config;
using kc::config::tls_settings_from;

namespace {

/// A scratch directory with a few files (their content does not matter here:
/// the config layer checks that they exist and can be read).
struct Files {
  std::string dir;
  Files() {
    char tmpl[] = "/tmp/kc-seccfg-XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    dir = tmpl;
    for (const char* f : {"ca.pem", "keystore.pem", "cert.pem", "key.pem"}) std::ofstream(dir + "/" + f) << "x\n";
  }
  [[nodiscard]] std::string path(const std::string& f) const { return dir + "/" + f; }
};

Properties base(const std::string& protocol = "SSL") { return {{"security.protocol", protocol}}; }

std::string error_of(const Properties& p) {
  try {
    (void)tls_settings_from(p);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("TLS settings: off unless security.protocol is SSL or SASL_SSL", "[security][config]") {
  CHECK_FALSE(tls_settings_from({}).enabled);
  CHECK_FALSE(tls_settings_from(base("PLAINTEXT")).enabled);
  CHECK_FALSE(tls_settings_from(base("SASL_PLAINTEXT")).enabled);
  CHECK(tls_settings_from(base("SSL")).enabled);
  CHECK(tls_settings_from(base("sasl_ssl")).enabled);
  // Off: ssl.* are not looked at (Kafka ignores them too), so a JKS leftover is fine.
  auto p = base("PLAINTEXT");
  p["ssl.truststore.type"] = "JKS";
  p["ssl.truststore.location"] = "/nonexistent.jks";
  CHECK_NOTHROW(tls_settings_from(p));
}

TEST_CASE("TLS settings: Kafka's PEM names", "[security][config]") {
  Files f;
  auto p = base();
  p["ssl.truststore.type"] = "PEM";
  p["ssl.truststore.location"] = f.path("ca.pem");
  p["ssl.keystore.type"] = "pem";
  p["ssl.keystore.location"] = f.path("keystore.pem");
  p["ssl.key.password"] = "pw";
  auto t = tls_settings_from(p);
  CHECK(t.enabled);
  CHECK(t.ca.file == f.path("ca.pem"));
  CHECK(t.ca.key == "ssl.truststore.location");
  // One keystore file gives both the certificate chain and the key.
  CHECK(t.certificate.file == f.path("keystore.pem"));
  CHECK(t.key.file == f.path("keystore.pem"));
  CHECK(t.key.key == "ssl.keystore.location");
  CHECK(t.key_password == "pw");
  CHECK(t.verify_hostname);  // https by default

  auto inline_p = base("SASL_SSL");
  inline_p["ssl.truststore.certificates"] = "-----BEGIN CERTIFICATE-----\nA\n-----END CERTIFICATE-----";
  inline_p["ssl.keystore.certificate.chain"] = "CHAIN";
  inline_p["ssl.keystore.key"] = "KEY";
  inline_p["ssl.endpoint.identification.algorithm"] = "";
  auto i = tls_settings_from(inline_p);
  CHECK(i.ca.pem == inline_p["ssl.truststore.certificates"]);
  CHECK(i.ca.file.empty());
  CHECK(i.certificate.pem == "CHAIN");
  CHECK(i.key.pem == "KEY");
  CHECK(i.key.key == "ssl.keystore.key");
  CHECK_FALSE(i.verify_hostname);
}

TEST_CASE("TLS settings: librdkafka's names", "[security][config]") {
  Files f;
  auto p = base();
  p["ssl.ca.location"] = f.path("ca.pem");
  p["ssl.certificate.location"] = f.path("cert.pem");
  p["ssl.key.location"] = f.path("key.pem");
  p["ssl.key.password"] = "pw";
  p["ssl.endpoint.identification.algorithm"] = "none";
  auto t = tls_settings_from(p);
  CHECK(t.ca.file == f.path("ca.pem"));
  CHECK(t.certificate.file == f.path("cert.pem"));
  CHECK(t.certificate.key == "ssl.certificate.location");
  CHECK(t.key.file == f.path("key.pem"));
  CHECK_FALSE(t.verify_hostname);
}

TEST_CASE("TLS settings: clear errors", "[security][config]") {
  Files f;
  SECTION("JKS and PKCS12 store types: only PEM is supported") {
    auto p = base();
    p["ssl.truststore.type"] = "JKS";
    CHECK_THAT(error_of(p), Catch::Contains("ssl.truststore.type: 'JKS' is not supported") &&
                                Catch::Contains("PEM only"));
    p = base();
    p["ssl.keystore.type"] = "PKCS12";
    CHECK_THAT(error_of(p), Catch::Contains("ssl.keystore.type: 'PKCS12' is not supported"));
  }
  SECTION("a missing file names the key and the file") {
    auto p = base();
    p["ssl.truststore.location"] = f.path("missing.pem");
    CHECK(error_of(p) == "ssl.truststore.location: cannot read '" + f.path("missing.pem") +
                             "': No such file or directory");
    p = base();
    p["ssl.key.location"] = f.path("key.pem");
    p["ssl.certificate.location"] = f.path("nope.crt");
    CHECK_THAT(error_of(p), Catch::StartsWith("ssl.certificate.location: cannot read '" + f.path("nope.crt")));
  }
  SECTION("a directory is not a PEM file") {
    auto p = base();
    p["ssl.ca.location"] = f.dir;
    CHECK_THAT(error_of(p), Catch::Contains("ssl.ca.location: '" + f.dir + "' is a directory"));
  }
  SECTION("the same thing from two keys") {
    auto p = base();
    p["ssl.truststore.location"] = f.path("ca.pem");
    p["ssl.ca.location"] = f.path("ca.pem");
    CHECK_THAT(error_of(p), Catch::Contains("ssl.truststore.location and ssl.ca.location both give the trusted CA"));
    p = base();
    p["ssl.keystore.location"] = f.path("keystore.pem");
    p["ssl.key.location"] = f.path("key.pem");
    CHECK_THAT(error_of(p), Catch::Contains("both give the client private key"));
  }
  SECTION("a certificate without a key, and the reverse") {
    auto p = base();
    p["ssl.keystore.certificate.chain"] = "CHAIN";
    CHECK_THAT(error_of(p), Catch::Contains("ssl.keystore.certificate.chain is set but no private key is"));
    p = base();
    p["ssl.key.location"] = f.path("key.pem");
    CHECK_THAT(error_of(p), Catch::Contains("ssl.key.location is set but no client certificate is"));
  }
  SECTION("unknown endpoint identification algorithm") {
    auto p = base();
    p["ssl.endpoint.identification.algorithm"] = "ldaps";
    CHECK_THAT(error_of(p), Catch::Contains("ssl.endpoint.identification.algorithm: 'ldaps' is not supported"));
  }
}

TEST_CASE("librdkafka translation of Kafka's ssl.* names", "[security][config]") {
  std::map<std::string, std::string> in = {
      {"ssl.truststore.type", "PEM"},
      {"ssl.truststore.location", "/ca.pem"},
      {"ssl.keystore.type", "PEM"},
      {"ssl.keystore.location", "/ks.pem"},
      {"ssl.keystore.password", "unused"},
      {"ssl.key.password", "pw"},
      {"ssl.endpoint.identification.algorithm", ""},
      {"ssl.enabled.protocols", "TLSv1.2,TLSv1.3"},
      {"ssl.cipher.suites", "ECDHE-RSA-AES128-GCM-SHA256"},
      {"acks", "all"},
  };
  auto out = librdkafka_ssl_config(in);
  const std::map<std::string, std::string> want = {
      {"ssl.ca.location", "/ca.pem"},
      {"ssl.certificate.location", "/ks.pem"},
      {"ssl.key.location", "/ks.pem"},
      {"ssl.key.password", "pw"},
      {"ssl.endpoint.identification.algorithm", "none"},
      {"ssl.cipher.suites", "ECDHE-RSA-AES128-GCM-SHA256"},
      {"acks", "all"},
  };
  CHECK(out == want);

  auto inl = librdkafka_ssl_config({{"ssl.truststore.certificates", "CA"},
                                    {"ssl.keystore.certificate.chain", "CHAIN"},
                                    {"ssl.keystore.key", "KEY"},
                                    {"ssl.endpoint.identification.algorithm", "https"}});
  CHECK(inl == std::map<std::string, std::string>{{"ssl.ca.pem", "CA"},
                                                  {"ssl.certificate.pem", "CHAIN"},
                                                  {"ssl.key.pem", "KEY"},
                                                  {"ssl.endpoint.identification.algorithm", "https"}});
  // librdkafka's own names pass unchanged and win over a Kafka name.
  auto both = librdkafka_ssl_config({{"ssl.ca.location", "/mine.pem"}, {"ssl.truststore.location", "/kafka.pem"}});
  CHECK(both == std::map<std::string, std::string>{{"ssl.ca.location", "/mine.pem"}});
}

TEST_CASE("WorkerConfig validates TLS at startup and hands librdkafka its names", "[security][config]") {
  Files f;
  Properties p = {{"group.id", "g"},
                  {"config.storage.topic", "c"},
                  {"offset.storage.topic", "o"},
                  {"status.storage.topic", "s"},
                  {"security.protocol", "SSL"},
                  {"ssl.truststore.type", "PEM"},
                  {"ssl.truststore.location", f.path("ca.pem")},
                  {"producer.ssl.truststore.location", f.path("cert.pem")}};
  auto wc = kc::config::WorkerConfig::from_properties(p);
  auto common = wc.common_client_config();
  CHECK(common.at("ssl.ca.location") == f.path("ca.pem"));
  CHECK(common.count("ssl.truststore.location") == 0);
  CHECK(common.count("ssl.truststore.type") == 0);
  CHECK(common.at("security.protocol") == "SSL");
  CHECK(wc.producer_config().at("ssl.ca.location") == f.path("cert.pem"));
  CHECK(wc.consumer_config().at("ssl.ca.location") == f.path("ca.pem"));

  auto hc = kc::herder::herder_config_from(wc, "localhost");
  CHECK(hc.client_props.at("ssl.ca.location") == f.path("ca.pem"));
  CHECK(hc.client_props.count("ssl.truststore.location") == 0);
  CHECK(hc.producer_overrides.at("ssl.ca.location") == f.path("cert.pem"));
  CHECK(hc.producer_overrides.count("ssl.truststore.location") == 0);
  REQUIRE(hc.group_tls.has_value());
  CHECK(hc.group_tls->ca.file == f.path("ca.pem"));
  CHECK(hc.group_tls->ca.label == "ssl.truststore.location");
  CHECK(hc.group_tls->verify_hostname);

  // Plaintext: no group TLS.
  auto plain = p;
  plain["security.protocol"] = "PLAINTEXT";
  CHECK_FALSE(kc::herder::herder_config_from(kc::config::WorkerConfig::from_properties(plain), "localhost")
                  .group_tls.has_value());

  // A missing PEM file fails startup, naming the key and the file.
  auto missing = p;
  missing["ssl.truststore.location"] = f.path("gone.pem");
  try {
    (void)kc::config::WorkerConfig::from_properties(missing);
    FAIL("a missing truststore file was accepted");
  } catch (const ConfigError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains("ssl.truststore.location") &&
                                          Catch::Contains(f.path("gone.pem")));
  }
}
