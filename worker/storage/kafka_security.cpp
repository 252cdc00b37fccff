#include "worker/storage/kafka_security.h"

namespace kc::storage {

namespace {

kafka::PemSource pem_source(const config::PemSetting& s) { return kafka::PemSource{s.file, s.pem, s.key}; }

}  // namespace

std::optional<kafka::TlsOptions> connection_tls_options(const config::TlsSettings& tls) {
  if (!tls.enabled) return std::nullopt;
  kafka::TlsOptions o;
  o.ca = pem_source(tls.ca);
  o.certificate = pem_source(tls.certificate);
  o.key = pem_source(tls.key);
  o.key_password = tls.key_password;
  o.verify_hostname = tls.verify_hostname;
  return o;
}

Result<kafka::SaslSettings> connection_sasl_settings(const config::SaslClientCredentials& creds) {
  auto mech = kafka::parse_sasl_mechanism(creds.mechanism);
  if (!mech) {
    return Error{"sasl.mechanism", creds.mechanism +
                                       " is not supported by kconnectd's group client; use PLAIN, "
                                       "SCRAM-SHA-256 or SCRAM-SHA-512"};
  }
  return kafka::SaslSettings{*mech, creds.username, creds.password};
}

Result<ConnectionSecurity> connection_security(const ClientProps& props) {
  ConnectionSecurity out;
  try {
    out.tls = connection_tls_options(config::tls_settings_from(props));
  } catch (const config::ConfigError& e) {
    return Error{"", e.what()};
  }
  auto creds = config::sasl_credentials(props);
  if (!creds) return creds.error();
  if (*creds) {
    auto sasl = connection_sasl_settings(**creds);
    if (!sasl) return sasl.error();
    out.sasl = std::move(sasl).value();
  }
  return out;
}

}  // namespace kc::storage
