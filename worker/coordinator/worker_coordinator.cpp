// WorkerCoordinator: see worker_coordinator.h. Everything here runs on the
// io_context thread except the public "any thread" entry points, which post.
#include "worker/coordinator/worker_coordinator.h"

#include <algorithm>
#include <atomic>
#include <set>
#include <stdexcept>
#include <utility>

#include <boost/asio/post.hpp>
#include <spdlog/spdlog.h>

#include "protocol/connect/codec.h"

namespace kc::coordinator {

namespace asio = boost::asio;

namespace {

// The protocols a mode offers, most preferred first (reference 1).
std::vector<ConnectProtocol> offered(ConnectProtocol mode) {
  switch (mode) {
    case ConnectProtocol::Sessioned:
      return {ConnectProtocol::Sessioned, ConnectProtocol::Compatible, ConnectProtocol::Eager};
    case ConnectProtocol::Compatible:
      return {ConnectProtocol::Compatible, ConnectProtocol::Eager};
    case ConnectProtocol::Eager:
      return {ConnectProtocol::Eager};
  }
  return {ConnectProtocol::Eager};
}

bool cooperative(ConnectProtocol p) { return p != ConnectProtocol::Eager; }

// True when `a` assigns every connector and task of `kept`.
bool covers(const Assignment& a, const Assignment& kept) {
  const std::set<std::string> cs(a.connectors.begin(), a.connectors.end());
  const std::set<ConnectorTaskId> ts(a.tasks.begin(), a.tasks.end());
  return std::all_of(kept.connectors.begin(), kept.connectors.end(), [&](const auto& c) { return cs.count(c) > 0; }) &&
         std::all_of(kept.tasks.begin(), kept.tasks.end(), [&](const auto& t) { return ts.count(t) > 0; });
}

}  // namespace

std::shared_ptr<WorkerCoordinator> WorkerCoordinator::create(asio::io_context& io, WorkerCoordinatorConfig config,
                                                             WorkerCoordinatorCallbacks callbacks) {
  if (!callbacks.config_offset || !callbacks.on_before_join || !callbacks.on_leader || !callbacks.on_assigned) {
    throw std::invalid_argument(
        "WorkerCoordinator: config_offset, on_before_join, on_leader and on_assigned are required");
  }
  std::shared_ptr<WorkerCoordinator> self(new WorkerCoordinator(io, std::move(config), std::move(callbacks)));
  std::weak_ptr<WorkerCoordinator> w = self;
  kafka::GroupMemberCallbacks cb;
  cb.on_prepare_join = [w](const kafka::JoinPrepare& prep, kafka::JoinReady ready) {
    if (auto s = w.lock()) s->on_prepare_join(prep, std::move(ready));
  };
  cb.on_assign = [w](const kafka::LeaderAssignmentInput& in, kafka::AssignmentReady ready) {
    if (auto s = w.lock()) s->on_assign(in, std::move(ready));
  };
  cb.on_joined = [w](const kafka::JoinedGroup& j) {
    if (auto s = w.lock()) s->on_joined(j);
  };
  cb.on_rebalance_started = [w](const kafka::RebalanceStarted& r) {
    if (auto s = w.lock()) {
      if (s->callbacks_.on_rebalance_started) s->callbacks_.on_rebalance_started(r);
    }
  };
  cb.on_error = [w](const kafka::GroupError& e) {
    if (auto s = w.lock()) s->on_error(e);
  };
  if (self->callbacks_.on_request_timing) cb.on_request_timing = self->callbacks_.on_request_timing;
  auto gcfg = self->config_.group;
  gcfg.protocol_type = "connect";
  self->member_ = kafka::GroupMember::create(io, std::move(gcfg), std::move(cb));
  if (self->keeps_static_assignment()) {
    const auto& path = self->config_.static_assignment_file;
    auto kept = load_static_assignment(path);
    if (!kept) {
      spdlog::warn("worker {}: ignoring the kept static assignment: {}", self->config_.url,
                   kept.error().to_string());
    } else if (kept.value() && (kept.value()->group_id != self->config_.group.group_id ||
                                kept.value()->group_instance_id !=
                                    self->config_.group.group_instance_id.value_or("") ||
                                (!kept.value()->url.empty() && kept.value()->url != self->config_.url))) {
      spdlog::warn("worker {}: ignoring the kept assignment in {}: it belongs to group '{}' instance '{}' url '{}'",
                   self->config_.url, path, kept.value()->group_id, kept.value()->group_instance_id,
                   kept.value()->url);
    } else if (kept.value()) {
      self->kept_ = std::move(*kept.value());
      self->kept_age_ms_ = static_assignment_age_ms(path);
      spdlog::info("worker {}: {} kept generation {} ({} connectors, {} tasks) in {}, {} ms ago", self->config_.url,
                   self->kept_->group_instance_id.empty() ? std::string("dynamic member")
                                                          : "static member '" + self->kept_->group_instance_id + "'",
                   self->kept_->generation, self->kept_->snapshot.connectors.size(),
                   self->kept_->snapshot.tasks.size(), path, self->kept_age_ms_.value_or(-1));
    }
  }
  return self;
}

WorkerCoordinator::WorkerCoordinator(asio::io_context& io, WorkerCoordinatorConfig config,
                                     WorkerCoordinatorCallbacks callbacks)
    : io_(io),
      config_(std::move(config)),
      callbacks_(std::move(callbacks)),
      current_protocol_(config_.protocol),
      loss_timer_(io),
      alive_timer_(io) {}

WorkerCoordinator::~WorkerCoordinator() = default;

void WorkerCoordinator::start() {
  member_->start();
  if (keeps_static_assignment() && !config_.group.group_instance_id) {
    asio::post(io_, [w = weak_from_this()] {
      if (auto self = w.lock()) self->schedule_alive_touch();
    });
  }
}

void WorkerCoordinator::schedule_alive_touch() {
  alive_timer_.expires_after(config_.group.heartbeat_interval);
  alive_timer_.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    if (ec) return;
    auto self = w.lock();
    if (!self) return;
    // Only while we own work: the mark says "this worker still runs it".
    if (self->snapshot_ && (!self->snapshot_->connectors.empty() || !self->snapshot_->tasks.empty()))
      touch_static_assignment(self->config_.static_assignment_file);
    self->schedule_alive_touch();
  });
}

