// DistributedHerder::Impl, the reconciler's acting side: desired/actual state, executing
// actions (start/stop of connectors and tasks), applying an assignment, revocations, hand-overs.
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::request_reconcile() {
  if (stopping || reconcile_queued.exchange(true)) return;
  asio::post(apply_strand, [w = weak_from_this()] {
    auto s = w.lock();
    if (!s) return;
    s->reconcile_queued = false;
    s->job_reconcile();
  });
}

DesiredState DistributedHerder::Impl::desired_state(int32_t& generation) {
  DesiredState d;
  d.worker_id = cfg.worker_id;
  {
    std::lock_guard lk(mu);
    d.is_leader = pub.is_leader && pub.in_group;
    d.assigned_connectors.insert(pub.assigned_connectors.begin(), pub.assigned_connectors.end());
    d.assigned_tasks.insert(pub.assigned_tasks.begin(), pub.assigned_tasks.end());
    generation = pub.generation;
  }
  d.may_start = applied_apply_seq.load() == latest_apply_seq.load() && !frozen_hold.load();
  auto snap = config_store->snapshot();
  for (const auto& [name, conf] : snap.connector_configs) {
    DesiredConnector dc;
    dc.config = conf;
    dc.target = snap.target_state(name);
    for (const auto& t : snap.tasks(name))
      if (auto tc = snap.task_config(t)) dc.tasks[t.task] = *tc;
    d.connectors.emplace(name, std::move(dc));
  }
  return d;
}

ActualState DistributedHerder::Impl::actual_state() {
  return sync_actual_state(*worker, strand_connectors, strand_tasks, strand_failed_c, strand_failed_t,
                           status_store->all_connectors(), status_store->all_tasks());
}

void DistributedHerder::Impl::forget_connector(const std::string& c) {
  strand_connectors.erase(c);
  strand_failed_c.erase(c);
}

void DistributedHerder::Impl::forget_task(const ConnectorTaskId& t) {
  strand_tasks.erase(t);
  strand_failed_t.erase(t);
}

StatusValue DistributedHerder::Impl::status_of(
    StatusState state, int32_t generation, std::optional<std::string> trace) const {
  return StatusValue{state, std::move(trace), cfg.worker_id, generation};
}

bool DistributedHerder::Impl::start_connector_now(
    const std::string& c, const ConfigMap& conf, TargetState target, int32_t gen) {
  const auto misplaced = placement_refusal(conf, cfg.worker_labels);
  auto st = misplaced ? worker->refuse_start(runtime::Worker::StartKind::Connector, Error{"", *misplaced})
                      : start_connector_cached(*worker, config_cache, c, conf, target);
  strand_connectors[c] = RunningConnector{conf, target};
  if (st) {
    strand_failed_c.erase(c);
    return true;
  }
  spdlog::warn("cannot start connector {}: {}", c, st.error().to_string());
  strand_failed_c.insert(c);
  status_store->put_connector(c, status_of(StatusState::Failed, gen, st.error().to_string()));
  return false;
}

void DistributedHerder::Impl::start_task_now(
    const ConnectorTaskId& t, const ConfigMap& connector_conf, const ConfigMap& task_conf,
    TargetState target, int32_t gen) {
  const auto misplaced = placement_refusal(connector_conf, cfg.worker_labels);
  auto st = misplaced ? worker->refuse_start(runtime::Worker::StartKind::Task, Error{"", *misplaced})
                      : start_task_cached(*worker, config_cache, t, connector_conf, task_conf, target,
                                          [&](const runtime::ConnectorConfig& conf) {
                                            return exactly_once_checks(t, conf);
                                          });
  strand_tasks[t] = RunningTask{task_conf, target};
  if (st) {
    strand_failed_t.erase(t);
    return;
  }
  spdlog::warn("cannot start task {}: {}", t.to_string(), st.error().to_string());
  strand_failed_t.insert(t);
  status_store->put_task(t, status_of(StatusState::Failed, gen, st.error().to_string()));
}

