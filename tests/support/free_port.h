#pragma once
// free_port(): a 127.0.0.1 port for a test listener that must be named
// before it starts (a worker's advertised URL, PostgreSQL's -p). Test code.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

namespace kc::test {

/// A port on 127.0.0.1 that is free now, chosen at random below the kernel's
/// ephemeral range (/proc/sys/net/ipv4/ip_local_port_range; 32768 when it
/// cannot be read) and never handed out twice by this process. Below the
/// range because a bind(0) port is an ephemeral one, and an outgoing
/// connection of a parallel test may take it as its local port before the
/// listener binds it ("Address already in use" in CI). The Python twin is
/// free_port() in tests/integration/lifecycle/kc_harness.py.
/// Throws std::runtime_error after 200 tries without a free port.
inline uint16_t free_port() {
  static std::mutex mu;
  static std::set<uint16_t> handed_out;
  static std::mt19937 rng{std::random_device{}()};
  std::lock_guard lock(mu);
  int ephemeral_low = 32768;
  if (std::ifstream range("/proc/sys/net/ipv4/ip_local_port_range"); range) range >> ephemeral_low;
  const int high = std::max(ephemeral_low - 1, 20000);
  const int low = high > 12000 ? 10000 : 1024;
  std::uniform_int_distribution<int> pick(low, high);
  for (int attempt = 0; attempt < 200; ++attempt) {
    const auto port = static_cast<uint16_t>(pick(rng));
    if (handed_out.count(port)) continue;
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (s < 0) continue;
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    const bool bound = ::bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    ::close(s);
    if (!bound) continue;
    handed_out.insert(port);
    return port;
  }
  throw std::runtime_error("no free port on 127.0.0.1 in " + std::to_string(low) + ".." + std::to_string(high) +
                           " after 200 tries");
}

}  // namespace kc::test