std::optional<Assignment> WorkerCoordinator::kept_for_early_resume(
    const std::function<int64_t(bool was_leader)>& max_age) const {
  if (config_.group.group_instance_id || !kept_ || last_completed_generation_ >= 0 || snapshot_) return std::nullopt;
  if (!cooperative(connect::protocol_from_name(kept_->protocol).value_or(ConnectProtocol::Eager)))
    return std::nullopt;
  const bool was_leader = !kept_->member_id.empty() && kept_->snapshot.leader == kept_->member_id;
  const int64_t max_age_ms = max_age(was_leader);
  if (!kept_age_ms_ || *kept_age_ms_ > max_age_ms) {
    spdlog::info("worker {}: not resuming the kept assignment of generation {} before joining: kept {} ms ago, "
                 "more than {} ms{}",
                 config_.url, kept_->generation, kept_age_ms_.value_or(-1), max_age_ms,
                 was_leader ? " (it led the group: a new leader places its work at once)" : "");
    return std::nullopt;
  }
  if (kept_->snapshot.connectors.empty() && kept_->snapshot.tasks.empty()) return std::nullopt;
  return kept_->snapshot;
}

AssignedEvent WorkerCoordinator::resume_before_join(Assignment owned) {
  owned.revoked_connectors.clear();
  owned.revoked_tasks.clear();
  owned.delay_ms = 0;
  owned.error = 0;
  AssignedEvent ev;
  ev.generation = kept_ ? kept_->generation : -1;
  ev.member_id = kept_ ? kept_->member_id : "";
  ev.is_leader = false;
  ev.protocol = kept_ ? connect::protocol_from_name(kept_->protocol).value_or(config_.protocol) : config_.protocol;
  ev.received = owned;
  ev.snapshot = owned;
  ev.resumed = true;
  ev.before_join = true;
  // The first JoinGroup reports this allocation, so the leader counts it as
  // ours rather than as lost work of our previous (dead) member.
  snapshot_ = std::move(owned);
  spdlog::info("worker {}: resuming {} connectors and {} tasks of generation {} before joining (a restart: nobody "
               "else took them)",
               config_.url, snapshot_->connectors.size(), snapshot_->tasks.size(), ev.generation);
  return ev;
}

void WorkerCoordinator::request_rejoin(std::string reason) { member_->request_rejoin(std::move(reason)); }

