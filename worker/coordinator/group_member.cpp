// GroupMember: the classic group-membership state machine (see group_member.h).
#include "worker/coordinator/group_member.h"

#include <atomic>
#include <cassert>
#include <stdexcept>

#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <spdlog/spdlog.h>

namespace kc::kafka {

namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

struct HostPort {
  std::string host;
  uint16_t port = 0;
};

// "host:port" or "[v6addr]:port".
std::optional<HostPort> parse_host_port(const std::string& s) {
  const auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0 || colon + 1 >= s.size()) return std::nullopt;
  std::string host = s.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned long port = 0;
  try {
    size_t used = 0;
    port = std::stoul(s.substr(colon + 1), &used);
    if (used != s.size() - colon - 1) return std::nullopt;
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (port == 0 || port > 65535 || host.empty()) return std::nullopt;
  return HostPort{host, static_cast<uint16_t>(port)};
}

bool heartbeating(GroupState s) {
  switch (s) {
    case GroupState::AwaitingAssignment:
    case GroupState::Syncing:
    case GroupState::Stable:
      return true;
    case GroupState::Unjoined:
    case GroupState::Discovering:
    case GroupState::PreparingJoin:
    case GroupState::Joining:
    case GroupState::Leaving:
    case GroupState::Closed:
      return false;
  }
  return false;
}

}  // namespace

namespace {

// Decodes a response body; when it does not decode but carries a non-zero
// ErrorCode at `error_at`, returns a response holding just that code. Some
// brokers (librdkafka's mock cluster) write null strings/bytes into the
// otherwise unused fields of an error response.
template <typename Resp>
NetResult<Resp> lenient_decode(const NetResult<Bytes>& raw, int16_t version, size_t error_at,
                               Result<Resp> (*decode)(BytesView, int16_t), const char* api) {
  if (!raw) return raw.error();
  auto decoded = decode(raw.value(), version);
  if (decoded) return std::move(decoded.value());
  const Bytes& b = raw.value();
  if (b.size() >= error_at + 2) {
    const auto code = static_cast<int16_t>((uint16_t{b[error_at]} << 8) | uint16_t{b[error_at + 1]});
    if (code != 0) {
      Resp resp;
      resp.error_code = code;
      return resp;
    }
  }
  return NetError{NetErrorKind::Protocol, std::string(api) + " v" + std::to_string(version) +
                                              ": cannot decode response: " +
                                              decoded.error().to_string()};
}

}  // namespace

NetResult<JoinGroupResponse> group_decode_join_response(const NetResult<Bytes>& raw, int16_t version) {
  // ErrorCode follows ThrottleTimeMs from v2.
  return lenient_decode<JoinGroupResponse>(raw, version, version >= 2 ? 4 : 0,
                                           &decode_JoinGroupResponse, "JoinGroup");
}

NetResult<SyncGroupResponse> group_decode_sync_response(const NetResult<Bytes>& raw, int16_t version) {
  // ErrorCode follows ThrottleTimeMs from v1.
  return lenient_decode<SyncGroupResponse>(raw, version, version >= 1 ? 4 : 0,
                                           &decode_SyncGroupResponse, "SyncGroup");
}

int16_t static_membership_min_version(ApiKey key) {
  switch (key) {
    case ApiKey::JoinGroup: return 5;
    case ApiKey::SyncGroup: return 3;
    case ApiKey::Heartbeat: return 3;
    case ApiKey::LeaveGroup:
    case ApiKey::FindCoordinator:
    case ApiKey::SaslHandshake:
    case ApiKey::ApiVersions:
    case ApiKey::SaslAuthenticate:
      return -1;
  }
  return -1;
}

const char* group_state_name(GroupState s) {
  switch (s) {
    case GroupState::Unjoined: return "Unjoined";
    case GroupState::Discovering: return "Discovering";
    case GroupState::PreparingJoin: return "PreparingJoin";
    case GroupState::Joining: return "Joining";
    case GroupState::AwaitingAssignment: return "AwaitingAssignment";
    case GroupState::Syncing: return "Syncing";
    case GroupState::Stable: return "Stable";
    case GroupState::Leaving: return "Leaving";
    case GroupState::Closed: return "Closed";
  }
  return "?";
}

bool group_transition_allowed(GroupState from, GroupState to) {
  using S = GroupState;
  if (to == S::Closed) return from != S::Closed;  // stop()/fatal from anywhere
  switch (from) {
    case S::Unjoined:
      return to == S::Discovering;
    case S::Discovering:
      return to == S::PreparingJoin;
    case S::PreparingJoin:
      return to == S::Joining || to == S::Discovering || to == S::Leaving;
    case S::Joining:
      return to == S::PreparingJoin || to == S::AwaitingAssignment || to == S::Syncing ||
             to == S::Discovering || to == S::Leaving;
    case S::AwaitingAssignment:
      return to == S::Syncing || to == S::PreparingJoin || to == S::Discovering ||
             to == S::Leaving;
    case S::Syncing:
      return to == S::Stable || to == S::PreparingJoin || to == S::Discovering ||
             to == S::Leaving;
    case S::Stable:
      return to == S::PreparingJoin || to == S::Discovering || to == S::Leaving;
    case S::Leaving:
      return false;  // only Closed, handled above
    case S::Closed:
      return false;
  }
  return false;
}

