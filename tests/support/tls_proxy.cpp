#include "tests/support/tls_proxy.h"

#include <array>
#include <cstring>

#include <boost/asio/connect.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/write.hpp>

namespace kc::test {

namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace {

constexpr std::string_view kBrokerHost = "127.0.0.1";

void put_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

uint32_t get_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

}  // namespace

/// One client connection: TLS from the client, plain TCP to its broker.
/// Client bytes are relayed as they come; broker bytes frame by frame, so
/// each response can be rewritten whole.
class TlsProxy::Session : public std::enable_shared_from_this<Session> {
 public:
  Session(TlsProxy& proxy, tcp::socket client, uint16_t broker_port)
      : proxy_(proxy), tls_(std::move(client), proxy.ctx_), broker_(proxy.io_), broker_port_(broker_port) {}

  void start() {
    tls_.async_handshake(asio::ssl::stream_base::server, [self = shared_from_this()](boost::system::error_code ec) {
      if (ec) {
        ++self->proxy_.failed_handshakes;
        return self->close();
      }
      ++self->proxy_.handshakes;
      tcp::endpoint broker(asio::ip::make_address(std::string(kBrokerHost)), self->broker_port_);
      self->broker_.async_connect(broker, [self](boost::system::error_code cec) {
        if (cec) return self->close();
        self->relay_up();
        self->read_frame();
      });
    });
  }

 private:
  void relay_up() {
    tls_.async_read_some(asio::buffer(up_), [self = shared_from_this()](boost::system::error_code ec, size_t n) {
      if (ec) return self->close();
      self->proxy_.bytes_up += n;
      asio::async_write(self->broker_, asio::buffer(self->up_, n), [self](boost::system::error_code wec, size_t) {
        if (wec) return self->close();
        self->relay_up();
      });
    });
  }

  void read_frame() {
    asio::async_read(broker_, asio::buffer(size_), [self = shared_from_this()](boost::system::error_code ec, size_t) {
      if (ec) return self->close();
      const uint32_t n = get_be32(self->size_.data());
      if (n > 64u * 1024 * 1024) return self->close();
      self->frame_.assign(4 + n, 0);
      std::memcpy(self->frame_.data(), self->size_.data(), 4);
      asio::async_read(self->broker_, asio::buffer(self->frame_.data() + 4, n),
                       [self](boost::system::error_code rec, size_t) {
                         if (rec) return self->close();
                         self->proxy_.rewrites += self->proxy_.rewrite_addresses(self->frame_);
                         asio::async_write(self->tls_, asio::buffer(self->frame_),
                                           [self](boost::system::error_code wec, size_t) {
                                             if (wec) return self->close();
                                             self->read_frame();
                                           });
                       });
    });
  }

  void close() {
    boost::system::error_code ignored;
    tls_.lowest_layer().close(ignored);
    broker_.close(ignored);
  }

  TlsProxy& proxy_;
  asio::ssl::stream<tcp::socket> tls_;
  tcp::socket broker_;
  uint16_t broker_port_;
  std::array<uint8_t, 16384> up_{};
  std::array<uint8_t, 4> size_{};
  std::vector<uint8_t> frame_;
};

TlsProxy::TlsProxy(std::vector<uint16_t> broker_ports, const std::string& cert_file, const std::string& key_file)
    : ctx_(asio::ssl::context::tls_server), broker_ports_(std::move(broker_ports)) {
  ctx_.use_certificate_chain_file(cert_file);
  ctx_.use_private_key_file(key_file, asio::ssl::context::pem);
  for (size_t i = 0; i < broker_ports_.size(); ++i) {
    acceptors_.push_back(
        std::make_unique<tcp::acceptor>(io_, tcp::endpoint(asio::ip::make_address(std::string(kBrokerHost)), 0)));
    ports_.push_back(acceptors_.back()->local_endpoint().port());
    accept(i);
  }
  thread_ = std::thread([this] { io_.run(); });
}

TlsProxy::~TlsProxy() {
  io_.stop();
  if (thread_.joinable()) thread_.join();
}

std::string TlsProxy::bootstrap_servers() const {
  std::string out;
  for (uint16_t p : ports_) out += (out.empty() ? "" : ",") + std::string(kBrokerHost) + ":" + std::to_string(p);
  return out;
}

int TlsProxy::rewrite_addresses(std::vector<uint8_t>& frame) const {
  int n = 0;
  const size_t hl = kBrokerHost.size();
  for (size_t at = 0; at + hl + 4 <= frame.size(); ++at) {
    if (std::memcmp(frame.data() + at, kBrokerHost.data(), hl) != 0) continue;
    uint8_t* port = frame.data() + at + hl;
    for (size_t i = 0; i < broker_ports_.size(); ++i) {
      if (get_be32(port) != broker_ports_[i]) continue;
      put_be32(port, ports_[i]);
      ++n;
      break;
    }
  }
  return n;
}

void TlsProxy::accept(size_t i) {
  acceptors_[i]->async_accept([this, i](boost::system::error_code ec, tcp::socket s) {
    if (ec) return;
    std::make_shared<Session>(*this, std::move(s), broker_ports_[i])->start();
    accept(i);
  });
}

}  // namespace kc::test