void WorkerCoordinator::leave(std::string reason, std::function<void()> done) {
  asio::post(io_, [w = weak_from_this(), reason = std::move(reason), done = std::move(done)]() mutable {
    auto self = w.lock();
    if (!self) {
      if (done) done();
      return;
    }
    self->loss_timer_.cancel();
    self->alive_timer_.cancel();
    self->member_->leave(reason, [w, done = std::move(done), url = self->config_.url](
                                     std::optional<kafka::GroupError> err) {
      if (err) {
        spdlog::warn("worker {}: LeaveGroup failed: {}", url, err->to_string());
      } else {
        spdlog::info("worker {}: left the group", url);
        if (auto s = w.lock()) s->drop_static_assignment("left the group");
      }
      if (done) done();
    });
  });
}

void WorkerCoordinator::stop() {
  asio::post(io_, [w = weak_from_this()] {
    if (auto self = w.lock()) {
      self->loss_timer_.cancel();
      self->alive_timer_.cancel();
    }
  });
  member_->stop();
}

CoordinatorStatus WorkerCoordinator::status() const {
  CoordinatorStatus s;
  s.state = member_->state();
  s.generation = last_completed_generation_;
  s.member_id = member_id_;
  s.leader_id = leader_id_;
  s.protocol = selected_;
  s.fatal = fatal_;
  s.fatal_message = fatal_message_;
  return s;
}

std::vector<kafka::JoinGroupProtocol> WorkerCoordinator::build_protocols(ConnectProtocol mode, const std::string& url,
                                                                         int64_t config_offset,
                                                                         const std::optional<Assignment>& snapshot,
                                                                         const Labels& labels) {
  std::vector<kafka::JoinGroupProtocol> out;
  for (ConnectProtocol p : offered(mode)) {
    WorkerMetadata md;
    md.version = connect::protocol_version(p);
    md.url = url;
    md.config_offset = config_offset;
    if (p != ConnectProtocol::Eager) {
      md.allocation = snapshot;
      md.labels = labels;
    }
    auto bytes = connect::encode_metadata(md);
    if (!bytes) {
      // Only an over-long URL or name can fail; offer the protocol with an
      // allocation-less metadata rather than not at all.
      spdlog::error("cannot encode {} metadata: {}", connect::protocol_name(p), bytes.error().to_string());
      md.allocation.reset();
      bytes = connect::encode_metadata(md);
      if (!bytes) continue;
    }
    out.push_back(kafka::JoinGroupProtocol{connect::protocol_name(p), std::move(bytes.value())});
  }
  return out;
}

Assignment WorkerCoordinator::merge_assignment(const std::optional<Assignment>& old, const Assignment& received,
                                               ConnectProtocol protocol) {
  Assignment out = received;
  if (!cooperative(protocol) || !old) {
    // De-duplicate only.
    std::set<std::string> cs(out.connectors.begin(), out.connectors.end());
    std::set<ConnectorTaskId> ts(out.tasks.begin(), out.tasks.end());
    out.connectors.assign(cs.begin(), cs.end());
    out.tasks.assign(ts.begin(), ts.end());
    return out;
  }
  std::set<std::string> cs(old->connectors.begin(), old->connectors.end());
  std::set<ConnectorTaskId> ts(old->tasks.begin(), old->tasks.end());
  for (const auto& c : received.revoked_connectors) cs.erase(c);
  for (const auto& t : received.revoked_tasks) ts.erase(t);
  cs.insert(received.connectors.begin(), received.connectors.end());
  ts.insert(received.tasks.begin(), received.tasks.end());
  out.connectors.assign(cs.begin(), cs.end());
  out.tasks.assign(ts.begin(), ts.end());
  return out;
}

