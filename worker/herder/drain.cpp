// DistributedHerder::Impl, drain and shutdown: this worker's drain request, the leader's side
// of it, and stopping the herder.
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::io_drain_start(int timeout_ms, DistributedHerder::DrainDone done) {
  if (io_drain_result) return done(io_drain_result->first, io_drain_result->second);
  io_drain_done.push_back(std::move(done));
  if (io_draining) return;
  io_draining = true;
  draining_flag = true;
  lifecycle.set(WorkerState::Draining, "drain requested: work goes to the other workers before this one leaves");
  spdlog::info("drain: handing this worker's connectors and tasks to the others before it leaves (up to {} ms)",
               timeout_ms);
  drain_timer.expires_after(std::chrono::milliseconds(timeout_ms));
  drain_timer.async_wait([w = weak_from_this(), timeout_ms](const boost::system::error_code& ec) {
    if (auto s = w.lock(); s && !ec)
      s->io_drain_finish(false, "the drain did not finish within " + std::to_string(timeout_ms) + " ms");
  });
  bool applied;
  {
    std::lock_guard lk(mu);
    applied = pub.applied || !io_assignment;
  }
  const bool owns_nothing = !io_assignment || (io_assignment->connectors.empty() && io_assignment->tasks.empty());
  if (decide_drain_progress(applied, owns_nothing) == DrainProgress::Done)
    return io_drain_finish(true, "this worker runs nothing");
  io_ask_leader_to_drain();
}

void DistributedHerder::Impl::io_drain_finish(bool drained, const std::string& why) {
  if (io_drain_result) return;
  io_drain_result = {drained, why};
  drain_timer.cancel();
  // A lone worker (or the last of a cluster going down) has nobody to hand
  // to: with drain on by default that is an ordinary stop, not a problem.
  if (drained) spdlog::info("drain: done ({})", why);
  else if (why.find(kNoOtherWorker) != std::string::npos) spdlog::info("drain: {}; a plain stop", why);
  else spdlog::warn("drain: not completed ({}); stopping without it", why);
  auto done = std::move(io_drain_done);
  io_drain_done.clear();
  for (auto& d : done) d(drained, why);
}

void DistributedHerder::Impl::io_ask_leader_to_drain() {
  if (!io_draining || io_drain_result || stopping) return;
  std::string me;
  {
    std::lock_guard lk(mu);
    me = pub.member_id;
  }
  if (me.empty()) return;  // not in the group yet: asked after the first assignment
  if (io_is_leader) {
    coord->set_hand_over_before_join(true);  // before the rejoin io_accept_drain requests
    auto [status, why] = io_accept_drain(me);
    if (status != 202) {
      coord->set_hand_over_before_join(false);
      io_drain_finish(false, why);
    }
    return;
  }
  if (io_leader_url.empty()) return;
  const std::string body = nlohmann::json{{"member_id", me}, {"url", cfg.advertised_url}}.dump();
  // Signed under `sessioned`, which is also what lets it past the leader's
  // basic authentication (see accept_drain_request).
  auto headers = io_signature_headers(body);
  asio::post(pool, [w = weak_from_this(), url = io_leader_url, body, headers = std::move(headers),
                    timeout = cfg.worker_sync_timeout_ms + 5000, tls = cfg.rest_client_tls] {
    auto r = post_internal(url, "/admin/drain/members", body, timeout, tls.get(), headers);
    auto s = w.lock();
    if (!s) return;
    asio::post(s->io, [w, url, r] {
      auto s2 = w.lock();
      if (!s2) return;
      if (!r) {
        spdlog::warn("drain: asking the leader {} failed: {}; asking again after the next assignment", url,
                     r.error().to_string());
      } else if (r->status == 202) {
        spdlog::info("drain: the leader {} accepted; stopping everything before the next JoinGroup", url);
        s2->coord->set_hand_over_before_join(true);
      } else {
        auto j = kc::parse_json_bounded<nlohmann::json>(r->body).value;  // a peer's reply: bounded too
        std::string why = j.is_object() && j.contains("message") && j["message"].is_string()
                              ? j["message"].get<std::string>()
                              : r->body;
        if (r->status == 409 && why.find(kNoOtherWorker) != std::string::npos) return s2->io_drain_finish(false, why);
        // 401: the leader wants basic credentials, which only a signed
        // (sessioned) request may go without; asking again cannot help.
        if (r->status == 401)
          return s2->io_drain_finish(false, "the leader " + url + " refused the unsigned drain request (HTTP 401 " +
                                                why + "); under REST basic authentication drain needs "
                                                "connect.protocol=sessioned");
        // 403/503: possibly a session key the leader rotated or has not
        // read yet; sign again with the current key soon.
        const bool key_trouble = r->status == 403 || r->status == 503;
        spdlog::warn("drain: the leader {} answered {}: {}; asking again {}", url, r->status, why,
                     key_trouble ? "in a second" : "after the next assignment");
        if (key_trouble) {
          auto timer = std::make_shared<asio::steady_timer>(s2->io, std::chrono::seconds(1));
          timer->async_wait([w, timer](const boost::system::error_code& ec) {
            if (auto s3 = w.lock(); s3 && !ec) s3->io_ask_leader_to_drain();
          });
        }
      }
    });
  });
}