spdlog::level::level_enum group_error_log_level(const GroupError& error) {
  if (error.fatal) return spdlog::level::err;
  if (!error.net && error.code == ErrorCode::REBALANCE_IN_PROGRESS) {
    return error.api == ApiKey::Heartbeat ? spdlog::level::debug : spdlog::level::info;
  }
  return spdlog::level::warn;
}

std::string GroupError::to_string() const {
  std::string s = std::string(api_name(api)) + ": ";
  if (net) {
    s += net_error_kind_name(*net);
  } else {
    s += error_name(static_cast<int16_t>(code)) + " (" +
         std::to_string(static_cast<int16_t>(code)) + ")";
  }
  if (!message.empty()) s += ": " + message;
  if (fatal) s += " [fatal]";
  return s;
}

struct GroupMember::Impl {
  explicit Impl(asio::io_context& io) : heartbeat_timer(io), retry_timer(io) {}
  std::vector<HostPort> bootstrap;
  size_t next_bootstrap = 0;
  std::shared_ptr<Connection> bootstrap_conn;
  std::shared_ptr<Connection> coord_conn;
  HostPort coord;  // last known coordinator address (for leave on a fresh connection)
  asio::steady_timer heartbeat_timer;
  asio::steady_timer retry_timer;
  bool heartbeat_in_flight = false;
  std::vector<JoinGroupProtocol> last_protocols;  // as sent in the current JoinGroup
  std::vector<LeaveDone> leave_done;
  std::chrono::steady_clock::time_point state_since = std::chrono::steady_clock::now();
  std::shared_ptr<TlsContext> tls_context;  // built once from config.tls; shared by every connection
};

std::shared_ptr<GroupMember> GroupMember::create(asio::io_context& io, GroupMemberConfig config,
                                                 GroupMemberCallbacks callbacks) {
  if (config.group_id.empty()) throw std::invalid_argument("GroupMember: group_id is empty");
  if (config.bootstrap_servers.empty()) {
    throw std::invalid_argument("GroupMember: bootstrap_servers is empty");
  }
  if (!callbacks.on_prepare_join || !callbacks.on_assign) {
    throw std::invalid_argument("GroupMember: on_prepare_join and on_assign are required");
  }
  if (config.group_instance_id && config.group_instance_id->empty()) {
    throw std::invalid_argument("GroupMember: group_instance_id is empty (unset it for dynamic membership)");
  }
  std::vector<HostPort> bootstrap;
  for (const auto& s : config.bootstrap_servers) {
    auto hp = parse_host_port(s);
    if (!hp) throw std::invalid_argument("GroupMember: bootstrap server '" + s + "' is not host:port");
    bootstrap.push_back(*hp);
  }
  std::shared_ptr<TlsContext> tls_context;
  if (config.tls) {
    auto built = make_tls_context(*config.tls);
    if (!built) throw std::invalid_argument("GroupMember: TLS: " + built.error().message);
    tls_context = std::move(built.value());
  }
  auto m = std::shared_ptr<GroupMember>(new GroupMember(io, std::move(config), std::move(callbacks)));
  m->impl_->bootstrap = std::move(bootstrap);
  m->impl_->tls_context = std::move(tls_context);
  return m;
}

GroupMember::GroupMember(asio::io_context& io, GroupMemberConfig config,
                         GroupMemberCallbacks callbacks)
    : io_(io),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      impl_(std::make_unique<Impl>(io)) {}

GroupMember::~GroupMember() {
  if (impl_->bootstrap_conn) impl_->bootstrap_conn->close("group member destroyed");
  if (impl_->coord_conn) impl_->coord_conn->close("group member destroyed");
}

// ------------------------------------------------------------ state machine

void GroupMember::set_state(GroupState to) {
  const GroupState from = state_;
  if (from == to) return;
  if (!group_transition_allowed(from, to)) {
    spdlog::error("group {} member '{}': illegal transition from {} to {}", config_.group_id,
                  member_id_, group_state_name(from), group_state_name(to));
    assert(false && "illegal GroupMember state transition");
  }
  const auto now = std::chrono::steady_clock::now();
  const auto spent =
      std::chrono::duration_cast<milliseconds>(now - impl_->state_since).count();
  spdlog::info("group {} member '{}' gen {}: from {} to {} (after {} ms)", config_.group_id,
               member_id_, generation_, group_state_name(from), group_state_name(to), spent);
  state_ = to;
  impl_->state_since = now;
}

// ----------------------------------------------------------- public entries

void GroupMember::start() {
  asio::post(io_, [w = weak_from_this()] {
    if (auto self = w.lock()) self->do_start();
  });
}

void GroupMember::request_rejoin(std::string reason) {
  asio::post(io_, [w = weak_from_this(), reason = std::move(reason)] {
    if (auto self = w.lock()) self->do_request_rejoin(reason);
  });
}

void GroupMember::leave(std::string reason, LeaveDone done) {
  asio::post(io_, [w = weak_from_this(), reason = std::move(reason), done = std::move(done)]() mutable {
    if (auto self = w.lock()) {
      self->do_leave(reason, std::move(done));
    } else if (done) {
      done(std::nullopt);
    }
  });
}

void GroupMember::stop() {
  asio::post(io_, [w = weak_from_this()] {
    if (auto self = w.lock()) self->do_stop();
  });
}