void WorkerCoordinator::on_prepare_join(const kafka::JoinPrepare& prep, kafka::JoinReady ready) {
  BeforeJoin bj;
  bj.new_rebalance = prep.new_rebalance;
  bj.reason = prep.reason;
  const bool owns_work = snapshot_ && (!snapshot_->connectors.empty() || !snapshot_->tasks.empty());
  const char* revoke_why = nullptr;  // set when everything stops before this JoinGroup
  if (current_protocol_ == ConnectProtocol::Eager && prep.new_rebalance && snapshot_ && snapshot_->error == 0) {
    // Eager: Connect's onJoinPrepare. A failed snapshot (CONFIG_MISMATCH)
    // holds nothing to stop.
    revoke_why = "eager rebalance";
  } else if (cooperative(current_protocol_) && prep.generation < 0 && last_completed_generation_ >= 0 && owns_work) {
    // The member's generation was reset (UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION
    // / session expired): the group may already have given our work to
    // others, so no task may run twice (the coordinator-loss rule of 4.2).
    revoke_why = "generation reset";
  } else if (cooperative(current_protocol_) && hand_over_before_join_ && owns_work) {
    // Draining: the leader places the work we no longer report on the
    // others in this very round; the tasks run on until it arrives.
    bj.hand_over = true;
    bj.connectors = snapshot_->connectors;
    bj.tasks = snapshot_->tasks;
    spdlog::info("worker {}: draining ({}): handing over {} connectors and {} tasks in this round", config_.url,
                 prep.reason, bj.connectors.size(), bj.tasks.size());
    snapshot_.reset();  // the JoinGroup reports nothing owned
    drop_static_assignment("draining");
  }
  if (revoke_why) {
    bj.revoke_all = true;
    bj.connectors = snapshot_->connectors;
    bj.tasks = snapshot_->tasks;
    spdlog::info("worker {}: {} ({}): stopping all {} connectors and {} tasks before JoinGroup", config_.url,
                 revoke_why, prep.reason, bj.connectors.size(), bj.tasks.size());
    snapshot_.reset();  // the JoinGroup reports nothing owned
    drop_static_assignment(revoke_why);
  }
  auto proceed = [w = weak_from_this(), ready = std::move(ready), &io = io_]() mutable {
    asio::post(io, [w, ready = std::move(ready)]() mutable {
      auto self = w.lock();
      if (!self) return;
      // Metadata is rebuilt on every send (4.2): current offset + snapshot.
      ready(build_protocols(self->config_.protocol, self->config_.url, self->callbacks_.config_offset(),
                            self->snapshot_, self->config_.labels));
    });
  };
  callbacks_.on_before_join(bj, std::move(proceed));
}

void WorkerCoordinator::on_assign(const kafka::LeaderAssignmentInput& in, kafka::AssignmentReady ready) {
  auto proto = connect::protocol_from_name(in.protocol);
  if (!proto) {
    // Cannot happen with Connect members (we only offer our own names).
    spdlog::error("worker {}: broker selected unknown protocol '{}'", config_.url, in.protocol);
    ready({});
    return;
  }
  led_generation_ = in.generation;
  LeaderRound round;
  round.generation = in.generation;
  round.leader_id = in.member_id;
  round.leader_url = config_.url;
  round.protocol = *proto;
  round.last_completed_generation = last_completed_generation_;
  for (const auto& m : in.members) {
    auto md = *proto == ConnectProtocol::Eager ? connect::decode_metadata_v0(m.metadata)
                                               : connect::decode_metadata(m.metadata);
    if (!md) {
      spdlog::warn("worker {}: leader skips member {} with undecodable metadata: {}", config_.url, m.member_id,
                   md.error().to_string());
      continue;
    }
    round.members.push_back(MemberMetadata{m.member_id, std::move(md.value()), m.group_instance_id.value_or("")});
  }
  const int16_t version = connect::protocol_version(*proto);
  auto done = [ready = std::move(ready), version, url = config_.url](
                  std::vector<std::pair<std::string, Assignment>> assignments) mutable {
    std::vector<kafka::SyncGroupAssignment> out;
    out.reserve(assignments.size());
    for (auto& [member, a] : assignments) {
      a.version = version;
      auto bytes = connect::encode_assignment(a);
      if (!bytes) {
        spdlog::error("worker {}: cannot encode assignment for {}: {}", url, member, bytes.error().to_string());
        continue;
      }
      out.push_back(kafka::SyncGroupAssignment{member, std::move(bytes.value())});
    }
    ready(std::move(out));
  };
  callbacks_.on_leader(round, std::move(done));
}

