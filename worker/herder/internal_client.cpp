#include "worker/herder/internal_client.h"

#include <chrono>
#include <optional>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

#include "worker/api/rest_tls.h"
#include "worker/api/url.h"

namespace kc::herder {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

namespace {

/// One request/response on a connected stream (plain or TLS).
template <typename Stream>
InternalResponse round_trip(Stream& stream, const http::request<http::string_body>& req) {
  http::write(stream, req);
  beast::flat_buffer buffer;
  http::response<http::string_body> res;
  http::read(stream, buffer, res);
  return InternalResponse{static_cast<int>(res.result_int()), std::move(res.body())};
}

}  // namespace

namespace {

/// One internal request with `verb` (POST or PUT); see post_internal.
Result<InternalResponse> request_internal(http::verb verb, const std::string& base_url, const std::string& path,
                                          const std::string& json_body, int timeout_ms, const rest::TlsContext* tls,
                                          const std::vector<std::pair<std::string, std::string>>& headers) {
  auto url = rest::parse_http_url(base_url);
  if (!url) return Error{"internal request", "bad URL '" + base_url + "': " + url.error().to_string()};
  if (url->scheme != "http" && url->scheme != "https") {
    return Error{"internal request", "unsupported URL '" + base_url + "'"};
  }
  if (url->scheme == "https" && tls == nullptr) {
    return Error{"internal request", "no TLS settings to reach '" + base_url + "' (set listeners.https.ssl.* or ssl.*)"};
  }
  const std::string target = url->base_path + path;
  try {
    boost::asio::io_context ioc;
    tcp::resolver resolver(ioc);
    auto endpoints = resolver.resolve(url->host, std::to_string(url->port));
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, url->host + ":" + std::to_string(url->port));
    req.set(http::field::user_agent, "kafka-connect");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json");
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body() = json_body;
    req.keep_alive(false);
    req.prepare_payload();
    beast::error_code ec;
    if (url->scheme == "http") {
      beast::tcp_stream stream(ioc);
      stream.expires_after(std::chrono::milliseconds(timeout_ms));
      stream.connect(endpoints);
      auto res = round_trip(stream, req);
      stream.socket().shutdown(tcp::socket::shutdown_both, ec);
      return res;
    }
    beast::ssl_stream<beast::tcp_stream> stream(ioc, tls->native());
    beast::get_lowest_layer(stream).expires_after(std::chrono::milliseconds(timeout_ms));
    beast::get_lowest_layer(stream).connect(endpoints);
    if (auto st = tls->prepare_client(stream.native_handle(), url->host); !st) {
      return Error{"internal request", "POST " + target + " to " + base_url + ": " + st.error().message};
    }
    stream.handshake(boost::asio::ssl::stream_base::client);
    auto res = round_trip(stream, req);
    beast::get_lowest_layer(stream).socket().shutdown(tcp::socket::shutdown_both, ec);
    return res;
  } catch (const std::exception& e) {
    return Error{"internal request", "POST " + target + " to " + base_url + ": " + e.what()};
  }
}

}  // namespace

Result<InternalResponse> post_internal(const std::string& base_url, const std::string& path,
                                       const std::string& json_body, int timeout_ms, const rest::TlsContext* tls,
                                       const std::vector<std::pair<std::string, std::string>>& headers) {
  return request_internal(http::verb::post, base_url, path, json_body, timeout_ms, tls, headers);
}

Result<InternalResponse> put_internal(const std::string& base_url, const std::string& path,
                                      const std::string& json_body, int timeout_ms, const rest::TlsContext* tls,
                                      const std::vector<std::pair<std::string, std::string>>& headers) {
  return request_internal(http::verb::put, base_url, path, json_body, timeout_ms, tls, headers);
}

}  // namespace kc::herder
