#include "worker/api/rest_tls.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>

#include <arpa/inet.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace kc::rest {

namespace ssl = boost::asio::ssl;

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string trimmed(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  size_t e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

/// The file's bytes, or an error naming the key and the path.
Result<std::string> read_file(const std::string& key, const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{key, "cannot read '" + path + "': " + std::strerror(errno)};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

/// OpenSSL's reason for a failed Asio call, plus a hint for the usual
/// cause: a JKS/PKCS12 keystore given where PEM is expected.
std::string reason(const boost::system::error_code& ec) {
  std::string m = ec.message();
  if (m.find("no start line") != std::string::npos) m += " (not PEM; JKS and PKCS12 stores are not supported)";
  return m;
}

/// The reason of OpenSSL's latest error (queue cleared), with the PEM hint.
std::string openssl_reason() {
  unsigned long err = ERR_peek_last_error();
  const char* r = err != 0 ? ERR_reason_error_string(err) : nullptr;
  std::string m = r != nullptr ? r : "unknown OpenSSL error";
  ERR_clear_error();
  if (m.find("no start line") != std::string::npos) m += " (not PEM; JKS and PKCS12 stores are not supported)";
  return m;
}

/// Loads the keystore (certificate chain + private key) into `ctx`.
Status load_keystore(ssl::context& ctx, const TlsSettings& s) {
  boost::system::error_code ec;
  if (!s.key_password.empty()) {
    const std::string pw = s.key_password;
    ctx.set_password_callback([pw](std::size_t, ssl::context::password_purpose) { return pw; }, ec);
  }
  auto password_hint = [&](std::string why) {
    if (why.find("key values mismatch") != std::string::npos) return std::string("the private key does not match the certificate");
    if (why.find("bad decrypt") != std::string::npos || why.find("bad password") != std::string::npos ||
        why.find("interrupted or cancelled") != std::string::npos ||
        why.find("problems getting password") != std::string::npos) {
      why += " (check " + s.key("ssl.key.password") + ")";
    }
    return why;
  };
  std::string key_key;
  if (!s.keystore_location.empty()) {
    // One PEM file with the key and the chain (Kafka's PEM keystore): let
    // OpenSSL pick the blocks it needs from the file.
    const std::string where = s.key("ssl.keystore.location") + " ('" + s.keystore_location + "')";
    auto pem = read_file(s.key("ssl.keystore.location"), s.keystore_location);
    if (!pem) return pem.error();
    if (pem.value().find("-----BEGIN") == std::string::npos) {
      return Error{where, "contains no PEM block (not PEM; JKS and PKCS12 stores are not supported)"};
    }
    ERR_clear_error();
    if (SSL_CTX_use_certificate_chain_file(ctx.native_handle(), s.keystore_location.c_str()) != 1) {
      return Error{where, "no usable PEM certificate chain: " + openssl_reason()};
    }
    if (SSL_CTX_use_PrivateKey_file(ctx.native_handle(), s.keystore_location.c_str(), SSL_FILETYPE_PEM) != 1) {
      return Error{where, "no usable PEM private key: " + password_hint(openssl_reason())};
    }
    key_key = where;
  } else {
    if (s.keystore_certificate_chain.empty() || s.keystore_key.empty()) {
      return Error{s.key("ssl.keystore.certificate.chain"),
                   "both " + s.key("ssl.keystore.certificate.chain") + " and " + s.key("ssl.keystore.key") +
                       " must be set when " + s.key("ssl.keystore.location") + " is not"};
    }
    key_key = s.key("ssl.keystore.key");
    ERR_clear_error();
    ctx.use_certificate_chain(boost::asio::buffer(s.keystore_certificate_chain), ec);
    if (ec) return Error{s.key("ssl.keystore.certificate.chain"), "no usable PEM certificate chain: " + reason(ec)};
    ERR_clear_error();
    ctx.use_private_key(boost::asio::buffer(s.keystore_key), ssl::context::pem, ec);
    if (ec) return Error{key_key, "no usable PEM private key: " + password_hint(reason(ec))};
  }
  if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
    ERR_clear_error();
    return Error{key_key, "the private key does not match the certificate"};
  }
  return ok_status();
}

/// Trusted CAs: the truststore if set, else the system's default paths.
Status load_truststore(ssl::context& ctx, const TlsSettings& s) {
  boost::system::error_code ec;
  std::string pem, where;
  if (!s.truststore_location.empty()) {
    auto text = read_file(s.key("ssl.truststore.location"), s.truststore_location);
    if (!text) return text.error();
    pem = text.value();
    where = s.key("ssl.truststore.location") + " ('" + s.truststore_location + "')";
  } else if (!s.truststore_certificates.empty()) {
    pem = s.truststore_certificates;
    where = s.key("ssl.truststore.certificates");
  } else {
    ctx.set_default_verify_paths(ec);
    if (ec) return Error{s.key("ssl.truststore.location"), "no truststore set and no system CAs: " + ec.message()};
    return ok_status();
  }
  if (pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return Error{where, "contains no PEM certificate (JKS and PKCS12 stores are not supported)"};
  }
  ERR_clear_error();
  ctx.add_certificate_authority(boost::asio::buffer(pem), ec);
  if (ec) return Error{where, "bad PEM certificate: " + reason(ec)};
  return ok_status();
}

void harden(ssl::context& ctx) {
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 | ssl::context::no_sslv3 |
                  ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 | ssl::context::single_dh_use);
}

}  // namespace