void WorkerCoordinator::on_joined(const kafka::JoinedGroup& joined) {
  loss_timer_.cancel();
  AssignedEvent ev;
  ev.generation = joined.generation;
  ev.member_id = joined.member_id;
  ev.is_leader = joined.is_leader;
  auto proto = connect::protocol_from_name(joined.protocol);
  ev.protocol = proto.value_or(ConnectProtocol::Eager);
  // Every assignment is read with the V1 reader, whatever was selected (4.3).
  auto decoded = connect::decode_assignment(joined.assignment);
  if (!decoded) {
    spdlog::error("worker {} gen {}: undecodable assignment ({} bytes): {}; rejoining", config_.url,
                  joined.generation, joined.assignment.size(), decoded.error().to_string());
    ev.decoded = false;
    ev.received.error = static_cast<int16_t>(connect::AssignmentError::ConfigMismatch);
  } else {
    ev.received = std::move(decoded.value());
  }
  current_protocol_ = ev.protocol;
  selected_ = ev.protocol;
  member_id_ = joined.member_id;
  leader_id_ = joined.leader_id;
  const bool static_rejoin = ev.decoded && resume_static_assignment(joined, ev);
  if (!config_.group.group_instance_id) kept_.reset();  // a dynamic member's kept record serves one start only
  if (ev.received.error != 0) {
    // Failed assignment: keep owning what we own (cooperative), but record
    // the failure so the metadata and the herder see it.
    Assignment failed = snapshot_.value_or(Assignment{});
    failed.error = ev.received.error;
    failed.config_offset = ev.received.config_offset;
    failed.leader = ev.received.leader;
    failed.leader_url = ev.received.leader_url;
    failed.revoked_connectors.clear();
    failed.revoked_tasks.clear();
    failed.delay_ms = 0;
    if (!cooperative(ev.protocol)) {
      failed.connectors.clear();
      failed.tasks.clear();
    }
    ev.snapshot = failed;
  } else {
    ev.snapshot = merge_assignment(snapshot_, ev.received, ev.protocol);
  }
  snapshot_ = ev.snapshot;
  last_completed_generation_ = joined.generation;
  spdlog::info(
      "worker {} gen {}: joined as {} (protocol {}, leader {}): +{} connectors +{} tasks, -{} connectors -{} "
      "tasks, delay {} ms, config offset {}, error {}; owns {} connectors, {} tasks",
      config_.url, joined.generation, joined.is_leader ? "leader" : "follower", joined.protocol, joined.leader_id,
      ev.received.connectors.size(), ev.received.tasks.size(), ev.received.revoked_connectors.size(),
      ev.received.revoked_tasks.size(), ev.received.delay_ms, ev.received.config_offset, ev.received.error,
      ev.snapshot.connectors.size(), ev.snapshot.tasks.size());
  keep_static_assignment(joined, ev);
  callbacks_.on_assigned(ev);
  if (!ev.decoded) request_rejoin("undecodable assignment");
  if (static_rejoin) {
    request_rejoin("static member returned: the leader must learn what it runs");
  }
}

bool WorkerCoordinator::keeps_static_assignment() const { return !config_.static_assignment_file.empty(); }

void WorkerCoordinator::keep_static_assignment(const kafka::JoinedGroup& joined, const AssignedEvent& ev) {
  if (!keeps_static_assignment()) return;
  if (!ev.decoded || ev.received.error != 0) {
    drop_static_assignment("failed assignment");
    return;
  }
  StaticAssignmentRecord r{config_.group.group_id, config_.group.group_instance_id.value_or(""),
                           joined.generation,       joined.member_id,
                           joined.protocol,         ev.snapshot,
                           joined.assignment,       config_.url};
  if (auto st = save_static_assignment(config_.static_assignment_file, r); !st) {
    spdlog::warn("worker {}: cannot keep the static assignment: {}", config_.url, st.error().to_string());
  }
}

void WorkerCoordinator::drop_static_assignment(const char* why) {
  kept_.reset();
  if (!keeps_static_assignment()) return;
  if (auto st = remove_static_assignment(config_.static_assignment_file); !st) {
    spdlog::warn("worker {}: cannot drop the static assignment ({}): {}", config_.url, why, st.error().to_string());
  }
}

