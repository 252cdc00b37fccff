#include "worker/storage/group_admin.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "protocol/kafka/connection.h"
#include "worker/storage/kafka_security.h"

namespace kc::storage {

namespace {

struct QueueDeleter {
  void operator()(rd_kafka_queue_t* q) const { rd_kafka_queue_destroy(q); }
};
struct OptionsDeleter {
  void operator()(rd_kafka_AdminOptions_t* o) const { rd_kafka_AdminOptions_destroy(o); }
};
struct EventDeleter {
  void operator()(rd_kafka_event_t* e) const { rd_kafka_event_destroy(e); }
};
struct ListDeleter {
  void operator()(rd_kafka_topic_partition_list_t* l) const { rd_kafka_topic_partition_list_destroy(l); }
};
using ListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, ListDeleter>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, EventDeleter>;

AdminStatus local_error(rd_kafka_resp_err_t code, std::string message) { return {code, std::move(message)}; }

// One admin request: a fresh client, `issue` sends it to a private queue
// with a request timeout of `timeout_ms`, and the result event comes back
// in `event` (or an error when the client or the wait failed).
AdminStatus run_admin(const ClientProps& props, rd_kafka_admin_op_t op, int timeout_ms,
                      const std::function<void(rd_kafka_t*, const rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& issue,
                      EventPtr& event) {
  auto client = make_admin_client(props);
  if (!client) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, client.error().to_string());
  rd_kafka_t* rk = client.value().get();
  std::unique_ptr<rd_kafka_queue_t, QueueDeleter> queue(rd_kafka_queue_new(rk));
  std::unique_ptr<rd_kafka_AdminOptions_t, OptionsDeleter> options(rd_kafka_AdminOptions_new(rk, op));
  char err[256] = {0};
  if (rd_kafka_AdminOptions_set_request_timeout(options.get(), std::max(timeout_ms, 1), err, sizeof err))
    return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, err);
  issue(rk, options.get(), queue.get());
  // librdkafka answers by the request timeout; the margin covers its own
  // scheduling, so the event is always collected before the client goes.
  event.reset(rd_kafka_queue_poll(queue.get(), timeout_ms + 5000));
  if (!event) return local_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "no answer from the admin client in time");
  if (auto code = rd_kafka_event_error(event.get()))
    return local_error(code, rd_kafka_event_error_string(event.get()) ? rd_kafka_event_error_string(event.get())
                                                                        : rd_kafka_err2str(code));
  return {};
}

// The first error of a group result: the group's own, else the first
// failed partition's, named "topic-partition: reason".
AdminStatus group_result_status(const rd_kafka_group_result_t* g) {
  if (!g) return local_error(RD_KAFKA_RESP_ERR__BAD_MSG, "the admin result names no group");
  if (const rd_kafka_error_t* e = rd_kafka_group_result_error(g))
    return local_error(rd_kafka_error_code(e), rd_kafka_error_string(e));
  if (const auto* parts = rd_kafka_group_result_partitions(g)) {
    for (int i = 0; i < parts->cnt; ++i) {
      const auto& p = parts->elems[i];
      if (p.err)
        return local_error(p.err, std::string(p.topic) + "-" + std::to_string(p.partition) + ": " + rd_kafka_err2str(p.err));
    }
  }
  return {};
}

ListPtr to_list(const std::vector<TopicPartition>& partitions) {
  ListPtr l(rd_kafka_topic_partition_list_new(static_cast<int>(std::max<size_t>(partitions.size(), 1))));
  for (const auto& [t, p] : partitions) rd_kafka_topic_partition_list_add(l.get(), t.c_str(), p);
  return l;
}

}  // namespace

namespace {

// One bootstrap entry: "host:port", "[v6]:port", optionally with a
// listener prefix ("PLAINTEXT://host:port") as Java clients accept.
std::optional<std::pair<std::string, uint16_t>> parse_broker(std::string s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.erase(0, 1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.pop_back();
  if (auto scheme = s.find("://"); scheme != std::string::npos) s.erase(0, scheme + 3);
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= s.size()) return std::nullopt;
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto digits = std::string_view(s).substr(colon + 1);
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
  if (ec != std::errc() || p != digits.data() + digits.size() || port == 0 || port > 65535) return std::nullopt;
  return std::make_pair(std::move(host), static_cast<uint16_t>(port));
}

// Blocking use of the asynchronous Connection on a private io_context that
// only this call runs: each step runs the context until its handler fired
// or the deadline passed.
class Probe {
 public:
  using Clock = std::chrono::steady_clock;
  Probe(std::string client_id, ConnectionSecurity security, Clock::time_point deadline)
      : client_id_(std::move(client_id)), security_(std::move(security)), deadline_(deadline) {}
  ~Probe() {
    for (auto& c : conns_) c->close("probe done");
    io_.restart();
    io_.poll();  // the close handlers, so nothing refers to a dead connection
    conns_.clear();
    io_.poll();
  }

