#pragma once
// Test helpers for REST over HTTPS: the throwaway PKI of test_pki.h, a
// small blocking HTTP(S) client on Boost.Beast, and free_port() (free_port.h)
// for REST listeners. Test code only.
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

#include "free_port.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <openssl/evp.h>

#include "tests/support/test_pki.h"
#include "worker/api/rest_tls.h"

namespace kc::test {

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
