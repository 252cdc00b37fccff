// DistributedHerder::Impl, leader duties: task-config generation and writes, and the KIP-507
// session key (rotation, request signatures and their checks).
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::io_leader_duties() {
  if (!io_is_leader || stopping) return;
  // A generation that failed for this very config is not retried here (a
  // stalling plugin would leave one more abandoned thread each time); a
  // config update or a reconfiguration request is.
  std::map<std::string, GenerationFailure> failures;
  {
    std::lock_guard lk(gen_fail_mu);
    failures = generation_failures;
  }
  for (const auto& name : connectors_needing_task_configs(config_store->snapshot(), io_reconfiguring, failures))
    leader_reconfigure(name);
}

void DistributedHerder::Impl::io_generate(GenerationTrigger trigger, const std::string& c) {
  GenerationFacts f;
  f.is_leader = io_is_leader;
  f.in_flight = io_reconfiguring.count(c) > 0;
  f.again_requested = io_reconfigure_again.count(c) > 0;
  if (trigger == GenerationTrigger::TasksCommitted) f.inconsistent = config_store->snapshot().inconsistent.count(c) > 0;
  switch (decide_task_config_generation(trigger, f)) {
    case GenerationVerdict::None: break;
    case GenerationVerdict::Generate:
      if (trigger == GenerationTrigger::ConnectorRequest) spdlog::info("connector {} asked for a task reconfiguration", c);
      leader_reconfigure(c);
      break;
    case GenerationVerdict::AfterCurrent: io_reconfigure_again.insert(c); break;
    case GenerationVerdict::ForwardToLeader: io_forward_task_reconfiguration(c, mono_ms(), 0); break;
  }
}

void DistributedHerder::Impl::leader_reconfigure(const std::string& c, int backoff_ms) {
  io_reconfiguring.insert(c);
  asio::post(generation_io, [w = weak_from_this(), c, backoff_ms] {
    auto s = w.lock();
    if (!s || s->stopping) return;
    s->job_reconfigure(c, [w, c, backoff_ms](bool done) {
      if (auto s1 = w.lock())
        asio::post(s1->io, [w, c, backoff_ms, done] { io_reconfigured(w, c, backoff_ms, done); });
    });
  });
}

void DistributedHerder::Impl::io_reconfigured(
    const std::weak_ptr<Impl>& w, const std::string& c, int backoff_ms, bool done) {
  auto s2 = w.lock();
  if (!s2) return;
  const auto plan = plan_task_config_retry(done, backoff_ms);
  if (!plan.retry) {
    s2->io_reconfiguring.erase(c);
    if (!s2->stopping) s2->io_generate(GenerationTrigger::GenerationFinished, c);
    s2->io_reconfigure_again.erase(c);
    return;
  }
  auto timer = std::make_shared<asio::steady_timer>(s2->io, std::chrono::milliseconds(plan.delay_ms));
  timer->async_wait([w, c, next = plan.next_backoff_ms, timer](const boost::system::error_code& ec) {
    auto s3 = w.lock();
    if (!s3) return;
    if (!task_config_retry_due(static_cast<bool>(ec), s3->stopping, s3->io_is_leader)) {
      s3->io_reconfiguring.erase(c);
      return;
    }
    s3->leader_reconfigure(c, next);
  });
}

bool DistributedHerder::Impl::io_validation_enabled() const { return io_protocol == ConnectProtocol::Sessioned; }

size_t DistributedHerder::Impl::wanted_key_bytes() const {
  if (cfg.key_size_bits) return static_cast<size_t>(*cfg.key_size_bits) / 8;
  return default_key_bytes(cfg.key_generation_algorithm).value_or(0);
}

void DistributedHerder::Impl::publish_key_info() {
  std::lock_guard lk(key_mu);
  key_info = SessionKeyInfo{};
  if (!io_session_key) return;
  key_info.present = true;
  key_info.algorithm = io_session_key->algorithm;
  key_info.creation_timestamp_ms = io_session_key->creation_timestamp_ms;
  key_info.key_bytes = io_session_key->key.size();
  key_info.expires_at_ms = cfg.key_ttl_ms > 0 ? io_session_key->creation_timestamp_ms + cfg.key_ttl_ms : 0;
}