void GroupMember::do_start() {
  if (state_ != GroupState::Unjoined) return;
  set_state(GroupState::Discovering);
  find_coordinator(coord_epoch_);
}

void GroupMember::do_request_rejoin(const std::string& reason) {
  switch (state_) {
    case GroupState::Stable:
      if (callbacks_.on_rebalance_started) {
        callbacks_.on_rebalance_started(RebalanceStarted{generation_, reason});
      }
      prepare_join(reason);
      return;
    case GroupState::AwaitingAssignment:
    case GroupState::Syncing:
      if (!rejoin_after_sync_) {
        spdlog::info("group {} member '{}': rejoin requested during the sync ({}); rejoining once the assignment "
                     "arrives",
                     config_.group_id, member_id_, reason);
        rejoin_after_sync_ = reason;
      }
      return;
    case GroupState::Unjoined:
    case GroupState::Discovering:
    case GroupState::PreparingJoin:
    case GroupState::Joining:
    case GroupState::Leaving:
    case GroupState::Closed:
      return;  // a join is coming anyway, or the member is going away
  }
}

void GroupMember::do_stop() {
  if (state_ == GroupState::Closed) return;
  close_all("stopped");
  set_state(GroupState::Closed);
  finish_leave(GroupError{ApiKey::LeaveGroup, ErrorCode::NONE, ErrorAction::None,
                          NetErrorKind::Disconnected, "stopped before LeaveGroup completed",
                          false});
}

// ---------------------------------------------------------------- discovery

void GroupMember::discover(const std::string& reason) {
  spdlog::info("group {} member '{}': (re)discovering the coordinator: {}", config_.group_id,
               member_id_, reason);
  // Everything on the old coordinator is abandoned.
  ++coord_epoch_;
  ++round_;
  impl_->heartbeat_timer.cancel();
  impl_->heartbeat_in_flight = false;
  if (impl_->coord_conn) impl_->coord_conn->close("coordinator given up: " + reason);
  impl_->coord_conn.reset();
  coordinator_addr_.clear();
  set_state(GroupState::Discovering);
  find_coordinator(coord_epoch_);
}

void GroupMember::find_coordinator(uint64_t epoch) {
  if (epoch != coord_epoch_ || state_ != GroupState::Discovering) return;
  auto& conn = impl_->bootstrap_conn;
  if (conn && conn->is_open()) {
    FindCoordinatorRequest req{config_.group_id, 0};
    conn->send(req,
               [w = weak_from_this(), epoch](NetResult<FindCoordinatorResponse> r) {
                 if (auto self = w.lock()) self->on_find_coordinator(epoch, std::move(r));
               },
               config_.request_timeout);
    return;
  }
  // (Re)connect to the next bootstrap broker.
  const HostPort hp = impl_->bootstrap[impl_->next_bootstrap % impl_->bootstrap.size()];
  conn = Connection::create(io_, connection_options());
  conn->connect(hp.host, hp.port, [w = weak_from_this(), epoch, conn = conn](NetStatus st) {
    auto self = w.lock();
    if (!self || epoch != self->coord_epoch_ || self->state_ != GroupState::Discovering) return;
    if (!st) {
      if (self->discovery_failed(st.error(), "bootstrap ", ErrorAction::Retry, ApiKey::FindCoordinator, true)) return;
      ++self->impl_->next_bootstrap;
      self->impl_->bootstrap_conn.reset();
      self->retry_later([w, epoch] {
        if (auto s = w.lock()) s->find_coordinator(epoch);
      });
      return;
    }
    self->find_coordinator(epoch);
  });
}

bool GroupMember::discovery_failed(const NetError& error, const std::string& where, ErrorAction action,
                                   ApiKey fatal_api, bool check_auth) {
  // Bad credentials do not get better by retrying (Kafka clients raise
  // AuthenticationException instead of reconnecting): one fatal error.
  if (check_auth && error.kind == NetErrorKind::Authentication) {
    fatal(GroupError{fatal_api, ErrorCode::SASL_AUTHENTICATION_FAILED, ErrorAction::Fatal, error.kind, error.message,
                     true});
    return true;
  }
  if (error.kind == NetErrorKind::Tls) {  // retrying cannot fix it
    fatal(GroupError{ApiKey::FindCoordinator, ErrorCode::NONE, ErrorAction::Fatal, error.kind, where + error.message,
                     true});
    return true;
  }
  report(GroupError{ApiKey::FindCoordinator, ErrorCode::NONE, action, error.kind, where + error.message, false});
  if (error.kind == NetErrorKind::Unsupported) {
    fatal(GroupError{fatal_api, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal, error.kind, error.message, true});
    return true;
  }
  return false;
}

