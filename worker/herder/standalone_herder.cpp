// StandaloneHerder: in-memory configs and statuses, the offset file, the
// shared runtime Worker driven through the pure reconciler.
#include "worker/herder/standalone_herder.h"

#include <atomic>
#include <algorithm>
#include <chrono>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/strand.hpp>
#include <spdlog/spdlog.h>

#include "worker/herder/connector_config_cache.h"
#include "worker/herder/herder_common.h"
#include "worker/herder/plugin_config.h"
#include "worker/herder/reconciler.h"
#include "worker/herder/source_offsets.h"
#include "worker/herder/stop_pool.h"
#include "worker/metrics/log_levels.h"
#include "worker/storage/file_offset_store.h"

namespace kc::herder {

namespace asio = boost::asio;

namespace {

constexpr const char* kPutTaskConfigsUnsupported =
    "Kafka Connect in standalone mode does not support externally setting task configurations.";
constexpr const char* kExactlyOnceUnsupported =
    "Kafka Connect in standalone mode does not support exactly-once source connectors.";
/// The protocol name the web console shows for a standalone worker.
constexpr const char* kStandaloneProtocol = "standalone";

/// Connect's MemoryStatusBackingStore: the runtime's status reports, kept
/// in memory. Thread-safe (task and connector threads write, the herder
/// reads).
class MemoryStatusStore : public runtime::StatusListener {
 public:
  MemoryStatusStore(std::string worker_id, bool track_topics)
      : worker_id_(std::move(worker_id)), track_topics_(track_topics) {}

  void on_connector_status(const std::string& c, StatusState s, const std::optional<std::string>& trace) override {
    put_connector(c, s, trace);
  }
  void on_task_status(const ConnectorTaskId& t, StatusState s, const std::optional<std::string>& trace) override {
    put_task(t, s, trace);
  }
  void on_topic_active(const ConnectorTaskId& t, const std::string& topic) override {
    if (!track_topics_) return;
    std::lock_guard lk(mu_);
    topics_[t.connector].insert(topic);
  }

  /// Writes (or, for Destroyed, removes) a connector's status.
  void put_connector(const std::string& c, StatusState s, const std::optional<std::string>& trace = std::nullopt) {
    std::lock_guard lk(mu_);
    if (s == StatusState::Destroyed) connectors_.erase(c);
    else connectors_[c] = StatusValue{s, trace, worker_id_, 0};
  }
  /// The same for a task.
  void put_task(const ConnectorTaskId& t, StatusState s, const std::optional<std::string>& trace = std::nullopt) {
    std::lock_guard lk(mu_);
    if (s == StatusState::Destroyed) tasks_.erase(t);
    else tasks_[t] = StatusValue{s, trace, worker_id_, 0};
  }
  std::map<std::string, StatusValue> connectors() const {
    std::lock_guard lk(mu_);
    return connectors_;
  }
  std::map<ConnectorTaskId, StatusValue> tasks() const {
    std::lock_guard lk(mu_);
    return tasks_;
  }
  std::optional<StatusValue> connector(const std::string& c) const {
    std::lock_guard lk(mu_);
    auto it = connectors_.find(c);
    if (it == connectors_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<StatusValue> task(const ConnectorTaskId& t) const {
    std::lock_guard lk(mu_);
    auto it = tasks_.find(t);
    if (it == tasks_.end()) return std::nullopt;
    return it->second;
  }
  std::vector<std::string> topics(const std::string& c) const {
    std::lock_guard lk(mu_);
    auto it = topics_.find(c);
    if (it == topics_.end()) return {};
    return {it->second.begin(), it->second.end()};
  }
  void reset_topics(const std::string& c) {
    std::lock_guard lk(mu_);
    topics_.erase(c);
  }

 private:
  const std::string worker_id_;
  const bool track_topics_;
  mutable std::mutex mu_;
  std::map<std::string, StatusValue> connectors_;
  std::map<ConnectorTaskId, StatusValue> tasks_;
  std::map<std::string, std::set<std::string>> topics_;
};

}  // namespace

// ----------------------------------------------------------------------------
// Impl
// ----------------------------------------------------------------------------
struct StandaloneHerder::Impl : std::enable_shared_from_this<Impl> {
  Impl(StandaloneConfig c, const connectors::PluginRegistry* reg)
      : cfg(std::move(c)),
        registry(reg ? reg : &connectors::PluginRegistry::builtin()),
        work(asio::make_work_guard(io)),
        pool_work(asio::make_work_guard(pool)),
        strand(asio::make_strand(pool)),
        statuses(cfg.herder.worker_id, cfg.herder.topic_tracking_enable) {
    if (!cfg.herder.metrics) cfg.herder.metrics = std::make_shared<metrics::WorkerMetrics>();
  }

