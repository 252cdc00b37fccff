// DistributedHerder::Impl, group membership: the join gate, rejoins, and the coordinator's
// callbacks (before-join revocation, the leader's assignment, on_assigned).
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::io_stop_begin() { ++io_pending_stops; }

void DistributedHerder::Impl::io_stop_end() {
  if (io_pending_stops > 0) --io_pending_stops;
  if (io_pending_stops != 0) return;
  auto waiters = std::move(io_join_waiters);
  io_join_waiters.clear();
  for (auto& w : waiters) w();
}

void DistributedHerder::Impl::post_stop_end() {
  asio::post(io, [w = weak_from_this()] {
    if (auto s = w.lock()) s->io_stop_end();
  });
}

void DistributedHerder::Impl::io_request_rejoin(const std::string& reason) {
  if (stopping) return;
  spdlog::info("requesting rejoin: {}", reason);
  coord->request_rejoin(reason);
}

void DistributedHerder::Impl::on_before_join(const coordinator::BeforeJoin& bj, std::function<void()> proceed) {
  if (bj.new_rebalance) {
    io_rebalance_started_ms = wall_ms();
    if (io_rebalance_reason.empty()) io_rebalance_reason = bj.reason;
    cfg.metrics->rebalance_started();
  }
  {
    std::lock_guard lk(mu);
    pub.applied = false;
    pub.in_group = false;
  }
  if (bj.revoke_all) {
    // What an eager round stops: GET /rebalances lists it as revoked.
    if (io_assignment) {
      io_revoked_before_join.connectors = io_assignment->connectors;
      io_revoked_before_join.tasks = io_assignment->tasks;
    }
    io_assignment.reset();
    {
      std::lock_guard lk(mu);
      pub.assigned_connectors.clear();
      pub.assigned_tasks.clear();
    }
    lifecycle.set(WorkerState::Revoking, "eager rebalance or generation reset: everything stops before JoinGroup");
    asio::post(apply_strand, [w = weak_from_this(), proceed = std::move(proceed)] {
      if (auto s = w.lock()) {
        spdlog::info("revoking everything before JoinGroup (eager rebalance or generation reset)");
        s->job_stop_everything();
        s->lifecycle.set(WorkerState::Joining, "everything stopped; JoinGroup");
      }
      proceed();
    });
    return;
  }
  if (bj.hand_over) {
    // Drain: our connectors stop now; our tasks run on until the
    // assignment without them arrives (job_apply stops them then).
    if (io_assignment) io_assignment->connectors.clear();
    {
      std::lock_guard lk(mu);
      pub.assigned_connectors.clear();
    }
    io_stop_begin();
    lifecycle.set(WorkerState::Revoking, "drain: this worker's connectors stop before JoinGroup");
    asio::post(apply_strand, [w = weak_from_this(), tasks = bj.tasks, proceed = std::move(proceed)] {
      if (auto s = w.lock()) {
        s->job_hand_over(tasks);
        s->post_stop_end();
        s->lifecycle.set(WorkerState::Joining, "connectors handed over; JoinGroup");
      }
      proceed();
    });
    return;
  }
  // Pending revocations finish before JoinGroup.
  if (io_pending_stops == 0) {
    lifecycle.set(WorkerState::Joining, "JoinGroup");
    proceed();
    return;
  }
  lifecycle.set(WorkerState::Revoking, "revocations still stopping; JoinGroup waits");
  io_join_waiters.push_back([w = weak_from_this(), proceed = std::move(proceed)] {
    if (auto s = w.lock()) s->lifecycle.set(WorkerState::Joining, "revocations stopped; JoinGroup");
    proceed();
  });
}

void DistributedHerder::Impl::on_leader(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready) {
  // Read the config topic to the end on the pool, then assign on the io thread.
  asio::post(pool, [w = weak_from_this(), round, ready = std::move(ready)]() mutable {
    auto s = w.lock();
    if (!s) return;
    auto r = s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
    if (!r) spdlog::warn("leader: config read failed: {}", r.error().to_string());
    asio::post(s->io, [w, round = std::move(round), ready = std::move(ready)]() mutable {
      if (auto s2 = w.lock()) s2->io_assign(round, std::move(ready));
    });
  });
}