void DistributedHerder::Impl::execute(const std::vector<Action>& actions, const DesiredState& d, int32_t gen) {
  using K = Action::Kind;
  if (actions.empty()) return;
  std::string text;
  for (const auto& a : actions) text += (text.empty() ? "" : ", ") + to_string(a);
  spdlog::info("reconcile: {}", text);
  // Stops first, all in parallel against one graceful deadline.
  RevocationPlan stops;
  for (const auto& a : actions) {
    if (a.kind == K::StopConnector) stops.stop_connectors.push_back(a.connector);
    if (a.kind == K::StopTask) stops.stop_tasks.push_back(*a.task);
  }
  carry_out_stops(stops);
  std::set<std::string> targets_applied;
  bool hand_over_wait = false;
  // An operator's restart (plain REST or KIP-745) reads its connector's
  // config again, so a rotated secret is resolved anew: once per connector
  // in a pass, so its restarted tasks share the connector's new read.
  std::set<std::string> reread;
  auto reread_on_restart = [&](const Action& a) {
    if ((a.restarting || a.plain_restart) && reread.insert(a.connector).second) config_cache.drop(a.connector);
  };
  for (const auto& a : actions) {
    const auto* dc = d.connectors.count(a.connector) ? &d.connectors.at(a.connector) : nullptr;
    switch (a.kind) {
      case K::StopConnector:
      case K::RemoveConnectorStatus:
        if (a.kind == K::RemoveConnectorStatus || a.remove_status)
          status_store->put_connector(a.connector, status_of(StatusState::Destroyed, gen));
        break;
      case K::StopTask:
      case K::RemoveTaskStatus:
        if (a.kind == K::RemoveTaskStatus || a.remove_status)
          status_store->put_task(*a.task, status_of(StatusState::Destroyed, gen));
        break;
      case K::WriteConnectorStatus:
        status_store->put_connector(a.connector, status_of(a.status, gen));
        break;
      case K::RestartConnector:
      case K::StartConnector:
        if (!dc) break;
        if (a.kind == K::RestartConnector) {
          (void)worker->stop_connector(a.connector);
          forget_connector(a.connector);
          reread_on_restart(a);
          if (a.restarting) status_store->put_connector(a.connector, status_of(StatusState::Restarting, gen));
        }
        // As Connect's restart: a connector an operator restarted (plain or
        // KIP-745) asks for new task configs once it started (written only
        // when they differ). This repairs an inconsistent commit even when
        // this worker reads that commit after the restart, and retries a
        // failed generation. A restart for a changed config does not ask:
        // the leader generates on the config record already.
        if (start_connector_now(a.connector, dc->config, a.target, gen) && (a.restarting || a.plain_restart) &&
            a.target == TargetState::Started)
          asio::post(io, [w = weak_from_this(), c = a.connector] {
            if (auto s = w.lock()) s->io_task_reconfiguration(c);
          });
        break;
      case K::RestartTask:
      case K::StartTask: {
        if (!dc || !dc->tasks.count(a.task->task)) break;
        if (a.kind == K::RestartTask) {
          (void)worker->stop_task(*a.task);
          forget_task(*a.task);
          reread_on_restart(a);
          if (a.restarting) status_store->put_task(*a.task, status_of(StatusState::Restarting, gen));
        } else if (hand_over_pending(*a.task)) {
          hand_over_wait = true;
          break;
        }
        start_task_now(*a.task, dc->config, dc->tasks.at(a.task->task), a.target, gen);
        break;
      }
      case K::SetConnectorTarget:
      case K::SetTaskTarget:
        // One call pauses or resumes the connector and all its local tasks.
        if (targets_applied.insert(a.connector).second) worker->set_target_state(a.connector, a.target);
        if (auto it = strand_connectors.find(a.connector); it != strand_connectors.end()) it->second.target = a.target;
        for (auto& [t, run] : strand_tasks)
          if (t.connector == a.connector) run.target = a.target;
        break;
    }
  }
  if (hand_over_wait) retry_reconcile_soon();
}

