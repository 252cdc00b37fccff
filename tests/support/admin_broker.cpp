// The scripted admin broker of admin_broker.h. Requests are read and
// answered with protocol/kafka's wire Reader/Writer at the single version
// each API advertises; field layouts from the Kafka protocol message specs.
#include "tests/support/admin_broker.h"

#include <array>
#include <functional>

#include <boost/asio/read.hpp>
#include <boost/asio/write.hpp>

#include "protocol/kafka/messages.h"
#include "protocol/kafka/wire.h"

namespace kc::test {

namespace asio = boost::asio;
using kafka::Bytes;
using kafka::wire::Reader;
using kafka::wire::Writer;

namespace {

constexpr int16_t kNone = 0;
constexpr int16_t kUnknownTopicOrPartition = 3;
constexpr int16_t kUnknownMemberId = 25;
constexpr int16_t kUnsupportedVersion = 35;
constexpr int16_t kTopicAlreadyExists = 36;
constexpr int16_t kInvalidPartitions = 37;
constexpr int16_t kNonEmptyGroup = 68;
constexpr int16_t kGroupIdNotFound = 69;
constexpr int16_t kGroupSubscribedToTopic = 86;
constexpr int16_t kApiVersionsMax = 2;
constexpr int32_t kNodeId = 1;

// A request body that could not be read: the connection is closed.
struct BadRequest {
  std::string why;
};

void need(bool ok, const Reader& r) {
  if (!ok) throw BadRequest{r.error()};
}
std::string read_string(Reader& r) {
  std::string s;
  need(r.string(s, false), r);
  return s;
}
std::optional<std::string> read_nullable_string(Reader& r) {
  std::optional<std::string> s;
  need(r.nullable_string(s, false, true), r);
  return s;
}
int16_t read_i16(Reader& r) {
  int16_t v = 0;
  need(r.i16(v), r);
  return v;
}
int32_t read_i32(Reader& r) {
  int32_t v = 0;
  need(r.i32(v), r);
  return v;
}
int64_t read_i64(Reader& r) {
  int64_t v = 0;
  need(r.i64(v), r);
  return v;
}
// A classic array count; -1 (null) reads as nullopt.
std::optional<size_t> read_nullable_count(Reader& r) {
  int32_t n = 0;
  need(r.i32(n), r);
  if (n < 0) return std::nullopt;
  if (static_cast<size_t>(n) > r.remaining()) throw BadRequest{"array count beyond the request"};
  return static_cast<size_t>(n);
}
size_t read_count(Reader& r) {
  auto n = read_nullable_count(r);
  if (!n) throw BadRequest{"null array"};
  return *n;
}
void put_string(Writer& w, const std::string& s) { (void)w.string(s, false); }
void put_count(Writer& w, size_t n) { w.i32(static_cast<int32_t>(n)); }

}  // namespace

const std::map<int16_t, int16_t>& admin_broker_versions() {
  // The lowest non-flexible version librdkafka 2.0.2 can use for each:
  // Metadata v1 (controller id, for CreateTopics / CreatePartitions),
  // OffsetFetch v2 (null topics = every partition of the group),
  // OffsetCommit v2 (generation + member id, retention time),
  // CreateTopics v4 (the first that takes -1 for "broker default"
  // partitions / replication factor, KIP-464; librdkafka refuses
  // replication.factor -1 below it).
  static const std::map<int16_t, int16_t> versions{
      {api::kMetadata, 1},     {api::kOffsetCommit, 2},     {api::kOffsetFetch, 2},
      {api::kFindCoordinator, 0}, {api::kCreateTopics, 4}, {api::kCreatePartitions, 0},
      {api::kDeleteGroups, 0}, {api::kOffsetDelete, 0},
  };
  return versions;
}

struct GroupState {
  AdminBroker::Offsets offsets;
  std::optional<std::set<std::string>> members;  // topics the members subscribe to
};

struct AdminBroker::Impl {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor{io, asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  std::set<int16_t> advertise;
  std::thread thread;
  std::vector<std::shared_ptr<asio::ip::tcp::socket>> sockets;  // broker thread only

  mutable std::mutex mu;  // guards everything below
  std::map<std::string, int32_t> topics;
  std::map<std::string, GroupState> groups;
  std::vector<AdminBrokerRequest> log;
  std::optional<std::pair<std::string, uint16_t>> coordinator;
  std::set<std::string> denied_groups;  ///< FindCoordinator answers GROUP_AUTHORIZATION_FAILED

