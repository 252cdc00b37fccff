// make_tls_context(): loads PEM trust and key material into an OpenSSL client
// context, with errors that name the config key, the file and OpenSSL's reason.
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "protocol/kafka/connection.h"
#include "protocol/kafka/tls_context.h"

namespace kc::kafka {

namespace {

NetError tls_error(std::string message) { return NetError{NetErrorKind::Tls, std::move(message)}; }

/// "ssl.truststore.location '/etc/ca.pem'" or "ssl.truststore.certificates (inline PEM)".
std::string where(const PemSource& src) {
  const std::string label = src.label.empty() ? std::string("PEM") : src.label;
  return src.file.empty() ? label + " (inline PEM)" : label + " '" + src.file + "'";
}

/// The most recent OpenSSL error on this thread (the queue is cleared), or
/// `fallback` when the queue is empty.
std::string last_openssl_error(const char* fallback) {
  unsigned long code = 0;
  unsigned long last = 0;
  while ((code = ERR_get_error()) != 0) last = code;
  return last ? openssl_error_text(last) : std::string(fallback);
}

/// The PEM text of `src`: its inline text, or its file read whole.
NetResult<std::string> pem_text(const PemSource& src) {
  if (src.file.empty()) return src.pem;
  std::ifstream in(src.file, std::ios::binary);
  if (!in) {
    const int err = errno;
    return tls_error("cannot read " + where(src) + ": " + std::strerror(err));
  }
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyDeleter>;

BioPtr memory_bio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

/// Every CERTIFICATE block of `text`, in order. Other blocks (a private key
/// in a PEM keystore file) are skipped. Errors when there is none.
NetResult<std::vector<X509Ptr>> read_certificates(const PemSource& src, const std::string& text) {
  std::vector<X509Ptr> certs;
  auto bio = memory_bio(text);
  ERR_clear_error();
  while (X509* x = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) certs.emplace_back(x);
  // Reading stops with "no start line" at the end of the text: not an error
  // once at least one certificate was read.
  if (certs.empty()) {
    return tls_error("no PEM certificate in " + where(src) + ": " +
                     last_openssl_error("no CERTIFICATE block found"));
  }
  ERR_clear_error();
  return certs;
}

/// Hands ssl.key.password to OpenSSL; never prompts on the terminal.
int password_callback(char* buf, int size, int /*rwflag*/, void* user) {
  const auto* password = static_cast<const std::string*>(user);
  if (password == nullptr || password->empty()) return -1;  // encrypted key, no password given
  const int n = static_cast<int>(std::min<size_t>(password->size(), static_cast<size_t>(size)));
  std::memcpy(buf, password->data(), static_cast<size_t>(n));
  return n;
}

NetResult<KeyPtr> read_key(const PemSource& src, const std::string& text, const std::string& password) {
  auto bio = memory_bio(text);
  ERR_clear_error();
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio.get(), nullptr, &password_callback,
                                          const_cast<std::string*>(&password));
  if (!key) {
    std::string hint;
    if (text.find("ENCRYPTED") != std::string::npos) {
      hint = password.empty() ? " (the key is encrypted and ssl.key.password is not set)"
                              : " (is ssl.key.password right?)";
    }
    return tls_error("cannot load the private key from " + where(src) + ": " +
                     last_openssl_error("no PRIVATE KEY block found") + hint);
  }
  return KeyPtr(key);
}

}  // namespace

std::string openssl_error_text(unsigned long code) {
  char buf[256] = {};
  ERR_error_string_n(code, buf, sizeof buf);
  return buf;
}

NetResult<std::shared_ptr<TlsContext>> make_tls_context(const TlsOptions& options) {
  auto out = std::make_shared<TlsContext>();
  out->verify_hostname = options.verify_hostname;
  SSL_CTX* ctx = out->ctx.native_handle();
  // Kafka's default ssl.enabled.protocols is TLSv1.2,TLSv1.3.
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);

  if (options.ca.empty()) {
    if (SSL_CTX_set_default_verify_paths(ctx) != 1) {
      return tls_error("cannot load the system's default CA certificates: " +
                       last_openssl_error("unknown error"));
    }
  } else {
    auto text = pem_text(options.ca);
    if (!text) return text.error();
    auto certs = read_certificates(options.ca, *text);
    if (!certs) return certs.error();
    X509_STORE* store = SSL_CTX_get_cert_store(ctx);
    for (auto& c : *certs) {
      if (X509_STORE_add_cert(store, c.get()) != 1) {
        return tls_error("cannot add a CA certificate of " + where(options.ca) + ": " +
                         last_openssl_error("unknown error"));
      }
    }
  }

  if (options.certificate.empty() != options.key.empty()) {
    return tls_error(options.certificate.empty()
                         ? "a private key (" + where(options.key) + ") needs a certificate chain"
                         : "the certificate chain " + where(options.certificate) + " needs a private key");
  }
  if (!options.certificate.empty()) {
    auto cert_text = pem_text(options.certificate);
    if (!cert_text) return cert_text.error();
    auto chain = read_certificates(options.certificate, *cert_text);
    if (!chain) return chain.error();
    if (SSL_CTX_use_certificate(ctx, (*chain)[0].get()) != 1) {
      return tls_error("cannot use the certificate of " + where(options.certificate) + ": " +
                       last_openssl_error("unknown error"));
    }
    for (size_t i = 1; i < chain->size(); ++i) {
      // add1 takes its own reference; ours is released with the vector.
      if (SSL_CTX_add1_chain_cert(ctx, (*chain)[i].get()) != 1) {
        return tls_error("cannot add an intermediate certificate of " + where(options.certificate) + ": " +
                         last_openssl_error("unknown error"));
      }
    }
    // The same file may hold the key (Kafka's PEM keystore file).
    std::string key_text;
    if (options.key.file == options.certificate.file && options.key.pem.empty()) {
      key_text = *cert_text;
    } else {
      auto t = pem_text(options.key);
      if (!t) return t.error();
      key_text = std::move(*t);
    }
    auto key = read_key(options.key, key_text, options.key_password);
    if (!key) return key.error();
    if (SSL_CTX_use_PrivateKey(ctx, key->get()) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
      return tls_error("the private key of " + where(options.key) + " does not match the certificate of " +
                       where(options.certificate) + ": " + last_openssl_error("key values mismatch"));
    }
  }
  return out;
}

}  // namespace kc::kafka