void DistributedHerder::Impl::carry_out_stops(const RevocationPlan& stops) {
  if (stops.empty()) return;
  StopPool pool(1);  // the connectors' stop, beside the tasks' on this thread
  pool.submit([&] { (void)worker->stop_connectors(stops.stop_connectors); });
  (void)worker->stop_tasks(stops.stop_tasks);
  pool.wait();
  for (const auto& c : stops.stop_connectors) forget_connector(c);
  for (const auto& t : stops.stop_tasks) forget_task(t);
}

void DistributedHerder::Impl::job_reconcile() {
  if (stopping) return;
  int32_t gen = -1;
  DesiredState d = desired_state(gen);
  d.restarts = std::move(strand_restarts);
  strand_restarts.clear();
  execute(reconcile(d, actual_state()), d, gen);
}

void DistributedHerder::Impl::restart_local(Action a, std::function<void()> done) {
  asio::post(apply_strand, [w = weak_from_this(), a = std::move(a), done = std::move(done)] {
    auto s = w.lock();
    if (!s || s->stopping) return;
    int32_t gen = -1;
    DesiredState d = s->desired_state(gen);
    s->execute({a}, d, gen);
    if (done) done();
  });
}

void DistributedHerder::Impl::job_apply(
    const coordinator::AssignedEvent& ev, uint64_t seq, bool became_leader, bool gates_join) {
  auto stops_done = [&] {
    if (gates_join) post_stop_end();
  };
  if (stopping) return stops_done();
  const Assignment& owned = ev.snapshot;
  stop_revoked(owned, ev.generation);
  stops_done();  // revocations done: a JoinGroup may go out now
  post_drain_progress(owned.connectors.empty() && owned.tasks.empty());
  const bool had_revocations = !ev.received.revoked_connectors.empty() || !ev.received.revoked_tasks.empty();
  // A newer assignment is queued: it catches up, reads offsets and starts.
  auto superseded = [&] {
    if (seq == latest_apply_seq.load()) return false;
    spdlog::info("apply superseded by a newer assignment; leaving starts to it");
    if (had_revocations)
      asio::post(io, [w = weak_from_this()] {
        if (auto s = w.lock()) s->io_request_rejoin("revocations completed");
      });
    return true;
  };
  if (superseded()) return;
  if (!catch_up_configs(ev.received.config_offset)) return;
  // 3. Source offsets written by previous owners: every source task reads
  // the offsets topic to the end on its own thread before it starts
  // (runtime::Worker), so the apply strand does not read it again.
  if (stopping || superseded()) return;
  // A handed-over task (drain, or moved in one round) starts only after
  // its old owner's stop: read the statuses now so that the marks are seen.
  const auto running_t = worker->task_ids();
  if (std::any_of(owned.tasks.begin(), owned.tasks.end(), [&](const auto& t) { return !running_t.count(t); }))
    (void)status_store->read_to_end(cfg.worker_sync_timeout_ms);
  // Connect resolves a connector's providers at every start: a connector
  // that starts instances here under this assignment is read again, once,
  // and its tasks share that read (a secret rotated since the record
  // arrived reaches a task that moved here).
  reread_configs_of_starts(owned, running_t);
  // 4. Start what we own and do not run, apply target states and status
  // rules: one reconcile pass, now allowed to start.
  applied_apply_seq = seq;
  job_reconcile();
  spdlog::info("assignment applied: owns {} connectors, {} tasks", owned.connectors.size(), owned.tasks.size());
  post_applied(seq, had_revocations, became_leader);
}

