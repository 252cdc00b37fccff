// DistributedHerder::Impl, startup: the internal topic stores, start(), and the freeze watchdog.
#include "worker/herder/herder_impl.h"

#include <future>

namespace kc::herder {

namespace {

/// The options of the offsets or status store: its topic, partitions and
/// replication factor, the worker's client properties, client id
/// "<group.id><suffix>" and the startup timeout (ms) for its first read.
template <class Options>
Options store_options(const storage::ClientProps& client, const std::string& topic, int partitions,
                      int replication_factor, const char* client_id_suffix, const HerderConfig& cfg) {
  Options o;
  o.client = client;
  o.topic = topic;
  o.partitions = partitions;
  o.replication_factor = replication_factor;
  o.client_id = cfg.group_id + client_id_suffix;
  o.timeout_ms = cfg.startup_timeout_ms;
  return o;
}

}  // namespace

Status DistributedHerder::Impl::open_stores() {
  storage::ClientProps client = cfg.client_props;
  client["bootstrap.servers"] = cfg.bootstrap_servers;

  storage::ConfigBackingStore::Options co;
  co.client = client;
  co.topic = cfg.config_topic;
  co.replication_factor = cfg.config_replication_factor;
  co.client_id = cfg.group_id + "-configs";
  co.timeout_ms = cfg.startup_timeout_ms;
  if (cfg.transactional_leader) co.transactional_id = storage::config_topic_transactional_id(cfg.group_id);
  co.read_committed = cfg.exactly_once_source;
  std::weak_ptr<Impl> w = weak_from_this();
  // The three stores are independent: each creates or checks its topic and
  // reads it to the end, a few hundred ms on a broker. Opening them at once
  // shortens a restart by two of those reads (a returning worker's tasks
  // are down meanwhile).
  auto offsets = std::async(std::launch::async, [&] {
    return storage::OffsetBackingStore::open(store_options<storage::OffsetBackingStore::Options>(
        client, cfg.offset_topic, cfg.offset_partitions, cfg.offset_replication_factor, "-offsets", cfg));
  });
  auto statuses = std::async(std::launch::async, [&] {
    return storage::StatusBackingStore::open(store_options<storage::StatusBackingStore::Options>(
        client, cfg.status_topic, cfg.status_partitions, cfg.status_replication_factor, "-statuses", cfg));
  });
  auto cs = storage::ConfigBackingStore::open(co, [w](const storage::ConfigUpdate& u) {
    if (auto self = w.lock()) asio::post(self->io, [w, u] {
        if (auto s = w.lock()) s->on_config_update(u);
      });
  });
  auto os = offsets.get();
  auto ss = statuses.get();
  if (!cs) return Error{"config.storage.topic", cfg.config_topic + ": " + cs.error().to_string()};
  config_store = std::move(cs.value());
  if (!os) return Error{"offset.storage.topic", cfg.offset_topic + ": " + os.error().to_string()};
  offset_store = std::move(os.value());
  if (!ss) return Error{"status.storage.topic", cfg.status_topic + ": " + ss.error().to_string()};
  status_store = std::move(ss.value());
  return ok_status();
}

Status DistributedHerder::Impl::start() {
  if (auto st = open_stores(); !st) return st;
  // Bounded: a broker that does not report one must not hold up startup.
  kafka_cluster_id = config_store->kafka_cluster_id(std::min(cfg.request_timeout_ms, 5000));
  if (cfg.topic_tracking_enable)
    status_listener = std::make_unique<runtime::StatusStoreListener>(*status_store, cfg.worker_id);
  else
    status_listener = std::make_unique<UntrackedStatusListener>(*status_store, cfg.worker_id);
  worker = std::make_unique<runtime::Worker>(worker_options(), offset_store.get(), status_listener.get(), registry);
  worker->set_observer(observer.load());
  auto cc = coordinator_config();
  if (!cc) return cc.error();
  std::weak_ptr<Impl> w = weak_from_this();
  try {
    coord = coordinator::WorkerCoordinator::create(io, cc.value(), coordinator_callbacks());
  } catch (const std::exception& e) {
    return Error{"group", e.what()};
  }
  {
    std::lock_guard lk(mu);
    pub.worker_id = cfg.worker_id;
  }
  // Everything the initial read reported is already in the snapshot.
  asio::post(io, [w] {
    auto s = w.lock();
    if (!s) return;
    auto snap = s->config_store->snapshot();
    s->io_known_connectors.clear();
    for (const auto& [name, _] : snap.connector_configs) s->io_known_connectors.insert(name);
    s->io_accept_updates = true;
    s->io_load_session_key();
    s->schedule_config_poll();
    s->schedule_status_poll();
  });
  resume_kept_before_join();
  start_threads();
  coord->start();
  started = true;
  admitting = true;
  spdlog::info("herder started: group {}, protocol {}, url {}", cfg.group_id,
               connect::protocol_name(cfg.protocol), cfg.advertised_url);
  return ok_status();
}

void DistributedHerder::Impl::resume_kept_before_join() {
  if (cfg.exactly_once_source) return;
  auto kept = coord->kept_for_early_resume([this](bool was_leader) {
    return early_resume_max_age_ms(cfg.session_timeout_ms, cfg.heartbeat_interval_ms,
                                   cfg.scheduled_rebalance_max_delay_ms, was_leader);
  });
  if (!kept) return;
  const auto plan = plan_early_resume(*kept, config_store->snapshot(), status_store->all_connectors(),
                                      status_store->all_tasks(), cfg.worker_id);
  for (const auto& why : plan.skipped) spdlog::info("not resuming {} before joining", why);
  if (plan.resume.connectors.empty() && plan.resume.tasks.empty()) return;
  auto ev = coord->resume_before_join(plan.resume);
  asio::post(io, [w = weak_from_this(), ev = std::move(ev)] {
    if (auto s = w.lock()) s->on_assigned(ev);
  });
}

runtime::WorkerOptions DistributedHerder::Impl::worker_options() {
  // A running connector's requestTaskReconfiguration, from its own thread.
  return worker_options_from(cfg, [w = weak_from_this()](const std::string& c) {
    auto s = w.lock();
    if (!s) return;
    asio::post(s->io, [w, c] {
      if (auto s2 = w.lock()) s2->io_task_reconfiguration(c);
    });
  });
}

Result<coordinator::WorkerCoordinatorConfig> DistributedHerder::Impl::coordinator_config() const {
  coordinator::WorkerCoordinatorConfig cc;
  cc.group.group_id = cfg.group_id;
  cc.group.bootstrap_servers = kc::split_comma_list(cfg.bootstrap_servers);
  cc.group.client_id = cfg.client_id.empty() ? "connect-" + cfg.worker_id : cfg.client_id;
  cc.group.session_timeout = std::chrono::milliseconds(cfg.session_timeout_ms);
  cc.group.rebalance_timeout = std::chrono::milliseconds(cfg.rebalance_timeout_ms);
  cc.group.heartbeat_interval = std::chrono::milliseconds(cfg.heartbeat_interval_ms);
  cc.group.request_timeout = std::chrono::milliseconds(cfg.request_timeout_ms);
  cc.group.retry_backoff = std::chrono::milliseconds(cfg.retry_backoff_ms);
  if (cfg.group_sasl) {
    auto sasl = storage::connection_sasl_settings(*cfg.group_sasl);
    if (!sasl) return sasl.error();
    cc.group.sasl = std::move(sasl).value();
  }
  cc.group.tls = cfg.group_tls;
  cc.group.group_instance_id = cfg.group_instance_id;
  cc.protocol = cfg.protocol;
  cc.url = cfg.advertised_url;
  cc.static_assignment_file = cfg.static_assignment_file;
  cc.labels = cfg.worker_labels;
  return cc;
}

coordinator::WorkerCoordinatorCallbacks DistributedHerder::Impl::coordinator_callbacks() {
  std::weak_ptr<Impl> w = weak_from_this();
  coordinator::WorkerCoordinatorCallbacks cb;
  cb.config_offset = [w]() -> int64_t {
    auto s = w.lock();
    return s ? s->config_store->snapshot().offset : -1;
  };
  cb.on_before_join = [w](const coordinator::BeforeJoin& bj, std::function<void()> proceed) {
    if (auto s = w.lock()) s->on_before_join(bj, std::move(proceed));
  };
  cb.on_leader = [w](const coordinator::LeaderRound& r, coordinator::AssignmentsReady ready) {
    if (auto s = w.lock()) s->on_leader(r, std::move(ready));
  };
  cb.on_assigned = [w](const coordinator::AssignedEvent& ev) {
    if (auto s = w.lock()) s->on_assigned(ev);
  };
  cb.on_revoke_all = [w](std::vector<std::string> connectors, std::vector<ConnectorTaskId> tasks) {
    if (auto s = w.lock()) s->on_revoke_all(std::move(connectors), std::move(tasks));
  };
  cb.on_rebalance_started = [w](const kafka::RebalanceStarted& r) {
    if (auto s = w.lock()) {
      s->io_rebalance_started_ms = wall_ms();
      s->io_rebalance_reason = r.reason;
      spdlog::info("rebalance started: {}", r.reason);
    }
  };
  cb.on_request_timing = [m = cfg.metrics](const kafka::RequestTiming& t) {
    const auto ms = static_cast<double>(t.latency.count());
    if (t.api == kafka::ApiKey::JoinGroup) m->record_join(ms);
    else if (t.api == kafka::ApiKey::SyncGroup) m->record_sync(ms);
    else if (t.api == kafka::ApiKey::Heartbeat) m->record_heartbeat(ms);
  };
  cb.on_error = [w](const kafka::GroupError& e) {
    auto s = w.lock();
    if (s && (e.api == kafka::ApiKey::JoinGroup || e.api == kafka::ApiKey::SyncGroup))
      s->cfg.metrics->record_failed_rebalance();
    if (!s || !e.fatal) return;
    if (e.code == kafka::ErrorCode::FENCED_INSTANCE_ID) s->lifecycle.set(WorkerState::Fenced, e.to_string());
    bool first = false;
    {
      std::lock_guard lk(s->mu);
      first = !s->coord_fatal;
      s->coord_fatal = true;
      s->coord_fatal_message = e.to_string();
    }
    if (first && s->cfg.on_fatal)
      s->cfg.on_fatal(e.net == kafka::NetErrorKind::Authentication ? e.message : e.to_string());
  };
  return cb;
}

void DistributedHerder::Impl::start_threads() {
  metrics::set_default_log_context(log_ctx, true);
  for (int i = 0; i < kPoolThreads; ++i)
    pool_threads.emplace_back([this] {
      metrics::set_thread_log_context(log_ctx);
      pool.run();
    });
  for (int i = 0; i < kGenerationThreads; ++i)
    generation_threads.emplace_back([this] {
      metrics::set_thread_log_context(log_ctx);
      generation_io.run();
    });
  io_thread = std::thread([this] {
    metrics::set_thread_log_context(log_ctx);
    try {
      io.run();
    } catch (const std::exception& e) {
      spdlog::critical("herder io thread died: {}", e.what());
    }
  });
  watchdog = std::thread([this] { watchdog_loop(); });
}

void DistributedHerder::Impl::watchdog_loop() {
  metrics::set_thread_log_context(log_ctx);
  const auto session = std::chrono::milliseconds(cfg.session_timeout_ms);
  auto last = std::chrono::steady_clock::now();
  std::unique_lock lk(watchdog_mu);
  while (!stopping) {
    watchdog_cv.wait_for(lk, std::chrono::milliseconds(200), [this] { return stopping.load(); });
    const auto now = std::chrono::steady_clock::now();
    const auto gap = now - last;
    last = now;
    if (stopping || gap < session) continue;
    lk.unlock();
    on_frozen(std::chrono::duration_cast<std::chrono::milliseconds>(gap).count());
    lk.lock();
    last = std::chrono::steady_clock::now();
  }
}

void DistributedHerder::Impl::on_frozen(int64_t gap_ms) {
  frozen_hold = true;
  spdlog::warn("this worker was frozen for {} ms, longer than session.timeout.ms ({} ms): its group membership is "
               "gone; cutting every task off from Kafka before rejoining",
               gap_ms, cfg.session_timeout_ms);
  auto ids = worker->cut_off_all();
  spdlog::warn("cut off {} tasks after the freeze: {}", ids.size(), ids_to_string(ids));
  asio::post(io, [w = weak_from_this(), gap_ms] {
    if (auto s = w.lock()) s->io_request_rejoin("worker was frozen for " + std::to_string(gap_ms) + " ms");
  });
}

}  // namespace kc::herder