  uint16_t port() const { return acceptor.local_endpoint().port(); }

  void accept() {
    acceptor.async_accept([this](const boost::system::error_code& ec, asio::ip::tcp::socket s) {
      if (ec) return;
      auto sock = std::make_shared<asio::ip::tcp::socket>(std::move(s));
      sockets.push_back(sock);
      read(sock);
      accept();
    });
  }

  void read(const std::shared_ptr<asio::ip::tcp::socket>& sock) {
    auto size = std::make_shared<std::array<uint8_t, 4>>();
    asio::async_read(*sock, asio::buffer(*size), [this, sock, size](const boost::system::error_code& ec, size_t) {
      if (ec) return;
      const auto& b = *size;
      const uint32_t n = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | uint32_t{b[3]};
      if (n > 64 * 1024 * 1024) return close(*sock);
      auto frame = std::make_shared<Bytes>(n);
      asio::async_read(*sock, asio::buffer(*frame), [this, sock, frame](const boost::system::error_code& ec2, size_t) {
        if (ec2) return;
        if (handle(*sock, *frame)) read(sock);
      });
    });
  }

  static void close(asio::ip::tcp::socket& s) {
    boost::system::error_code ec;
    s.close(ec);
  }

  // Response header v0 (correlation id) + body; a blocking write, small and local.
  static void respond(asio::ip::tcp::socket& s, int32_t correlation_id, const Bytes& body) {
    Bytes frame;
    Writer w(frame);
    w.i32(static_cast<int32_t>(4 + body.size()));
    w.i32(correlation_id);
    w.raw(body);
    boost::system::error_code ec;
    asio::write(s, asio::buffer(frame), ec);
  }

  // Answers one request frame; false when the connection was closed.
  bool handle(asio::ip::tcp::socket& sock, const Bytes& frame) {
    Reader r(frame);
    AdminBrokerRequest rec;
    int32_t correlation_id = 0;
    try {
      rec.api_key = read_i16(r);
      rec.api_version = read_i16(r);
      correlation_id = read_i32(r);
      rec.client_id = read_nullable_string(r).value_or("");
      // Request header v2 (tagged fields) only for flexible versions; of
      // those, only ApiVersions v3 can arrive here.
      if (rec.api_key == api::kApiVersions && rec.api_version >= 3) need(r.skip_tagged_fields(), r);
      Bytes body;
      std::lock_guard lk(mu);
      if (!dispatch(rec, r, body)) {
        rec.handled = false;
        log.push_back(std::move(rec));
        close(sock);
        return false;
      }
      log.push_back(std::move(rec));
      respond(sock, correlation_id, body);
      return true;
    } catch (const BadRequest&) {
      rec.handled = false;
      std::lock_guard lk(mu);
      log.push_back(std::move(rec));
      close(sock);
      return false;
    }
  }

  // Reads the body of `rec`'s request from `r`, applies it and writes the
  // response body. False for an API or version this broker does not serve.
  bool dispatch(AdminBrokerRequest& rec, Reader& r, Bytes& out) {
    Writer w(out);
    if (rec.api_key == api::kApiVersions) {
      kafka::ApiVersionsResponse resp;
      if (rec.api_version > kApiVersionsMax) {
        resp.error_code = kUnsupportedVersion;
        resp.api_keys = {{api::kApiVersions, 0, kApiVersionsMax}};
        out = kafka::encode(resp, 0).value();
        return true;
      }
      resp.api_keys.push_back({api::kApiVersions, 0, kApiVersionsMax});
      for (const auto& [key, v] : admin_broker_versions())
        if (advertise.count(key)) resp.api_keys.push_back({key, v, v});
      out = kafka::encode(resp, rec.api_version).value();
      return true;
    }
    auto it = admin_broker_versions().find(rec.api_key);
    if (it == admin_broker_versions().end() || it->second != rec.api_version || !advertise.count(rec.api_key))
      return false;
    switch (rec.api_key) {
      case api::kMetadata: metadata(rec, r, w); return true;
      case api::kFindCoordinator: find_coordinator(rec, r, w); return true;
      case api::kOffsetCommit: offset_commit(rec, r, w); return true;
      case api::kOffsetFetch: offset_fetch(rec, r, w); return true;
      case api::kOffsetDelete: offset_delete(rec, r, w); return true;
      case api::kDeleteGroups: delete_groups(rec, r, w); return true;
      case api::kCreateTopics: create_topics(rec, r, w); return true;
      case api::kCreatePartitions: create_partitions(rec, r, w); return true;
      default: return false;
    }
  }