  StandaloneConfig cfg;
  const connectors::PluginRegistry* registry;

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  std::thread io_thread;
  static constexpr int kPoolThreads = 3;
  asio::io_context pool;
  asio::executor_work_guard<asio::io_context::executor_type> pool_work;
  std::vector<std::thread> pool_threads;
  asio::strand<asio::io_context::executor_type> strand;

  std::unique_ptr<storage::FileOffsetBackingStore> offsets;
  MemoryStatusStore statuses;
  std::unique_ptr<runtime::Worker> worker;
  ConnectorConfigCache config_cache{[this](const std::string& name, const ConfigMap& raw) {
    return worker->read_connector_config(name, raw);
  }};
  std::shared_ptr<runtime::AbandonedCalls> abandoned_calls = std::make_shared<runtime::AbandonedCalls>();

  std::atomic<bool> started{false};
  std::atomic<bool> stopping{false};
  std::atomic<bool> admitting{false};
  std::once_flag stop_once;

  // ---- io-thread state: the desired state (Connect's MemoryConfigBackingStore)
  std::map<std::string, DesiredConnector> io_connectors;
  std::vector<RestartRequest> io_restarts;
  /// Connector -> number of its newest task-config generation; a result
  /// that is not the newest is dropped.
  std::map<std::string, uint64_t> io_generation_seq;
  uint64_t io_next_seq = 0;
  /// Connector -> who waits for its generation under way (create/update).
  std::map<std::string, std::vector<std::function<void()>>> io_generation_waiters;

  // ---- strand state: what the reconciler's actions started
  std::map<std::string, RunningConnector> strand_connectors;
  std::map<ConnectorTaskId, RunningTask> strand_tasks;
  std::set<std::string> strand_failed_c;
  std::set<ConnectorTaskId> strand_failed_t;

  // ------------------------------------------------------------------ startup / shutdown
  Status start() {
    auto store = storage::FileOffsetBackingStore::open(cfg.offset_file);
    if (!store) return store.error();
    offsets = std::move(store).value();
    auto wo = worker_options_from(cfg.herder, [w = weak_from_this()](const std::string& c) {
      auto s = w.lock();
      if (!s) return;
      asio::post(s->io, [w, c] {
        if (auto s2 = w.lock()) s2->io_generate(c, "the connector asked for a task reconfiguration");
      });
    });
    worker = std::make_unique<runtime::Worker>(std::move(wo), offsets.get(), &statuses, registry);
    io_thread = std::thread([this] { io.run(); });
    for (int i = 0; i < kPoolThreads; ++i) pool_threads.emplace_back([this] { pool.run(); });
    started = true;
    admitting = true;
    spdlog::info("standalone herder started: worker {}, offset file {}", cfg.herder.worker_id, cfg.offset_file);
    return ok_status();
  }

  void shutdown() {
    std::call_once(stop_once, [this] {
      admitting = false;
      stopping = true;
      if (!started) return;
      // Connect's StandaloneHerder.stop: every task and connector stops
      // (offsets committed to the file), after the passes queued before.
      std::promise<void> done;
      asio::post(strand, [this, &done] {
        worker->stop_all();
        strand_connectors.clear();
        strand_tasks.clear();
        done.set_value();
      });
      done.get_future().wait();
      work.reset();
      io.stop();
      if (io_thread.joinable()) io_thread.join();
      pool_work.reset();
      pool.stop();
      for (auto& t : pool_threads)
        if (t.joinable()) t.join();
      spdlog::info("standalone herder stopped");
    });
  }

  std::optional<rest::RestError> not_ready() const {
    if (!started) return rest::RestError::unavailable("Worker is starting");
    if (stopping || !admitting) return rest::RestError::unavailable("Worker is shutting down");
    return std::nullopt;
  }

  /// Runs `fn` on the io thread, or answers 503 through `fail` when the
  /// herder is not serving.
  template <typename T>
  void on_io(rest::Callback<T> cb, std::function<void(Impl&, rest::Callback<T>&)> fn) {
    if (auto e = not_ready()) return cb(*e);
    asio::post(io, [w = weak_from_this(), cb = std::move(cb), fn = std::move(fn)]() mutable {
      auto s = w.lock();
      if (!s || s->stopping) return cb(rest::RestError::unavailable("Worker is shutting down"));
      fn(*s, cb);
    });
  }

