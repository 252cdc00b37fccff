// `kconnectd mock-broker`: hosts librdkafka's mock Kafka cluster in this
// process, pre-creates Connect's internal topics (the mock has no
// CreateTopics), prints the bootstrap address and runs until SIGTERM/SIGINT.
//
// With --control-port it also listens on 127.0.0.1 for fault injection from
// outside the process (the process-level cluster tests, an operator with
// `nc`). The protocol is one command per line, one reply line per command:
// "ok ..." or "error ...". A bad command only gets an error reply. The
// commands (also in the subcommand's help):
//
//   errors API CODE[,CODE...]   next requests of API fail with CODE, in order
//                               (rd_kafka_mock_push_request_errors)
//   clear API                   drop API's pending errors
//   down BROKER | up BROKER     broker refuses / accepts connections (-1 = all)
//   coordinator GROUP BROKER    move GROUP's coordinator to BROKER (1..N)
//   rtt BROKER MS               delay BROKER's responses by MS (-1 = all)
//   topic NAME PARTITIONS       create a topic at run time (the mock has no
//                               CreateTopics; e.g. a new source topic)
//   brokers                     "ok N"
//   ping                        "ok pong"
//
// API is a request name (JoinGroup, SyncGroup, Heartbeat, LeaveGroup,
// FindCoordinator, OffsetCommit, OffsetFetch, Produce, Fetch, Metadata, ...)
// or its numeric ApiKey. CODE is a Kafka error name as librdkafka spells it
// without the RD_KAFKA_RESP_ERR_ prefix (REBALANCE_IN_PROGRESS,
// UNKNOWN_MEMBER_ID, NOT_COORDINATOR, _TRANSPORT = disconnect, ...) or a
// number. The mock's own threads run the brokers, so a command is applied
// between requests, never inside one.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cmd/kconnectd/commands.h"
#include "worker/storage/mock_cluster.h"

