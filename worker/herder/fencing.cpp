// DistributedHerder::Impl, KIP-618: zombie fencing of source connectors, exactly-once checks,
// and the transactional leader's config-topic write privileges.
#include "worker/herder/herder_impl.h"

#include "common/stop_wait.h"
#include "worker/herder/either_stop.h"

namespace kc::herder {

bool DistributedHerder::Impl::is_source(const ConfigMap& conf) const {
  auto cls = conf.find("connector.class");
  if (cls == conf.end()) return false;
  auto desc = registry->find(cls->second);
  return desc && desc->type == connectors::ConnectorType::Source;
}

runtime::ExactlyOnceTaskChecks DistributedHerder::Impl::exactly_once_checks(
    const ConnectorTaskId& t, const runtime::ConnectorConfig& conf) {
  runtime::ExactlyOnceTaskChecks checks;
  // The parsed type is Source for an unknown class too; such a task fails
  // to start before its checks run.
  if (!cfg.exactly_once_source || conf.type != connectors::ConnectorType::Source) return checks;
  const auto snap = config_store->snapshot();
  const auto g = snap.task_config_generations.find(t.connector);
  const int32_t generation = g == snap.task_config_generations.end() ? 0 : g->second;
  std::weak_ptr<Impl> w = weak_from_this();
  checks.before_producer = [w, t](std::stop_token stop) -> Status {
    auto s = w.lock();
    if (!s) return Error{"fence", "the worker is stopping"};
    return s->await_fencing(t, std::move(stop));
  };
  // Connect's verifyTaskGenerationAndOwnership, after init_transactions.
  checks.after_producer = [w, t, generation]() -> Status {
    auto s = w.lock();
    if (!s) return Error{"fence", "the worker is stopping"};
    auto snap2 = s->config_store->read_to_end(s->cfg.worker_sync_timeout_ms);
    if (!snap2) return Error{"fence", "Failed to read to end of config topic: " + snap2.error().to_string()};
    const auto g2 = snap2->task_config_generations.find(t.connector);
    if ((g2 == snap2->task_config_generations.end() ? 0 : g2->second) != generation)
      return Error{"fence", "Cannot start source task " + t.to_string() +
                                " with exactly-once support as the connector has already generated a new set of "
                                "task configs"};
    std::lock_guard lk(s->mu);
    if (!std::binary_search(s->pub.assigned_tasks.begin(), s->pub.assigned_tasks.end(), t))
      return Error{"fence", "Cannot start source task " + t.to_string() +
                                " as it has already been revoked from this worker"};
    return ok_status();
  };
  return checks;
}

Status DistributedHerder::Impl::await_fencing(const ConnectorTaskId& t, std::stop_token stop) {
  const int64_t start = mono_ms();
  std::string last;
  // The waits below end on the task's stop or the herder's (shutdown()
  // requests herder_stop before it stops the tasks).
  const EitherStop either(stop, herder_stop.get_token());
  const std::stop_token any_stop = either.token();
  const auto stopped = [&] { return stopping || any_stop.stop_requested(); };
  const Error stopping_error{"fence", "the task or the worker is stopping"};
  for (int attempt = 0; mono_ms() - start < 60000; ++attempt) {
    const int backoff_ms = attempt > 0 ? std::min(250 << std::min(attempt, 4), 4000) : 0;
    if (stopped() || wait_for_stop(any_stop, std::chrono::milliseconds(backoff_ms)) || stopped()) return stopping_error;
    /// The io thread's answer: local (leader) or whom to forward to (status 0).
    struct Answer {
      std::mutex mu;
      std::condition_variable_any cv;
      std::optional<std::pair<int, std::string>> done;  ///< guarded by mu
      std::string leader_url;                           ///< written before `done`
      std::vector<std::pair<std::string, std::string>> headers;
      void set(int status, std::string why) {
        {
          std::lock_guard lk(mu);
          done.emplace(status, std::move(why));
        }
        cv.notify_all();
      }
    };
    auto a = std::make_shared<Answer>();
    asio::post(io, [w = weak_from_this(), a, c = t.connector] {
      auto s = w.lock();
      if (!s) return a->set(503, "the worker is stopping");
      if (s->io_is_leader)
        return s->io_fence(c, [a](int status, std::string why) { a->set(status, std::move(why)); });
      if (s->io_leader_url.empty()) return a->set(503, "no leader is known yet");
      a->leader_url = s->io_leader_url;
      a->headers = s->io_signature_headers("");
      a->set(0, "");
    });
    // The leader's own fencing may take a while (one init_transactions
    // per older task); the answer or a stop ends the wait.
    const auto no_answer_after = std::chrono::milliseconds(cfg.worker_sync_timeout_ms * 3 + 65000);
    std::unique_lock lk(a->mu);
    if (!a->cv.wait_for(lk, any_stop, no_answer_after, [&] { return a->done.has_value(); }))
      return stopped() ? stopping_error : Error{"fence", "no answer from the herder"};
    auto [status, why] = *a->done;
    lk.unlock();
    if (status == 0) {
      spdlog::info("task {} asks the leader {} to fence out older tasks of {}", t.to_string(), a->leader_url,
                   t.connector);
      auto r = put_internal(a->leader_url, "/connectors/" + rest::percent_encode_segment(t.connector) + "/fence", "",
                            cfg.worker_sync_timeout_ms * 3 + 5000, cfg.rest_client_tls.get(), a->headers);
      if (!r) {
        last = r.error().to_string();
        continue;
      }
      status = r->status;
      why = r->body;
    }
    if (status / 100 == 2) return ok_status();
    last = "HTTP " + std::to_string(status) + " " + why;
    // Not worth retrying: an unknown connector or a sink. (A 400 for a
    // missing signature is retried: this worker may not have read the key yet.)
    if (status == 404 || (status == 400 && why.find("is not a source connector") != std::string::npos)) break;
    spdlog::warn("zombie fencing for {} failed ({}); retrying", t.connector, last);
  }
  return Error{"fence", last};
}

void DistributedHerder::Impl::io_fence(const std::string& c, std::function<void(int, std::string)> done) {
  if (!io_is_leader)
    return done(409, "Only the leader may perform zombie fencing." +
                         (io_leader_url.empty() ? std::string() : " The leader is " + io_leader_url));
  auto snap = config_store->snapshot();
  if (!snap.contains(c)) return done(404, "Connector " + c + " not found");
  if (!is_source(snap.connector_configs.at(c))) return done(400, "Connector " + c + " is not a source connector");
  auto& waiters = io_fencings[c];
  waiters.push_back(std::move(done));
  if (waiters.size() > 1) return;  // joins the fencing under way
  asio::post(pool, [w = weak_from_this(), c] {
    auto s = w.lock();
    if (!s) return;
    auto st = s->job_fence(c);
    const std::string why = st ? "" : "Failed to perform zombie fencing: " + st.error().to_string();
    asio::post(s->io, [w, c, why] {
      auto s2 = w.lock();
      if (!s2) return;
      auto waiting = std::move(s2->io_fencings[c]);
      s2->io_fencings.erase(c);
      for (auto& d : waiting) why.empty() ? d(204, "") : d(500, why);
    });
  });
}

Status DistributedHerder::Impl::job_fence(const std::string& c) {
  auto snap = config_store->read_to_end(cfg.worker_sync_timeout_ms);
  if (!snap)
    return Error{"fence", "Failed to read to end of config topic before performing zombie fencing: " +
                              snap.error().to_string()};
  if (!snap->pending_fencing.count(c)) {
    spdlog::debug("skipping zombie fencing of {}: its older task generations are fenced out already", c);
    return ok_status();
  }
  const auto n = snap->task_counts.find(c);
  const int32_t task_count = n == snap->task_counts.end() ? 0 : n->second;
  const auto rec = snap->task_count_records.find(c);
  if (rec != snap->task_count_records.end() && !(rec->second == 1 && task_count == 1)) {
    storage::ClientProps client = cfg.client_props;
    client["bootstrap.servers"] = cfg.bootstrap_servers;
    for (int32_t i = 0; i < rec->second; ++i) {
      auto st = storage::fence_transactional_id(client, storage::task_transactional_id(cfg.group_id, {c, i}),
                                                cfg.worker_sync_timeout_ms * 3);
      if (!st) return st;
    }
    spdlog::info("fenced out the {} transactional producer(s) of the previous task generation of {}", rec->second, c);
  }
  spdlog::info("writing task count record {} = {} after zombie fencing", storage::task_count_key(c), task_count);
  return leader_config_write(
      [&] { return config_store->put_task_count_record(c, task_count, cfg.worker_sync_timeout_ms * 3); });
}

Status DistributedHerder::Impl::leader_config_write(const std::function<Status()>& write) {
  bool leader = false;
  {
    std::lock_guard lk(mu);
    leader = pub.is_leader && pub.in_group;
  }
  // A worker that lost leadership since the io thread let this write
  // through claims nothing (that would fence the new leader); its write
  // fails without privileges, as Connect's IllegalStateException.
  if (cfg.transactional_leader && leader) {
    if (auto st = config_store->claim_write_privileges(cfg.worker_sync_timeout_ms * 3); !st)
      return note_privileged_failure(st.error());
  }
  auto st = write();
  if (st || !storage::is_privileged_write_error(st.error())) return st;
  return note_privileged_failure(st.error());
}

Status DistributedHerder::Impl::note_privileged_failure(const Error& cause) {
  spdlog::warn("Failed to write to config topic as leader; will rejoin group if necessary and, if still leader, "
               "attempt to reclaim write privileges for the config topic: {}",
               cause.to_string());
  fenced_from_config_topic = true;
  {
    std::lock_guard lk(writer_mu);
    writer_last_error = cause.to_string();
  }
  asio::post(io, [w = weak_from_this()] {
    if (auto s = w.lock()) s->io_reclaim_write_privileges();
  });
  return Error{storage::kPrivilegedWriteField,
               "Failed to write to config topic; this may be due to a transient error and the request can be "
               "safely retried: " +
                   cause.message};
}

void DistributedHerder::Impl::io_reclaim_write_privileges() {
  if (!cfg.transactional_leader || stopping || io_claiming) return;
  const bool leader = io_is_leader && io_assignment.has_value();
  io_claiming = true;
  asio::post(pool, [w = weak_from_this(), leader] {
    auto s = w.lock();
    if (!s) return;
    Status st = ok_status();
    if (leader) {
      st = s->config_store->claim_write_privileges(s->cfg.worker_sync_timeout_ms * 3);
    } else {
      s->config_store->release_write_privileges();
    }
    asio::post(s->io, [w, st, leader] {
      auto s2 = w.lock();
      if (!s2) return;
      s2->io_claiming = false;
      if (s2->stopping) return;
      if (st) {
        if (s2->fenced_from_config_topic.exchange(false) && leader)
          spdlog::info("Successfully reclaimed write privileges for config topic after being fenced out");
        // Leadership changed while the job ran: claim or release again.
        if (leader != (s2->io_is_leader && s2->io_assignment.has_value())) s2->io_reclaim_write_privileges();
        return;
      }
      s2->fenced_from_config_topic = true;
      {
        std::lock_guard lk(s2->writer_mu);
        s2->writer_last_error = st.error().to_string();
      }
      spdlog::warn("Unable to claim write privileges for config topic. Will backoff and possibly retry if still "
                   "the leader: {}",
                   st.error().to_string());
      s2->claim_timer.expires_after(std::chrono::milliseconds(250));
      s2->claim_timer.async_wait([w](const boost::system::error_code& ec) {
        if (auto s3 = w.lock(); s3 && !ec) s3->io_reclaim_write_privileges();
      });
    });
  });
}

}  // namespace kc::herder