  [[nodiscard]] int left_ms() const {
    return static_cast<int>(std::max<int64_t>(
        0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now()).count()));
  }

  // A connected Connection (ApiVersions done) or the connect error.
  kafka::NetResult<std::shared_ptr<kafka::Connection>> connect(const std::string& host, uint16_t port) {
    kafka::ConnectionOptions opts;
    opts.client_id = client_id_;
    opts.connect_timeout = std::chrono::milliseconds(std::max(left_ms(), 1));
    opts.request_timeout = std::chrono::milliseconds(std::max(left_ms(), 1));
    opts.tls = security_.tls;
    opts.tls_context = tls_context_;  // null until the first connection built it
    opts.sasl = security_.sasl;
    if (opts.tls && !tls_context_) {
      auto built = kafka::make_tls_context(*opts.tls);
      if (!built) return built.error();
      tls_context_ = opts.tls_context = built.value();
    }
    auto conn = kafka::Connection::create(io_, opts);
    conns_.push_back(conn);
    // Shared, not a local: a handler still pending at the deadline runs
    // later, when the destructor drains the context.
    auto result = std::make_shared<std::optional<kafka::NetStatus>>();
    conn->connect(host, port, [result](kafka::NetStatus st) { *result = std::move(st); });
    run_until([&] { return result->has_value(); });
    if (!*result) return kafka::NetError{kafka::NetErrorKind::Timeout, "no ApiVersions answer in time"};
    if (!**result) return (*result)->error();
    return conn;
  }

  kafka::NetResult<kafka::FindCoordinatorResponse> find_coordinator(kafka::Connection& conn, const std::string& group) {
    auto result = std::make_shared<std::optional<kafka::NetResult<kafka::FindCoordinatorResponse>>>();
    conn.send(kafka::FindCoordinatorRequest{group, 0},
              std::function<void(kafka::NetResult<kafka::FindCoordinatorResponse>)>(
                  [result](kafka::NetResult<kafka::FindCoordinatorResponse> r) { *result = std::move(r); }),
              std::chrono::milliseconds(std::max(left_ms(), 1)));
    run_until([&] { return result->has_value(); });
    if (!*result) return kafka::NetError{kafka::NetErrorKind::Timeout, "no FindCoordinator answer in time"};
    return std::move(**result);
  }

  // Waits `ms` (at most until the deadline) on a timer of the private context.
  void sleep_ms(int ms) {
    boost::asio::steady_timer timer(io_, std::min(deadline_, Clock::now() + std::chrono::milliseconds(ms)));
    auto fired = std::make_shared<bool>(false);
    timer.async_wait([fired](const boost::system::error_code&) { *fired = true; });
    run_until([&] { return *fired; });
  }

 private:
  template <typename Pred>
  void run_until(Pred done) {
    io_.restart();
    while (!done() && Clock::now() < deadline_) {
      io_.run_one_until(deadline_);
      if (io_.stopped()) io_.restart();
    }
  }

  std::string client_id_;
  ConnectionSecurity security_;
  std::shared_ptr<kafka::TlsContext> tls_context_;  // built once, shared by the probe's connections
  Clock::time_point deadline_;
  boost::asio::io_context io_;
  std::vector<std::shared_ptr<kafka::Connection>> conns_;
};

// librdkafka's local code for a Connection that did not open: __SSL for
// TLS, __AUTHENTICATION for SASL, else __TRANSPORT.
rd_kafka_resp_err_t connect_error_code(kafka::NetErrorKind kind) {
  if (kind == kafka::NetErrorKind::Tls) return RD_KAFKA_RESP_ERR__SSL;
  if (kind == kafka::NetErrorKind::Authentication) return RD_KAFKA_RESP_ERR__AUTHENTICATION;
  return RD_KAFKA_RESP_ERR__TRANSPORT;
}

BrokerApis to_apis(const std::vector<kafka::ApiVersionRange>& ranges) {
  BrokerApis out;
  for (const auto& r : ranges) out[r.api_key] = {r.min_version, r.max_version};
  return out;
}

// Refused before anything is sent when the coordinator lacks `key`.
AdminStatus require_api(const ClientProps& props, const std::string& group, int timeout_ms, int16_t key,
                        const char* missing_message) {
  BrokerApis apis;
  if (auto st = broker_apis(props, group, timeout_ms, apis); !st.ok()) return st;
  if (!apis.count(key)) return local_error(RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE, missing_message);
  return {};
}

}  // namespace

