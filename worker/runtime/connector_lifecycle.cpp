// Connector lifecycle: starting and stopping connector threads, task-config generation, pause and resume.
#include "worker/runtime/worker_internal.h"

#include <future>

#include "common/secrets.h"

namespace kc::runtime {

namespace {

/// The ConnectorContext of a running connector: reconfiguration requests go
/// to WorkerOptions::on_task_reconfiguration; raise_error marks it FAILED.
class RunnerContext : public connectors::ConnectorContext {
 public:
  RunnerContext(std::string name, std::function<void(const std::string&)> on_reconfigure,
                std::function<void(const std::string&)> on_error)
      : name_(std::move(name)), on_reconfigure_(std::move(on_reconfigure)), on_error_(std::move(on_error)) {}
  const std::string& connector_name() const override { return name_; }
  void request_task_reconfiguration() override {
    if (on_reconfigure_) on_reconfigure_(name_);
    else spdlog::info("connector {} asked for new task configs; this worker cannot forward that", name_);
  }
  void raise_error(const std::string& message) override { on_error_(message); }

 private:
  std::string name_;
  std::function<void(const std::string&)> on_reconfigure_;
  std::function<void(const std::string&)> on_error_;
};

/// Reports connector `runner` FAILED with `trace`, unless it was abandoned.
void report_connector_failed(const ConnectorRunner& runner, StatusListener* status, const std::string& trace) {
  if (status && !runner.cancelled.load()) status->on_connector_status(runner.name, StatusState::Failed, trace);
}

/// The body of one connector thread, with copies of all it needs (it never
/// touches the Worker): initialize and start the plugin, run the queued
/// jobs in order until a stop is requested, stop the plugin, and report
/// each state of the connector.
struct ConnectorThread {
  std::shared_ptr<ConnectorRunner> runner;
  std::shared_ptr<connectors::Connector> connector;
  std::shared_ptr<RunnerContext> context;
  ConfigMap config;
  TargetState target;
  StatusListener* status;
  std::shared_ptr<metrics::WorkerMetrics> wm;
  std::shared_ptr<const std::vector<std::string>> hidden;  ///< secret values, scrubbed from traces
  std::optional<std::string> bad_tasks_max;                ///< fails the start before the plugin runs
  CallWatchdog* watchdog;
  int call_ms;  ///< connector.call.timeout.ms

  void operator()() {
    const bool ok = start();
    run_jobs();
    if (ok) stop();
    runner->mark_finished();
  }

 private:
  void report(StatusState s, const std::optional<std::string>& trace) {
    if (status && !runner->cancelled.load()) status->on_connector_status(runner->name, s, trace);
  }

  /// The plugin's initialize() and start() (under connector.call.timeout.ms);
  /// reports RUNNING/PAUSED, or FAILED and returns false.
  bool start() {
    try {
      if (bad_tasks_max) throw connectors::ConnectError(*bad_tasks_max);
      connector->initialize(*context);
      {
        // start() past connector.call.timeout.ms: FAILED now, naming the call.
        const std::string why = call_timeout_message("connector " + runner->name, "start", call_ms);
        auto guard = watchdog->watch(call_ms, [runner = runner, status = status, why] {
          if (!runner->mark_failed()) return;
          spdlog::error("{}", why);
          report_connector_failed(*runner, status, why);
        });
        connector->start(config);
        if (guard.fired()) throw connectors::ConnectError(why);
      }
      if (wm) wm->connector_startup_result(true);
      report(target == TargetState::Paused ? StatusState::Paused : StatusState::Running, std::nullopt);
      return true;
    } catch (const std::exception& e) {
      if (wm) wm->connector_startup_result(false);
      auto trace = secrets::scrub(trace_of(e, "start of connector " + runner->name), *hidden);
      spdlog::error("connector {} failed: {}", runner->name, trace);
      runner->mark_failed();
      report(StatusState::Failed, trace);
      return false;
    }
  }