  // ------------------------------------------------------------------ io thread: views
  rest::ConnectorInfo io_info(const std::string& name) const {
    const auto& dc = io_connectors.at(name);
    rest::ConnectorInfo info;
    info.name = name;
    info.config = dc.config;
    for (const auto& [id, _] : dc.tasks) info.tasks.push_back(rest::TaskId{name, id});
    info.type = connector_type_of(*registry, dc.config);
    return info;
  }

  std::optional<rest::ConnectorStateInfo> status_info(const std::string& name, const ConfigMap* conf) const {
    auto cs = statuses.connector(name);
    if (!cs) return std::nullopt;
    rest::ConnectorStateInfo info;
    info.name = name;
    info.connector = rest::ConnectorStatus{to_rest(cs->state), cs->worker_id, cs->trace.value_or("")};
    for (const auto& [t, ts] : statuses.tasks())
      if (t.connector == name)
        info.tasks.push_back(rest::TaskStatus{t.task, to_rest(ts.state), ts.worker_id, ts.trace.value_or("")});
    if (conf) info.type = connector_type_of(*registry, *conf);
    return info;
  }

  // ------------------------------------------------------------------ reconcile
  /// Queues a reconcile pass over the current desired state; `after` runs
  /// on the io thread once the pass is done (with the set of connectors
  /// whose task configs it asked for).
  void io_reconcile(std::function<void()> after = {}) {
    if (stopping) return;
    DesiredState d;
    d.worker_id = cfg.herder.worker_id;
    d.is_leader = true;  // the whole cluster: statuses of what is gone are removed here
    d.connectors = io_connectors;
    for (const auto& [name, dc] : io_connectors) {
      d.assigned_connectors.insert(name);
      for (const auto& [id, _] : dc.tasks) d.assigned_tasks.insert(ConnectorTaskId{name, id});
    }
    d.restarts = std::move(io_restarts);
    io_restarts.clear();
    asio::post(strand, [w = weak_from_this(), d = std::move(d), after = std::move(after)]() mutable {
      auto s = w.lock();
      if (!s || s->stopping) return;
      s->execute(reconcile(d, s->actual_state()), d);
      if (after) asio::post(s->io, std::move(after));
    });
  }

  ActualState actual_state() {
    return sync_actual_state(*worker, strand_connectors, strand_tasks, strand_failed_c, strand_failed_t,
                             statuses.connectors(), statuses.tasks());
  }

  /// Starts connector `c`; true when it started. Strand.
  bool start_connector_now(const std::string& c, const ConfigMap& conf, TargetState target) {
    auto st = start_connector_cached(*worker, config_cache, c, conf, target);
    strand_connectors[c] = RunningConnector{conf, target};
    if (st) {
      strand_failed_c.erase(c);
      return true;
    }
    spdlog::warn("cannot start connector {}: {}", c, st.error().to_string());
    strand_failed_c.insert(c);
    statuses.put_connector(c, StatusState::Failed, st.error().to_string());
    return false;
  }

  /// Starts task `t`. Strand.
  void start_task_now(const ConnectorTaskId& t, const ConfigMap& connector_conf, const ConfigMap& task_conf,
                      TargetState target) {
    auto st = start_task_cached(*worker, config_cache, t, connector_conf, task_conf, target);
    strand_tasks[t] = RunningTask{task_conf, target};
    if (st) {
      strand_failed_t.erase(t);
      return;
    }
    spdlog::warn("cannot start task {}: {}", t.to_string(), st.error().to_string());
    strand_failed_t.insert(t);
    statuses.put_task(t, StatusState::Failed, st.error().to_string());
  }

