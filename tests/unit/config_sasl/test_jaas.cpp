// Kafka's JAAS syntax for sasl.jaas.config and the SASL worker keys.

#include <catch2/catch.hpp>

#include "config/jaas.h"
#include "config/worker_config.h"

using namespace kc::config;  // NOLINT

namespace {

Properties base() {
  return Properties{{"group.id", "g"},
                    {"config.storage.topic", "c"},
                    {"offset.storage.topic", "o"},
                    {"status.storage.topic", "s"}};
}

std::string config_error(const Properties& p) {
  try {
    (void)WorkerConfig::from_properties(p);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("JAAS: a SCRAM entry with quoted values and escapes", "[jaas]") {
  auto r = parse_jaas_config(
      "org.apache.kafka.common.security.scram.ScramLoginModule required\n"
      "  username=\"connect\" /* the worker */ password=\"p\\\"w\\\\d;=x\" // trailing comment\n"
      "  tokenauth=false;");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 1);
  const auto& m = r->front();
  CHECK(m.login_module == kScramLoginModule);
  CHECK(m.flag == JaasControlFlag::Required);
  CHECK(m.options.at("username") == "connect");
  CHECK(m.options.at("password") == "p\"w\\d;=x");
  CHECK(m.options.at("tokenauth") == "false");
  // Flags are case-insensitive; several entries are parsed in order.
  auto two = parse_jaas_config("a.B Optional; c.D SUFFICIENT k=v;");
  REQUIRE(two.ok());
  REQUIRE(two->size() == 2);
  CHECK(two->at(0).flag == JaasControlFlag::Optional);
  CHECK(two->at(1).flag == JaasControlFlag::Sufficient);
  CHECK(two->at(1).options.at("k") == "v");
}

TEST_CASE("JAAS: errors say what was expected and where", "[jaas]") {
  auto err = [](const std::string& text) {
    auto r = parse_jaas_config(text);
    REQUIRE_FALSE(r.ok());
    CHECK(r.error().field == "sasl.jaas.config");
    return r.error().message;
  };
  CHECK(err("x.Plain required username=\"u\" password=\"p\"") ==
        "JAAS config entry not terminated by semi-colon at position 42");
  CHECK(err("x.Plain mandatory;") == "invalid control flag 'mandatory' at position 8");
  CHECK(err("x.Plain required username \"u\";") == "expected '=' after option 'username' at position 26");
  CHECK(err("x.Plain required username=\"u;") == "unterminated quoted value starting at position 26");
  CHECK(err("x.Plain required username=;") == "expected a value for option 'username' at position 26");
  CHECK(err("x.Plain;") == "expected a control flag (required, requisite, sufficient or optional) after x.Plain "
                           "at position 7");
  CHECK(err("  ") == "no login module (expected '<LoginModule class> required key=\"value\" ...;')");
  CHECK(err("\"quoted\" required;") == "expected a login module class name, found '\"' at position 0");
  CHECK(err("x.P required /* open") == "unterminated comment at position 13");
}

TEST_CASE("SASL credentials from sasl.jaas.config or sasl.username/password", "[jaas]") {
  std::map<std::string, std::string> p{{"security.protocol", "SASL_SSL"},
                                       {"sasl.mechanism", "SCRAM-SHA-512"},
                                       {"sasl.jaas.config", std::string(kScramLoginModule) +
                                                                " required username=\"alice\" password=\"pw\";"}};
  auto c = sasl_credentials(p);
  REQUIRE(c.ok());
  REQUIRE(c->has_value());
  CHECK((*c)->mechanism == "SCRAM-SHA-512");
  CHECK((*c)->username == "alice");
  CHECK((*c)->password == "pw");

  // librdkafka's keys when no JAAS text is given.
  std::map<std::string, std::string> q{{"security.protocol", "sasl_plaintext"},
                                       {"sasl.mechanism", "PLAIN"},
                                       {"sasl.username", "bob"},
                                       {"sasl.password", "pw2"}};
  auto d = sasl_credentials(q);
  REQUIRE(d.ok());
  REQUIRE(d->has_value());
  CHECK((*d)->username == "bob");

  // Not SASL: nothing.
  auto none = sasl_credentials({{"security.protocol", "SSL"}});
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  // GSSAPI (Kafka's default) is refused with the documented text.
  auto g = sasl_credentials({{"security.protocol", "SASL_PLAINTEXT"}});
  REQUIRE_FALSE(g.ok());
  CHECK(g.error().to_string() ==
        "sasl.mechanism GSSAPI is not supported by kconnectd's group client; use PLAIN, SCRAM-SHA-256 or "
        "SCRAM-SHA-512");
  // Other login modules, missing options, several modules, no credentials.
  p["sasl.jaas.config"] = "com.sun.security.auth.module.Krb5LoginModule required;";
  CHECK(sasl_credentials(p).error().to_string().find("login module com.sun.security.auth.module.Krb5LoginModule is "
                                                     "not supported") != std::string::npos);
  p["sasl.jaas.config"] = std::string(kPlainLoginModule) + " required username=\"u\";";
  CHECK(sasl_credentials(p).error().to_string() == "sasl.jaas.config: option 'password' is missing");
  p["sasl.jaas.config"] = std::string(kPlainLoginModule) + " required username=u password=p; " + kPlainLoginModule +
                          " required username=u password=p;";
  CHECK(sasl_credentials(p).error().to_string() ==
        "sasl.jaas.config: contains 2 login modules, should be 1 module");
  q.erase("sasl.password");
  CHECK(sasl_credentials(q).error().to_string() ==
        "security.protocol SASL_PLAINTEXT needs sasl.jaas.config or sasl.username and sasl.password");
}

TEST_CASE("worker config: security.protocol and sasl.* are validated", "[jaas][config]") {
  auto p = base();
  p["security.protocol"] = "SASL_TLS";
  CHECK(config_error(p).find("security.protocol: 'SASL_TLS' is not a valid value (expected string, one of "
                             "PLAINTEXT|SSL|SASL_PLAINTEXT|SASL_SSL)") != std::string::npos);
  p["security.protocol"] = "SASL_PLAINTEXT";
  p["sasl.jaas.config"] = std::string(kPlainLoginModule) + " required username=\"u\" password=\"p\";";
  CHECK(config_error(p) ==
        "sasl.mechanism GSSAPI is not supported by kconnectd's group client; use PLAIN, SCRAM-SHA-256 or "
        "SCRAM-SHA-512");
  p["sasl.mechanisms"] = "PLAIN";  // librdkafka's spelling counts too
  CHECK(config_error(p).empty());
  p.erase("sasl.mechanisms");
  p["sasl.mechanism"] = "PLAIN";
  CHECK(config_error(p).empty());
  p["sasl.jaas.config"] = std::string(kPlainLoginModule) + " required username=\"u\" password=\"p\"";
  CHECK(config_error(p) == "sasl.jaas.config: JAAS config entry not terminated by semi-colon at position " +
                               std::to_string(p["sasl.jaas.config"].size()));
  // A ${...} reference is resolved later: only the mechanism is checked now.
  p["sasl.jaas.config"] = "${file:/nonexistent:jaas}";
  CHECK(config_error(p).empty());
  // GSSAPI is fine when SASL is not selected (Kafka's default stays harmless).
  auto plain = base();
  CHECK(config_error(plain).empty());
  CHECK(WorkerConfig::from_properties(plain).get_string("sasl.mechanism") == "GSSAPI");
  // The passwords are PASSWORD-typed options.
  CHECK(find_option("sasl.jaas.config")->type == OptionType::Password);
  CHECK(find_option("sasl.password")->type == OptionType::Password);
}

TEST_CASE("JAAS: a client override map's sasl.jaas.config becomes librdkafka's sasl.username and sasl.password",
          "[jaas]") {
  std::map<std::string, std::string> props{
      {"security.protocol", "SASL_PLAINTEXT"},
      {"sasl.jaas.config",
       R"(org.apache.kafka.common.security.scram.ScramLoginModule required username="connect" password="p\"w";)"}};
  REQUIRE(translate_jaas_config(props));
  CHECK(props == std::map<std::string, std::string>{{"security.protocol", "SASL_PLAINTEXT"},
                                                    {"sasl.username", "connect"},
                                                    {"sasl.password", "p\"w"}});
  // Without the key nothing changes.
  REQUIRE(translate_jaas_config(props));
  CHECK(props.size() == 3);
  // Text it cannot use: an error naming the key, and the map unchanged.
  std::map<std::string, std::string> bad{
      {"sasl.jaas.config", "org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\";"}};
  auto st = translate_jaas_config(bad);
  REQUIRE_FALSE(st);
  CHECK(st.error().to_string() == "sasl.jaas.config: option 'password' is missing");
  CHECK(bad.count("sasl.jaas.config") == 1);
}