void DistributedHerder::Impl::io_load_session_key() {
  auto snap = config_store->snapshot();
  if (!snap.session_key) return;
  auto k = session_key_from_record(*snap.session_key);
  if (!k) {
    spdlog::error("ignoring the session key of the config topic: {}", k.error().to_string());
    return;
  }
  if (io_session_key && *io_session_key == *k) return;
  io_session_key = std::move(k).value();
  spdlog::info("session key updated (algorithm {}, {} bytes, created at {})", io_session_key->algorithm,
               io_session_key->key.size(), io_session_key->creation_timestamp_ms);
  publish_key_info();
}

void DistributedHerder::Impl::io_check_key_rotation() {
  if (stopping || !io_is_leader || !io_validation_enabled() || io_key_writing) return;
  const int64_t now = wall_ms();
  std::string why;
  if (!io_session_key)
    why = "no session key has been distributed yet";
  else if (cfg.key_ttl_ms > 0 && now >= io_session_key->creation_timestamp_ms + cfg.key_ttl_ms)
    why = "the session key expired";
  else if (io_session_key->algorithm != cfg.key_generation_algorithm ||
           io_session_key->key.size() != wanted_key_bytes())
    why = "the session key's algorithm or size differ from this worker's settings";
  if (why.empty()) {
    if (cfg.key_ttl_ms <= 0) return;
    const int64_t due = io_session_key->creation_timestamp_ms + cfg.key_ttl_ms;
    key_timer.expires_after(std::chrono::milliseconds(std::max<int64_t>(due - now, 0)));
    key_timer.async_wait([w = weak_from_this()](const boost::system::error_code& ec) {
      if (auto s = w.lock(); s && !ec) s->io_check_key_rotation();
    });
    return;
  }
  spdlog::info("distributing a new session key: {}", why);
  io_key_writing = true;
  key_timer.cancel();
  asio::post(pool, [w = weak_from_this(), now] {
    auto s = w.lock();
    if (!s) return;
    Status st = ok_status();
    auto key = generate_session_key(s->cfg.key_generation_algorithm, s->cfg.key_size_bits, now);
    if (!key) st = key.error();
    else
      st = s->leader_config_write([&] {
        return s->config_store->put_session_key(session_key_record(*key), s->cfg.worker_sync_timeout_ms);
      });
    asio::post(s->io, [w, st] {
      auto s2 = w.lock();
      if (!s2) return;
      s2->io_key_writing = false;
      if (!st) {
        // As Connect: read the topic again before possibly retrying.
        spdlog::warn("writing a new session key failed: {}; retrying", st.error().to_string());
        s2->key_timer.expires_after(std::chrono::milliseconds(std::max(s2->cfg.retry_backoff_ms, 500)));
        s2->key_timer.async_wait([w](const boost::system::error_code& ec) {
          if (auto s3 = w.lock(); s3 && !ec) s3->io_check_key_rotation();
        });
        return;
      }
      s2->io_load_session_key();
      s2->io_check_key_rotation();
    });
  });
}

std::vector<std::pair<std::string, std::string>> DistributedHerder::Impl::io_signature_headers(
    const std::string& body) {
  if (!io_validation_enabled() || !io_session_key) return {};
  auto sig = sign_request(cfg.signature_algorithm, io_session_key->key, body);
  if (!sig) {
    spdlog::warn("cannot sign an internal request: {}", sig.error().to_string());
    return {};
  }
  {
    std::lock_guard lk(key_mu);
    ++key_stats.signed_requests;
  }
  return {{std::string(kSignatureHeader), *sig}, {std::string(kSignatureAlgorithmHeader), cfg.signature_algorithm}};
}