void GroupMember::on_find_coordinator(uint64_t epoch, NetResult<FindCoordinatorResponse> r) {
  if (epoch != coord_epoch_ || state_ != GroupState::Discovering) return;
  auto retry = [this, epoch] {
    retry_later([w = weak_from_this(), epoch] {
      if (auto s = w.lock()) s->find_coordinator(epoch);
    });
  };
  if (!r) {
    if (discovery_failed(r.error(), "", ErrorAction::Retry, ApiKey::FindCoordinator, false)) return;
    if (impl_->bootstrap_conn) impl_->bootstrap_conn->close("FindCoordinator failed");
    impl_->bootstrap_conn.reset();
    ++impl_->next_bootstrap;
    retry();
    return;
  }
  const Coordinator* c = r->coordinators.empty() ? nullptr : &r->coordinators.front();
  const int16_t code = c ? c->error_code : static_cast<int16_t>(ErrorCode::COORDINATOR_NOT_AVAILABLE);
  if (code != 0) {
    const ErrorAction action = action_for(code);
    GroupError e{ApiKey::FindCoordinator, static_cast<ErrorCode>(code), action, std::nullopt,
                 c && c->error_message ? *c->error_message : std::string(), false};
    if (action == ErrorAction::Fatal) {
      e.fatal = true;
      fatal(std::move(e));
      return;
    }
    report(std::move(e));
    retry();
    return;
  }
  if (c->port <= 0 || c->port > 65535 || c->host.empty()) {
    report(GroupError{ApiKey::FindCoordinator, ErrorCode::NONE, ErrorAction::Retry,
                      NetErrorKind::Protocol,
                      "invalid coordinator address " + c->host + ":" + std::to_string(c->port),
                      false});
    retry();
    return;
  }
  connect_coordinator(epoch, c->host, static_cast<uint16_t>(c->port));
}

void GroupMember::connect_coordinator(uint64_t epoch, const std::string& host, uint16_t port) {
  // A separate connection from the bootstrap one, even to the same broker
  // (the Java client does the same, reference 9.8 notes).
  auto conn = Connection::create(io_, connection_options());
  impl_->coord_conn = conn;
  impl_->coord = HostPort{host, port};
  conn->connect(host, port, [w = weak_from_this(), epoch, conn, host, port](NetStatus st) {
    auto self = w.lock();
    if (!self || epoch != self->coord_epoch_ || self->state_ != GroupState::Discovering) return;
    if (!st) {
      if (self->discovery_failed(st.error(), "coordinator ", ErrorAction::RediscoverCoordinator, ApiKey::JoinGroup,
                                 true))
        return;
      self->impl_->coord_conn.reset();
      self->retry_later([w, epoch] {
        if (auto s = w.lock()) s->find_coordinator(epoch);
      });
      return;
    }
    // Every group API must have a common version with the coordinator, and
    // a static member needs the versions that carry its instance id.
    for (ApiKey key : {ApiKey::JoinGroup, ApiKey::SyncGroup, ApiKey::Heartbeat, ApiKey::LeaveGroup}) {
      auto v = conn->versions().version_for(key);
      if (!v) {
        self->fatal(GroupError{key, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal,
                               NetErrorKind::Unsupported, v.error().message, true});
        return;
      }
      if (self->config_.group_instance_id && *v < static_membership_min_version(key)) {
        self->fatal(GroupError{
            key, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal, NetErrorKind::Unsupported,
            "group.instance.id '" + *self->config_.group_instance_id + "' needs static membership (KIP-345: " +
                api_name(key) + " v" + std::to_string(static_membership_min_version(key)) +
                "+, Kafka 2.3+), but coordinator " + host + ":" + std::to_string(port) + " speaks " +
                api_name(key) + " only up to v" + std::to_string(*v) +
                "; upgrade the brokers or unset group.instance.id",
            true});
        return;
      }
    }
    self->coordinator_addr_ = host + ":" + std::to_string(port);
    spdlog::info("group {} member '{}': coordinator is {}", self->config_.group_id,
                 self->member_id_, self->coordinator_addr_);
    self->prepare_join(self->rebalance_pending_ ? "joining the group" : "rejoining after coordinator change");
  });
}

void GroupMember::coordinator_lost(ApiKey api, const NetError& error) {
  report(GroupError{api, ErrorCode::NONE, ErrorAction::RediscoverCoordinator, error.kind,
                    error.message, false});
  discover(std::string(api_name(api)) + ": " + error.to_string());
}

// ------------------------------------------------------------- join / sync

void GroupMember::prepare_join(const std::string& reason) {
  // While the caller prepares (it may hold JoinGroup back until revoked
  // work has stopped), a member that still has a generation keeps
  // heartbeating, as Java's heartbeat thread does during onJoinPrepare:
  // otherwise the session expires and the member is expelled.
  if (generation_ < 0) impl_->heartbeat_timer.cancel();
  const uint64_t round = ++round_;
  rejoin_after_sync_.reset();  // this join carries any deferred request
  set_state(GroupState::PreparingJoin);
  JoinPrepare prep{rebalance_pending_, generation_, member_id_, reason};
  prep_reason_ = reason;
  rebalance_pending_ = false;
  auto called = std::make_shared<std::atomic<bool>>(false);
  JoinReady ready = [w = weak_from_this(), round, called,
                     &io = io_](std::vector<JoinGroupProtocol> protocols) {
    if (called->exchange(true)) return;  // at most once
    asio::post(io, [w, round, protocols = std::move(protocols)]() mutable {
      auto self = w.lock();
      if (!self || round != self->round_ || self->state_ != GroupState::PreparingJoin) return;
      self->send_join(round, std::move(protocols));
    });
  };
  callbacks_.on_prepare_join(prep, std::move(ready));
}

int16_t GroupMember::version_of(ApiKey key) const {
  if (!impl_->coord_conn) return -1;
  auto v = impl_->coord_conn->versions().version_for(key);
  return v ? *v : int16_t{-1};
}