AdminStatus broker_apis(const ClientProps& props, const std::string& group, int timeout_ms, BrokerApis& apis) {
  apis.clear();
  auto security = connection_security(props);
  if (!security) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, security.error().to_string());
  std::vector<std::pair<std::string, uint16_t>> brokers;
  if (auto it = props.find("bootstrap.servers"); it != props.end()) {
    std::string rest = it->second;
    size_t pos = 0;
    while (pos <= rest.size()) {
      auto comma = rest.find(',', pos);
      if (comma == std::string::npos) comma = rest.size();
      std::string entry = rest.substr(pos, comma - pos);
      if (entry.find_first_not_of(" \t") != std::string::npos) {
        auto hp = parse_broker(entry);
        if (!hp) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, "invalid bootstrap.servers entry '" + entry + "'");
        brokers.push_back(std::move(*hp));
      }
      pos = comma + 1;
    }
  }
  if (brokers.empty()) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, "bootstrap.servers is empty");

  auto cid = props.find("client.id");
  Probe probe(cid != props.end() ? cid->second : "kconnectd-admin-probe", std::move(security).value(),
              Probe::Clock::now() + std::chrono::milliseconds(std::max(timeout_ms, 1)));
  std::shared_ptr<kafka::Connection> bootstrap;
  std::string failures;
  for (const auto& [host, port] : brokers) {
    auto c = probe.connect(host, port);
    if (c) {
      bootstrap = c.value();
      break;
    }
    const std::string failure = host + ":" + std::to_string(port) + ": " + c.error().to_string();
    // Bad TLS material or credentials fail the same at every broker.
    if (kafka::is_fatal_net_error(c.error().kind)) return local_error(connect_error_code(c.error().kind), failure);
    failures += (failures.empty() ? "" : "; ") + failure;
  }
  if (!bootstrap) return local_error(RD_KAFKA_RESP_ERR__TRANSPORT, "no broker answered ApiVersions: " + failures);
  if (group.empty()) {
    apis = to_apis(bootstrap->broker_versions());
    return {};
  }
  // The group's coordinator is the broker that answers DeleteGroups and
  // OffsetDelete; in a cluster being upgraded it may differ from the first.
  while (true) {
    auto r = probe.find_coordinator(*bootstrap, group);
    if (!r) return local_error(RD_KAFKA_RESP_ERR__TRANSPORT, "FindCoordinator for group " + group + " failed: " + r.error().to_string());
    const kafka::Coordinator* c = r->coordinators.empty() ? nullptr : &r->coordinators.front();
    const int16_t code = c ? c->error_code : static_cast<int16_t>(kafka::ErrorCode::COORDINATOR_NOT_AVAILABLE);
    if (code == static_cast<int16_t>(kafka::ErrorCode::COORDINATOR_NOT_AVAILABLE) ||
        code == static_cast<int16_t>(kafka::ErrorCode::COORDINATOR_LOAD_IN_PROGRESS)) {
      if (probe.left_ms() <= 0)
        return local_error(RD_KAFKA_RESP_ERR__TIMED_OUT, "no coordinator for group " + group + " within the timeout");
      probe.sleep_ms(100);
      continue;
    }
    if (code != 0)
      return local_error(static_cast<rd_kafka_resp_err_t>(code),
                         "FindCoordinator for group " + group + " failed: " + rd_kafka_err2str(static_cast<rd_kafka_resp_err_t>(code)));
    if (c->port <= 0 || c->port > 65535 || c->host.empty())
      return local_error(RD_KAFKA_RESP_ERR__BAD_MSG, "invalid coordinator address " + c->host + ":" + std::to_string(c->port));
    if (bootstrap->peer() == c->host + ":" + std::to_string(c->port)) {
      apis = to_apis(bootstrap->broker_versions());
      return {};
    }
    auto coord = probe.connect(c->host, static_cast<uint16_t>(c->port));
    if (!coord)
      return local_error(connect_error_code(coord.error().kind), "coordinator " + c->host + ":" + std::to_string(c->port) +
                                                         " of group " + group + ": " + coord.error().to_string());
    apis = to_apis(coord.value()->broker_versions());
    return {};
  }
}