VerifyResult DistributedHerder::Impl::io_verify(const SignatureHeaders& headers, const std::string& body) {
  VerifyResult v;
  if (io_validation_enabled())
    v = verify_request(headers, body, cfg.verification_algorithms, io_session_key ? &*io_session_key : nullptr);
  std::lock_guard lk(key_mu);
  if (v.ok()) {
    ++key_stats.verified;
  } else {
    ++key_stats.rejected;
    key_stats.last_rejected_status = v.status;
    key_stats.last_rejected_message = v.message;
  }
  return v;
}

void DistributedHerder::Impl::generate_async(
    const std::string& c, std::unique_ptr<connectors::Connector> p, const ConfigMap& conf,
    connectors::TasksMax tasks, GenerationDone done) {
  if (auto no = abandoned_calls->refusal("connector " + c, "taskConfigs() of connector " + c)) {
    spdlog::error("leader: {}", *no);
    return done(Error{"connector", *no});
  }
  auto run = std::make_shared<GenerationRun>(c);
  run->plugin = std::move(p);
  ++*generations_running;
  std::thread([run, c, conf, tasks, limit = cfg.tasks_max_limit, running = generations_running,
               calls = abandoned_calls] {
    try {
      run->plugin->initialize(run->context);
      run->plugin->start(conf);
      run->enter("taskConfigs");
      auto configs = connectors::generate_task_configs(*run->plugin, c, tasks, limit);
      {
        std::lock_guard lk(run->mu);
        run->out = std::move(configs);  // kept if stop() then stalls
        run->call = "stop";
        run->call_began_ms = mono_ms();
      }
      run->plugin->stop();
    } catch (const std::exception& e) {
      std::lock_guard lk(run->mu);
      run->out = Error{"connector", std::string(run->call) + "() of connector " + c + " failed: " + e.what()};
    }
    std::lock_guard lk(run->mu);
    run->done = true;
    if (run->abandoned_token) calls->returned(run->abandoned_token);
    --*running;
  }).detach();
  auto timer = std::make_shared<asio::steady_timer>(generation_io);
  generation_tick(weak_from_this(), c, run, timer, std::move(done));
}

void DistributedHerder::Impl::generation_tick(
    std::weak_ptr<Impl> w, const std::string& c, std::shared_ptr<GenerationRun> run,
    std::shared_ptr<asio::steady_timer> timer, GenerationDone done) {
  auto s = w.lock();
  if (!s) return;
  std::unique_lock lk(run->mu);
  if (run->done) {
    auto out = std::move(run->out);
    lk.unlock();
    return done(std::move(out));
  }
  if (s->stopping) {
    lk.unlock();
    return done(Error{"connector", "the worker is stopping"});
  }
  const bool stopping_call = std::string_view(run->call) == "stop";
  const int bound = stopping_call ? s->cfg.task_shutdown_graceful_timeout_ms : s->cfg.connector_call_timeout_ms;
  if (mono_ms() - run->call_began_ms >= bound) {
    const std::string what = std::string(run->call) + "() of connector " + c;
    const std::string why = what + " did not return within " + std::to_string(bound) + " ms (" +
                            (stopping_call ? "task.shutdown.graceful.timeout.ms" : "connector.call.timeout.ms") +
                            "); its thread is abandoned";
    run->abandoned_token = s->abandoned_calls->abandoned("connector " + c, what);
    // A stop() past its bound after good configs keeps them (Connect
    // only logs a slow stop); anything else fails the connector.
    Result<std::vector<ConfigMap>> out = Error{"connector", why};
    if (stopping_call && run->out) out = std::move(run->out);
    lk.unlock();
    spdlog::error("leader: {}", why);
    return done(std::move(out));
  }
  lk.unlock();
  timer->expires_after(std::chrono::milliseconds(50));
  timer->async_wait([w, c, run, timer, done = std::move(done)](const boost::system::error_code& ec) mutable {
    if (!ec) generation_tick(w, c, std::move(run), std::move(timer), std::move(done));
  });
}