  /// Carries out the reconciler's actions in order (stops first, in
  /// parallel under one graceful deadline). A connector that starts with
  /// target STARTED is asked for its task configs. Strand.
  void execute(const std::vector<Action>& actions, const DesiredState& d) {
    using K = Action::Kind;
    if (actions.empty()) return;
    std::string text;
    for (const auto& a : actions) text += (text.empty() ? "" : ", ") + to_string(a);
    spdlog::info("reconcile: {}", text);
    std::vector<std::string> stop_c;
    std::vector<ConnectorTaskId> stop_t;
    for (const auto& a : actions) {
      if (a.kind == K::StopConnector) stop_c.push_back(a.connector);
      if (a.kind == K::StopTask) stop_t.push_back(*a.task);
    }
    if (!stop_c.empty() || !stop_t.empty()) {
      StopPool stopper(1);
      stopper.submit([&] { (void)worker->stop_connectors(stop_c); });
      (void)worker->stop_tasks(stop_t);
      stopper.wait();
      for (const auto& c : stop_c) forget_connector(c);
      for (const auto& t : stop_t) forget_task(t);
    }
    std::set<std::string> targets_applied;
    for (const auto& a : actions) {
      const auto it = d.connectors.find(a.connector);
      const DesiredConnector* dc = it == d.connectors.end() ? nullptr : &it->second;
      switch (a.kind) {
        case K::StopConnector:
        case K::RemoveConnectorStatus:
          if (a.kind == K::RemoveConnectorStatus || a.remove_status) {
            statuses.put_connector(a.connector, StatusState::Destroyed);
            if (!dc) statuses.reset_topics(a.connector);  // deleted: its active topics too (KIP-558)
          }
          break;
        case K::StopTask:
        case K::RemoveTaskStatus:
          if (a.kind == K::RemoveTaskStatus || a.remove_status) statuses.put_task(*a.task, StatusState::Destroyed);
          break;
        case K::WriteConnectorStatus: statuses.put_connector(a.connector, a.status); break;
        case K::RestartConnector:
        case K::StartConnector:
          if (!dc) break;
          if (a.kind == K::RestartConnector) {
            (void)worker->stop_connector(a.connector);
            forget_connector(a.connector);
            // An operator's restart reads the config again (a rotated secret).
            if (a.restarting || a.plain_restart) config_cache.drop(a.connector);
            if (a.restarting) statuses.put_connector(a.connector, StatusState::Restarting);
          }
          if (start_connector_now(a.connector, dc->config, a.target) && a.target == TargetState::Started)
            post_generate(a.connector, "connector started");
          break;
        case K::RestartTask:
        case K::StartTask:
          if (!dc || !dc->tasks.count(a.task->task)) break;
          if (a.kind == K::RestartTask) {
            (void)worker->stop_task(*a.task);
            forget_task(*a.task);
            if (a.restarting || a.plain_restart) config_cache.drop(a.connector);
            if (a.restarting) statuses.put_task(*a.task, StatusState::Restarting);
          }
          start_task_now(*a.task, dc->config, dc->tasks.at(a.task->task), a.target);
          break;
        case K::SetConnectorTarget:
        case K::SetTaskTarget:
          if (targets_applied.insert(a.connector).second) {
            worker->set_target_state(a.connector, a.target);
            // A resumed connector may have been created paused: no tasks yet.
            if (a.target == TargetState::Started && a.kind == K::SetConnectorTarget)
              post_generate(a.connector, "connector resumed");
          }
          if (auto rc = strand_connectors.find(a.connector); rc != strand_connectors.end()) rc->second.target = a.target;
          for (auto& [t, run] : strand_tasks)
            if (t.connector == a.connector) run.target = a.target;
          break;
      }
    }
  }

  void forget_connector(const std::string& c) {
    strand_connectors.erase(c);
    strand_failed_c.erase(c);
  }
  void forget_task(const ConnectorTaskId& t) {
    strand_tasks.erase(t);
    strand_failed_t.erase(t);
  }

  /// Asks the io thread to generate `c`'s task configs. Any thread.
  void post_generate(const std::string& c, const char* why) {
    asio::post(io, [w = weak_from_this(), c, why] {
      if (auto s = w.lock()) s->io_generate(c, why);
    });
  }

  // ------------------------------------------------------------------ task configs
  /// Connect's standalone updateConnectorTasks: asks the running connector
  /// for its task configs on the pool (bounded by connector.call.timeout.ms)
  /// and stores them when they changed; the reconciler then restarts the
  /// changed tasks. io thread.
  void io_generate(const std::string& c, const char* why) {
    if (stopping) return;
    auto it = io_connectors.find(c);
    if (it == io_connectors.end() || it->second.target != TargetState::Started) return io_generation_done(c);
    const uint64_t seq = ++io_next_seq;
    io_generation_seq[c] = seq;
    spdlog::info("generating task configs of connector {} ({})", c, why);
    asio::post(pool, [w = weak_from_this(), c, seq, conf = it->second.config,
                      timeout = cfg.herder.connector_call_timeout_ms] {
      auto s = w.lock();
      if (!s || s->stopping) return;
      auto configs = s->worker->connector_task_configs(c, timeout);
      asio::post(s->io, [w, c, seq, conf, configs = std::move(configs)]() mutable {
        auto s2 = w.lock();
        if (!s2) return;
        s2->io_generated(c, seq, conf, std::move(configs));
      });
    });
  }