  /// Runs the posted jobs in order until a stop is requested and none is left.
  void run_jobs() {
    while (true) {
      std::function<void()> job;
      {
        std::unique_lock lk(runner->mu);
        runner->cv.wait(lk, [&] { return runner->stop_requested || !runner->jobs.empty(); });
        if (runner->jobs.empty()) break;
        job = std::move(runner->jobs.front());
        runner->jobs.pop_front();
      }
      job();
    }
  }

  /// The plugin's stop(): UNASSIGNED, or FAILED with its trace.
  void stop() {
    try {
      connector->stop();
      report(StatusState::Unassigned, std::nullopt);
    } catch (const std::exception& e) {
      report(StatusState::Failed, secrets::scrub(trace_of(e, "stop of connector " + runner->name), *hidden));
    }
  }
};

}  // namespace

Status Worker::start_connector(const std::string& name, const ConfigMap& config, TargetState target) {
  auto parsed = read_connector_config(name, config);
  if (!parsed) return refuse_start(StartKind::Connector, parsed.error());
  return start_connector(std::move(parsed).value(), target);
}

Status Worker::start_connector(ConnectorConfigPtr parsed, TargetState target) {
  std::shared_ptr<metrics::WorkerMetrics> wm = options_.metrics;
  if (wm) wm->connector_startup_attempt();
  auto early_fail = [&wm](Error e) -> Status {
    if (wm) wm->connector_startup_result(false);
    return e;
  };
  const std::string& name = parsed->name;
  const ConfigMap& config = parsed->values;
  if (!config.count("connector.class"))
    return early_fail(Error{"connector.class", "missing connector.class for connector " + name});
  // Connect's "ConnectorConfig values" dump, as written (placeholders, not
  // their secrets); PASSWORD keys of the plugin's ConfigDef read [hidden].
  spdlog::info("{}", secrets::describe_config("connector " + name + " config values", parsed->raw, parsed->is_secret));
  auto created = registry_->create(parsed->connector_class);
  if (!created) return early_fail(created.error());
  std::shared_ptr<connectors::Connector> connector = std::move(created).value();
  // What a failure text must never quote: the resolved values of its secret
  // keys and of every provider-resolved key.
  auto hidden = std::make_shared<const std::vector<std::string>>(parsed->secret_values);

  auto runner = std::make_shared<ConnectorRunner>();
  runner->name = name;
  runner->config = parsed;
  std::lock_guard map_lock(mu_);  // held until the thread handle is stored
  if (connectors_.count(name))
    return early_fail(Error{"connector", "connector " + name + " is already running on this worker"});
  connectors_[name] = runner;
  connector_instances_[name] = connector;
  // tasks.max outside 1..tasks.max.limit fails the connector before its
  // plugin runs: no task configs are ever generated for it.
  std::optional<std::string> bad_tasks_max;
  if (parsed->tasks_error) bad_tasks_max = "Connector " + name + " cannot start: " + parsed->tasks_error->message;
  ConfigMap plugin_config = config;
  connector_configs_.insert_or_assign(name, parsed);
  update_running_metrics_locked();
  StatusListener* status = status_;
  auto context = std::make_shared<RunnerContext>(
      name, options_.on_task_reconfiguration, [runner, status, hidden](const std::string& message) {
        if (!runner->mark_failed()) return;
        const std::string shown = secrets::scrub(message, *hidden);
        spdlog::error("connector {} raised an error: {}", runner->name, shown);
        report_connector_failed(*runner, status, shown);
      });
  runner->thread = std::thread(ConnectorThread{runner, connector, context, std::move(plugin_config), target, status, wm, hidden,
                                               bad_tasks_max, &watchdog_, options_.connector_call_timeout_ms});
  return ok_status();
}

Result<std::vector<ConfigMap>> Worker::connector_task_configs(const std::string& name, int timeout_ms) {
  std::shared_ptr<ConnectorRunner> runner;
  std::shared_ptr<connectors::Connector> connector;
  connectors::TasksMax tasks_max;
  {
    std::lock_guard lk(mu_);
    auto it = connectors_.find(name);
    if (it == connectors_.end()) return Error{"connector", "connector " + name + " is not running on this worker"};
    runner = it->second;
    connector = connector_instances_[name];
    const ConnectorConfig& config = *connector_configs_.at(name);
    if (config.tasks_error) return *config.tasks_error;
    tasks_max = config.tasks;
  }
  auto promise = std::make_shared<std::promise<Result<std::vector<ConfigMap>>>>();
  auto future = promise->get_future();
  runner->post([promise, connector, runner, tasks = tasks_max, limit = options_.tasks_max_limit]() {
    if (runner->has_failed()) {
      promise->set_value(Error{"connector", "connector " + runner->name + " failed to start"});
      return;
    }
    try {
      auto configs = connectors::generate_task_configs(*connector, runner->name, tasks, limit);
      if (configs)
        providers::restore_placeholders(runner->config->raw,
                                        {runner->config->values, runner->config->resolved_keys}, *configs);
      promise->set_value(std::move(configs));
    } catch (const std::exception& e) {
      promise->set_value(Error{"connector", std::string("task_configs failed: ") + e.what()});
    }
  });
  if (future.wait_for(std::chrono::milliseconds(timeout_ms)) != std::future_status::ready)
    return Error{"connector", "timed out waiting for task configs of " + name};
  return future.get();
}

bool Worker::stop_connector(const std::string& name) { return stop_connectors({name}).empty(); }

std::vector<std::string> Worker::stop_connectors(const std::vector<std::string>& names) {
  signal_connectors(names);
  return await_connectors(names,
                          Clock::now() + std::chrono::milliseconds(options_.task_shutdown_graceful_timeout_ms));
}

void Worker::signal_connectors(const std::vector<std::string>& names) {
  std::vector<std::shared_ptr<ConnectorRunner>> runners;
  {
    std::lock_guard lk(mu_);
    for (const auto& n : names)
      if (auto it = connectors_.find(n); it != connectors_.end()) runners.push_back(it->second);
  }
  for (auto& r : runners) {
    std::lock_guard lk(r->mu);
    r->stop_requested = true;
    r->cv.notify_all();
  }
}

std::vector<std::string> Worker::await_connectors(const std::vector<std::string>& names,
                                                  std::chrono::steady_clock::time_point deadline) {
  std::vector<std::shared_ptr<ConnectorRunner>> runners;
  {
    std::lock_guard lk(mu_);
    for (const auto& n : names)
      if (auto it = connectors_.find(n); it != connectors_.end()) runners.push_back(it->second);
  }
  std::vector<std::string> timed_out;
  for (auto& r : runners) {
    bool ok = r->wait_until(deadline);
    std::lock_guard lk(mu_);
    auto it = connectors_.find(r->name);
    if (it != connectors_.end() && it->second == r) {
      connectors_.erase(it);
      connector_instances_.erase(r->name);
      connector_configs_.erase(r->name);
      update_running_metrics_locked();
    }
    if (!ok) {
      timed_out.push_back(r->name);
      if (r->cancelled.exchange(true)) continue;  // another caller abandoned it already
      cancelled_connectors_.push_back(r);
      spdlog::warn("connector {} did not stop within {} ms; abandoning it", r->name,
                   options_.task_shutdown_graceful_timeout_ms);
    }
  }
  return timed_out;
}

void Worker::set_target_state(const std::string& connector, TargetState target) {
  bool paused = target != TargetState::Started;
  std::shared_ptr<ConnectorRunner> runner;
  {
    std::lock_guard lk(mu_);
    for (auto& [id, t] : tasks_)
      if (id.connector == connector) t->paused.store(paused);
    auto it = connectors_.find(connector);
    if (it != connectors_.end()) runner = it->second;
  }
  if (runner) {
    StatusListener* status = status_;
    runner->post([runner, status, paused] {
      if (status && !runner->has_failed() && !runner->cancelled.load())
        status->on_connector_status(runner->name, paused ? StatusState::Paused : StatusState::Running, std::nullopt);
    });
  }
}

std::set<std::string> Worker::connector_names() const {
  std::lock_guard lk(mu_);
  std::set<std::string> out;
  for (const auto& [n, _] : connectors_) out.insert(n);
  return out;
}

}  // namespace kc::runtime
