// DistributedHerder::Impl, group membership: the join gate, rejoins, and the coordinator's
// callbacks (before-join revocation, the leader's assignment, on_assigned).
#include "worker/herder/herder_impl.h"
#include "worker/herder/leader_round.h"

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
  ++io_leader_round;  // a leader job still under way belongs to a round now past
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
  const auto plan = plan_before_join(bj.revoke_all, bj.hand_over, io_pending_stops);
  if (plan.give_up_assignment) {
    // What an eager round stops: GET /rebalances lists it as revoked.
    if (io_assignment) {
      io_revoked_before_join.connectors = io_assignment->connectors;
      io_revoked_before_join.tasks = io_assignment->tasks;
    }
    io_assignment.reset();
    std::lock_guard lk(mu);
    pub.assigned_connectors.clear();
    pub.assigned_tasks.clear();
  }
  if (plan.give_up_connectors) {
    // Drain: our connectors stop now; our tasks run on until the
    // assignment without them arrives (job_apply stops them then).
    if (io_assignment) io_assignment->connectors.clear();
    std::lock_guard lk(mu);
    pub.assigned_connectors.clear();
  }
  if (plan.holds_join_gate) io_stop_begin();
  lifecycle.set(plan.state, plan.why);
  // The move right before the JoinGroup goes out, once the step is done.
  auto join = [w = weak_from_this(), plan, proceed = std::move(proceed)] {
    if (auto s = w.lock(); s && plan.then) s->lifecycle.set(*plan.then, plan.then_why);
    proceed();
  };
  switch (plan.step) {
    case BeforeJoinStep::Join: return join();
    case BeforeJoinStep::AwaitStops: io_join_waiters.push_back(std::move(join)); return;
    case BeforeJoinStep::RevokeAll:
      asio::post(apply_strand, [w = weak_from_this(), join = std::move(join)] {
        if (auto s = w.lock()) {
          spdlog::info("revoking everything before JoinGroup (eager rebalance or generation reset)");
          s->job_revoke_all();
        }
        join();
      });
      return;
    case BeforeJoinStep::HandOver:
      asio::post(apply_strand, [w = weak_from_this(), tasks = bj.tasks, join = std::move(join)] {
        if (auto s = w.lock()) {
          s->job_hand_over(tasks);
          s->post_stop_end();
        }
        join();
      });
      return;
  }
}

// The leader's round (Connect's performAssignment), off the io thread:
//   * io thread (on_leader): numbers the round, updates the io-only round
//     state (io_round_members, io_drain_members, the leader-state reset of a
//     new leader) and copies everything the pool needs into a LeaderJob;
//   * pool (job_assign): config read, assignor, hand-over moves and marks,
//     touching no io_* member;
//   * io thread (io_assigned): stores the leader state and sends the
//     assignments, or drops both when a newer round began meanwhile.
void DistributedHerder::Impl::on_leader(const coordinator::LeaderRound& round, coordinator::AssignmentsReady ready) {
  LeaderJob job;
  job.seq = ++io_leader_round;
  io_round_members.clear();
  for (const auto& m : round.members) io_round_members.push_back(m.member_id);
  {
    std::vector<rest::GroupMember> members;
    for (const auto& m : round.members) members.push_back({m.member_id, m.metadata.url, m.group_instance_id});
    std::lock_guard lk(mu);
    pub_round_members = std::move(members);
  }
  // Drain requests of members still in the group (kconnectd's drain).
  io_drain_members = draining_members_in_round(io_drain_members, io_round_members);
  // The leader state is kept only while this worker stays leader.
  if (!io_was_leader) io_leader_state = assignor::LeaderState{};
  job.state = io_leader_state;
  job.ctx = leader_round_context(round, LeaderRoundOptions{cfg.return_lost_to_owner, cfg.no_delay_for_expired_static},
                                 std::vector<std::string>(io_drain_members.begin(), io_drain_members.end()));
  job.round = round;
  asio::post(pool, [w = weak_from_this(), job = std::move(job), ready = std::move(ready)]() mutable {
    auto s = w.lock();
    if (!s) return;
    auto moves = s->job_assign(job);
    asio::post(s->io, [w, seq = job.seq, gen = job.round.generation, res = std::move(moves.result),
                       ready = std::move(ready)]() mutable {
      if (auto s2 = w.lock()) s2->io_assigned(seq, gen, std::move(res), std::move(ready));
    });
  });
}