void DistributedHerder::Impl::io_assign(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready) {
  auto snap = config_store->snapshot();
  std::vector<assignor::MemberReport> reports;
  for (const auto& m : round.members) {
    assignor::MemberReport r;
    r.member_id = m.member_id;
    r.url = m.metadata.url;
    r.config_offset = m.metadata.config_offset;
    if (m.metadata.allocation) {
      r.owned.connectors = m.metadata.allocation->connectors;
      r.owned.tasks = m.metadata.allocation->tasks;
    }
    reports.push_back(std::move(r));
  }
  assignor::ConfigSnapshot cs;
  cs.offset = snap.offset;
  for (const auto& name : snap.connectors()) {
    auto tc = snap.task_counts.find(name);
    cs.connectors[name] = (tc == snap.task_counts.end() || snap.inconsistent.count(name)) ? 0 : tc->second;
  }
  assignor::RoundContext ctx;
  ctx.leader_id = round.leader_id;
  ctx.leader_url = round.leader_url;
  ctx.generation = round.generation;
  ctx.last_completed_generation = round.last_completed_generation;
  ctx.now_ms = mono_ms();
  ctx.protocol = round.protocol;
  // Drain requests of members still in the group (kconnectd's drain).
  io_round_members.clear();
  for (const auto& m : round.members) io_round_members.push_back(m.member_id);
  io_drain_members = draining_members_in_round(io_drain_members, io_round_members);
  ctx.draining_members.assign(io_drain_members.begin(), io_drain_members.end());
  // The leader state is kept only while this worker stays leader.
  if (!io_was_leader) io_leader_state = assignor::LeaderState{};
  assignor::AssignmentResult res;
  if (round.protocol == ConnectProtocol::Eager) {
    res = assignor::EagerAssignor{}.assign(io_leader_state, reports, cs, ctx);
  } else {
    res = assignor::IncrementalCooperativeAssignor{cfg.scheduled_rebalance_max_delay_ms}.assign(io_leader_state,
                                                                                               reports, cs, ctx);
  }
  auto moves = plan_hand_over_moves(cfg.hand_over_moves, std::move(res), reports, cs, ctx,
                                    cfg.scheduled_rebalance_max_delay_ms,
                                    cfg.hand_over_moves ? status_store->all_tasks() : std::map<ConnectorTaskId, StatusValue>{});
  res = std::move(moves.result);
  io_leader_state = res.state;
  auto marks = std::move(moves.marks);
  if (!moves.moved.empty())
    spdlog::info("leader: revoked tasks {} go to their new owners in this round (hand-over: {})",
                 ids_to_string(moves.moved), to_string(moves));
  spdlog::info("leader assigned generation {} over {} members (protocol {}, config offset {}{}{})",
               round.generation, reports.size(), connect::protocol_name(round.protocol), cs.offset,
               res.config_mismatch ? ", CONFIG_MISMATCH" : "",
               marks.empty() ? "" : ", " + std::to_string(marks.size()) + " revoked tasks handed over");
  std::vector<std::pair<std::string, Assignment>> out;
  for (auto& ma : res.assignments) out.emplace_back(ma.member_id, std::move(ma.assignment));
  if (marks.empty()) return ready(std::move(out));
  // The marks must be in the status topic before any member sees the
  // assignment: the old owner's stop (UNASSIGNED) then follows them.
  asio::post(pool, [w = weak_from_this(), marks = std::move(marks), out = std::move(out),
                    ready = std::move(ready)]() mutable {
    auto s = w.lock();
    if (!s) return;
    s->write_hand_over_marks(marks);
    asio::post(s->io, [out = std::move(out), ready = std::move(ready)]() mutable { ready(std::move(out)); });
  });
}

void DistributedHerder::Impl::record_history(const coordinator::AssignedEvent& ev) {
  RebalanceRecord r;
  r.generation = ev.generation;
  r.protocol = connect::protocol_name(ev.protocol);
  r.leader_id = ev.received.leader;
  r.leader_url = ev.received.leader_url;
  r.is_leader = ev.is_leader;
  r.error = ev.received.error;
  r.assigned_connectors = ev.received.connectors;
  r.assigned_tasks = ev.received.tasks;
  r.revoked_connectors = ev.received.revoked_connectors;
  r.revoked_tasks = ev.received.revoked_tasks;
  // Everything stopped before the JoinGroup (eager, or a generation
  // reset) was revoked by this rebalance too.
  add_sorted(r.revoked_connectors, io_revoked_before_join.connectors);
  add_sorted(r.revoked_tasks, io_revoked_before_join.tasks);
  io_revoked_before_join = {};
  r.delay_ms = ev.received.delay_ms;
  r.config_offset = ev.received.config_offset;
  r.started_ms = io_rebalance_started_ms;
  r.assigned_ms = wall_ms();
  r.reason = io_rebalance_reason;
  std::lock_guard lk(mu);
  history.push_back(std::move(r));
  while (history.size() > kMaxHistory) history.pop_front();
}