std::pair<int, std::string> DistributedHerder::Impl::io_accept_drain(const std::string& member_id) {
  auto d = decide_drain_request(io_is_leader, io_leader_url, member_id, io_round_members, io_drain_members);
  if (d.rebalance) {
    io_drain_members.insert(member_id);
    spdlog::info("drain: member {} hands its work over; rebalancing", member_id);
    io_request_rejoin("drain of member " + member_id);
  }
  return {d.http_status, d.message};
}

void DistributedHerder::Impl::wait_strand_idle() {
  std::promise<void> p;
  auto f = p.get_future();
  asio::post(apply_strand, [&p] { p.set_value(); });
  f.wait();
}

void DistributedHerder::Impl::shutdown(bool leave) {
  if (!started || stopping.exchange(true)) return;
  herder_stop.request_stop();  // ends the herder's waits on task threads (await_fencing)
  lifecycle.set(leave ? WorkerState::Leaving : WorkerState::Stopped, leave ? "stop" : "crash");
  admitting = false;
  {
    std::lock_guard lk(watchdog_mu);
    watchdog_cv.notify_all();
  }
  if (watchdog.joinable()) watchdog.join();
  spdlog::info("herder stopping ({})", leave ? "clean" : "crash");
  asio::post(io, [w = weak_from_this()] {
    if (auto s = w.lock()) {
      s->scheduled_timer.cancel();
      s->config_poll_timer.cancel();
      s->status_poll_timer.cancel();
      s->retry_timer.cancel();
      s->key_timer.cancel();
      s->claim_timer.cancel();
    }
  });
  if (!leave) coord->stop();
  wait_strand_idle();
  const size_t stopping_connectors = worker->connector_names().size();
  const size_t stopping_tasks = worker->task_ids().size();
  const auto stop_began = std::chrono::steady_clock::now();
  worker->stop_all();  // graceful timeout per task; offsets committed on stop
  // Operators (and tests/integration/lifecycle) read this line; a failed
  // final commit or a task past its graceful timeout logs its own line.
  spdlog::info("stopped {} connectors and {} tasks in {} ms; final offsets committed",
               stopping_connectors, stopping_tasks,
               std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - stop_began)
                   .count());
  if (auto fl = status_store->flush(cfg.worker_sync_timeout_ms); !fl)
    spdlog::warn("status flush on stop: {}", fl.error().to_string());
  if (leave && !cfg.leave_group_on_shutdown && !draining_flag.load()) {
    // Static membership: the group keeps our identity and assignment for
    // session.timeout.ms, so a restart causes no rebalance.
    spdlog::info("static member '{}': not sending LeaveGroup; the group waits up to session.timeout.ms ({} ms) "
                 "for this worker to return before moving its work",
                 cfg.group_instance_id.value_or(""), cfg.session_timeout_ms);
    leave = false;
  }
  if (leave) {
    auto p = std::make_shared<std::promise<void>>();
    auto f = p->get_future();
    coord->leave("the worker is shutting down", [p] { p->set_value(); });
    if (f.wait_for(std::chrono::milliseconds(cfg.request_timeout_ms + 1000)) != std::future_status::ready)
      spdlog::warn("LeaveGroup did not complete in time");
  }
  coord->stop();
  pool_work.reset();
  generation_work.reset();  // a waiting generation returns at once on `stopping`
  for (auto& t : pool_threads)
    if (t.joinable()) t.join();
  for (auto& t : generation_threads)
    if (t.joinable()) t.join();
  work.reset();
  io.stop();
  if (io_thread.joinable()) io_thread.join();
  {
    std::lock_guard lk(mu);
    pub.in_group = false;
    pub.applied = false;
  }
  lifecycle.set(WorkerState::Stopped, "herder stopped");
  spdlog::info("herder stopped");
}

}  // namespace kc::herder