  // Metadata v1: Topics (nullable: null = all) -> Brokers, ControllerId, Topics.
  void metadata(AdminBrokerRequest&, Reader& r, Writer& w) {
    std::vector<std::string> names;
    auto n = read_nullable_count(r);
    if (n) {
      for (size_t i = 0; i < *n; ++i) names.push_back(read_string(r));
    } else {
      for (const auto& [t, c] : topics) names.push_back(t);
    }
    put_count(w, 1);
    w.i32(kNodeId);
    put_string(w, "127.0.0.1");
    w.i32(port());
    (void)w.nullable_string(std::nullopt, false);  // rack
    w.i32(kNodeId);                                 // controller
    put_count(w, names.size());
    for (const auto& t : names) {
      auto found = topics.find(t);
      w.i16(found == topics.end() ? kUnknownTopicOrPartition : kNone);
      put_string(w, t);
      w.boolean(false);  // is_internal
      const int32_t parts = found == topics.end() ? 0 : found->second;
      put_count(w, static_cast<size_t>(parts));
      for (int32_t p = 0; p < parts; ++p) {
        w.i16(kNone);
        w.i32(p);
        w.i32(kNodeId);  // leader
        put_count(w, 1);
        w.i32(kNodeId);  // replicas
        put_count(w, 1);
        w.i32(kNodeId);  // isr
      }
    }
  }

  // FindCoordinator v0: Key -> ErrorCode, NodeId, Host, Port. Every group is ours.
  void find_coordinator(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    rec.group = read_string(r);
    if (denied_groups.count(rec.group)) {  // ACLs deny the group: GROUP_AUTHORIZATION_FAILED, no node
      w.i16(30);
      w.i32(-1);
      put_string(w, "");
      w.i32(-1);
      return;
    }
    w.i16(kNone);
    w.i32(coordinator ? kNodeId + 1 : kNodeId);
    put_string(w, coordinator ? coordinator->first : std::string("127.0.0.1"));
    w.i32(coordinator ? coordinator->second : port());
  }

  // OffsetCommit v2: GroupId, GenerationId, MemberId, RetentionTimeMs,
  // Topics[Name, Partitions[Index, Offset, Metadata]] -> Topics[Name,
  // Partitions[Index, ErrorCode]].
  void offset_commit(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    rec.group = read_string(r);
    const int32_t generation = read_i32(r);
    const std::string member = read_string(r);
    (void)read_i64(r);
    struct Entry {
      std::string topic;
      int32_t partition;
      int64_t offset;
    };
    std::vector<Entry> entries;
    const size_t nt = read_count(r);
    for (size_t i = 0; i < nt; ++i) {
      std::string t = read_string(r);
      const size_t np = read_count(r);
      for (size_t j = 0; j < np; ++j) {
        const int32_t p = read_i32(r);
        const int64_t o = read_i64(r);
        (void)read_nullable_string(r);
        entries.push_back({t, p, o});
        rec.partitions.emplace_back(t, p);
      }
    }
    auto& g = groups[rec.group];
    // A commit from outside the generation is refused while members exist
    // (an admin commit sends generation -1 and no member id).
    const bool refused = g.members.has_value() && (generation < 0 || member.empty());
    if (!refused)
      for (const auto& e : entries) g.offsets[{e.topic, e.partition}] = e.offset;
    put_count(w, entries.size());
    for (const auto& e : entries) {  // one topic entry per partition: valid, and simple
      put_string(w, e.topic);
      put_count(w, 1);
      w.i32(e.partition);
      w.i16(refused ? kUnknownMemberId : kNone);
    }
  }