void DistributedHerder::Impl::reread_configs_of_starts(const Assignment& owned,
                                                       const std::set<ConnectorTaskId>& running_tasks) {
  std::set<std::string> starting;
  const auto running_c = worker->connector_names();
  for (const auto& c : owned.connectors)
    if (!running_c.count(c)) starting.insert(c);
  for (const auto& t : owned.tasks)
    if (!running_tasks.count(t)) starting.insert(t.connector);
  for (const auto& c : starting) config_cache.drop(c);
}

void DistributedHerder::Impl::stop_revoked(const Assignment& owned, int32_t generation) {
  // 1. Stop what was revoked, plus anything running that we no longer own.
  const auto revocation =
      plan_revocation(std::set<std::string>(owned.connectors.begin(), owned.connectors.end()),
                      std::set<ConnectorTaskId>(owned.tasks.begin(), owned.tasks.end()), worker->connector_names(),
                      worker->task_ids());
  const auto& stop_c = revocation.stop_connectors;
  const auto& stop_t = revocation.stop_tasks;
  if (!revocation.empty()) {
    spdlog::info("stopping revoked connectors {} and tasks {}", names_to_string(stop_c),
                 ids_to_string(stop_t));
    // The connectors' stop and each revoked task's wait are jobs of one
    // bounded pool: a task is awaited on its own job so that its own stop
    // time is measured (GET /rebalances); one graceful deadline for all.
    StopPool pool(stop_t.size() + 1);
    std::vector<std::string> timed_out_c;
    pool.submit([&] { timed_out_c = worker->stop_connectors(stop_c); });
    const int64_t t0 = mono_ms();
    for (const auto& t : stop_t) worker->request_stop_task(t);
    std::vector<TaskStopTime> stops(stop_t.size());
    for (size_t i = 0; i < stop_t.size(); ++i)
      pool.submit([this, &stops, i, t = stop_t[i], t0] {
        const int left = static_cast<int>(
            std::max<int64_t>(0, cfg.task_shutdown_graceful_timeout_ms - (mono_ms() - t0)));
        const bool ok = worker->await_task_stopped(t, left);
        stops[i] = TaskStopTime{t, mono_ms() - t0, !ok};
      });
    pool.wait();
    std::vector<ConnectorTaskId> timed_out;
    for (const auto& st : stops)
      if (st.timed_out) timed_out.push_back(st.id);
    {
      std::lock_guard lk(mu);
      for (auto it = history.rbegin(); it != history.rend(); ++it)
        if (it->generation == generation) {
          it->task_stops.insert(it->task_stops.end(), stops.begin(), stops.end());
          break;
        }
    }
    if (!timed_out.empty() || !timed_out_c.empty())
      spdlog::warn("graceful stop timed out for connectors {} tasks {}", names_to_string(timed_out_c),
                   ids_to_string(timed_out));
    for (const auto& c : stop_c) forget_connector(c);
    for (const auto& t : stop_t) forget_task(t);
    auto fl = status_store->flush(cfg.worker_sync_timeout_ms);
    if (!fl) spdlog::warn("status flush: {}", fl.error().to_string());
    // When a moved task's new owner can read its stop: one end of the
    // hand-over's downtime (bench/cluster/README.md, "the join floor").
    if (!stops.empty()) {
      std::string took;
      for (const auto& st : stops)
        took += (took.empty() ? "" : ", ") + st.id.to_string() + " " + std::to_string(st.stop_ms) + " ms";
      spdlog::info("revoked tasks stopped ({}), statuses flushed {} ms after the stop began", took, mono_ms() - t0);
    }
  }
}

void DistributedHerder::Impl::post_drain_progress(bool owns_nothing) {
  // A draining worker is done once it owns nothing (all stopped above);
  // while it still owns work it asks the leader again (a new leader).
  asio::post(io, [w = weak_from_this(), none = owns_nothing] {
    auto s = w.lock();
    if (!s || !s->io_draining) return;
    if (decide_drain_progress(true, none) == DrainProgress::Done)
      s->io_drain_finish(true, "every connector and task was handed over");
    else s->io_ask_leader_to_drain();
  });
}