template <typename Response>
void GroupMember::send_round_request(ApiKey api, int16_t v, Result<Bytes> body, uint64_t round,
                                     NetResult<Response> (*decode)(const NetResult<Bytes>&, int16_t),
                                     void (GroupMember::*on_response)(uint64_t, NetResult<Response>),
                                     std::chrono::milliseconds timeout) {
  if (!body) {
    fatal(GroupError{api, ErrorCode::NONE, ErrorAction::Fatal, NetErrorKind::Protocol,
                     std::string("cannot encode ") + api_name(api) + " v" + std::to_string(v) + ": " +
                         body.error().to_string(),
                     true});
    return;
  }
  impl_->coord_conn->send_raw(
      api, v, std::move(body.value()),
      [w = weak_from_this(), api, round, v, decode, on_response,
       t0 = std::chrono::steady_clock::now()](NetResult<Bytes> raw) {
        if (auto self = w.lock()) {
          auto resp = decode(raw, v);
          self->report_timing(api, t0, resp && resp->error_code == 0);
          ((*self).*on_response)(round, std::move(resp));
        }
      },
      timeout);
}

void GroupMember::send_join(uint64_t round, std::vector<JoinGroupProtocol> protocols) {
  (void)round;
  const uint64_t my_round = ++round_;
  set_state(GroupState::Joining);
  if (!impl_->coord_conn) {
    coordinator_lost(ApiKey::JoinGroup, NetError{NetErrorKind::Disconnected, "no coordinator"});
    return;
  }
  impl_->last_protocols = protocols;
  JoinGroupRequest req;
  req.group_id = config_.group_id;
  req.session_timeout_ms = static_cast<int32_t>(config_.session_timeout.count());
  req.rebalance_timeout_ms = static_cast<int32_t>(config_.rebalance_timeout.count());
  req.member_id = member_id_;
  req.group_instance_id = config_.group_instance_id;  // v5+, checked at connect
  req.protocol_type = config_.protocol_type;
  req.protocols = std::move(protocols);
  // Request timeout = max(request.timeout.ms, rebalance timeout + 5000 ms)
  // (reference 4.2): the broker may hold JoinGroup for a whole rebalance timeout.
  const auto timeout = std::max(config_.request_timeout, config_.rebalance_timeout + milliseconds(5000));
  auto version = impl_->coord_conn->versions().version_for(ApiKey::JoinGroup);
  if (!version) {
    fatal(GroupError{ApiKey::JoinGroup, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal,
                     NetErrorKind::Unsupported, version.error().message, true});
    return;
  }
  const int16_t v = *version;
  if (v >= 8) req.reason = prep_reason_.substr(0, 255);
  send_round_request(ApiKey::JoinGroup, v, encode(req, v), my_round, &group_decode_join_response,
                     &GroupMember::on_join_response, timeout);
}

void GroupMember::rejoin_after_error(ApiKey api, int16_t code, ErrorAction action) {
  const std::string why = error_name(code) + " from " + api_name(api);
  switch (action) {
    case ErrorAction::None:
      return;
    case ErrorAction::Rejoin:
    case ErrorAction::AdoptMemberIdRejoin:  // handled by the caller when it applies
      prepare_join(why);
      return;
    case ErrorAction::ResetGenerationRejoin:
      generation_ = -1;
      prepare_join(why);
      return;
    case ErrorAction::ResetMemberRejoin:
      generation_ = -1;
      member_id_.clear();
      prepare_join(why);
      return;
    case ErrorAction::RediscoverCoordinator:
      discover(why);
      return;
    case ErrorAction::Retry: {
      // Back off, then rejoin (JoinGroup resent through on_prepare_join).
      impl_->heartbeat_timer.cancel();
      const uint64_t round = ++round_;
      retry_later([w = weak_from_this(), round, why] {
        auto s = w.lock();
        if (!s || round != s->round_) return;
        s->prepare_join(why);
      });
      return;
    }
    case ErrorAction::Fatal:
      fatal(GroupError{api, static_cast<ErrorCode>(code), action, std::nullopt, fatal_detail(code, why), true});
      return;
  }
}

bool GroupMember::response_usable(ApiKey api, GroupState expected, uint64_t round, const NetError* failure) {
  if (round != round_ || state_ != expected) {
    spdlog::debug("group {}: dropping {} response of an older round", config_.group_id, api_name(api));
    return false;
  }
  if (!failure) return true;
  if (failure->kind == NetErrorKind::Unsupported) {
    fatal(GroupError{api, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal, failure->kind, failure->message, true});
    return false;
  }
  if (failure->kind == NetErrorKind::Tls) {
    fatal(GroupError{api, ErrorCode::NONE, ErrorAction::Fatal, failure->kind, failure->message, true});
    return false;
  }
  coordinator_lost(api, *failure);
  return false;
}

void GroupMember::response_error(ApiKey api, int16_t code, ErrorAction action) {
  if (action != ErrorAction::Fatal)
    report(GroupError{api, static_cast<ErrorCode>(code), action, std::nullopt, "", false});
  rejoin_after_error(api, code, action);
}