AdminStatus list_group_offsets(const ClientProps& props, const std::string& group,
                               const std::vector<TopicPartition>& partitions, int timeout_ms,
                               std::vector<GroupOffset>& out) {
  out.clear();
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l = partitions.empty() ? nullptr : to_list(partitions);
                        auto* req = rd_kafka_ListConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_ListConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_ListConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups =
      rd_kafka_ListConsumerGroupOffsets_result_groups(rd_kafka_event_ListConsumerGroupOffsets_result(ev.get()), &n);
  if (n != 1) return local_error(RD_KAFKA_RESP_ERR__BAD_MSG, "the admin result names no group");
  if (const rd_kafka_error_t* e = rd_kafka_group_result_error(groups[0]))
    return local_error(rd_kafka_error_code(e), rd_kafka_error_string(e));
  if (const auto* parts = rd_kafka_group_result_partitions(groups[0])) {
    for (int i = 0; i < parts->cnt; ++i) {
      const auto& p = parts->elems[i];
      if (p.err)
        return local_error(p.err, std::string(p.topic) + "-" + std::to_string(p.partition) + ": " + rd_kafka_err2str(p.err));
      if (p.offset >= 0) out.push_back({p.topic, p.partition, p.offset});  // -1001: nothing committed
    }
  }
  std::sort(out.begin(), out.end(), [](const GroupOffset& a, const GroupOffset& b) {
    return a.topic != b.topic ? a.topic < b.topic : a.partition < b.partition;
  });
  return {};
}

AdminStatus alter_group_offsets(const ClientProps& props, const std::string& group,
                                const std::vector<GroupOffset>& offsets, int timeout_ms) {
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_ALTERCONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
                        for (const auto& g : offsets)
                          rd_kafka_topic_partition_list_add(l.get(), g.topic.c_str(), g.partition)->offset = g.offset;
                        auto* req = rd_kafka_AlterConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_AlterConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_AlterConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups =
      rd_kafka_AlterConsumerGroupOffsets_result_groups(rd_kafka_event_AlterConsumerGroupOffsets_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus delete_group_offsets(const ClientProps& props, const std::string& group,
                                 const std::vector<TopicPartition>& partitions, int timeout_ms) {
  if (auto st = require_api(props, group, timeout_ms, kApiOffsetDelete,
                            "OffsetDelete API (KIP-496) not supported by the broker, requires broker version >= 2.4.0");
      !st.ok())
    return st;
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        ListPtr l = to_list(partitions);
                        auto* req = rd_kafka_DeleteConsumerGroupOffsets_new(group.c_str(), l.get());
                        rd_kafka_DeleteConsumerGroupOffsets(rk, &req, 1, o, q);
                        rd_kafka_DeleteConsumerGroupOffsets_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups = rd_kafka_DeleteConsumerGroupOffsets_result_groups(
      rd_kafka_event_DeleteConsumerGroupOffsets_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus delete_group(const ClientProps& props, const std::string& group, int timeout_ms) {
  if (auto st = require_api(props, group, timeout_ms, kApiDeleteGroups,
                            "DeleteGroups API (KIP-229) not supported by the broker, requires broker version >= 1.1.0");
      !st.ok())
    return st;
  EventPtr ev;
  auto st = run_admin(props, RD_KAFKA_ADMIN_OP_DELETEGROUPS, timeout_ms,
                      [&](rd_kafka_t* rk, const rd_kafka_AdminOptions_t* o, rd_kafka_queue_t* q) {
                        auto* req = rd_kafka_DeleteGroup_new(group.c_str());
                        rd_kafka_DeleteGroups(rk, &req, 1, o, q);
                        rd_kafka_DeleteGroup_destroy(req);
                      },
                      ev);
  if (!st.ok()) return st;
  size_t n = 0;
  const auto* const* groups = rd_kafka_DeleteGroups_result_groups(rd_kafka_event_DeleteGroups_result(ev.get()), &n);
  return group_result_status(n == 1 ? groups[0] : nullptr);
}

AdminStatus topic_partitions(const ClientProps& props, const std::vector<std::string>& topics, int timeout_ms,
                             std::vector<TopicPartition>& out) {
  out.clear();
  auto client = make_admin_client(props);
  if (!client) return local_error(RD_KAFKA_RESP_ERR__INVALID_ARG, client.error().to_string());
  const rd_kafka_metadata_t* md = nullptr;
  // all_topics=1 lists without creating topics (no auto-create by lookup).
  auto err = rd_kafka_metadata(client.value().get(), 1, nullptr, &md, std::max(timeout_ms, 1));
  if (err) return local_error(err, std::string("metadata request failed: ") + rd_kafka_err2str(err));
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (t.err || std::find(topics.begin(), topics.end(), t.topic) == topics.end()) continue;
    for (int p = 0; p < t.partition_cnt; ++p) out.emplace_back(t.topic, t.partitions[p].id);
  }
  rd_kafka_metadata_destroy(md);
  std::sort(out.begin(), out.end());
  return {};
}


}  // namespace kc::storage