bool DistributedHerder::Impl::catch_up_configs(int64_t config_offset) {
  // 2. Catch up the config topic to the assignment's offset.
  auto snap = config_store->snapshot();
  if (snap.offset < config_offset) {
    auto r = config_store->read_to_end(cfg.worker_sync_timeout_ms);
    if (r) snap = r.value();
    else spdlog::warn("config catch-up failed: {}", r.error().to_string());
  }
  const auto plan = plan_config_catch_up(snap.offset, config_offset, cfg.retry_backoff_ms);
  if (plan.apply) return true;
  spdlog::warn("config offset {} {} assignment offset {}; rejoining without starting anything", snap.offset,
               plan.lagging ? "below" : "above", config_offset);
  asio::post(io, [w = weak_from_this(), plan] {
    auto s = w.lock();
    if (!s) return;
    if (plan.delay_ms == 0) return s->io_request_rejoin(plan.reason);
    s->retry_timer.expires_after(std::chrono::milliseconds(plan.delay_ms));
    s->retry_timer.async_wait([w, reason = plan.reason](const boost::system::error_code& ec) {
      if (auto s2 = w.lock(); s2 && !ec) s2->io_request_rejoin(reason);
    });
  });
  return false;
}

void DistributedHerder::Impl::post_applied(uint64_t seq, bool had_revocations, bool became_leader) {
  asio::post(io, [w = weak_from_this(), seq, had_revocations, became_leader] {
    auto s = w.lock();
    if (!s) return;
    if (seq == s->io_apply_seq) {
      LifecycleMove moved;
      {
        std::lock_guard lk(s->mu);  // health() reads the state and pub.applied together
        moved = s->lifecycle.move_from(WorkerState::Applying, WorkerState::Running, "assignment applied");
        s->pub.applied = true;
        if (!s->history.empty()) {
          auto& rec = s->history.back();
          rec.applied_ms = wall_ms();
          s->cfg.metrics->rebalance_completed(static_cast<double>(rec.applied_ms - rec.assigned_ms));
        }
      }
      WorkerLifecycle::log(moved);  // not under mu
    }
    if (became_leader && s->io_is_leader) {
      for (const auto& c : s->config_store->snapshot().connectors()) s->io_generate(GenerationTrigger::BecameLeader, c);
    }
    for (const auto& c : std::exchange(s->io_reconfigure_unsent, {})) s->io_task_reconfiguration(c);
    s->request_reconcile();  // the leader's status tombstones (reference 4.4 onAssigned)
    // The follow-up round that places what was revoked (4.4 step 5).
    if (had_revocations) s->io_request_rejoin("revocations completed");
  });
}

void DistributedHerder::Impl::on_revoke_all(std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks) {
  io_assignment.reset();
  cfg.metrics->set_assigned(0, 0);
  {
    std::lock_guard lk(mu);
    coord_lost = true;
    pub.assigned_connectors.clear();
    pub.assigned_tasks.clear();
    pub.applied = false;
    pub.in_group = false;
  }
  // Out of the group: everything stops (or is cut off from Kafka) before
  // the next JoinGroup goes out, so no task runs twice.
  lifecycle.set(WorkerState::Revoking, "coordinator lost: everything stops");
  io_stop_begin();
  asio::post(apply_strand, [w = weak_from_this(), connectors, tasks] {
    if (auto s = w.lock()) {
      spdlog::warn("coordinator lost: stopping connectors {} and tasks {}",
                   names_to_string(connectors), ids_to_string(tasks));
      s->job_revoke_all();
      s->post_stop_end();
    }
  });
}

