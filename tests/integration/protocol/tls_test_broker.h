#pragma once
// A scripted TLS broker for the group client's TLS tests (the librdkafka mock
// cluster has no TLS): an Asio SSL acceptor on 127.0.0.1 that speaks the
// ScriptedRequests script (ApiVersions by itself, everything else through
// on_request, e.g. a ScriptedCoordinator) over TLS. A SASL script can add
// SaslHandshake/SaslAuthenticate the same way, before the group requests.
//
// Its certificates come from TestPki (tests/support/test_pki.h): a server
// certificate for localhost/127.0.0.1, one for another host name (host name
// mismatch), a client certificate (mutual TLS), and a second CA that signed
// nothing the broker uses (untrusted CA).
//
// Threading: everything runs on the test's io_context, one thread.

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <openssl/ssl.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>

#include "tests/integration/protocol/connection_test_util.h"
#include "tests/support/test_pki.h"

namespace kc::test {

/// How a TlsBroker behaves.
struct TlsBrokerOptions {
  std::string cert_file;       ///< server certificate (PEM)
  std::string key_file;        ///< its key (PEM)
  std::string client_ca_file;  ///< non-empty: require a client certificate signed by this CA
  /// Close each connection after reading the first bytes of the ClientHello,
  /// before answering (a broker going away mid-handshake).
  bool close_mid_handshake = false;
};

/// One TLS connection of the TlsBroker. Writes are queued (asynchronous: the
/// client runs on the same thread).
class TlsSession : public BrokerSession, public std::enable_shared_from_this<TlsSession> {
 public:
  TlsSession(boost::asio::ip::tcp::socket s, boost::asio::ssl::context& ctx) : stream_(std::move(s), ctx) {}

  void send_frame(kafka::Bytes frame) override {
    queue_.push_back(std::make_shared<kafka::Bytes>(std::move(frame)));
    if (queue_.size() == 1) write_next();
  }

  void close() override {
    boost::system::error_code ec;
    stream_.lowest_layer().close(ec);
  }

  boost::asio::ssl::stream<boost::asio::ip::tcp::socket>& stream() { return stream_; }

 private:
  void write_next() {
    if (queue_.empty()) return;
    auto frame = queue_.front();
    boost::asio::async_write(stream_, boost::asio::buffer(*frame),
                             [self = shared_from_this(), frame](const boost::system::error_code& ec, size_t) {
                               self->queue_.pop_front();
                               if (ec) {
                                 self->queue_.clear();
                                 return;
                               }
                               self->write_next();
                             });
  }

  boost::asio::ssl::stream<boost::asio::ip::tcp::socket> stream_;
  std::deque<std::shared_ptr<kafka::Bytes>> queue_;
};

/// The scripted TLS broker on 127.0.0.1:<ephemeral> (see file comment).
class TlsBroker : public ScriptedRequests {
 public:
  /// Loads the server certificate and key (and the client CA). Throws
  /// boost::system::system_error when they do not load.
  TlsBroker(boost::asio::io_context& io, TlsBrokerOptions options)
      : options_(std::move(options)),
        ctx_(boost::asio::ssl::context::tls_server),
        acceptor_(io, boost::asio::ip::tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0)) {
    ctx_.use_certificate_chain_file(options_.cert_file);
    ctx_.use_private_key_file(options_.key_file, boost::asio::ssl::context::pem);
    if (!options_.client_ca_file.empty()) {
      ctx_.load_verify_file(options_.client_ca_file);
      ctx_.set_verify_mode(boost::asio::ssl::verify_peer | boost::asio::ssl::verify_fail_if_no_peer_cert);
    }
    accept();
  }

  uint16_t port() const { return acceptor_.local_endpoint().port(); }

  /// TCP connections accepted.
  int accepted = 0;
  /// Completed handshakes.
  int handshakes = 0;
  /// SNI host names the clients sent ("" when none), one per completed handshake.
  std::vector<std::string> server_names;
  /// Subject CN of the client certificate, one per completed handshake ("" when none).
  std::vector<std::string> client_subjects;
  /// Failed server-side handshakes, as "<error message>".
  std::vector<std::string> handshake_errors;

 private:
  void accept() {
    acceptor_.async_accept([this](const boost::system::error_code& ec, boost::asio::ip::tcp::socket s) {
      if (ec) return;
      ++accepted;
      if (options_.close_mid_handshake) {
        auto sock = std::make_shared<boost::asio::ip::tcp::socket>(std::move(s));
        auto buf = std::make_shared<std::array<uint8_t, 16>>();
        sock->async_read_some(boost::asio::buffer(*buf), [sock, buf](const boost::system::error_code&, size_t) {
          boost::system::error_code ignored;
          sock->close(ignored);
        });
      } else {
        auto session = std::make_shared<TlsSession>(std::move(s), ctx_);
        session->stream().async_handshake(boost::asio::ssl::stream_base::server,
                                          [this, session](const boost::system::error_code& hec) {
                                            if (hec) {
                                              handshake_errors.push_back(hec.message());
                                              return;
                                            }
                                            record_peer(*session);
                                            read(session);
                                          });
      }
      accept();
    });
  }

  void record_peer(TlsSession& session) {
    ++handshakes;
    SSL* ssl = session.stream().native_handle();
    const char* sni = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name);
    server_names.emplace_back(sni ? sni : "");
    std::string cn;
    if (X509* peer = SSL_get1_peer_certificate(ssl)) {
      char buf[256] = {};
      X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, buf, sizeof buf);
      cn = buf;
      X509_free(peer);
    }
    client_subjects.push_back(cn);
  }

  void read(std::shared_ptr<TlsSession> session) {
    auto size = std::make_shared<std::array<uint8_t, 4>>();
    boost::asio::async_read(session->stream(), boost::asio::buffer(*size),
                            [this, session, size](const boost::system::error_code& ec, size_t) {
                              if (ec) return;
                              const auto& b = *size;
                              const uint32_t n = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) |
                                                 (uint32_t{b[2]} << 8) | uint32_t{b[3]};
                              if (n > 1024 * 1024) {
                                session->close();
                                return;
                              }
                              auto frame = std::make_shared<kafka::Bytes>(n);
                              boost::asio::async_read(
                                  session->stream(), boost::asio::buffer(*frame),
                                  [this, session, frame](const boost::system::error_code& ec2, size_t) {
                                    if (ec2) return;
                                    handle(session, *frame);
                                    read(session);
                                  });
                            });
  }

  TlsBrokerOptions options_;
  boost::asio::ssl::context ctx_;
  boost::asio::ip::tcp::acceptor acceptor_;
};

}  // namespace kc::test