HandOverMoves DistributedHerder::Impl::job_assign(LeaderJob& job) {
  auto r = config_store->read_to_end(cfg.worker_sync_timeout_ms);
  if (!r) spdlog::warn("leader: config read failed: {}", r.error().to_string());
  const auto cs = assignor_snapshot(config_store->snapshot());
  const std::vector<assignor::MemberReport> reports = leader_round_reports(job.round);
  job.ctx.now_ms = mono_ms();
  auto moves = plan_leader_round(cfg.hand_over_moves, job.state, reports, cs, job.ctx,
                                 cfg.scheduled_rebalance_max_delay_ms,
                                 cfg.hand_over_moves ? status_store->all_tasks()
                                                     : std::map<ConnectorTaskId, StatusValue>{});
  if (!moves.moved.empty())
    spdlog::info("leader: revoked tasks {} go to their new owners in this round (hand-over: {})",
                 ids_to_string(moves.moved), to_string(moves));
  spdlog::info("leader assigned generation {} over {} members (protocol {}, config offset {}{}{})",
               job.round.generation, reports.size(), connect::protocol_name(job.round.protocol), cs.offset,
               moves.result.config_mismatch ? ", CONFIG_MISMATCH" : "",
               moves.marks.empty() ? "" : ", " + std::to_string(moves.marks.size()) + " revoked tasks handed over");
  // The marks must be in the status topic before any member sees the
  // assignment: the old owner's stop (UNASSIGNED) then follows them.
  if (!moves.marks.empty()) write_hand_over_marks(moves.marks);
  // Placement labels (issue 29): a connector no member may run is
  // UNASSIGNED with a trace naming its placement.labels and the members'
  // labels; written when the status says otherwise (an owner's stop record
  // may come after it: the owner then rejoins and the next round writes it
  // again). So are its tasks that have a status: the last one may be
  // RUNNING, written by a worker that crashed and took the only matching
  // labels with it, and nobody else would ever overwrite it.
  for (const auto& u : moves.result.unplaced) {
    const std::string trace = assignor::placement_trace(u, reports, job.ctx.draining_members);
    const auto cur = status_store->get_connector(u.connector);
    if (!cur || cur->state != StatusState::Unassigned || cur->trace != trace) {
      spdlog::warn("leader: connector {} stays unassigned: {}", u.connector, trace);
      status_store->put_connector(u.connector, status_of(StatusState::Unassigned, job.round.generation, trace));
    }
    const auto count = cs.connectors.find(u.connector);
    for (const auto& [task, st] : status_store->get_tasks(u.connector)) {
      if (count == cs.connectors.end() || task >= count->second) continue;  // not configured: not ours to say
      if (st.state == StatusState::Unassigned && st.trace == trace) continue;
      status_store->put_task(ConnectorTaskId{u.connector, task},
                             status_of(StatusState::Unassigned, job.round.generation, trace));
    }
  }
  return moves;
}

void DistributedHerder::Impl::io_assigned(uint64_t seq, int32_t generation, assignor::AssignmentResult res,
                                          coordinator::AssignmentsReady ready) {
  if (!leader_round_is_current(seq, io_leader_round)) {
    // A newer JoinGroup began: the coordinator has moved past this round
    // too (it drops a late assignment), and its state must not become the
    // next round's input.
    spdlog::info("leader: the assignment of generation {} came after a newer round began; dropped", generation);
    return;
  }
  io_leader_state = std::move(res.state);
  std::vector<std::pair<std::string, Assignment>> out;
  out.reserve(res.assignments.size());
  for (auto& ma : res.assignments) out.emplace_back(std::move(ma.member_id), std::move(ma.assignment));
  ready(std::move(out));
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
  // A resumed static member joined no round.
  if (!ev.resumed && io_rebalance_started_ms > 0)
    io_last_round_ms = std::max<int64_t>(0, wall_ms() - io_rebalance_started_ms);
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
  if (ev.before_join)
    io_rebalance_reason = "restarted worker resumed its kept assignment before joining (nobody else took it)";
  else if (ev.resumed)
    io_rebalance_reason = "static member resumed its assignment without a rebalance";
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
    pub.in_group = !ev.before_join;  // before the first JoinGroup it is not a member yet
  }
  // KIP-618: as the leader we may now write the config topic (Connect's
  // onAssigned claims write privileges); a former leader lets them go.
  io_reclaim_write_privileges();
  io_check_key_rotation();
  scheduled_timer.cancel();
  if (ev.received.delay_ms > 0) {
    const int64_t after_ms = scheduled_rejoin_after_ms(ev.received.delay_ms, io_last_round_ms);
    scheduled_timer.expires_after(std::chrono::milliseconds(after_ms));
    scheduled_timer.async_wait([w = weak_from_this(), gen = ev.generation, early = ev.received.delay_ms - after_ms](
                                   const boost::system::error_code& ec) {
      auto s = w.lock();
      if (ec || !s) return;
      s->io_request_rejoin(early > 0 ? "scheduled rebalance delay ends in " + std::to_string(early) +
                                           " ms, the last round's length (set in generation " +
                                           std::to_string(gen) + ")"
                                     : "scheduled rebalance delay expired (set in generation " +
                                           std::to_string(gen) + ")");
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