void DistributedHerder::Impl::job_hand_over(const std::vector<ConnectorTaskId>& tasks) {
  int32_t gen;
  {
    std::lock_guard lk(mu);
    gen = pub.generation;
  }
  const auto plan = plan_drain_hand_over(worker->connector_names(), worker->task_ids(), tasks,
                                         status_store->all_tasks(), cfg.worker_id, gen);
  carry_out_stops(RevocationPlan{plan.stop_connectors, {}});
  write_hand_over_marks(plan.marks);
  spdlog::info("drain: {}; {} connectors stopped, {} tasks run on until their new owners take them",
               to_string(plan), plan.stop_connectors.size(), plan.marks.size());
}

void DistributedHerder::Impl::write_hand_over_marks(const std::vector<std::pair<ConnectorTaskId, StatusValue>>& marks) {
  for (const auto& [t, v] : marks) status_store->put_task(t, v);
  if (auto fl = status_store->flush(std::min(cfg.worker_sync_timeout_ms, 5000)); !fl)
    spdlog::warn("hand-over marks not flushed: {}", fl.error().to_string());
}

bool DistributedHerder::Impl::hand_over_pending(const ConnectorTaskId& t) {
  const auto st = status_store->get_task(t);
  const int64_t now = mono_ms();
  auto since = strand_hand_over_since.find(t);
  const auto d = decide_hand_over_hold(
      st, cfg.worker_id, since == strand_hand_over_since.end() ? std::nullopt : std::optional<int64_t>(since->second),
      now, hand_over_hold_bound_ms(cfg.task_shutdown_graceful_timeout_ms, cfg.session_timeout_ms,
                                   cfg.status_poll_interval_ms));
  switch (d.verdict) {
    case HoldVerdict::Start: break;
    case HoldVerdict::Wait:
      if (d.first) {
        strand_hand_over_since.emplace(t, now);
        spdlog::info("task {}: waiting for {} to hand it over (its stop)", t.to_string(), st->worker_id);
      }
      return true;
    case HoldVerdict::GiveUp:
      spdlog::warn("task {}: {} still reports it {} after {} ms of hand-over; starting it here", t.to_string(),
                   st->worker_id, storage::status_state_name(st->state), d.waited_ms);
      break;
  }
  strand_hand_over_since.erase(t);
  return false;
}

void DistributedHerder::Impl::retry_reconcile_soon() {
  // The old owner's stop shows in the status topic: read it just before
  // each re-check rather than wait for the periodic status poll (issue 26
  // item 5: that poll was the largest part of a moved task's downtime).
  // One read at a time; a slow broker does not pile reads on the pool.
  static constexpr int kHandOverRecheckMs = 50;
  asio::post(io, [w = weak_from_this()] {
    auto s = w.lock();
    if (!s || s->stopping) return;
    s->hand_over_retry_timer.expires_after(std::chrono::milliseconds(kHandOverRecheckMs));
    s->hand_over_retry_timer.async_wait([w](const boost::system::error_code& ec) {
      auto s2 = w.lock();
      if (!s2 || ec) return;
      // A read under way (the periodic poll's) serves this re-check too.
      if (!s2->read_statuses_on_pool(2000, [](Impl& s3) { s3.request_reconcile(); })) s2->request_reconcile();
    });
  });
}

void DistributedHerder::Impl::job_revoke_all() {
  const auto actual = actual_state();
  std::set<std::string> known_c;
  std::set<ConnectorTaskId> known_t;
  for (const auto& [c, run] : actual.connectors) known_c.insert(c);
  for (const auto& [t, run] : actual.tasks) known_t.insert(t);
  carry_out_stops(plan_revoke_all(known_c, known_t));
  // Idempotent sweep once nothing runs: ends the cut-off of tasks abandoned
  // earlier (a stop past its graceful timeout), so nothing here produces or
  // commits any more when the JoinGroup goes out.
  worker->stop_all();
  (void)status_store->flush(cfg.worker_sync_timeout_ms);
}

}  // namespace kc::herder
