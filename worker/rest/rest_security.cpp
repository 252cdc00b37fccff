#include "worker/rest/rest_security.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "worker/rest/basic_auth.h"
#include "worker/rest/rest_server.h"
#include "worker/api/rest_tls.h"

namespace kc::rest {

namespace {

bool any_https(const std::vector<std::string>& listeners) {
  for (const auto& l : listeners) {
    std::string lower = l.substr(0, 8);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == "https://") return true;
  }
  return false;
}

/// The value of -Djava.security.auth.login.config= in a KAFKA_OPTS string.
std::string jaas_path_from_kafka_opts(const std::string& opts) {
  static const std::string kFlag = "-Djava.security.auth.login.config=";
  auto pos = opts.find(kFlag);
  if (pos == std::string::npos) return {};
  pos += kFlag.size();
  auto end = opts.find_first_of(" \t", pos);
  std::string v = opts.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front()) v = v.substr(1, v.size() - 2);
  return v;
}

}  // namespace

void RestSecurity::apply_to(RestServerOptions& opts) const {
  opts.https_tls = https_tls;
  opts.admin_https_tls = admin_https_tls;
  opts.forward_tls = client_tls;
  opts.basic_auth = basic_auth;
  opts.admin_listeners = admin_listeners;
  opts.health_auth = health_auth;
}

Result<RestSecurity> rest_security_from(const config::WorkerConfig& wc, const std::string& kafka_opts) {
  RestSecurity out;
  const auto& originals = wc.originals();

  // TLS: server contexts for https listeners, a client context for peers.
  auto listener_tls = tls_settings_from(originals, "listeners.https.");
  if (!listener_tls) {
    if (any_https(wc.listeners())) return listener_tls.error();
    // Top-level ssl.* may be meant for the Kafka clients only; an http-only
    // worker just cannot reach https peers.
    out.warnings.push_back("REST client TLS unavailable, https workers cannot be reached: " +
                           listener_tls.error().to_string());
  }
  if (listener_tls && any_https(wc.listeners())) {
    auto ctx = TlsContext::server(listener_tls.value());
    if (!ctx) return ctx.error();
    out.https_tls = ctx.value();
  }
  if (!wc.is_null("admin.listeners")) {
    out.admin_listeners = wc.get_list("admin.listeners");
    if (any_https(*out.admin_listeners)) {
      auto admin_tls = tls_settings_from(originals, "admin.listeners.https.");
      if (!admin_tls) return admin_tls.error();
      auto ctx = TlsContext::server(admin_tls.value());
      if (!ctx) return ctx.error();
      out.admin_https_tls = ctx.value();
    }
  }
  if (!listener_tls) {
    // warned above
  } else if (auto client = TlsContext::client(listener_tls.value())) {
    out.client_tls = client.value();
  } else if (out.https_tls) {
    return client.error();  // this worker is https: its peers are too, so this must work
  } else {
    out.warnings.push_back("REST client TLS unavailable, https workers cannot be reached: " + client.error().to_string());
  }

  // Basic authentication.
  std::string credentials;
  std::string credentials_key;
  if (auto file = wc.get_optional_string("rest.basic.auth.credentials.file"); file && !file->empty()) {
    credentials = *file;
    credentials_key = "rest.basic.auth.credentials.file";
  }
  for (const auto& cls : wc.get_list("rest.extension.classes")) {
    if (cls != kBasicAuthExtensionClass) {
      out.warnings.push_back("rest.extension.classes: '" + cls + "' is not supported by kconnectd and is ignored");
      continue;
    }
    if (!credentials.empty()) continue;  // our key names the file directly
    std::string jaas = wc.get_optional_string("java.security.auth.login.config").value_or("");
    std::string jaas_key = "java.security.auth.login.config";
    if (jaas.empty()) {
      jaas = jaas_path_from_kafka_opts(kafka_opts);
      jaas_key = "KAFKA_OPTS -Djava.security.auth.login.config";
    }
    if (jaas.empty()) {
      return Error{"rest.extension.classes",
                   std::string(kBasicAuthExtensionClass) +
                       " needs a JAAS file: set java.security.auth.login.config (worker key, or "
                       "-Djava.security.auth.login.config=... in KAFKA_OPTS) or rest.basic.auth.credentials.file"};
    }
    std::ifstream in(jaas, std::ios::binary);
    if (!in) return Error{jaas_key, "cannot read JAAS file '" + jaas + "': " + std::strerror(errno)};
    std::ostringstream text;
    text << in.rdbuf();
    auto file = jaas_credentials_file(text.str(), jaas);
    if (!file) return file.error();
    credentials = file.value();
    credentials_key = jaas_key + " (" + jaas + ") file=";
  }
  if (!credentials.empty()) {
    auto auth = BasicAuthenticator::from_file(credentials, credentials_key);
    if (!auth) return auth.error();
    if (auth.value().is_open()) {
      out.warnings.push_back("basic authentication credentials file '" + credentials +
                             "' has no users: every request is permitted (as Kafka Connect)");
    }
    out.basic_auth = std::make_shared<const BasicAuthenticator>(std::move(auth.value()));
  }
  out.health_auth = wc.get_bool("rest.health.auth");
  return out;
}

}  // namespace kc::rest
