// DistributedHerder::Impl, the config log: config/status topic polls and config-topic updates.
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::schedule_config_poll() {
  config_poll_timer.expires_after(std::chrono::milliseconds(cfg.config_poll_interval_ms));
  config_poll_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    auto s = w.lock();
    if (ec || !s || s->stopping) return;
    if (!s->io_config_polling) {
      s->io_config_polling = true;
      asio::post(s->pool, [w] {
        auto s2 = w.lock();
        if (!s2) return;
        auto r = s2->config_store->read_to_end(s2->cfg.worker_sync_timeout_ms);
        if (!r) spdlog::debug("config poll: {}", r.error().to_string());
        {
          std::lock_guard lk(s2->mu);
          s2->config_read_error = r ? std::string() : r.error().to_string();
        }
        asio::post(s2->io, [w] {
          auto s3 = w.lock();
          if (!s3) return;
          s3->io_config_polling = false;
          // Periodic convergence: whatever an update missed is caught here.
          // (Not the leader's task-config duty: between the two writes of
          // a stop, 0 task configs then STOPPED, it would bring tasks back.)
          s3->request_reconcile();
        });
      });
    }
    s->schedule_config_poll();
  });
}

void DistributedHerder::Impl::schedule_status_poll() {
  status_poll_timer.expires_after(std::chrono::milliseconds(cfg.status_poll_interval_ms));
  status_poll_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
    auto s = w.lock();
    if (ec || !s || s->stopping) return;
    (void)s->read_statuses_on_pool(s->cfg.worker_sync_timeout_ms, [](Impl& s2) { s2.assert_generation_failures(); });
    s->schedule_status_poll();
  });
}

bool DistributedHerder::Impl::read_statuses_on_pool(int cap_ms, std::function<void(Impl&)> then) {
  if (status_reading.exchange(true)) return false;
  asio::post(pool, [w = weak_from_this(), cap_ms, then = std::move(then)] {
    auto s = w.lock();
    if (!s) return;
    (void)s->status_store->read_to_end(std::min(s->cfg.worker_sync_timeout_ms, cap_ms));
    s->status_reading = false;
    then(*s);
  });
  return true;
}

bool DistributedHerder::Impl::io_owns_connector(const std::string& c) const {
  return io_assignment && std::find(io_assignment->connectors.begin(), io_assignment->connectors.end(), c) !=
                              io_assignment->connectors.end();
}

void DistributedHerder::Impl::io_read_connector_config(const std::string& c) {
  // On the pool: providers read files. The config read is the newest in the
  // snapshot by then (a newer record replaces it the same way).
  asio::post(pool, [w = weak_from_this(), c] {
    auto s = w.lock();
    if (!s || s->stopping) return;
    const auto snap = s->config_store->snapshot();
    auto it = snap.connector_configs.find(c);
    if (it == snap.connector_configs.end()) return;  // removed meanwhile
    if (auto parsed = s->config_cache.get(c, it->second); !parsed)
      spdlog::debug("config of connector {} not read: {}", c, parsed.error().to_string());
  });
}

void DistributedHerder::Impl::on_config_update(const storage::ConfigUpdate& u) {
  if (!io_accept_updates || stopping) return;
  using K = storage::ConfigUpdate::Kind;
  switch (u.kind) {
    case K::ConnectorConfig: {
      if (io_known_connectors.insert(u.connector).second) {
        rebalance_pending = true;
        io_request_rejoin("connector " + u.connector + " added");
      }
      io_generate(GenerationTrigger::ConnectorConfigRecord, u.connector);
      io_read_connector_config(u.connector);
      break;
    }
    case K::ConnectorRemoved:
      config_cache.drop(u.connector);
      if (io_known_connectors.erase(u.connector)) {
        rebalance_pending = true;
        io_request_rejoin("connector " + u.connector + " removed");
      }
      break;
    case K::TasksCommitted:
      // The task set may have changed: the leader places it in a new round.
      rebalance_pending = true;
      io_request_rejoin("task configs of " + u.connector + " committed");
      // A commit that left the connector inconsistent: new task configs repair it.
      io_generate(GenerationTrigger::TasksCommitted, u.connector);
      break;
    case K::TargetState:
      io_leader_duties();  // a resumed STOPPED connector needs task configs again
      break;
    case K::SessionKey:
      io_load_session_key();
      io_check_key_rotation();  // a key this leader's settings disagree with is replaced
      return;
    case K::RestartRequested:
      asio::post(apply_strand, [w = weak_from_this(), r = RestartRequest{u.connector, u.restart.include_tasks,
                                                                         u.restart.only_failed}] {
        auto s = w.lock();
        if (!s || s->stopping) return;
        spdlog::info("restart request for connector {} (includeTasks={}, onlyFailed={})", r.connector,
                     r.include_tasks, r.only_failed);
        s->strand_restarts.push_back(r);
        s->job_reconcile();
      });
      return;
  }
  request_reconcile();
}

}  // namespace kc::herder
