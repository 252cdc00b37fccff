// TLS settings under Kafka's and librdkafka's names; translation for librdkafka.
#include "config/security_config.h"

#include <sys/stat.h>

#include <array>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <vector>

#include "common/strings.h"

namespace kc::config {
namespace {

std::optional<std::string> get(const Properties& props, const char* key) {
  auto it = props.find(key);
  if (it == props.end()) return std::nullopt;
  return it->second;
}

/// A store type must be PEM (or unset, which we read as PEM).
void require_pem_type(const Properties& props, const char* type_key) {
  auto type = get(props, type_key);
  if (!type) return;
  const std::string t = ascii_upper(trim(*type));
  if (t == "PEM" || t.empty()) return;
  throw ConfigError(std::string(type_key) + ": '" + *type +
                    "' is not supported: kconnectd reads PEM only (set " + type_key +
                    "=PEM and give PEM certificates; convert a JKS/PKCS12 store with keytool/openssl)");
}

/// The one key of `keys` that is set (non-empty), or nullopt; two set is an error.
std::optional<std::string> only_one(const Properties& props, std::initializer_list<const char*> keys,
                                    const char* what) {
  std::optional<std::string> found;
  for (const char* k : keys) {
    auto v = get(props, k);
    if (!v || trim(*v).empty()) continue;
    if (found) {
      throw ConfigError(*found + " and " + k + " both give the " + what + "; set only one of them");
    }
    found = k;
  }
  return found;
}

/// The file of `key` must exist, be a regular file and be readable.
void check_file(const std::string& key, const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    throw ConfigError(key + ": cannot read '" + path + "': " + std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    throw ConfigError(key + ": '" + path + "' is a directory; a PEM file is expected");
  }
  std::ifstream in(path);
  if (!in) {
    const int err = errno;
    throw ConfigError(key + ": cannot read '" + path + "': " + std::strerror(err));
  }
}

/// A PemSetting from `key`: a file for *.location keys, inline text otherwise.
PemSetting pem_setting(const Properties& props, const std::string& key) {
  PemSetting s;
  s.key = key;
  const std::string value = trim(props.at(key));
  if (key.ends_with(".location")) {
    check_file(key, value);
    s.file = value;
  } else {
    s.pem = props.at(key);  // inline PEM keeps its line breaks
  }
  return s;
}

// Kafka client keys librdkafka does not know; dropped from librdkafka configs.
constexpr std::array kJavaOnlySslKeys = {
    "ssl.truststore.type",        "ssl.keystore.type",           "ssl.truststore.password",
    "ssl.keystore.password",      "ssl.protocol",                "ssl.enabled.protocols",
    "ssl.keymanager.algorithm",   "ssl.trustmanager.algorithm",  "ssl.secure.random.implementation",
    "ssl.provider",               "ssl.engine.factory.class",    "ssl.truststore.location",
    "ssl.truststore.certificates", "ssl.keystore.location",      "ssl.keystore.certificate.chain",
    "ssl.keystore.key",
};

}  // namespace

bool tls_enabled(std::string_view security_protocol) {
  const std::string p = ascii_upper(trim(security_protocol));
  return p == "SSL" || p == "SASL_SSL";
}

TlsSettings tls_settings_from(const Properties& props) {
  TlsSettings t;
  t.enabled = tls_enabled(get(props, "security.protocol").value_or("PLAINTEXT"));
  if (!t.enabled) return t;

  require_pem_type(props, "ssl.truststore.type");
  require_pem_type(props, "ssl.keystore.type");

  if (auto k = only_one(props, {"ssl.truststore.location", "ssl.truststore.certificates", "ssl.ca.location", "ssl.ca.pem"},
                        "trusted CA certificates")) {
    t.ca = pem_setting(props, *k);
  }
  // ssl.keystore.location holds both the key and the certificate chain.
  auto cert_key = only_one(props,
                           {"ssl.keystore.location", "ssl.keystore.certificate.chain", "ssl.certificate.location",
                            "ssl.certificate.pem"},
                           "client certificate");
  auto key_key = only_one(props, {"ssl.keystore.location", "ssl.keystore.key", "ssl.key.location", "ssl.key.pem"},
                          "client private key");
  if (cert_key && *cert_key == "ssl.keystore.location" && key_key && *key_key != "ssl.keystore.location") {
    throw ConfigError("ssl.keystore.location and " + *key_key + " both give the client private key; set only one of them");
  }
  if (cert_key) t.certificate = pem_setting(props, *cert_key);
  if (key_key) t.key = pem_setting(props, *key_key);
  if (t.certificate.empty() != t.key.empty()) {
    throw ConfigError(t.certificate.empty()
                          ? t.key.key + " is set but no client certificate is (ssl.keystore.certificate.chain or "
                                        "ssl.certificate.location)"
                          : t.certificate.key + " is set but no private key is (ssl.keystore.key or ssl.key.location)");
  }
  if (auto pw = get(props, "ssl.key.password")) t.key_password = *pw;

  const std::string algo = trim(get(props, "ssl.endpoint.identification.algorithm").value_or("https"));
  const std::string a = ascii_upper(algo);
  if (a == "HTTPS") {
    t.verify_hostname = true;
  } else if (a.empty() || a == "NONE") {
    t.verify_hostname = false;
  } else {
    throw ConfigError("ssl.endpoint.identification.algorithm: '" + algo +
                      "' is not supported (expected https, or empty to turn host name verification off)");
  }
  return t;
}

std::map<std::string, std::string> librdkafka_ssl_config(const std::map<std::string, std::string>& props) {
  std::map<std::string, std::string> out = props;
  for (const char* k : kJavaOnlySslKeys) out.erase(k);
  // A librdkafka name already present wins over the Kafka name it would come from.
  auto put = [&out](const std::string& key, const std::string& value) { out.emplace(key, value); };
  auto get_kafka = [&props](const char* key) -> std::optional<std::string> {
    auto it = props.find(key);
    if (it == props.end() || trim(it->second).empty()) return std::nullopt;
    return it->second;
  };
  if (auto v = get_kafka("ssl.truststore.location")) put("ssl.ca.location", trim(*v));
  if (auto v = get_kafka("ssl.truststore.certificates")) put("ssl.ca.pem", *v);
  if (auto v = get_kafka("ssl.keystore.location")) {
    // A PEM keystore file holds both; librdkafka's own ssl.keystore.location
    // means PKCS#12, so the name must not pass through.
    put("ssl.certificate.location", trim(*v));
    put("ssl.key.location", trim(*v));
  }
  if (auto v = get_kafka("ssl.keystore.certificate.chain")) put("ssl.certificate.pem", *v);
  if (auto v = get_kafka("ssl.keystore.key")) put("ssl.key.pem", *v);
  if (auto it = out.find("ssl.endpoint.identification.algorithm"); it != out.end() && trim(it->second).empty()) {
    it->second = "none";  // Kafka's "" (off) is librdkafka's "none"
  }
  return out;
}

}  // namespace kc::config