void GroupMember::on_join_response(uint64_t round, NetResult<JoinGroupResponse> r) {
  if (!response_usable(ApiKey::JoinGroup, GroupState::Joining, round, r ? nullptr : &r.error())) return;
  JoinGroupResponse& resp = r.value();
  if (resp.error_code != 0) {
    const ErrorAction action = action_for(resp.error_code);
    if (action == ErrorAction::AdoptMemberIdRejoin) {
      // Normal KIP-394 handshake (JoinGroup v4+): take the id, rejoin at once
      // with the same protocols.
      spdlog::debug("group {}: MEMBER_ID_REQUIRED, adopting member id '{}'", config_.group_id,
                    resp.member_id);
      member_id_ = resp.member_id;
      send_join(round_, impl_->last_protocols);
      return;
    }
    response_error(ApiKey::JoinGroup, resp.error_code, action);
    return;
  }
  // Success: the new generation.
  const bool type_ok = !resp.protocol_type || *resp.protocol_type == config_.protocol_type;
  const std::string proto = resp.protocol_name.value_or("");
  bool name_ok = false;
  for (const auto& p : impl_->last_protocols) name_ok = name_ok || p.name == proto;
  if (!type_ok || !name_ok) {
    fatal(GroupError{ApiKey::JoinGroup, ErrorCode::INCONSISTENT_GROUP_PROTOCOL, ErrorAction::Fatal,
                     std::nullopt,
                     "broker selected protocol type '" + resp.protocol_type.value_or("") +
                         "' name '" + proto + "', which we did not offer",
                     true});
    return;
  }
  generation_ = resp.generation_id;
  member_id_ = resp.member_id;
  leader_id_ = resp.leader;
  protocol_ = proto;
  schedule_heartbeat();
  const bool leader = !member_id_.empty() && member_id_ == leader_id_ && !resp.skip_assignment;
  if (!leader) {
    send_sync(round, {});
    return;
  }
  set_state(GroupState::AwaitingAssignment);
  LeaderAssignmentInput in{generation_, member_id_, protocol_, std::move(resp.members)};
  auto called = std::make_shared<std::atomic<bool>>(false);
  AssignmentReady ready = [w = weak_from_this(), round, called,
                           &io = io_](std::vector<SyncGroupAssignment> assignments) {
    if (called->exchange(true)) return;
    asio::post(io, [w, round, assignments = std::move(assignments)]() mutable {
      auto self = w.lock();
      if (!self || round != self->round_ || self->state_ != GroupState::AwaitingAssignment) return;
      self->send_sync(round, std::move(assignments));
    });
  };
  callbacks_.on_assign(in, std::move(ready));
}

void GroupMember::send_sync(uint64_t round, std::vector<SyncGroupAssignment> assignments) {
  set_state(GroupState::Syncing);
  if (!impl_->coord_conn) {
    coordinator_lost(ApiKey::SyncGroup, NetError{NetErrorKind::Disconnected, "no coordinator"});
    return;
  }
  SyncGroupRequest req;
  req.group_id = config_.group_id;
  req.generation_id = generation_;
  req.member_id = member_id_;
  req.group_instance_id = config_.group_instance_id;  // v3+, checked at connect
  if (version_of(ApiKey::SyncGroup) >= 5) {
    req.protocol_type = config_.protocol_type;
    req.protocol_name = protocol_;
  }
  req.assignments = std::move(assignments);
  const int16_t v = version_of(ApiKey::SyncGroup);
  auto body = v < 0 ? Result<Bytes>(Error{"", "no SyncGroup version"}) : encode(req, v);
  send_round_request(ApiKey::SyncGroup, v, std::move(body), round, &group_decode_sync_response,
                     &GroupMember::on_sync_response, config_.request_timeout);
}

void GroupMember::on_sync_response(uint64_t round, NetResult<SyncGroupResponse> r) {
  if (!response_usable(ApiKey::SyncGroup, GroupState::Syncing, round, r ? nullptr : &r.error())) return;
  SyncGroupResponse& resp = r.value();
  if (resp.error_code != 0) {
    ErrorAction action = action_for(resp.error_code);
    if (resp.error_code == static_cast<int16_t>(ErrorCode::INVALID_REQUEST) &&
        ++sync_invalid_streak_ <= kMaxSyncInvalidRequestRejoins) {
      action = ErrorAction::Rejoin;  // a late follower SyncGroup on librdkafka's mock (see the member)
    }
    response_error(ApiKey::SyncGroup, resp.error_code, action);
    return;
  }
  sync_invalid_streak_ = 0;
  if ((resp.protocol_type && *resp.protocol_type != config_.protocol_type) ||
      (resp.protocol_name && *resp.protocol_name != protocol_)) {
    fatal(GroupError{ApiKey::SyncGroup, ErrorCode::INCONSISTENT_GROUP_PROTOCOL, ErrorAction::Fatal,
                     std::nullopt, "SyncGroup protocol differs from JoinGroup's", true});
    return;
  }
  set_state(GroupState::Stable);
  rebalance_pending_ = true;
  if (callbacks_.on_joined) {
    callbacks_.on_joined(JoinedGroup{generation_, member_id_, leader_id_, protocol_,
                                     member_id_ == leader_id_, std::move(resp.assignment)});
  }
  if (rejoin_after_sync_ && state_ == GroupState::Stable) {
    const std::string reason = *rejoin_after_sync_;
    rejoin_after_sync_.reset();
    do_request_rejoin(reason);
  }
}

