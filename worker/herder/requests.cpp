// DistributedHerder: the HerderApi reads and writes the REST layer calls, their helpers
// on Impl (readiness, offsets, bounded validate), and forwarding task reconfigurations to the leader.
#include "worker/herder/herder_impl.h"

namespace kc::herder {

void DistributedHerder::Impl::io_task_reconfiguration(const std::string& c) {
  if (stopping) return;
  // The leader generates from the config read again: the request may come
  // from an operator's restart on its owner, which reads a rotated secret
  // anew (config_cache, dropped before the restart there).
  if (io_is_leader) config_cache.drop(c);
  io_generate(GenerationTrigger::ConnectorRequest, c);
}

void DistributedHerder::Impl::io_forward_task_reconfiguration(const std::string& c, int64_t first_ms, int attempt) {
  if (stopping) return;
  if (io_is_leader) return io_task_reconfiguration(c);
  if (io_leader_url.empty()) {
    io_reconfigure_unsent.insert(c);
    return;
  }
  spdlog::info("connector {} asked for a task reconfiguration; forwarding to the leader {}", c, io_leader_url);
  // Deviation (see distributed_herder.h): the leader generates the task
  // configs itself, so the body is empty; it is still what is signed.
  const std::string body;
  auto headers = io_signature_headers(body);
  asio::post(pool, [w = weak_from_this(), c, url = io_leader_url, body, headers = std::move(headers), first_ms,
                    attempt, timeout = cfg.worker_sync_timeout_ms + 5000, tls = cfg.rest_client_tls] {
    auto r = post_internal(url, "/connectors/" + rest::percent_encode_segment(c) + "/tasks", body, timeout,
                           tls.get(), headers);
    auto s = w.lock();
    if (!s) return;
    const bool ok = r && r->status / 100 == 2;
    // Any failure but a gone connector is retried with backoff for a
    // minute (a 403/503 may be an expired session key, a 409 a leader
    // change, a timeout a busy leader), as Connect's
    // reconfigureConnectorTasksWithRetry; then after the next assignment.
    const bool gone = r && r->status == 404;
    const bool retry_soon = !ok && !gone && mono_ms() - first_ms < 60000;
    if (!ok)
      spdlog::warn("forwarding the task reconfiguration of {} to the leader {} failed ({}); {}", c, url,
                   r ? "HTTP " + std::to_string(r->status) + " " + r->body : r.error().to_string(),
                   retry_soon ? "retrying after backoff" : "sending it again after the next assignment");
    {
      std::lock_guard lk(s->key_mu);
      ++(ok ? s->key_stats.forwarded : s->key_stats.forward_failures);
    }
    asio::post(s->io, [w, c, ok, retry_soon, first_ms, attempt] {
      auto s2 = w.lock();
      if (!s2 || ok) return;
      if (!retry_soon) {
        s2->io_reconfigure_unsent.insert(c);
        return;
      }
      auto timer = std::make_shared<asio::steady_timer>(
          s2->io, std::chrono::milliseconds(std::min(250 << std::min(attempt, 4), 4000)));
      timer->async_wait([w, c, first_ms, attempt, timer](const boost::system::error_code& ec) {
        if (auto s3 = w.lock(); s3 && !ec) s3->io_forward_task_reconfiguration(c, first_ms, attempt + 1);
      });
    });
  });
}

std::pair<int, std::string> DistributedHerder::Impl::io_accept_task_reconfiguration(const std::string& c) {
  if (!io_is_leader)
    return {409, "Cannot complete request because of a conflicting operation (this worker is not the leader" +
                     (io_leader_url.empty() ? std::string(")") : "; the leader is " + io_leader_url + ")")};
  if (!config_store->snapshot().contains(c)) return {404, "Connector " + c + " not found"};
  io_task_reconfiguration(c);
  return {204, ""};
}

void DistributedHerder::Impl::validate_bounded(rest::ConnectorConfig config,
                                               std::function<void(rest::Reply<connectors::ConfigValidation>)> done) {
  herder::validate_bounded(cfg, *registry, abandoned_calls, std::move(config), std::move(done));
}

std::optional<rest::RestError> DistributedHerder::Impl::not_ready() const {
  if (!started) return rest::RestError::unavailable("Worker is starting");
  if (stopping) return rest::RestError::unavailable("Worker is shutting down");
  return std::nullopt;
}

rest::ConnectorType DistributedHerder::Impl::type_of(const ConfigMap& conf) const {
  return connector_type_of(*registry, conf);
}

rest::ConnectorInfo DistributedHerder::Impl::info_of(const ClusterConfigState& snap, const std::string& name) const {
  rest::ConnectorInfo info;
  info.name = name;
  info.config = snap.connector_configs.at(name);
  for (const auto& t : snap.tasks(name)) info.tasks.push_back(rest::TaskId{t.connector, t.task});
  info.type = type_of(info.config);
  return info;
}

std::optional<rest::ConnectorStateInfo> DistributedHerder::Impl::status_info(const std::string& name) const {
  auto cs = status_store->get_connector(name);
  if (!cs) return std::nullopt;
  rest::ConnectorStateInfo info;
  info.name = name;
  info.connector = rest::ConnectorStatus{to_rest(cs->state), cs->worker_id, cs->trace.value_or("")};
  for (const auto& [id, ts] : status_store->get_tasks(name))
    info.tasks.push_back(rest::TaskStatus{id, to_rest(ts.state), ts.worker_id, ts.trace.value_or("")});
  auto snap = config_store->snapshot();
  if (snap.contains(name)) info.type = type_of(snap.connector_configs.at(name));
  return info;
}

std::optional<rest::RestError> DistributedHerder::Impl::offsets_precondition(
    const ClusterConfigState& snap, const std::string& name, bool modify) const {
  if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
  if (modify && snap.target_state(name) != storage::TargetState::Stopped)
    return rest::RestError::connector_not_stopped(name);
  return std::nullopt;
}

runtime::ConnectorConfigPtr DistributedHerder::Impl::offsets_config(const std::string& name, const ConfigMap& raw) {
  if (auto c = config_cache.get(name, raw)) return std::move(c).value();
  return std::make_shared<const runtime::ConnectorConfig>(
      worker->parse_connector_config(name, raw, providers::ResolvedConfig{raw, {}}));
}

SinkGroup DistributedHerder::Impl::sink_group(const runtime::ConnectorConfig& conf) const {
  return sink_group_of(cfg, conf);
}

rest::Reply<std::vector<rest::ConnectorOffset>> DistributedHerder::Impl::sink_offsets(
    const runtime::ConnectorConfig& conf) const {
  return read_sink_offsets(sink_group(conf));
}

rest::Reply<std::string> DistributedHerder::Impl::modify_sink_offsets(
    const runtime::ConnectorConfig& conf, const std::optional<std::vector<rest::ConnectorOffset>>& offsets) const {
  if (!offsets) return reset_sink_offsets(sink_group(conf));
  return alter_sink_offsets(sink_group(conf), *offsets);
}

rest::Reply<SourceOffsetStores> DistributedHerder::Impl::source_offset_stores(
    const runtime::ConnectorConfig& conf, std::unique_ptr<storage::OffsetBackingStore>& own) const {
  const auto& topic = conf.offsets_topic;
  const std::string& name = conf.name;
  if (!topic) return SourceOffsetStores{offset_store.get(), nullptr};
  storage::OffsetBackingStore::Options oo;
  oo.client = cfg.client_props;
  oo.client["bootstrap.servers"] = cfg.bootstrap_servers;
  oo.topic = *topic;
  oo.partitions = cfg.offset_partitions;
  oo.replication_factor = cfg.offset_replication_factor;
  oo.client_id = "connector-offsets-" + name;
  oo.timeout_ms = cfg.worker_sync_timeout_ms * 3;
  auto store = storage::OffsetBackingStore::open(oo);
  if (!store)
    return rest::RestError::internal("Failed to open the offsets topic " + *topic + " of connector " + name + ": " +
                                     store.error().to_string());
  own = std::move(store).value();
  return SourceOffsetStores{own.get(), offset_store.get()};
}

// ------------------------------------------------------------------ HerderApi: reads

void DistributedHerder::list_connectors(rest::Callback<std::vector<std::string>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  cb(impl_->config_store->snapshot().connectors());
}

void DistributedHerder::connector_info(const std::string& name, rest::Callback<rest::ConnectorInfo> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  cb(impl_->info_of(snap, name));
}

void DistributedHerder::connector_config(const std::string& name, rest::Callback<rest::ConnectorConfig> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  cb(snap.connector_configs.at(name));
}

void DistributedHerder::task_configs(const std::string& name, rest::Callback<std::vector<rest::TaskInfo>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  if (impl_->rebalance_pending) return cb(rest::RestError::rebalance_expected());
  auto snap = impl_->config_store->snapshot();
  if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
  std::vector<rest::TaskInfo> out;
  for (const auto& t : snap.tasks(name)) {
    rest::TaskInfo ti;
    ti.id = rest::TaskId{t.connector, t.task};
    ti.config = snap.task_config(t).value_or(ConfigMap{});
    out.push_back(std::move(ti));
  }
  cb(std::move(out));
}

void DistributedHerder::connector_status(const std::string& name, rest::Callback<rest::ConnectorStateInfo> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto info = impl_->status_info(name);
  if (!info) return cb(rest::RestError::not_found("No status found for connector " + name));
  cb(std::move(*info));
}

void DistributedHerder::task_status(const rest::TaskId& id, rest::Callback<rest::TaskStatus> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto ts = impl_->status_store->get_task(ConnectorTaskId{id.connector, id.task});
  if (!ts) return cb(rest::RestError::not_found("No status found for task " + id.connector + "-" + std::to_string(id.task)));
  cb(rest::TaskStatus{id.task, to_rest(ts->state), ts->worker_id, ts->trace.value_or("")});
}

void DistributedHerder::connector_plugins(bool connectors_only, rest::Callback<std::vector<rest::PluginInfo>> cb) {
  cb(plugin_infos(*impl_->registry, connectors_only));
}

void DistributedHerder::connector_plugin_config(const std::string& plugin,
                                                rest::Callback<std::vector<rest::ConfigKeyInfo>> cb) {
  cb(plugin_config(*impl_->registry, plugin));
}

void DistributedHerder::validate_connector_config(rest::ConnectorConfig config, rest::Callback<rest::ConfigInfos> cb) {
  impl_->validate_bounded(std::move(config), [cb = std::move(cb)](rest::Reply<connectors::ConfigValidation> v) {
    if (!v) return cb(v.error());
    cb(to_rest(v.value()));
  });
}

void DistributedHerder::connector_active_topics(const std::string& name,
                                                rest::Callback<std::vector<std::string>> cb) {
  if (!config_.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  cb(impl_->status_store->get_topics(name));
}

void DistributedHerder::reset_connector_active_topics(const std::string& name, rest::Callback<rest::Done> cb) {
  if (!config_.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (!config_.topic_tracking_allow_reset) return cb(rest::RestError::topic_tracking_reset_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  impl_->status_store->delete_topics(name);
  cb(rest::Done{});
}

void DistributedHerder::connector_offsets(const std::string& name,
                                          rest::Callback<std::vector<rest::ConnectorOffset>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  // On the pool: the read to the end of the offsets topic blocks.
  asio::post(impl_->pool, [impl, name, cb = std::move(cb)] {
    auto snap = impl->config_store->snapshot();
    if (auto e = impl->offsets_precondition(snap, name, false)) return cb(*e);
    const auto parsed = impl->offsets_config(name, snap.connector_configs.at(name));
    const runtime::ConnectorConfig& conf = *parsed;
    if (conf.type == connectors::ConnectorType::Sink) return cb(impl->sink_offsets(conf));
    std::unique_ptr<storage::OffsetBackingStore> own;
    auto stores = impl->source_offset_stores(conf, own);
    if (!stores) return cb(stores.error());
    cb(read_source_offsets(name, stores.value(), impl->cfg.worker_sync_timeout_ms * 3));
  });
}

void DistributedHerder::health(rest::Callback<rest::Health> cb) {
  // One read of everything, under `mu`, where post_applied moves the state
  // to Running together with pub.applied: "healthy" comes with "Running".
  std::string state;
  AssignmentState s;
  bool fatal = false;
  bool lost = false;
  std::string msg;
  std::string config_error;
  {
    std::lock_guard lk(impl_->mu);
    state = worker_state_name(impl_->lifecycle.get());
    s = impl_->pub;
    fatal = impl_->coord_fatal;
    msg = impl_->coord_fatal_message;
    lost = impl_->coord_lost;
    config_error = impl_->config_read_error;
  }
  auto reply = [&](rest::HealthStatus status, std::string message) {
    cb(rest::Health{status, std::move(message), state});
  };
  if (!impl_->started) return reply(rest::HealthStatus::Starting, "Worker is still starting up.");
  if (impl_->stopping) return reply(rest::HealthStatus::Unhealthy, "Worker is shutting down.");
  if (fatal) return reply(rest::HealthStatus::Unhealthy, "Group membership failed: " + msg);
  if (s.generation < 0) return reply(rest::HealthStatus::Starting, "Worker has not joined the group yet.");
  if (lost)
    return reply(rest::HealthStatus::Unavailable, "Worker is out of the group (group coordinator lost); rejoining.");
  if (!s.in_group || !s.applied)
    return reply(rest::HealthStatus::Rebalancing,
                 "Worker is rebalancing: generation " + std::to_string(s.generation) +
                     (s.in_group ? " assignment is being applied." : " is ending; rejoining the group."));
  if (!config_error.empty()) return reply(rest::HealthStatus::Unavailable, "Config topic unreadable: " + config_error);
  reply(rest::HealthStatus::Healthy, "Worker has completed startup and is ready to handle requests.");
}

void DistributedHerder::worker_info(rest::Callback<rest::WorkerInfo> cb) {
  cb(rest::WorkerInfo{config_.worker_id, config_.advertised_url, impl_->kafka_cluster_id});
}

void DistributedHerder::member_view(rest::Callback<rest::MemberView> cb) {
  rest::MemberView v;
  {
    std::lock_guard lk(impl_->mu);
    const AssignmentState& s = impl_->pub;
    v.member_id = s.member_id;
    v.generation = s.generation;
    v.is_leader = s.is_leader;
    v.leader_url = s.leader_url;
    v.protocol = s.protocol;
    v.connectors = s.assigned_connectors;
    for (const auto& t : s.assigned_tasks) v.tasks.push_back(t.to_string());
    if (s.is_leader) v.members = impl_->pub_round_members;
  }
  v.worker_id = config_.worker_id;
  v.url = config_.advertised_url;
  v.draining = impl_->draining_flag.load();
  cb(std::move(v));
}

// ------------------------------------------------------------------ HerderApi: writes

void DistributedHerder::put_connector_config(rest::PutConnectorRequest req, rest::Callback<rest::PutConnectorResult> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  // Validated first, as Connect does (the plugin's validate() under its
  // deadline, off every herder thread), then written by the leader.
  auto config = req.config;
  impl_->validate_bounded(std::move(config), [w = std::weak_ptr<Impl>(impl_), req = std::move(req), cb = std::move(cb)](
                                                 rest::Reply<connectors::ConfigValidation> v) mutable {
    if (!v) return cb(v.error());
    if (v.value().error_count != 0) return cb(rest::RestError::bad_request(v.value().invalid_message()));
    auto impl = w.lock();
    if (!impl) return cb(rest::RestError::unavailable("Worker is shutting down"));
    impl->leader_write<rest::PutConnectorResult>(
        std::move(cb), [w, req = std::move(req)]() -> rest::Reply<rest::PutConnectorResult> {
          auto impl = w.lock();
          if (!impl) return rest::RestError::unavailable("Worker is shutting down");
          auto before = impl->config_store->snapshot();
          const bool exists = before.contains(req.name);
          if (exists && !req.allow_replace) return rest::RestError::already_exists(req.name);
          std::optional<storage::TargetState> initial;
          if (req.initial_state) initial = to_storage(*req.initial_state);
          auto st = impl->leader_config_write([&] {
            return impl->config_store->put_connector_config(req.name, req.config, exists ? std::nullopt : initial,
                                                            impl->cfg.worker_sync_timeout_ms * 3);
          });
          if (!st) return config_write_error("connector config", st.error());
          auto after = impl->config_store->snapshot();
          if (!after.contains(req.name))
            return rest::RestError::write_timeout("connector config", "not visible after the write");
          spdlog::info("leader wrote connector config {} ({})", req.name, exists ? "updated" : "created");
          return rest::PutConnectorResult{!exists, impl->info_of(after, req.name)};
        });
  });
}

void DistributedHerder::delete_connector(const std::string& name, rest::Callback<rest::Done> cb) {
  auto impl = impl_;
  impl_->leader_write<rest::Done>(std::move(cb), [impl, name]() -> rest::Reply<rest::Done> {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
    auto st = impl->leader_config_write(
        [&] { return impl->config_store->remove_connector(name, impl->cfg.worker_sync_timeout_ms * 3); });
    if (!st) return config_write_error("connector deletion", st.error());
    // Leader writes tombstone statuses for the deleted connector and its tasks (4.4).
    int32_t gen = -1;
    {
      std::lock_guard lk(impl->mu);
      gen = impl->pub.generation;
    }
    impl->status_store->put_connector(name, StatusValue{StatusState::Destroyed, std::nullopt, impl->cfg.worker_id, gen});
    // Active topics of a deleted connector are reset (KIP-558, reference 4.4).
    if (impl->cfg.topic_tracking_enable) impl->status_store->delete_topics(name);
    for (const auto& [id, _] : impl->status_store->get_tasks(name))
      impl->status_store->put_task(ConnectorTaskId{name, id},
                                   StatusValue{StatusState::Destroyed, std::nullopt, impl->cfg.worker_id, gen});
    return rest::Done{};
  });
}

void DistributedHerder::modify_connector_offsets(const std::string& name,
                                                 std::optional<std::vector<rest::ConnectorOffset>> offsets,
                                                 rest::Callback<std::string> cb) {
  auto impl = impl_;
  impl_->leader_write<std::string>(
      std::move(cb), [impl, name, offsets = std::move(offsets)]() -> rest::Reply<std::string> {
        auto snap = impl->config_store->snapshot();
        if (auto e = impl->offsets_precondition(snap, name, true)) return *e;
        const auto parsed = impl->offsets_config(name, snap.connector_configs.at(name));
        const runtime::ConnectorConfig& conf = *parsed;
        if (conf.type == connectors::ConnectorType::Sink) return impl->modify_sink_offsets(conf, offsets);
        std::unique_ptr<storage::OffsetBackingStore> own;
        auto stores = impl->source_offset_stores(conf, own);
        if (!stores) return stores.error();
        return modify_source_offsets(name, stores.value(), offsets, impl->cfg.worker_sync_timeout_ms * 3);
      });
}

void DistributedHerder::set_target_state(const std::string& name, rest::TargetState state, rest::Callback<rest::Done> cb) {
  auto impl = impl_;
  if (state == rest::TargetState::Stopped) {
    // Leader only: empty task configs first, then the STOPPED target state (6.1).
    impl_->leader_write<rest::Done>(std::move(cb), [impl, name]() -> rest::Reply<rest::Done> {
      auto snap = impl->config_store->snapshot();
      if (!snap.contains(name)) return rest::RestError::connector_not_found(name);
      auto st = impl->leader_config_write(
          [&] { return impl->config_store->put_task_configs(name, {}, impl->cfg.worker_sync_timeout_ms * 3); });
      if (st) st = impl->config_store->put_target_state(name, storage::TargetState::Stopped, impl->cfg.worker_sync_timeout_ms * 3);
      if (!st) return config_write_error("STOPPED target state", st.error());
      return rest::Done{};
    });
    return;
  }
  // Pause / resume: written by any worker (4.5).
  if (auto e = impl_->not_ready()) return cb(*e);
  asio::post(impl_->pool, [impl, name, state, cb = std::move(cb)] {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
    // Every worker applies it when it reads the record; the leader also
    // regenerates task configs of a resumed STOPPED connector.
    auto st = impl->config_store->put_target_state(name, to_storage(state), impl->cfg.worker_sync_timeout_ms * 3);
    if (!st) return cb(rest::RestError::write_timeout("target state", st.error().to_string()));
    cb(rest::Done{});
  });
}

void DistributedHerder::set_cluster_logger_level(const std::string& logger, const std::string& level,
                                                 rest::Callback<rest::Done> cb) {
  // KIP-976: any worker writes it (as pause/resume); the config store
  // applies it on every worker that reads it, this one before cb.
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  asio::post(impl_->pool, [impl, logger, level, cb = std::move(cb)] {
    auto st = impl->config_store->put_logger_level(logger, level, impl->cfg.worker_sync_timeout_ms * 3);
    if (!st) return cb(rest::RestError::write_timeout("logger level", st.error().to_string()));
    cb(rest::Done{});
  });
}

void DistributedHerder::restart_connector(const std::string& name, rest::RestartRequest req,
                                          rest::Callback<std::optional<rest::ConnectorStateInfo>> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  if (!req.plain()) {
    // KIP-745: the leader records the request; every worker restarts the
    // selected instances it owns when it reads the record. The answer shows
    // the plan: the selected instances as RESTARTING.
    impl_->leader_write<std::optional<rest::ConnectorStateInfo>>(
        std::move(cb), [impl, name, req]() -> rest::Reply<std::optional<rest::ConnectorStateInfo>> {
          if (!impl->config_store->snapshot().contains(name)) return rest::RestError::connector_not_found(name);
          auto plan = impl->status_info(name);
          if (!plan) return rest::RestError::not_found("Status for connector " + name + " not found");
          auto st = impl->leader_config_write([&] {
            return impl->config_store->put_restart_request(
                name, storage::RestartFlags{req.include_tasks, req.only_failed}, impl->cfg.worker_sync_timeout_ms * 3);
          });
          if (!st) return config_write_error("restart request", st.error());
          auto selected = [&](rest::ConnectState s) { return !req.only_failed || s == rest::ConnectState::Failed; };
          if (selected(plan->connector.state)) plan->connector.state = rest::ConnectState::Restarting;
          if (req.include_tasks)
            for (auto& t : plan->tasks)
              if (selected(t.state)) t.state = rest::ConnectState::Restarting;
          return std::optional<rest::ConnectorStateInfo>(std::move(*plan));
        });
    return;
  }
  asio::post(impl_->io, [impl, name, cb = std::move(cb)]() mutable {
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(name)) return cb(rest::RestError::connector_not_found(name));
    if (!impl->io_owns_connector(name)) {
      auto st = impl->status_store->get_connector(name);
      return cb(rest::RestError::not_owner(st ? url_of_worker_id(st->worker_id) : ""));
    }
    Action a{Action::Kind::RestartConnector, name};
    a.target = snap.target_state(name);
    a.plain_restart = true;  // execute() then asks for new task configs, as Connect's restart
    if (a.target == storage::TargetState::Stopped) return cb(std::optional<rest::ConnectorStateInfo>{});
    impl->restart_local(a);
    cb(std::optional<rest::ConnectorStateInfo>{});
  });
}

void DistributedHerder::restart_task(const rest::TaskId& id, rest::Callback<rest::Done> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto impl = impl_;
  asio::post(impl_->io, [impl, id, cb = std::move(cb)]() mutable {
    ConnectorTaskId t{id.connector, id.task};
    auto snap = impl->config_store->snapshot();
    if (!snap.contains(id.connector) || !snap.task_config(t))
      return cb(rest::RestError::not_found("Task " + t.to_string() + " not found"));
    const bool mine = impl->io_assignment &&
                      std::find(impl->io_assignment->tasks.begin(), impl->io_assignment->tasks.end(), t) !=
                          impl->io_assignment->tasks.end();
    if (!mine) {
      auto st = impl->status_store->get_task(t);
      return cb(rest::RestError::not_owner(st ? url_of_worker_id(st->worker_id) : ""));
    }
    Action a{Action::Kind::RestartTask, t.connector, t};
    a.target = snap.target_state(t.connector);
    a.plain_restart = true;  // execute() reads the connector's config again (a rotated secret)
    impl->restart_local(a, [cb = std::move(cb)] { cb(rest::Done{}); });
  });
}

}  // namespace kc::herder
