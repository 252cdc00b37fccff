#pragma once
// Kafka's `sasl.jaas.config` (KIP-85): one JAAS login module entry, as Kafka
// clients accept it, e.g.
//   org.apache.kafka.common.security.scram.ScramLoginModule required
//       username="connect" password="s3cret";
// and the SASL client settings derived from the worker properties
// (security.protocol, sasl.mechanism, sasl.jaas.config, or librdkafka's
// sasl.username / sasl.password).
//
// Config-provider placeholders (`${file:...}`) must be resolved BEFORE
// these functions see the values (the herder does it with the worker's
// ConfigTransformer); an unresolved placeholder is taken literally.
//
// Pure functions; safe from any thread.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kc::config {

/// A JAAS control flag (javax.security.auth.login.AppConfigurationEntry).
enum class JaasControlFlag { Required, Requisite, Sufficient, Optional };

/// One login module entry: class name, control flag and its options.
struct JaasLoginModule {
  std::string login_module;                    ///< fully qualified class name
  JaasControlFlag flag = JaasControlFlag::Required;
  std::map<std::string, std::string> options;  ///< key -> value (quotes and escapes removed)
};

/// Parses JAAS text: entries `<class> <flag> [key=value ...];`, values bare
/// words or double-quoted strings with backslash escapes (\" \\ \n \t \r);
/// `//` and `/* */` comments are skipped (as Kafka's JaasConfig tokenizer).
/// Flags are case-insensitive. Errors (Error::field "sasl.jaas.config")
/// say what was expected and where: "expected '=' after option 'username'
/// at position 61", "unterminated quoted value starting at position 70",
/// "JAAS config entry not terminated by semi-colon at position 90",
/// "invalid control flag 'mandatory' at position 55", "no login module".
Result<std::vector<JaasLoginModule>> parse_jaas_config(std::string_view text);

/// Kafka's login modules for PLAIN and SCRAM.
inline constexpr const char* kPlainLoginModule = "org.apache.kafka.common.security.plain.PlainLoginModule";
inline constexpr const char* kScramLoginModule = "org.apache.kafka.common.security.scram.ScramLoginModule";

/// What a Kafka client needs to authenticate with SASL.
struct SaslClientCredentials {
  std::string mechanism;  ///< "PLAIN", "SCRAM-SHA-256" or "SCRAM-SHA-512"
  std::string username;
  std::string password;
};

/// True for security.protocol SASL_PLAINTEXT and SASL_SSL (case-insensitive).
bool is_sasl_protocol(std::string_view security_protocol);

/// The SASL credentials from client properties (placeholders resolved):
/// nullopt when security.protocol is not SASL_*. Otherwise sasl.mechanism
/// (or librdkafka's sasl.mechanisms; Kafka's default GSSAPI when both are
/// unset) must be PLAIN, SCRAM-SHA-256 or
/// SCRAM-SHA-512, and the username and password come from sasl.jaas.config
/// (exactly one PlainLoginModule or ScramLoginModule entry with `username`
/// and `password` options) or, when it is unset, from sasl.username and
/// sasl.password. Errors name the key: "sasl.mechanism GSSAPI is not
/// supported by kconnectd's group client; use PLAIN, SCRAM-SHA-256 or
/// SCRAM-SHA-512", "sasl.jaas.config: option 'password' is missing",
/// "sasl.jaas.config: login module com.x.Y is not supported ...",
/// "security.protocol SASL_SSL needs sasl.jaas.config or sasl.username and
/// sasl.password".
Result<std::optional<SaslClientCredentials>> sasl_credentials(const std::map<std::string, std::string>& props);

/// The username and password of JAAS text `jaas` (placeholders resolved):
/// exactly one PlainLoginModule or ScramLoginModule entry with `username`
/// and `password` options. `mechanism` is left empty. Errors (field
/// "sasl.jaas.config") as sasl_credentials's: "contains 2 login modules,
/// should be 1 module", "login module com.x.Y is not supported ...",
/// "option 'password' is missing", and parse_jaas_config's.
Result<SaslClientCredentials> jaas_login(std::string_view jaas);

/// Translates Kafka's `sasl.jaas.config` in a librdkafka property map
/// (librdkafka has no such key): when `props` holds it, it is replaced by
/// `sasl.username` and `sasl.password` from jaas_login(); otherwise
/// nothing changes. Used for a connector's `producer.override.*` /
/// `consumer.override.*` / `admin.override.*` maps, which the worker's own
/// translation (the herder's, with its security.protocol) never sees.
/// Errors: jaas_login's; `props` is unchanged then.
Status translate_jaas_config(std::map<std::string, std::string>& props);

}  // namespace kc::config