namespace kc::cmd {

namespace {

struct MockBrokerArgs {
  int brokers = 1;
  std::vector<std::string> topics;
  std::string bootstrap_file;
  int control_port = -1;  ///< -1 = no control channel, 0 = an ephemeral port
  std::string control_file;
};

/// Kafka request names -> ApiKey (the Kafka protocol's numbering).
const std::map<std::string, int16_t>& api_keys() {
  static const std::map<std::string, int16_t> keys{
      {"produce", 0},          {"fetch", 1},           {"listoffsets", 2},       {"metadata", 3},
      {"offsetcommit", 8},     {"offsetfetch", 9},     {"findcoordinator", 10},  {"joingroup", 11},
      {"heartbeat", 12},       {"leavegroup", 13},     {"syncgroup", 14},        {"describegroups", 15},
      {"listgroups", 16},      {"apiversions", 18},    {"initproducerid", 22},   {"addpartitionstotxn", 24},
      {"addoffsetstotxn", 25}, {"endtxn", 26},         {"txnoffsetcommit", 28}};
  return keys;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::optional<int> parse_int(const std::string& s) {
  try {
    size_t used = 0;
    int v = std::stoi(s, &used);
    if (used == s.size()) return v;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// API name or number -> ApiKey; nullopt if unknown.
std::optional<int16_t> parse_api(const std::string& s) {
  if (auto n = parse_int(s)) {
    if (*n >= 0 && *n < 100) return static_cast<int16_t>(*n);
    return std::nullopt;
  }
  auto it = api_keys().find(lower(s));
  if (it == api_keys().end()) return std::nullopt;
  return it->second;
}

/// Error name (librdkafka's, without RD_KAFKA_RESP_ERR_) or number -> code;
/// nullopt if librdkafka does not know it.
std::optional<rd_kafka_resp_err_t> parse_error(const std::string& s) {
  const rd_kafka_err_desc* descs = nullptr;
  size_t n = 0;
  rd_kafka_get_err_descs(&descs, &n);
  auto num = parse_int(s);
  std::string want = s;
  for (auto& c : want) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (want.rfind("RD_KAFKA_RESP_ERR_", 0) == 0) want = want.substr(18);
  for (size_t i = 0; i < n; ++i) {
    if (!descs[i].name) continue;
    if (num ? static_cast<int>(descs[i].code) == *num : want == descs[i].name) return descs[i].code;
  }
  return std::nullopt;
}

/// Runs one control command against `cluster`; returns the reply line
/// (without newline): "ok ..." or "error ...".
std::string run_command(storage::MockCluster& cluster, const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string t; in >> t;) w.push_back(t);
  if (w.empty()) return "error empty command (try: help)";
  const std::string cmd = lower(w[0]);
  auto mc = cluster.handle();
  auto broker_arg = [&](const std::string& s, bool allow_all) -> std::optional<int32_t> {
    auto b = parse_int(s);
    if (!b) return std::nullopt;
    if (allow_all && *b == -1) return *b;
    if (*b < 1 || *b > cluster.brokers()) return std::nullopt;
    return *b;
  };
  auto bad_broker = [&](const std::string& s) {
    return "error bad broker '" + s + "' (1.." + std::to_string(cluster.brokers()) + " or -1 for all)";
  };
  if (cmd == "ping") return "ok pong";
  if (cmd == "help")
    return "ok commands: errors API CODE[,CODE...] | clear API | down BROKER | up BROKER | "
           "coordinator GROUP BROKER | rtt BROKER MS | topic NAME PARTITIONS | brokers | ping";
  if (cmd == "brokers") return "ok " + std::to_string(cluster.brokers());
  if (cmd == "errors") {
    if (w.size() < 3) return "error usage: errors API CODE[,CODE...]";
    auto api = parse_api(w[1]);
    if (!api) return "error unknown API '" + w[1] + "'";
    std::vector<rd_kafka_resp_err_t> codes;
    // Codes may be comma- or space-separated.
    for (size_t i = 2; i < w.size(); ++i) {
      std::istringstream parts(w[i]);
      for (std::string p; std::getline(parts, p, ',');) {
        if (p.empty()) continue;
        auto e = parse_error(p);
        if (!e) return "error unknown error code '" + p + "'";
        codes.push_back(*e);
      }
    }
    if (codes.empty()) return "error no error codes given";
    rd_kafka_mock_push_request_errors_array(mc, *api, codes.size(), codes.data());
    return "ok pushed " + std::to_string(codes.size()) + " error(s) for ApiKey " + std::to_string(*api);
  }
  if (cmd == "clear") {
    if (w.size() != 2) return "error usage: clear API";
    auto api = parse_api(w[1]);
    if (!api) return "error unknown API '" + w[1] + "'";
    rd_kafka_mock_clear_request_errors(mc, *api);
    return "ok cleared ApiKey " + std::to_string(*api);
  }
  if (cmd == "down" || cmd == "up") {
    if (w.size() != 2) return "error usage: " + cmd + " BROKER";
    auto b = broker_arg(w[1], true);
    if (!b) return bad_broker(w[1]);
    auto err = cmd == "down" ? rd_kafka_mock_broker_set_down(mc, *b) : rd_kafka_mock_broker_set_up(mc, *b);
    if (err) return std::string("error ") + rd_kafka_err2str(err);
    return "ok broker " + w[1] + " " + cmd;
  }
  if (cmd == "coordinator") {
    if (w.size() != 3) return "error usage: coordinator GROUP BROKER";
    auto b = broker_arg(w[2], false);
    if (!b) return bad_broker(w[2]);
    auto err = rd_kafka_mock_coordinator_set(mc, "group", w[1].c_str(), *b);
    if (err) return std::string("error ") + rd_kafka_err2str(err);
    return "ok group " + w[1] + " coordinator " + w[2];
  }
  if (cmd == "rtt") {
    if (w.size() != 3) return "error usage: rtt BROKER MS";
    auto b = broker_arg(w[1], true);
    if (!b) return bad_broker(w[1]);
    auto ms = parse_int(w[2]);
    if (!ms || *ms < 0) return "error bad RTT '" + w[2] + "' (milliseconds >= 0)";
    auto err = rd_kafka_mock_broker_set_rtt(mc, *b, *ms);
    if (err) return std::string("error ") + rd_kafka_err2str(err);
    return "ok broker " + w[1] + " rtt " + w[2] + " ms";
  }
  if (cmd == "topic") {
    if (w.size() != 3) return "error usage: topic NAME PARTITIONS";
    auto n = parse_int(w[2]);
    if (!n || *n < 1) return "error bad partition count '" + w[2] + "' (at least 1)";
    auto st = cluster.create_topic(w[1], *n, 1);
    if (!st) return "error " + st.error().to_string();
    return "ok topic " + w[1] + " " + w[2] + " partitions";
  }
  return "error unknown command '" + w[0] + "' (try: help)";
}

/// The control channel: a listener on 127.0.0.1 served by one thread with
/// poll(); stop() wakes it through a pipe and joins it.
class ControlServer {
 public:
  /// Binds 127.0.0.1:`port` (0 = ephemeral). Returns nullptr and prints why
  /// on failure.
  static std::unique_ptr<ControlServer> start(storage::MockCluster& cluster, int port) {
    std::unique_ptr<ControlServer> s(new ControlServer(cluster));
    s->listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->listen_fd_ < 0 || ::pipe2(s->stop_pipe_, O_CLOEXEC) != 0) {
      std::cerr << "kconnectd mock-broker: control socket: " << std::strerror(errno) << "\n";
      return nullptr;
    }
    int one = 1;
    ::setsockopt(s->listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    if (::bind(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(s->listen_fd_, 8) != 0) {
      std::cerr << "kconnectd mock-broker: control port " << port << ": " << std::strerror(errno) << "\n";
      return nullptr;
    }
    socklen_t len = sizeof addr;
    ::getsockname(s->listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    s->port_ = ntohs(addr.sin_port);
    s->thread_ = std::thread([p = s.get()] { p->loop(); });
    return s;
  }

  ~ControlServer() { stop(); }

  /// The bound port.
  int port() const { return port_; }

  /// Wakes the loop, joins it and closes every socket. Idempotent.
  void stop() {
    if (thread_.joinable()) {
      char b = 0;
      (void)!::write(stop_pipe_[1], &b, 1);
      thread_.join();
    }
    for (auto& c : clients_) ::close(c.fd);
    clients_.clear();
    for (int* fd : {&listen_fd_, &stop_pipe_[0], &stop_pipe_[1]}) {
      if (*fd >= 0) ::close(*fd);
      *fd = -1;
    }
  }

 private:
  struct Client {
    int fd;
    std::string buffer;  ///< bytes received, not yet a whole line
  };

  explicit ControlServer(storage::MockCluster& cluster) : cluster_(cluster) {}

  void loop() {
    constexpr size_t kMaxLine = 4096;
    for (;;) {
      std::vector<pollfd> fds{{stop_pipe_[0], POLLIN, 0}, {listen_fd_, POLLIN, 0}};
      for (const auto& c : clients_) fds.push_back({c.fd, POLLIN, 0});
      if (::poll(fds.data(), fds.size(), -1) < 0) {
        if (errno == EINTR) continue;
        std::cerr << "mock-broker: control poll: " << std::strerror(errno) << "\n";
        return;
      }
      if (fds[0].revents) return;
      if (fds[1].revents & POLLIN) {
        int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd >= 0) clients_.push_back({fd, {}});
      }
      // Serve the clients polled this round (new ones join the next round).
      std::vector<int> closed;
      for (size_t i = 2; i < fds.size(); ++i) {
        if (!fds[i].revents) continue;
        auto it = std::find_if(clients_.begin(), clients_.end(), [&](const Client& c) { return c.fd == fds[i].fd; });
        char buf[1024];
        ssize_t n = ::recv(it->fd, buf, sizeof buf, 0);
        if (n <= 0) {
          closed.push_back(it->fd);
          continue;
        }
        it->buffer.append(buf, static_cast<size_t>(n));
        for (size_t nl; (nl = it->buffer.find('\n')) != std::string::npos;) {
          std::string line = it->buffer.substr(0, nl);
          it->buffer.erase(0, nl + 1);
          if (!line.empty() && line.back() == '\r') line.pop_back();
          std::string reply = run_command(cluster_, line);
          std::cerr << "mock-broker: control '" << line << "' -> " << reply << "\n";
          reply.push_back('\n');
          if (::send(it->fd, reply.data(), reply.size(), MSG_NOSIGNAL) < 0) break;
        }
        if (it->buffer.size() > kMaxLine) {
          const std::string reply = "error line too long\n";
          (void)::send(it->fd, reply.data(), reply.size(), MSG_NOSIGNAL);
          closed.push_back(it->fd);
        }
      }
      for (int fd : closed) {
        ::close(fd);
        clients_.erase(std::remove_if(clients_.begin(), clients_.end(), [fd](const Client& c) { return c.fd == fd; }),
                       clients_.end());
      }
    }
  }

  storage::MockCluster& cluster_;
  int listen_fd_ = -1;
  int stop_pipe_[2] = {-1, -1};
  int port_ = 0;
  std::vector<Client> clients_;  ///< owned by the loop thread until stop() joined it
  std::thread thread_;
};

int run_mock_broker(const MockBrokerArgs& args) {
  // Internal topics by default; --topic NAME:PARTITIONS adds or overrides.
  std::map<std::string, int> topics{{"connect-configs", 1}, {"connect-offsets", 25}, {"connect-status", 5}};
  for (const auto& t : args.topics) {
    auto colon = t.rfind(':');
    int partitions = 1;
    std::string name = t;
    if (colon != std::string::npos) {
      name = t.substr(0, colon);
      try {
        partitions = std::stoi(t.substr(colon + 1));
      } catch (const std::exception&) {
        partitions = 0;
      }
    }
    if (name.empty() || partitions < 1) {
      std::cerr << "kconnectd mock-broker: bad --topic '" << t << "' (expected NAME:PARTITIONS)\n";
      return 2;
    }
    topics[name] = partitions;
  }

  // Block the stop signals before librdkafka starts its threads, so that
  // only sigwait() below receives them.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto cluster = storage::MockCluster::start(args.brokers);
  if (!cluster) {
    std::cerr << "kconnectd mock-broker: " << cluster.error().to_string() << "\n";
    return 1;
  }
  for (const auto& [name, partitions] : topics) {
    auto st = (*cluster)->create_topic(name, partitions, 1);
    if (!st) {
      std::cerr << "kconnectd mock-broker: " << st.error().to_string() << "\n";
      return 1;
    }
  }
  std::unique_ptr<ControlServer> control;
  if (args.control_port >= 0) {
    control = ControlServer::start(**cluster, args.control_port);
    if (!control) return 1;
    std::cerr << "mock-broker: control port " << control->port() << "\n";
    if (!args.control_file.empty()) {
      std::ofstream out(args.control_file, std::ios::trunc);
      out << control->port() << "\n";
      if (!out) {
        std::cerr << "kconnectd mock-broker: cannot write " << args.control_file << "\n";
        return 1;
      }
    }
  }
  // The bootstrap file last: a reader that sees it may use everything above.
  const std::string bootstrap = (*cluster)->bootstrap_servers();
  if (!args.bootstrap_file.empty()) {
    std::ofstream out(args.bootstrap_file, std::ios::trunc);
    out << bootstrap << "\n";
    if (!out) {
      std::cerr << "kconnectd mock-broker: cannot write " << args.bootstrap_file << "\n";
      return 1;
    }
  }
  std::cout << bootstrap << std::endl;
  for (const auto& [name, partitions] : topics)
    std::cerr << "mock-broker: topic " << name << " (" << partitions << " partitions)\n";

  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "mock-broker: signal " << sig << ", shutting down\n";
  if (control) control->stop();  // before the cluster it points at goes away
  return 0;
}

}  // namespace

void register_mock_broker(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<MockBrokerArgs>();
  auto* sub = app.add_subcommand("mock-broker", "Host librdkafka's mock Kafka cluster and print its bootstrap address");
  sub->add_option("--brokers", args->brokers, "Number of brokers")->check(CLI::Range(1, 32));
  sub->add_option("--topic", args->topics,
                  "Topic to create, NAME:PARTITIONS (repeatable; defaults: connect-configs:1, "
                  "connect-offsets:25, connect-status:5)");
  sub->add_option("--bootstrap-file", args->bootstrap_file, "Also write the bootstrap address to this file");
  sub->add_option("--control-port", args->control_port,
                  "Listen on 127.0.0.1:PORT (0 = any free port) for fault-injection commands, one per line, "
                  "each answered by one line 'ok ...' or 'error ...': "
                  "'errors API CODE[,CODE...]' (next requests of API, e.g. JoinGroup, SyncGroup, Heartbeat, fail "
                  "with these Kafka error names/numbers, e.g. REBALANCE_IN_PROGRESS or _TRANSPORT), 'clear API', "
                  "'down BROKER', 'up BROKER' (-1 = all), 'coordinator GROUP BROKER', 'rtt BROKER MS', "
                  "'topic NAME PARTITIONS' (create a topic), 'brokers', 'ping', 'help'")
      ->check(CLI::Range(0, 65535));
  sub->add_option("--control-file", args->control_file,
                  "Write the control port to this file (before the bootstrap file is written)");
  sub->callback([args, &exit_code] { exit_code = run_mock_broker(*args); });
}

}  // namespace kc::cmd