  // OffsetFetch v2: GroupId, Topics (nullable)[Name, PartitionIndexes] ->
  // Topics[Name, Partitions[Index, Offset, Metadata, ErrorCode]], ErrorCode.
  void offset_fetch(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    rec.group = read_string(r);
    std::vector<std::pair<std::string, int32_t>> wanted;
    auto nt = read_nullable_count(r);
    const auto g = groups.find(rec.group);
    if (nt) {
      for (size_t i = 0; i < *nt; ++i) {
        std::string t = read_string(r);
        const size_t np = read_count(r);
        for (size_t j = 0; j < np; ++j) wanted.emplace_back(t, read_i32(r));
      }
    } else if (g != groups.end()) {
      for (const auto& [tp, o] : g->second.offsets) wanted.push_back(tp);
    }
    rec.partitions = wanted;
    put_count(w, wanted.size());
    for (const auto& [t, p] : wanted) {
      put_string(w, t);
      put_count(w, 1);
      w.i32(p);
      int64_t offset = -1;  // nothing committed
      if (g != groups.end())
        if (auto o = g->second.offsets.find({t, p}); o != g->second.offsets.end()) offset = o->second;
      w.i64(offset);
      (void)w.nullable_string(std::string(), false);
      w.i16(kNone);
    }
    w.i16(kNone);
  }

  // OffsetDelete v0: GroupId, Topics[Name, Partitions[Index]] -> ErrorCode,
  // ThrottleTimeMs, Topics[Name, Partitions[Index, ErrorCode]].
  void offset_delete(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    rec.group = read_string(r);
    const size_t nt = read_count(r);
    for (size_t i = 0; i < nt; ++i) {
      std::string t = read_string(r);
      const size_t np = read_count(r);
      for (size_t j = 0; j < np; ++j) rec.partitions.emplace_back(t, read_i32(r));
    }
    auto g = groups.find(rec.group);
    if (g == groups.end()) {
      w.i16(kGroupIdNotFound);
      w.i32(0);
      put_count(w, 0);
      return;
    }
    w.i16(kNone);
    w.i32(0);
    put_count(w, rec.partitions.size());
    for (const auto& [t, p] : rec.partitions) {
      const bool subscribed = g->second.members && g->second.members->count(t);
      if (!subscribed) g->second.offsets.erase({t, p});
      put_string(w, t);
      put_count(w, 1);
      w.i32(p);
      w.i16(subscribed ? kGroupSubscribedToTopic : kNone);
    }
  }

  // DeleteGroups v0: GroupsNames -> ThrottleTimeMs, Results[GroupId, ErrorCode].
  void delete_groups(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    std::vector<std::string> names;
    const size_t n = read_count(r);
    for (size_t i = 0; i < n; ++i) names.push_back(read_string(r));
    for (const auto& g : names) rec.group += (rec.group.empty() ? "" : ",") + g;
    w.i32(0);
    put_count(w, names.size());
    for (const auto& name : names) {
      auto g = groups.find(name);
      int16_t code = kNone;
      if (g == groups.end()) code = kGroupIdNotFound;
      else if (g->second.members) code = kNonEmptyGroup;
      else groups.erase(g);
      put_string(w, name);
      w.i16(code);
    }
  }

  // CreateTopics v4: Topics[Name, NumPartitions, ReplicationFactor,
  // Assignments[Index, BrokerIds], Configs[Name, Value]], TimeoutMs,
  // ValidateOnly -> ThrottleTimeMs, Topics[Name, ErrorCode, ErrorMessage].
  void create_topics(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    const size_t n = read_count(r);
    for (size_t i = 0; i < n; ++i) {
      std::string name = read_string(r);
      const int32_t parts = read_i32(r);
      rec.replication_factors.push_back(read_i16(r));
      const size_t na = read_count(r);
      for (size_t a = 0; a < na; ++a) {
        (void)read_i32(r);
        const size_t nb = read_count(r);
        for (size_t b = 0; b < nb; ++b) (void)read_i32(r);
      }
      const size_t nc = read_count(r);
      for (size_t c = 0; c < nc; ++c) {
        (void)read_string(r);
        (void)read_nullable_string(r);
      }
      rec.counts.emplace_back(std::move(name), parts);
    }
    (void)read_i32(r);
    bool validate_only = false;
    need(r.boolean(validate_only), r);
    w.i32(0);
    put_count(w, rec.counts.size());
    for (const auto& [name, parts] : rec.counts) {
      int16_t code = kNone;
      std::optional<std::string> message;
      if (topics.count(name)) {
        code = kTopicAlreadyExists;
        message = "Topic '" + name + "' already exists.";
      } else if (parts == 0 || parts < -1) {
        code = kInvalidPartitions;
        message = "Number of partitions must be larger than 0.";
      } else if (!validate_only) {
        topics[name] = parts == -1 ? 1 : parts;  // -1: the broker default, 1 here
      }
      put_string(w, name);
      w.i16(code);
      (void)w.nullable_string(message, false);
    }
  }