  void io_generated(const std::string& c, uint64_t seq, const ConfigMap& conf,
                    Result<std::vector<ConfigMap>> configs) {
    auto sq = io_generation_seq.find(c);
    if (sq == io_generation_seq.end() || sq->second != seq) return;  // a newer generation is under way
    io_generation_seq.erase(sq);
    auto it = io_connectors.find(c);
    if (it == io_connectors.end() || it->second.config != conf) return io_generation_done(c);
    if (!configs) {
      spdlog::warn("cannot generate the task configs of connector {}: {}", c, configs.error().to_string());
      // The connector's own status says why when it failed to start.
      if (auto st = statuses.connector(c); !st || st->state != StatusState::Failed)
        statuses.put_connector(c, StatusState::Failed,
                               "task config generation failed: " + configs.error().to_string());
      return io_generation_done(c);
    }
    std::map<int32_t, ConfigMap> tasks;
    for (size_t i = 0; i < configs->size(); ++i) tasks[static_cast<int32_t>(i)] = std::move((*configs)[i]);
    if (tasks == it->second.tasks) return io_generation_done(c);
    spdlog::info("connector {} has {} task config(s)", c, tasks.size());
    it->second.tasks = std::move(tasks);
    io_reconcile([w = weak_from_this(), c] {
      if (auto s = w.lock()) s->io_generation_done(c);
    });
  }

  /// Answers whoever waits for `c`'s generation (unless another started). io thread.
  void io_generation_done(const std::string& c) {
    if (io_generation_seq.count(c)) return;
    auto it = io_generation_waiters.find(c);
    if (it == io_generation_waiters.end()) return;
    auto waiters = std::move(it->second);
    io_generation_waiters.erase(it);
    for (auto& f : waiters) f();
  }