void GroupMember::report_timing(ApiKey api, std::chrono::steady_clock::time_point sent, bool ok) {
  if (!callbacks_.on_request_timing || state_ == GroupState::Closed) return;
  callbacks_.on_request_timing(RequestTiming{
      api, std::chrono::duration_cast<milliseconds>(std::chrono::steady_clock::now() - sent), ok});
}

// ---------------------------------------------------------------- heartbeat

void GroupMember::schedule_heartbeat() {
  impl_->heartbeat_timer.expires_after(config_.heartbeat_interval);
  impl_->heartbeat_timer.async_wait(
      [w = weak_from_this(), epoch = coord_epoch_, gen = generation_](const boost::system::error_code& ec) {
        auto self = w.lock();
        if (!self || ec) return;
        if (epoch != self->coord_epoch_ || gen != self->generation_ || !self->heartbeat_allowed()) {
          return;
        }
        self->send_heartbeat();
      });
}

bool GroupMember::heartbeat_allowed() const {
  return heartbeating(state_) || (state_ == GroupState::PreparingJoin && generation_ >= 0);
}

void GroupMember::send_heartbeat() {
  if (!impl_->coord_conn) return;
  if (impl_->heartbeat_in_flight) {  // the previous one is still out: try again next interval
    schedule_heartbeat();
    return;
  }
  impl_->heartbeat_in_flight = true;
  HeartbeatRequest req{config_.group_id, generation_, member_id_, config_.group_instance_id};  // v3+
  // No answer within a session timeout means the coordinator is gone
  // (reference 4.2, liveness timeouts).
  impl_->coord_conn->send(req,
                          [w = weak_from_this(), epoch = coord_epoch_, gen = generation_,
                           t0 = std::chrono::steady_clock::now()](NetResult<HeartbeatResponse> r) {
                            if (auto self = w.lock()) {
                              self->report_timing(ApiKey::Heartbeat, t0, r && r->error_code == 0);
                              self->on_heartbeat_response(epoch, gen, std::move(r));
                            }
                          },
                          config_.session_timeout);
}

void GroupMember::on_heartbeat_response(uint64_t epoch, int32_t generation,
                                        NetResult<HeartbeatResponse> r) {
  if (epoch != coord_epoch_) return;  // from a coordinator we already gave up
  impl_->heartbeat_in_flight = false;
  if (generation != generation_ || !heartbeat_allowed()) {
    spdlog::debug("group {}: dropping Heartbeat response of generation {}", config_.group_id,
                  generation);
    return;
  }
  if (!r) {
    if (r.error().kind == NetErrorKind::Unsupported) {
      fatal(GroupError{ApiKey::Heartbeat, ErrorCode::UNSUPPORTED_VERSION, ErrorAction::Fatal,
                       r.error().kind, r.error().message, true});
      return;
    }
    if (r.error().kind == NetErrorKind::Tls) {
      fatal(GroupError{ApiKey::Heartbeat, ErrorCode::NONE, ErrorAction::Fatal, r.error().kind,
                       r.error().message, true});
      return;
    }
    coordinator_lost(ApiKey::Heartbeat, r.error());
    return;
  }
  const int16_t code = r->error_code;
  const ErrorAction action = action_for(code);
  switch (action) {
    case ErrorAction::None:
    case ErrorAction::Retry:
      schedule_heartbeat();
      return;
    case ErrorAction::Rejoin:
    case ErrorAction::AdoptMemberIdRejoin:
      // REBALANCE_IN_PROGRESS: only a Stable member rejoins; while the
      // assignment is computed or synced, SyncGroup will report it.
      if (state_ != GroupState::Stable) {
        schedule_heartbeat();
        return;
      }
      break;
    case ErrorAction::ResetGenerationRejoin:
    case ErrorAction::ResetMemberRejoin:
    case ErrorAction::RediscoverCoordinator:
    case ErrorAction::Fatal:
      break;
  }
  if (action != ErrorAction::Fatal) {
    report(GroupError{ApiKey::Heartbeat, static_cast<ErrorCode>(code), action, std::nullopt, "",
                      false});
  }
  if (state_ == GroupState::Stable && action != ErrorAction::Fatal &&
      action != ErrorAction::RediscoverCoordinator && callbacks_.on_rebalance_started) {
    callbacks_.on_rebalance_started(
        RebalanceStarted{generation_, error_name(code) + " from Heartbeat"});
  }
  rejoin_after_error(ApiKey::Heartbeat, code, action);
}

// -------------------------------------------------------------------- leave