  // CreatePartitions v0: Topics[Name, Count, Assignments (nullable)
  // [BrokerIds]], TimeoutMs, ValidateOnly -> ThrottleTimeMs,
  // Results[Name, ErrorCode, ErrorMessage].
  void create_partitions(AdminBrokerRequest& rec, Reader& r, Writer& w) {
    const size_t n = read_count(r);
    for (size_t i = 0; i < n; ++i) {
      std::string name = read_string(r);
      const int32_t count = read_i32(r);
      if (auto na = read_nullable_count(r)) {
        for (size_t a = 0; a < *na; ++a) {
          const size_t nb = read_count(r);
          for (size_t b = 0; b < nb; ++b) (void)read_i32(r);
        }
      }
      rec.counts.emplace_back(std::move(name), count);
    }
    (void)read_i32(r);
    bool validate_only = false;
    need(r.boolean(validate_only), r);
    w.i32(0);
    put_count(w, rec.counts.size());
    for (const auto& [name, count] : rec.counts) {
      auto t = topics.find(name);
      int16_t code = kNone;
      std::optional<std::string> message;
      if (t == topics.end()) {
        code = kUnknownTopicOrPartition;
      } else if (count <= t->second) {
        code = kInvalidPartitions;
        message = "Topic currently has " + std::to_string(t->second) + " partitions, which is higher than or equal to " +
                  "the requested " + std::to_string(count) + ".";
      } else if (!validate_only) {
        t->second = count;
      }
      put_string(w, name);
      w.i16(code);
      (void)w.nullable_string(message, false);
    }
  }
};

AdminBroker::AdminBroker(std::optional<std::set<int16_t>> advertise) : impl_(std::make_unique<Impl>()) {
  if (advertise) {
    impl_->advertise = std::move(*advertise);
  } else {
    for (const auto& [key, v] : admin_broker_versions()) impl_->advertise.insert(key);
  }
  impl_->accept();
  impl_->thread = std::thread([impl = impl_.get()] { impl->io.run(); });
}

AdminBroker::~AdminBroker() {
  asio::post(impl_->io, [impl = impl_.get()] {
    boost::system::error_code ec;
    impl->acceptor.close(ec);
    for (auto& s : impl->sockets) Impl::close(*s);
    impl->io.stop();
  });
  impl_->thread.join();
}

std::string AdminBroker::bootstrap() const { return "127.0.0.1:" + std::to_string(impl_->port()); }

void AdminBroker::set_topic(const std::string& topic, int32_t partitions) {
  std::lock_guard lk(impl_->mu);
  impl_->topics[topic] = partitions;
}

std::map<std::string, int32_t> AdminBroker::topics() const {
  std::lock_guard lk(impl_->mu);
  return impl_->topics;
}

void AdminBroker::set_offset(const std::string& group, const std::string& topic, int32_t partition, int64_t offset) {
  std::lock_guard lk(impl_->mu);
  impl_->groups[group].offsets[{topic, partition}] = offset;
}

void AdminBroker::set_members(const std::string& group, std::optional<std::set<std::string>> topics) {
  std::lock_guard lk(impl_->mu);
  impl_->groups[group].members = std::move(topics);
}

void AdminBroker::deny_group(const std::string& group) {
  std::lock_guard lk(impl_->mu);
  impl_->denied_groups.insert(group);
}

void AdminBroker::set_coordinator(const std::string& host, uint16_t port) {
  std::lock_guard lk(impl_->mu);
  impl_->coordinator = {host, port};
}

std::optional<AdminBroker::Offsets> AdminBroker::group(const std::string& group) const {
  std::lock_guard lk(impl_->mu);
  auto it = impl_->groups.find(group);
  if (it == impl_->groups.end()) return std::nullopt;
  return it->second.offsets;
}

std::vector<AdminBrokerRequest> AdminBroker::requests() const {
  std::lock_guard lk(impl_->mu);
  return impl_->log;
}

std::vector<AdminBrokerRequest> AdminBroker::requests(int16_t api_key) const {
  std::lock_guard lk(impl_->mu);
  std::vector<AdminBrokerRequest> out;
  for (const auto& r : impl_->log)
    if (r.api_key == api_key) out.push_back(r);
  return out;
}

}  // namespace kc::test