void DistributedHerder::Impl::leader_generation_failed(
    const std::string& c, const ConfigMap& raw, const std::string& why) {
  spdlog::error("leader: connector {} failed to generate task configs: {}", c, why);
  {
    std::lock_guard lk(gen_fail_mu);
    generation_failures[c] = {raw, why};
  }
  assert_generation_failures();
}

void DistributedHerder::Impl::leader_generation_succeeded(const std::string& c) {
  std::lock_guard lk(gen_fail_mu);
  generation_failures.erase(c);
}

void DistributedHerder::Impl::assert_generation_failures() {
  {
    std::lock_guard lk(gen_fail_mu);
    if (generation_failures.empty()) return;
  }
  const auto snap = config_store->snapshot();
  std::lock_guard lk(gen_fail_mu);
  const auto plan =
      plan_generation_failure_statuses(generation_failures, snap, status_store->all_connectors(), cfg.worker_id);
  for (const auto& c : plan.forget) generation_failures.erase(c);
  for (const auto& [c, v] : plan.writes) status_store->put_connector(c, v);
}

void DistributedHerder::Impl::job_reconfigure(const std::string& c, std::function<void(bool)> finish) {
  auto snap = config_store->snapshot();
  switch (task_config_source(c, snap)) {
    case TaskConfigSource::Nothing: return finish(true);
    case TaskConfigSource::WriteEmpty: return finish(write_task_configs(c, {}));
    case TaskConfigSource::Plugin: break;
  }
  auto it = snap.connector_configs.find(c);
  // The config as this worker read it where it entered (config_cache): the
  // one read of tasks.max, and the resolved values the plugin gets.
  auto read = config_cache.get(c, it->second);
  if (!read) {
    // The connector's own worker reports it FAILED with this reason.
    spdlog::warn("leader cannot generate task configs of {}: {}", c, read.error().to_string());
    return finish(true);
  }
  const runtime::ConnectorConfig& parsed = **read;
  const ConfigMap& conf = parsed.values;
  if (!conf.count("connector.class")) return finish(true);
  auto plugin = registry->create(parsed.connector_class);
  if (!plugin) {
    spdlog::warn("leader cannot create connector {}: {}", c, plugin.error().to_string());
    return finish(true);
  }
  if (parsed.tasks_error) {
    // Its owner reports it FAILED with this reason (runtime::Worker::
    // start_connector); no task configs are generated for it, ever.
    spdlog::warn("leader does not generate task configs of {}: {}", c, parsed.tasks_error->message);
    return finish(true);
  }
  const ConfigMap raw = it->second;
  generate_async(c, std::move(plugin).value(), conf, parsed.tasks,
                 [w = weak_from_this(), c, raw, parsed = *read, finish](Result<std::vector<ConfigMap>> generated) {
                   auto s = w.lock();
                   if (!s) return;
                   if (!generated) {
                     if (!s->stopping)  // stopping is not the connector's failure
                       s->leader_generation_failed(c, raw, generated.error().message);
                     return finish(true);
                   }
                   auto configs = std::move(generated).value();
                   providers::restore_placeholders(raw, {parsed->values, parsed->resolved_keys}, configs);
                   finish(s->write_task_configs(c, configs));
                 });
}

bool DistributedHerder::Impl::write_task_configs(const std::string& c, const std::vector<ConfigMap>& configs) {
  leader_generation_succeeded(c);
  if (!task_configs_need_write(c, configs, config_store->snapshot())) return true;
  spdlog::info("leader writes {} task configs for connector {}", configs.size(), c);
  auto st = leader_config_write([&] { return config_store->put_task_configs(c, configs, cfg.worker_sync_timeout_ms * 3); });
  if (st) return true;
  if (storage::is_unreadable_record_error(st.error())) {  // the same configs would be refused again
    spdlog::error("task configs of {} not written: {}", c, st.error().to_string());
    return true;
  }
  spdlog::warn("writing task configs of {} failed (will retry): {}", c, st.error().to_string());
  return false;
}

}  // namespace kc::herder