void DistributedHerder::Impl::on_assigned(const coordinator::AssignedEvent& ev) {
  lifecycle.set(WorkerState::Applying, "assignment of generation " + std::to_string(ev.generation));
  io_generation = ev.generation;
  io_was_leader = ev.is_leader;
  const bool became_leader = ev.is_leader && !io_is_leader;
  io_is_leader = ev.is_leader;
  io_leader_url = ev.received.leader_url;
  if (ev.protocol != io_protocol) {
    const bool was = io_protocol == ConnectProtocol::Sessioned;
    const bool now = ev.protocol == ConnectProtocol::Sessioned;
    if (now && !was) spdlog::info("internal request validation has been re-enabled");
    if (was && !now)
      spdlog::warn("the group's protocol was downgraded from '{}' to '{}': internal requests are no longer signed "
                   "or checked (KIP-507). A worker with an older connect.protocol probably joined; set it to "
                   "'sessioned' there, or the cluster stays insecure",
                   connect::protocol_name(io_protocol), connect::protocol_name(ev.protocol));
  }
  io_protocol = ev.protocol;
  io_assignment = ev.snapshot;
  status_listener->set_generation(ev.generation);
  // Static membership: the whole kept snapshot, started below like any
  // assignment (job_apply starts what we own and do not run).
  if (ev.resumed) io_rebalance_reason = "static member resumed its assignment without a rebalance";
  record_history(ev);
  io_rebalance_reason.clear();
  log_ctx->generation = ev.generation;
  cfg.metrics->assignment_received(ev.generation, connect::protocol_name(ev.protocol), ev.received.leader_url);
  cfg.metrics->set_assigned(ev.snapshot.connectors.size(), ev.snapshot.tasks.size());
  {
    std::lock_guard lk(mu);
    pub.member_id = ev.member_id;
    pub.generation = ev.generation;
    pub.is_leader = ev.is_leader;
    pub.leader_url = ev.received.leader_url;
    pub.protocol = connect::protocol_name(ev.protocol);
    pub.assigned_connectors = ev.snapshot.connectors;
    pub.assigned_tasks = ev.snapshot.tasks;
    pub.applied = false;
    coord_lost = false;
    pub.in_group = true;
  }
  // KIP-618: as the leader we may now write the config topic (Connect's
  // onAssigned claims write privileges); a former leader lets them go.
  io_reclaim_write_privileges();
  io_check_key_rotation();
  scheduled_timer.cancel();
  if (ev.received.delay_ms > 0) {
    scheduled_timer.expires_after(std::chrono::milliseconds(ev.received.delay_ms));
    scheduled_timer.async_wait([w = weak_from_this(), gen = ev.generation](const boost::system::error_code& ec) {
      auto s = w.lock();
      if (ec || !s) return;
      s->io_request_rejoin("scheduled rebalance delay expired (set in generation " + std::to_string(gen) + ")");
    });
  }
  const uint64_t seq = ++io_apply_seq;
  if (ev.received.error != 0) {
    // CONFIG_MISMATCH: catch up, then rejoin; start nothing (4.4 step 1).
    spdlog::warn("assignment failed (error {}), leader config offset {}; reading configs and rejoining",
                 ev.received.error, ev.received.config_offset);
    asio::post(pool, [w = weak_from_this()] {
      auto s = w.lock();
      if (!s) return;
      (void)s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
      asio::post(s->io, [w] {
        if (auto s2 = w.lock()) s2->io_request_rejoin("assignment failed: CONFIG_MISMATCH");
      });
    });
    return;
  }
  rebalance_pending = false;
  frozen_hold = false;
  latest_apply_seq = seq;
  // Only an assignment that revokes something holds the next JoinGroup
  // until its stops are done: an apply queued behind a slow one (offsets
  // read, starts) must not hold the JoinGroup (the mock broker expels a
  // member that rejoins later than about session.timeout - 1 s).
  const bool gates_join = !ev.received.revoked_connectors.empty() || !ev.received.revoked_tasks.empty() ||
                          ev.protocol == ConnectProtocol::Eager;
  if (gates_join) io_stop_begin();  // ended by job_apply once its revocations are done
  asio::post(apply_strand, [w = weak_from_this(), ev, seq, became_leader, gates_join] {
    if (auto s = w.lock()) s->job_apply(ev, seq, became_leader, gates_join);
  });
}

}  // namespace kc::herder
