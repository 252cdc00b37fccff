#include "worker/herder/internal_client.h"

#include <chrono>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "worker/rest/url.h"

namespace kc::herder {

namespace beast = boost::beast;
namespace http = beast::http;
using tcp = boost::asio::ip::tcp;

Result<InternalResponse> post_internal(const std::string& base_url, const std::string& path,
                                       const std::string& json_body, int timeout_ms,
                                       const std::vector<std::pair<std::string, std::string>>& headers) {
  auto url = rest::parse_http_url(base_url);
  if (!url) return Error{"internal request", "bad URL '" + base_url + "': " + url.error().to_string()};
  if (url->scheme != "http") return Error{"internal request", "unsupported URL '" + base_url + "'"};
  const std::string target = url->base_path + path;
  try {
    boost::asio::io_context ioc;
    beast::tcp_stream stream(ioc);
    stream.expires_after(std::chrono::milliseconds(timeout_ms));
    tcp::resolver resolver(ioc);
    stream.connect(resolver.resolve(url->host, std::to_string(url->port)));
    http::request<http::string_body> req{http::verb::post, target, 11};
    req.set(http::field::host, url->host + ":" + std::to_string(url->port));
    req.set(http::field::user_agent, "kafka-connect");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "application/json");
    for (const auto& [name, value] : headers) req.set(name, value);
    req.body() = json_body;
    req.keep_alive(false);
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    beast::error_code ec;
    stream.socket().shutdown(tcp::socket::shutdown_both, ec);
    return InternalResponse{static_cast<int>(res.result_int()), std::move(res.body())};
  } catch (const std::exception& e) {
    return Error{"internal request", "POST " + target + " to " + base_url + ": " + e.what()};
  }
}

}  // namespace kc::herder