void GroupMember::do_leave(const std::string& reason, LeaveDone done) {
  if (done) impl_->leave_done.push_back(std::move(done));
  switch (state_) {
    case GroupState::Leaving:
      return;  // the LeaveGroup in flight completes every waiter
    case GroupState::Closed:
      finish_leave(std::nullopt);
      return;
    case GroupState::Unjoined:
    case GroupState::Discovering:
      // No coordinator to tell: just close.
      close_all("leaving: " + reason);
      set_state(GroupState::Closed);
      finish_leave(std::nullopt);
      return;
    case GroupState::PreparingJoin:
    case GroupState::Joining:
    case GroupState::AwaitingAssignment:
    case GroupState::Syncing:
    case GroupState::Stable:
      break;
  }
  if (member_id_.empty() || coordinator_addr_.empty()) {
    close_all("leaving: " + reason);
    set_state(GroupState::Closed);
    finish_leave(std::nullopt);
    return;
  }
  const bool request_pending = state_ == GroupState::Joining || state_ == GroupState::Syncing;
  ++round_;
  impl_->heartbeat_timer.cancel();
  set_state(GroupState::Leaving);
  if (!request_pending && impl_->coord_conn && impl_->coord_conn->is_open()) {
    send_leave(reason);
    return;
  }
  // A JoinGroup/SyncGroup blocks the old connection: leave on a fresh one.
  ++coord_epoch_;
  if (impl_->coord_conn) impl_->coord_conn->close("leaving the group");
  impl_->coord_conn = Connection::create(io_, connection_options());
  impl_->coord_conn->connect(impl_->coord.host, impl_->coord.port,
                             [w = weak_from_this(), reason](NetStatus st) {
                               auto self = w.lock();
                               if (!self || self->state_ != GroupState::Leaving) return;
                               if (!st) {
                                 self->close_all("leave failed");
                                 self->set_state(GroupState::Closed);
                                 self->finish_leave(GroupError{ApiKey::LeaveGroup, ErrorCode::NONE,
                                                               ErrorAction::None, st.error().kind,
                                                               st.error().message, false});
                                 return;
                               }
                               self->send_leave(reason);
                             });
}

void GroupMember::send_leave(const std::string& reason) {
  LeaveGroupRequest req;
  req.group_id = config_.group_id;
  LeaveGroupMember m;
  m.member_id = member_id_;
  if (version_of(ApiKey::LeaveGroup) >= 3) m.group_instance_id = config_.group_instance_id;
  if (version_of(ApiKey::LeaveGroup) >= 5) m.reason = reason.substr(0, 255);
  req.members.push_back(std::move(m));
  spdlog::info("group {} member '{}': leaving the group: {}", config_.group_id, member_id_, reason);
  impl_->coord_conn->send(
      req,
      [w = weak_from_this()](NetResult<LeaveGroupResponse> r) {
        auto self = w.lock();
        if (!self || self->state_ != GroupState::Leaving) return;
        std::optional<GroupError> err;
        if (!r) {
          err = GroupError{ApiKey::LeaveGroup, ErrorCode::NONE, ErrorAction::None, r.error().kind,
                           r.error().message, false};
        } else {
          int16_t code = r->error_code;
          for (const auto& m : r->members) {
            if (code == 0 && m.member_id == self->member_id_) code = m.error_code;
          }
          if (code != 0) {
            err = GroupError{ApiKey::LeaveGroup, static_cast<ErrorCode>(code), action_for(code),
                             std::nullopt, "", false};
          }
        }
        self->close_all("left the group");
        self->generation_ = -1;
        self->member_id_.clear();
        self->set_state(GroupState::Closed);
        self->finish_leave(std::move(err));
      },
      config_.request_timeout);
}

void GroupMember::finish_leave(std::optional<GroupError> error) {
  auto waiters = std::move(impl_->leave_done);
  impl_->leave_done.clear();
  for (auto& done : waiters) done(error);
}

// ------------------------------------------------------------------ helpers

std::string GroupMember::fatal_detail(int16_t code, const std::string& why) const {
  if (code != static_cast<int16_t>(ErrorCode::FENCED_INSTANCE_ID) || !config_.group_instance_id) return why;
  return "group.instance.id '" + *config_.group_instance_id + "' was taken over by another member (" + why +
         "): another worker process runs with the same group.instance.id; this one stops so that no task runs "
         "twice";
}

void GroupMember::report(GroupError error) {
  spdlog::log(group_error_log_level(error), "group {} member '{}': {}", config_.group_id, member_id_,
              error.to_string());
  if (callbacks_.on_error) callbacks_.on_error(error);
}

void GroupMember::fatal(GroupError error) {
  error.fatal = true;
  close_all("fatal error: " + error.to_string());
  set_state(GroupState::Closed);
  report(std::move(error));
  finish_leave(GroupError{ApiKey::LeaveGroup, ErrorCode::NONE, ErrorAction::None,
                          NetErrorKind::Disconnected, "member stopped by a fatal error", false});
}

void GroupMember::close_all(const std::string& reason) {
  ++round_;
  ++coord_epoch_;
  impl_->heartbeat_timer.cancel();
  impl_->retry_timer.cancel();
  impl_->heartbeat_in_flight = false;
  if (impl_->bootstrap_conn) impl_->bootstrap_conn->close(reason);
  if (impl_->coord_conn) impl_->coord_conn->close(reason);
  impl_->bootstrap_conn.reset();
  impl_->coord_conn.reset();
  coordinator_addr_.clear();
}

ConnectionOptions GroupMember::connection_options() const {
  ConnectionOptions opts;
  opts.client_id = config_.client_id;
  opts.connect_timeout = config_.connect_timeout;
  opts.request_timeout = config_.request_timeout;
  opts.tls = config_.tls;
  opts.tls_context = impl_->tls_context;
  opts.sasl = config_.sasl;
  return opts;
}

void GroupMember::retry_later(std::function<void()> fn) {
  impl_->retry_timer.expires_after(config_.retry_backoff);
  impl_->retry_timer.async_wait([fn = std::move(fn)](const boost::system::error_code& ec) {
    if (!ec) fn();
  });
}

}  // namespace kc::kafka