  // ------------------------------------------------------------------ offsets
  /// The connector's parsed config for the offsets API. Pool.
  runtime::ConnectorConfigPtr offsets_config(const std::string& name, const ConfigMap& raw) {
    if (auto c = config_cache.get(name, raw)) return std::move(c).value();
    return std::make_shared<const runtime::ConnectorConfig>(
        worker->parse_connector_config(name, raw, providers::ResolvedConfig{raw, {}}));
  }
};

// ----------------------------------------------------------------------------
// StandaloneHerder
// ----------------------------------------------------------------------------
StandaloneHerder::StandaloneHerder(StandaloneConfig config, const connectors::PluginRegistry* registry)
    : config_(config), impl_(std::make_shared<Impl>(std::move(config), registry)) {}

StandaloneHerder::~StandaloneHerder() { stop(); }

Status StandaloneHerder::start() { return impl_->start(); }

void StandaloneHerder::stop_admitting_writes() { impl_->admitting = false; }

void StandaloneHerder::stop() { impl_->shutdown(); }

size_t StandaloneHerder::stuck_plugin_threads() const {
  return impl_->worker ? impl_->worker->stuck_threads() : 0;
}

uint64_t StandaloneHerder::offset_file_writes() const { return impl_->offsets ? impl_->offsets->writes() : 0; }

// ------------------------------------------------------------------ reads

void StandaloneHerder::list_connectors(rest::Callback<std::vector<std::string>> cb) {
  impl_->on_io<std::vector<std::string>>(std::move(cb), [](Impl& s, auto& cb) {
    std::vector<std::string> out;
    for (const auto& [name, _] : s.io_connectors) out.push_back(name);
    cb(std::move(out));
  });
}

void StandaloneHerder::connector_info(const std::string& name, rest::Callback<rest::ConnectorInfo> cb) {
  impl_->on_io<rest::ConnectorInfo>(std::move(cb), [name](Impl& s, auto& cb) {
    if (!s.io_connectors.count(name)) return cb(rest::RestError::connector_not_found(name));
    cb(s.io_info(name));
  });
}

void StandaloneHerder::connector_config(const std::string& name, rest::Callback<rest::ConnectorConfig> cb) {
  impl_->on_io<rest::ConnectorConfig>(std::move(cb), [name](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    cb(it->second.config);
  });
}

void StandaloneHerder::task_configs(const std::string& name, rest::Callback<std::vector<rest::TaskInfo>> cb) {
  impl_->on_io<std::vector<rest::TaskInfo>>(std::move(cb), [name](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    std::vector<rest::TaskInfo> out;
    for (const auto& [id, conf] : it->second.tasks) out.push_back(rest::TaskInfo{rest::TaskId{name, id}, conf});
    cb(std::move(out));
  });
}

void StandaloneHerder::connector_status(const std::string& name, rest::Callback<rest::ConnectorStateInfo> cb) {
  impl_->on_io<rest::ConnectorStateInfo>(std::move(cb), [name](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    auto info = s.status_info(name, it == s.io_connectors.end() ? nullptr : &it->second.config);
    if (!info) return cb(rest::RestError::not_found("No status found for connector " + name));
    cb(std::move(*info));
  });
}

void StandaloneHerder::task_status(const rest::TaskId& id, rest::Callback<rest::TaskStatus> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto ts = impl_->statuses.task(ConnectorTaskId{id.connector, id.task});
  if (!ts)
    return cb(rest::RestError::not_found("No status found for task " + id.connector + "-" + std::to_string(id.task)));
  cb(rest::TaskStatus{id.task, to_rest(ts->state), ts->worker_id, ts->trace.value_or("")});
}

void StandaloneHerder::connector_plugins(bool connectors_only, rest::Callback<std::vector<rest::PluginInfo>> cb) {
  cb(plugin_infos(*impl_->registry, connectors_only));
}

void StandaloneHerder::connector_plugin_config(const std::string& plugin,
                                               rest::Callback<std::vector<rest::ConfigKeyInfo>> cb) {
  cb(plugin_config(*impl_->registry, plugin));
}

void StandaloneHerder::validate_connector_config(rest::ConnectorConfig config, rest::Callback<rest::ConfigInfos> cb) {
  validate_bounded(impl_->cfg.herder, *impl_->registry, impl_->abandoned_calls, std::move(config),
                   [cb = std::move(cb)](rest::Reply<connectors::ConfigValidation> v) {
                     if (!v) return cb(v.error());
                     cb(to_rest(v.value()));
                   });
}

void StandaloneHerder::connector_active_topics(const std::string& name, rest::Callback<std::vector<std::string>> cb) {
  if (!impl_->cfg.herder.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  cb(impl_->statuses.topics(name));
}

void StandaloneHerder::reset_connector_active_topics(const std::string& name, rest::Callback<rest::Done> cb) {
  if (!impl_->cfg.herder.topic_tracking_enable) return cb(rest::RestError::topic_tracking_disabled());
  if (!impl_->cfg.herder.topic_tracking_allow_reset) return cb(rest::RestError::topic_tracking_reset_disabled());
  if (auto e = impl_->not_ready()) return cb(*e);
  impl_->statuses.reset_topics(name);
  cb(rest::Done{});
}

void StandaloneHerder::health(rest::Callback<rest::Health> cb) {
  if (!impl_->started) return cb(rest::Health{rest::HealthStatus::Starting, "Worker is still starting up.", "Starting"});
  if (impl_->stopping) return cb(rest::Health{rest::HealthStatus::Unhealthy, "Worker is shutting down.", "Stopping"});
  cb(rest::Health{rest::HealthStatus::Healthy, "Worker has completed startup and is ready to handle requests.",
                  "Running"});
}

void StandaloneHerder::worker_info(rest::Callback<rest::WorkerInfo> cb) {
  // No config topic to ask the cluster id of: Connect's standalone worker
  // looks it up with an admin client; ours leaves it empty.
  cb(rest::WorkerInfo{config_.herder.worker_id, config_.herder.advertised_url, ""});
}

void StandaloneHerder::member_view(rest::Callback<rest::MemberView> cb) {
  auto base = [this] {
    rest::MemberView v;
    v.worker_id = config_.herder.worker_id;
    v.url = config_.herder.advertised_url;
    v.member_id = config_.herder.worker_id;
    v.generation = 1;
    v.is_leader = true;
    v.leader_url = v.url;
    v.protocol = kStandaloneProtocol;
    v.members.push_back(rest::GroupMember{v.member_id, v.url, ""});
    return v;
  };
  if (impl_->not_ready()) return cb(base());  // the console still shows the worker
  asio::post(impl_->io, [w = std::weak_ptr<Impl>(impl_), v = base(), cb = std::move(cb)]() mutable {
    if (auto s = w.lock()) {
      for (const auto& [name, dc] : s->io_connectors) {
        v.connectors.push_back(name);
        for (const auto& [id, _] : dc.tasks) v.tasks.push_back(ConnectorTaskId{name, id}.to_string());
      }
      std::sort(v.tasks.begin(), v.tasks.end());
    }
    cb(std::move(v));
  });
}

std::vector<rest::RebalanceRecord> StandaloneHerder::rebalance_history() const { return {}; }

// ------------------------------------------------------------------ writes

void StandaloneHerder::put_connector_config(rest::PutConnectorRequest req,
                                            rest::Callback<rest::PutConnectorResult> cb) {
  if (auto e = impl_->not_ready()) return cb(*e);
  auto config = req.config;
  validate_bounded(
      impl_->cfg.herder, *impl_->registry, impl_->abandoned_calls, std::move(config),
      [w = std::weak_ptr<Impl>(impl_), req = std::move(req),
       cb = std::move(cb)](rest::Reply<connectors::ConfigValidation> v) mutable {
        if (!v) return cb(v.error());
        if (v.value().error_count != 0) return cb(rest::RestError::bad_request(v.value().invalid_message()));
        auto impl = w.lock();
        if (!impl) return cb(rest::RestError::unavailable("Worker is shutting down"));
        impl->on_io<rest::PutConnectorResult>(std::move(cb), [req = std::move(req)](Impl& s, auto& cb) {
          auto it = s.io_connectors.find(req.name);
          const bool exists = it != s.io_connectors.end();
          if (exists && !req.allow_replace) return cb(rest::RestError::already_exists(req.name));
          if (exists) {
            it->second.config = req.config;
          } else {
            DesiredConnector dc;
            dc.config = req.config;
            if (req.initial_state) dc.target = to_storage(*req.initial_state);
            it = s.io_connectors.emplace(req.name, std::move(dc)).first;
          }
          spdlog::info("connector {} {} (in memory)", req.name, exists ? "updated" : "created");
          const std::string name = req.name;
          // Answer once its first task configs are known, as Connect's
          // putConnectorConfig (updateConnectorTasks before the callback).
          s.io_reconcile([w = s.weak_from_this(), name, created = !exists, cb = std::move(cb)]() mutable {
            auto s2 = w.lock();
            if (!s2) return cb(rest::RestError::unavailable("Worker is shutting down"));
            auto answer = [w, name, created, cb = std::move(cb)]() mutable {
              auto s3 = w.lock();
              if (!s3) return cb(rest::RestError::unavailable("Worker is shutting down"));
              if (!s3->io_connectors.count(name)) return cb(rest::RestError::connector_not_found(name));
              cb(rest::PutConnectorResult{created, s3->io_info(name)});
            };
            if (!s2->io_generation_seq.count(name)) return answer();
            s2->io_generation_waiters[name].push_back(std::move(answer));
          });
        });
      });
}

void StandaloneHerder::delete_connector(const std::string& name, rest::Callback<rest::Done> cb) {
  impl_->on_io<rest::Done>(std::move(cb), [name](Impl& s, auto& cb) {
    if (!s.io_connectors.erase(name)) return cb(rest::RestError::connector_not_found(name));
    s.io_generation_seq.erase(name);
    s.io_generation_done(name);
    spdlog::info("connector {} deleted (in memory)", name);
    s.io_reconcile([cb = std::move(cb)] { cb(rest::Done{}); });
  });
}

void StandaloneHerder::set_target_state(const std::string& name, rest::TargetState state,
                                        rest::Callback<rest::Done> cb) {
  impl_->on_io<rest::Done>(std::move(cb), [name, state](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    it->second.target = to_storage(state);
    // STOPPED: no task configs (Connect's stop writes empty task configs).
    if (state == rest::TargetState::Stopped) it->second.tasks.clear();
    s.io_reconcile();
    cb(rest::Done{});
  });
}

void StandaloneHerder::restart_connector(const std::string& name, rest::RestartRequest req,
                                         rest::Callback<std::optional<rest::ConnectorStateInfo>> cb) {
  impl_->on_io<std::optional<rest::ConnectorStateInfo>>(std::move(cb), [name, req](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    if (req.plain()) {
      if (it->second.target == TargetState::Stopped) return cb(std::optional<rest::ConnectorStateInfo>{});
      Action a{Action::Kind::RestartConnector, name};
      a.target = it->second.target;
      a.plain_restart = true;
      DesiredState d;
      d.worker_id = s.cfg.herder.worker_id;
      d.connectors.emplace(name, it->second);
      asio::post(s.strand, [w = s.weak_from_this(), a, d = std::move(d), cb = std::move(cb)]() mutable {
        auto s2 = w.lock();
        if (!s2 || s2->stopping) return cb(rest::RestError::unavailable("Worker is shutting down"));
        s2->execute({a}, d);
        cb(std::optional<rest::ConnectorStateInfo>{});
      });
      return;
    }
    // KIP-745: the plan shows the selected instances RESTARTING.
    auto plan = s.status_info(name, &it->second.config);
    if (!plan) return cb(rest::RestError::not_found("Status for connector " + name + " not found"));
    s.io_restarts.push_back(RestartRequest{name, req.include_tasks, req.only_failed});
    auto selected = [&](rest::ConnectState st) { return !req.only_failed || st == rest::ConnectState::Failed; };
    if (selected(plan->connector.state)) plan->connector.state = rest::ConnectState::Restarting;
    if (req.include_tasks)
      for (auto& t : plan->tasks)
        if (selected(t.state)) t.state = rest::ConnectState::Restarting;
    s.io_reconcile();
    cb(std::optional<rest::ConnectorStateInfo>(std::move(*plan)));
  });
}

void StandaloneHerder::restart_task(const rest::TaskId& id, rest::Callback<rest::Done> cb) {
  impl_->on_io<rest::Done>(std::move(cb), [id](Impl& s, auto& cb) {
    ConnectorTaskId t{id.connector, id.task};
    auto it = s.io_connectors.find(id.connector);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(id.connector));
    if (!it->second.tasks.count(id.task)) return cb(rest::RestError::not_found("Task " + t.to_string() + " not found"));
    Action a{Action::Kind::RestartTask, t.connector, t};
    a.target = it->second.target;
    a.plain_restart = true;
    DesiredState d;
    d.worker_id = s.cfg.herder.worker_id;
    d.connectors.emplace(id.connector, it->second);
    asio::post(s.strand, [w = s.weak_from_this(), a, d = std::move(d), cb = std::move(cb)]() mutable {
      auto s2 = w.lock();
      if (!s2 || s2->stopping) return cb(rest::RestError::unavailable("Worker is shutting down"));
      s2->execute({a}, d);
      cb(rest::Done{});
    });
  });
}

void StandaloneHerder::set_cluster_logger_level(const std::string& logger, const std::string& level,
                                                rest::Callback<rest::Done> cb) {
  // Connect's StandaloneHerder: "this single worker is the entire cluster".
  auto lvl = metrics::parse_log4j_level(level);
  if (!lvl) return cb(rest::RestError::bad_request("invalid log level '" + level + "'"));
  const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  auto changed = metrics::LoggerLevels::instance().set(logger, *lvl, now);
  spdlog::info("log level of {} set to {} (scope cluster: this standalone worker; {} loggers)", logger, level,
               changed.size());
  cb(rest::Done{});
}

void StandaloneHerder::connector_offsets(const std::string& name,
                                         rest::Callback<std::vector<rest::ConnectorOffset>> cb) {
  impl_->on_io<std::vector<rest::ConnectorOffset>>(std::move(cb), [name](Impl& s, auto& cb) {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    asio::post(s.pool, [w = s.weak_from_this(), name, raw = it->second.config, cb = std::move(cb)] {
      auto s2 = w.lock();
      if (!s2) return cb(rest::RestError::unavailable("Worker is shutting down"));
      const auto conf = s2->offsets_config(name, raw);
      if (conf->type == connectors::ConnectorType::Sink) return cb(read_sink_offsets(sink_group_of(s2->cfg.herder, *conf)));
      cb(read_source_offsets(name, SourceOffsetStores{s2->offsets.get(), nullptr},
                             s2->cfg.herder.worker_sync_timeout_ms));
    });
  });
}

void StandaloneHerder::modify_connector_offsets(const std::string& name,
                                                std::optional<std::vector<rest::ConnectorOffset>> offsets,
                                                rest::Callback<std::string> cb) {
  impl_->on_io<std::string>(std::move(cb), [name, offsets = std::move(offsets)](Impl& s, auto& cb) mutable {
    auto it = s.io_connectors.find(name);
    if (it == s.io_connectors.end()) return cb(rest::RestError::connector_not_found(name));
    if (it->second.target != TargetState::Stopped) return cb(rest::RestError::connector_not_stopped(name));
    asio::post(s.pool, [w = s.weak_from_this(), name, raw = it->second.config, offsets = std::move(offsets),
                        cb = std::move(cb)] {
      auto s2 = w.lock();
      if (!s2) return cb(rest::RestError::unavailable("Worker is shutting down"));
      const auto conf = s2->offsets_config(name, raw);
      if (conf->type == connectors::ConnectorType::Sink) {
        const auto sink = sink_group_of(s2->cfg.herder, *conf);
        return cb(offsets ? alter_sink_offsets(sink, *offsets) : reset_sink_offsets(sink));
      }
      cb(modify_source_offsets(name, SourceOffsetStores{s2->offsets.get(), nullptr}, offsets,
                               s2->cfg.herder.offset_flush_timeout_ms));
    });
  });
}

// ------------------------------------------------------------------ group-only requests

void StandaloneHerder::accept_drain_request(const std::string&, rest::SignatureHeaders, std::string,
                                            rest::StatusCallback done) {
  done(501, "a standalone worker has no group to drain to");
}

void StandaloneHerder::accept_task_reconfiguration(const std::string&, rest::SignatureHeaders, std::string,
                                                   rest::StatusCallback done) {
  done(500, kPutTaskConfigsUnsupported);
}

void StandaloneHerder::accept_fence_request(const std::string&, rest::SignatureHeaders, std::string,
                                            rest::StatusCallback done) {
  done(500, kExactlyOnceUnsupported);
}

}  // namespace kc::herder