Result<TlsSettings> tls_settings_from(const std::map<std::string, std::string>& originals, std::string_view prefix) {
  TlsSettings s;
  const std::string pre(prefix);
  bool any = false;
  for (const auto& [k, v] : originals) {
    if (k.size() > pre.size() && k.compare(0, pre.size(), pre) == 0) any = true;
  }
  s.prefix = any ? pre : "";
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto it = originals.find(s.prefix + name);
    if (it == originals.end()) return std::nullopt;
    return trimmed(it->second);
  };
  s.keystore_type = get("ssl.keystore.type").value_or("");
  s.keystore_location = get("ssl.keystore.location").value_or("");
  s.keystore_certificate_chain = get("ssl.keystore.certificate.chain").value_or("");
  s.keystore_key = get("ssl.keystore.key").value_or("");
  if (auto it = originals.find(s.prefix + "ssl.key.password"); it != originals.end()) s.key_password = it->second;
  s.truststore_type = get("ssl.truststore.type").value_or("");
  s.truststore_location = get("ssl.truststore.location").value_or("");
  s.truststore_certificates = get("ssl.truststore.certificates").value_or("");
  if (auto alg = get("ssl.endpoint.identification.algorithm")) s.endpoint_identification_algorithm = *alg;
  for (const char* t : {"ssl.keystore.type", "ssl.truststore.type"}) {
    auto v = get(t);
    if (v && !v->empty() && lower(*v) != "pem") {
      return Error{s.key(t), "'" + *v + "' is not supported; kconnectd reads PEM stores only (set PEM)"};
    }
  }
  if (auto ca = get("ssl.client.auth")) {
    const std::string v = lower(*ca);
    if (v == "none" || v.empty()) {
      s.client_auth = ClientAuth::None;
    } else if (v == "requested") {
      s.client_auth = ClientAuth::Requested;
    } else if (v == "required") {
      s.client_auth = ClientAuth::Required;
    } else {
      return Error{s.key("ssl.client.auth"), "'" + *ca + "' is not one of none, requested, required"};
    }
  }
  return s;
}

Result<std::shared_ptr<TlsContext>> TlsContext::server(const TlsSettings& settings) {
  auto out = std::make_shared<TlsContext>(ssl::context::tls_server);
  ssl::context& ctx = out->ctx_;
  harden(ctx);
  if (!settings.has_keystore()) {
    return Error{settings.key("ssl.keystore.location"),
                 "an https listener needs a key and certificate: set " + settings.key("ssl.keystore.location") +
                     " (PEM with key and chain) or " + settings.key("ssl.keystore.certificate.chain") + " and " +
                     settings.key("ssl.keystore.key")};
  }
  if (auto st = load_keystore(ctx, settings); !st) return st.error();
  if (settings.client_auth != ClientAuth::None) {
    if (auto st = load_truststore(ctx, settings); !st) return st.error();
    // OpenSSL asks for a client certificate only when it verifies peers;
    // "requested" still admits a client that sends none.
    ssl::verify_mode mode = ssl::verify_peer;
    if (settings.client_auth == ClientAuth::Required) mode |= ssl::verify_fail_if_no_peer_cert;
    ctx.set_verify_mode(mode);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }
  return out;
}

Result<std::shared_ptr<TlsContext>> TlsContext::client(const TlsSettings& settings) {
  auto out = std::make_shared<TlsContext>(ssl::context::tls_client);
  ssl::context& ctx = out->ctx_;
  harden(ctx);
  if (auto st = load_truststore(ctx, settings); !st) return st.error();
  if (settings.has_keystore()) {
    if (auto st = load_keystore(ctx, settings); !st) return st.error();
  }
  ctx.set_verify_mode(ssl::verify_peer);
  const std::string alg = lower(settings.endpoint_identification_algorithm);
  if (alg.empty()) {
    out->verify_host_ = false;
  } else if (alg == "https") {
    out->verify_host_ = true;
  } else {
    return Error{settings.key("ssl.endpoint.identification.algorithm"),
                 "'" + settings.endpoint_identification_algorithm + "' is not supported (https or empty)"};
  }
  return out;
}

Status TlsContext::prepare_client(SSL* ssl, const std::string& host) const {
  unsigned char addr[16];
  const bool is_ip = inet_pton(AF_INET, host.c_str(), addr) == 1 || inet_pton(AF_INET6, host.c_str(), addr) == 1;
  // SNI carries names only (RFC 6066), never IP literals.
  if (!is_ip && SSL_set_tlsext_host_name(ssl, host.c_str()) != 1) {
    ERR_clear_error();
    return Error{"tls", "cannot set SNI host name '" + host + "'"};
  }
  if (!verify_host_) return ok_status();
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int rc = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(param, host.c_str())
                       : X509_VERIFY_PARAM_set1_host(param, host.c_str(), host.size());
  if (rc != 1) {
    ERR_clear_error();
    return Error{"tls", "cannot check the certificate against host '" + host + "'"};
  }
  return ok_status();
}

}  // namespace kc::rest
