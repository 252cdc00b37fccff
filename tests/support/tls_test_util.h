#pragma once
// Test helpers for REST over HTTPS: a throwaway PKI made at test time by the
// `openssl` command in a temporary directory (two CAs, a server certificate
// for localhost/127.0.0.1, a client certificate, an encrypted key), a
// small blocking HTTP(S) client on Boost.Beast, and free_port() for REST
// listeners. Test code only.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/evp.h>

#include "worker/rest/rest_tls.h"

namespace kc::test {

/// Files of a throwaway PKI; every path is absolute. Removed with the object.
struct TestPki {
  std::string dir;
  std::string ca_pem;           ///< CA certificate that signed server and client
  std::string other_ca_pem;     ///< an unrelated CA (wrong trust)
  std::string server_keystore;  ///< PEM: server key + certificate (CN=localhost, SAN localhost, 127.0.0.1)
  std::string server_cert;      ///< PEM: server certificate only
  std::string server_key;       ///< PEM: server key only
  std::string server_key_encrypted;  ///< PEM: server key, AES-256 with password "changeit"
  std::string client_keystore;  ///< PEM: client key + certificate (CN=kc-client)
  std::string not_pem;          ///< a file that is not PEM

  TestPki() {
    char tmpl[] = "/tmp/kc-pki-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir = tmpl;
    auto p = [&](const char* name) { return dir + "/" + name; };
    ca_pem = p("ca.pem");
    other_ca_pem = p("other-ca.pem");
    server_keystore = p("server-keystore.pem");
    server_cert = p("server.crt");
    server_key = p("server.key");
    server_key_encrypted = p("server-enc.key");
    client_keystore = p("client-keystore.pem");
    not_pem = p("not-pem.jks");
    const std::string ec = " -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";
    std::ofstream(p("san.cnf")) << "subjectAltName=DNS:localhost,IP:127.0.0.1\n";
    std::ofstream(not_pem) << "\xfe\xed\xfe\xed not a PEM keystore\n";
    run("openssl req -x509" + ec + " -keyout " + p("ca.key") + " -out " + ca_pem + " -days 2 -subj /CN=kc-test-ca");
    run("openssl req -x509" + ec + " -keyout " + p("other-ca.key") + " -out " + other_ca_pem +
        " -days 2 -subj /CN=kc-other-ca");
    run("openssl req" + ec + " -keyout " + server_key + " -out " + p("server.csr") + " -subj /CN=localhost");
    run("openssl x509 -req -in " + p("server.csr") + " -CA " + ca_pem + " -CAkey " + p("ca.key") +
        " -CAcreateserial -out " + server_cert + " -days 2 -extfile " + p("san.cnf"));
    run("openssl req" + ec + " -keyout " + p("client.key") + " -out " + p("client.csr") + " -subj /CN=kc-client");
    run("openssl x509 -req -in " + p("client.csr") + " -CA " + ca_pem + " -CAkey " + p("ca.key") +
        " -CAcreateserial -out " + p("client.crt") + " -days 2");
    run("openssl pkey -in " + server_key + " -aes256 -passout pass:changeit -out " + server_key_encrypted);
    run("cat " + server_key + " " + server_cert + " > " + server_keystore);
    run("cat " + p("client.key") + " " + p("client.crt") + " > " + client_keystore);
  }
  ~TestPki() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  static std::string read(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream out;
    out << in.rdbuf();
    return out.str();
  }

 private:
  static void run(const std::string& cmd) {
    if (std::system(("(" + cmd + ") >/dev/null 2>&1").c_str()) != 0) throw std::runtime_error("failed: " + cmd);
  }
};

/// A port on 127.0.0.1 that was free a moment ago, for a worker whose
/// advertised URL (its REST port) must be known before its server starts.
inline uint16_t free_port() {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::acceptor a(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
  return a.local_endpoint().port();
}

/// One HTTP exchange's outcome: status 0 and `error` set when the transport
/// (connect, TLS handshake, certificate check, read) failed.
struct HttpResult {
  int status = 0;
  std::string body;
  std::string error;
  std::string www_authenticate;  ///< the WWW-Authenticate header, "" if absent
};

/// Sends one request to 127.0.0.1:`port` (or `host`) and reads the answer.
/// `tls` null = plain http. `authorization` "" = no header.
inline HttpResult http_call(uint16_t port, boost::beast::http::verb verb, const std::string& target,
                            const std::string& body = "", const rest::TlsContext* tls = nullptr,
                            const std::string& authorization = "", const std::string& host = "127.0.0.1") {
  namespace beast = boost::beast;
  namespace http = beast::http;
  HttpResult out;
  try {
    boost::asio::io_context ioc;
    boost::asio::ip::tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(host, std::to_string(port));
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, host + ":" + std::to_string(port));
    if (!authorization.empty()) req.set(http::field::authorization, authorization);
    if (!body.empty()) {
      req.set(http::field::content_type, "application/json");
      req.body() = body;
    }
    req.keep_alive(false);
    req.prepare_payload();
    http::response<http::string_body> res;
    beast::flat_buffer buffer;
    if (tls == nullptr) {
      beast::tcp_stream stream(ioc);
      stream.expires_after(std::chrono::seconds(20));
      stream.connect(endpoints);
      http::write(stream, req);
      http::read(stream, buffer, res);
    } else {
      beast::ssl_stream<beast::tcp_stream> stream(ioc, tls->native());
      beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(20));
      beast::get_lowest_layer(stream).connect(endpoints);
      auto st = tls->prepare_client(stream.native_handle(), host);
      if (!st) throw std::runtime_error(st.error().message);
      stream.handshake(boost::asio::ssl::stream_base::client);
      http::write(stream, req);
      http::read(stream, buffer, res);
    }
    out.status = static_cast<int>(res.result_int());
    out.body = res.body();
    out.www_authenticate = std::string(res[http::field::www_authenticate]);
  } catch (const std::exception& e) {
    out.error = e.what();
  }
  return out;
}

/// "Basic " + base64("user:password") (OpenSSL's encoder), as clients send it.
inline std::string basic_auth_header(const std::string& user, const std::string& password) {
  const std::string in = user + ":" + password;
  std::string out(4 * ((in.size() + 2) / 3) + 1, '\0');
  int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), reinterpret_cast<const unsigned char*>(in.data()),
                          static_cast<int>(in.size()));
  out.resize(static_cast<size_t>(n));
  return "Basic " + out;
}

}  // namespace kc::test