bool WorkerCoordinator::resume_static_assignment(const kafka::JoinedGroup& joined, AssignedEvent& ev) {
  if (!config_.group.group_instance_id || last_completed_generation_ >= 0) return false;  // not a fresh process
  std::optional<StaticAssignmentRecord> kept = std::exchange(kept_, std::nullopt);
  if (kept && kept->generation == joined.generation && kept->received == joined.assignment &&
      kept->protocol == joined.protocol) {
    // The coordinator handed back our identity in the generation we last
    // completed: the leader still sees us owning exactly the kept snapshot.
    snapshot_ = kept->snapshot;
    snapshot_->revoked_connectors.clear();
    snapshot_->revoked_tasks.clear();
    ev.resumed = true;
    spdlog::info("worker {}: static member '{}' resumed generation {} without a rebalance (member id {} -> {}): "
                 "{} connectors, {} tasks",
                 config_.url, *config_.group.group_instance_id, joined.generation, kept->member_id,
                 joined.member_id, snapshot_->connectors.size(), snapshot_->tasks.size());
    // Below JoinGroup v9 a returning leader is told the old leader id: the
    // assignment then names our old member id as leader while we do not
    // lead, so a rebalance must elect a leader that acts as one.
    if (!joined.is_leader && ev.received.leader == kept->member_id) {
      spdlog::info("worker {}: this worker led the group before its restart; rebalancing to re-elect a leader",
                   config_.url);
      return true;
    }
    return false;
  }
  if (kept && ev.received.error == 0 && covers(ev.received, kept->snapshot)) {
    // Another generation, and its assignment holds everything we kept: a
    // round that saw our JoinGroup (which reported nothing owned) and gave
    // our work back (a broker that rebalances on a static rejoin, or a
    // rebalance under way as we returned). The leader's view is then exactly
    // this assignment, so no rebalance is needed. (Had the coordinator
    // instead handed back bytes of a round our old process joined, they
    // would be an increment on what it reported, the kept snapshot, and
    // could not hold it unless it was empty.)
    spdlog::info("worker {}: static member '{}' kept generation {} and joined generation {} with all of it "
                 "assigned back; no rebalance needed",
                 config_.url, *config_.group.group_instance_id, kept->generation, joined.generation);
    return false;
  }
  if (kept) {
    spdlog::info("worker {}: static member '{}' kept generation {} but joined generation {}; taking the received "
                 "assignment and rebalancing once so that the leader sees what this worker runs",
                 config_.url, *config_.group.group_instance_id, kept->generation, joined.generation);
    return true;
  }
  // Nothing kept (first start, no file, or the file was lost): unless we
  // led this very round, the coordinator may have handed back an identity
  // the leader thinks owns more than these bytes say, and a task nobody
  // runs must not wait for some later rebalance.
  if (joined.is_leader && led_generation_ == joined.generation) return false;
  spdlog::info("worker {}: static member '{}' joined generation {} without a kept assignment; rebalancing once so "
               "that the leader sees what this worker runs",
               config_.url, *config_.group.group_instance_id, joined.generation);
  return true;
}

void WorkerCoordinator::on_error(const kafka::GroupError& error) {
  if (error.fatal) {
    fatal_ = true;
    fatal_message_ = error.to_string();
    spdlog::error("worker {}: fatal group error: {}", config_.url, error.to_string());
  } else {
    // GroupMember logged it already, at its level (group_error_log_level):
    // repeat only what is worth a warning, so a normal rebalance's
    // REBALANCE_IN_PROGRESS is not a warning here either.
    const auto level = kafka::group_error_log_level(error);
    spdlog::log(level >= spdlog::level::warn ? level : spdlog::level::debug, "worker {}: group error: {}",
                config_.url, error.to_string());
  }
  if (!error.fatal && error.action == kafka::ErrorAction::RediscoverCoordinator && snapshot_ &&
      snapshot_->error == 0 && (!snapshot_->connectors.empty() || !snapshot_->tasks.empty())) {
    // Coordinator-loss safety (4.2): give discovery one heartbeat interval.
    const uint64_t epoch = ++loss_epoch_;
    loss_timer_.expires_after(config_.group.heartbeat_interval);
    loss_timer_.async_wait([w = weak_from_this(), epoch](const boost::system::error_code& ec) {
      if (ec) return;
      if (auto self = w.lock()) self->check_coordinator_lost(epoch);
    });
  }
  if (callbacks_.on_error) callbacks_.on_error(error);
}

void WorkerCoordinator::check_coordinator_lost(uint64_t epoch) {
  if (epoch != loss_epoch_ || !snapshot_) return;
  if (member_->state() != kafka::GroupState::Discovering) return;
  spdlog::warn(
      "worker {}: coordinator not found again within heartbeat.interval.ms; revoking the whole assignment "
      "({} connectors, {} tasks) to avoid running tasks while not a member of the group",
      config_.url, snapshot_->connectors.size(), snapshot_->tasks.size());
  auto connectors = snapshot_->connectors;
  auto tasks = snapshot_->tasks;
  snapshot_.reset();
  drop_static_assignment("coordinator lost");
  if (callbacks_.on_revoke_all) callbacks_.on_revoke_all(std::move(connectors), std::move(tasks));
}

}  // namespace kc::coordinator
