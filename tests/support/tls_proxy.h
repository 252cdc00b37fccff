#pragma once
// A TLS-terminating proxy for tests: librdkafka's mock cluster (2.0.2) has
// no TLS listener, so a worker with security.protocol=SSL reaches it through
// this proxy. One TLS listener on 127.0.0.1 per mock broker; each accepted
// connection is handshaked (Asio SSL, server certificate from PEM files),
// then bytes are relayed to the broker over plain TCP.
//
// Brokers name themselves in Metadata and FindCoordinator answers
// ("127.0.0.1" and the broker's own port), and the mock cannot be told to
// advertise another address, so every response frame from a broker has each
// "127.0.0.1" followed by a broker's port (int32, big endian) rewritten to
// that broker's proxy port. The host string keeps its length, so frame
// sizes do not change; clients then open every later connection through the
// proxy too. (A record value holding those exact 13 bytes would be changed
// as well; tests do not send such values.)
//
// Threading: the proxy runs its own io_context on its own thread; the
// counters are atomics, safe to read from the test thread. Test code only.

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>

namespace kc::test {

class TlsProxy {
 public:
  /// Listens on 127.0.0.1:<ephemeral> for each port in `broker_ports` (the
  /// mock's brokers, on 127.0.0.1) with the server certificate chain
  /// `cert_file` and its key `key_file` (PEM). Throws
  /// boost::system::system_error when they do not load.
  TlsProxy(std::vector<uint16_t> broker_ports, const std::string& cert_file, const std::string& key_file);
  /// Stops the io thread and closes every connection.
  ~TlsProxy();
  TlsProxy(const TlsProxy&) = delete;
  TlsProxy& operator=(const TlsProxy&) = delete;

  /// "127.0.0.1:<proxy port>,..." in broker order, for bootstrap.servers.
  [[nodiscard]] std::string bootstrap_servers() const;
  /// The proxy port standing for broker i.
  [[nodiscard]] uint16_t port(size_t i) const { return ports_.at(i); }

  /// TLS handshakes completed (each is one client connection).
  std::atomic<int> handshakes{0};
  /// TLS handshakes that failed (a plaintext client, an untrusting one).
  std::atomic<int> failed_handshakes{0};
  /// Broker addresses rewritten in responses.
  std::atomic<int> rewrites{0};
  /// Bytes relayed from clients to brokers.
  std::atomic<uint64_t> bytes_up{0};

  /// Rewrites, in one response frame, each "127.0.0.1" + broker port to
  /// the matching proxy port; returns how many. Exposed for a unit test.
  int rewrite_addresses(std::vector<uint8_t>& frame) const;

 private:
  class Session;
  void accept(size_t i);

  boost::asio::io_context io_;
  boost::asio::ssl::context ctx_;
  std::vector<uint16_t> broker_ports_;
  std::vector<uint16_t> ports_;
  std::vector<std::unique_ptr<boost::asio::ip::tcp::acceptor>> acceptors_;
  std::thread thread_;
};

}  // namespace kc::test
