// The Worker itself: construction and shutdown, its shared producer, running counts, and the StatusStoreListener.
#include "worker/runtime/worker.h"

#include <algorithm>

#include "worker/runtime/worker_internal.h"

namespace kc::runtime {

// ------------------------------------------------------------------ StatusStoreListener

StatusStoreListener::StatusStoreListener(storage::StatusBackingStore& store, std::string worker_id)
    : store_(store), worker_id_(std::move(worker_id)) {}

namespace {
/// Connect's AbstractHerder writes shutdown (UNASSIGNED) and failure reports
/// with putSafe: a newer owner's status from a later generation is kept.
bool written_safely(StatusState s) { return s == StatusState::Unassigned || s == StatusState::Failed; }
}  // namespace

void StatusStoreListener::on_connector_status(const std::string& connector, StatusState state,
                                              const std::optional<std::string>& trace) {
  storage::StatusValue v{state, trace, worker_id_, generation_.load()};
  if (written_safely(state)) (void)store_.put_connector_safe(connector, v);
  else store_.put_connector(connector, v);
}

void StatusStoreListener::on_task_status(const ConnectorTaskId& id, StatusState state,
                                         const std::optional<std::string>& trace) {
  storage::StatusValue v{state, trace, worker_id_, generation_.load()};
  if (written_safely(state)) (void)store_.put_task_safe(id, v);
  else store_.put_task(id, v);
}

void StatusStoreListener::on_topic_active(const ConnectorTaskId& id, const std::string& topic) {
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  store_.put_topic(storage::TopicStatus{topic, id.connector, id.task, now_ms});
}

// ------------------------------------------------------------------ Worker

Worker::Worker(WorkerOptions options, storage::OffsetBackingStore* offsets, StatusListener* status,
               const connectors::PluginRegistry* registry)
    : options_(std::move(options)),
      offsets_(offsets),
      status_(status),
      registry_(registry ? registry : &connectors::PluginRegistry::builtin()) {
  if (options_.producer_shared && options_.exactly_once_source)
    spdlog::warn("producer.shared=true is ignored: exactly.once.source.support=enabled keeps one producer per "
                 "source task");
}

Worker::~Worker() {
  stop_all();
  std::vector<std::thread> helpers;
  std::vector<std::shared_ptr<TaskRunner>> ct;
  std::vector<std::shared_ptr<ConnectorRunner>> cc;
  {
    std::lock_guard lk(mu_);
    helpers.swap(helpers_);
    ct.swap(cancelled_tasks_);
    cc.swap(cancelled_connectors_);
  }
  for (auto& h : helpers)
    if (h.joinable()) h.join();
  for (auto& t : ct) t->join();
  for (auto& c : cc) c->join();
}

void Worker::set_observer(TaskObserver* observer) { observer_.store(observer); }

Result<providers::ResolvedConfig> Worker::resolve_config(const ConfigMap& config) const {
  if (!options_.config_transformer) return providers::ResolvedConfig{config, {}};
  return options_.config_transformer->transform(config);
}

ConnectorConfig Worker::parse_connector_config(const std::string& name, const ConfigMap& raw,
                                               const providers::ResolvedConfig& resolved) const {
  ConnectorConfigInputs in;
  in.tasks_max_limit = options_.tasks_max_limit;
  in.key_converter = {options_.key_converter, options_.key_converter_config};
  in.value_converter = {options_.value_converter, options_.value_converter_config};
  in.header_converter = {options_.header_converter.empty() ? std::string(converters::kSimpleHeaderConverterClass)
                                                           : options_.header_converter,
                         options_.header_converter_config};
  in.client_override_policy = options_.client_override_policy;
  in.worker_consumer = options_.consumer_overrides;
  in.exactly_once_source = options_.exactly_once_source;
  in.worker_offsets_topic = offsets_ ? offsets_->topic() : std::string();
  return ConnectorConfig::parse(name, raw, resolved.config, resolved.resolved_keys, *registry_, in);
}

Result<ConnectorConfigPtr> Worker::read_connector_config(const std::string& name, const ConfigMap& raw_in) const {
  ConfigMap raw = raw_in;
  raw.emplace("name", name);
  auto resolved = resolve_config(raw);
  if (!resolved) return resolved.error();
  return ConnectorConfigPtr(std::make_shared<const ConnectorConfig>(parse_connector_config(name, raw, *resolved)));
}

Status Worker::refuse_start(StartKind kind, Error why) {
  if (auto& m = options_.metrics) {
    if (kind == StartKind::Connector) {
      m->connector_startup_attempt();
      m->connector_startup_result(false);
    } else {
      m->task_startup_attempt();
      m->task_startup_result(false);
    }
  }
  return why;
}

void Worker::update_running_metrics_locked() {
  if (!options_.metrics) return;
  // Tasks count once started (RUNNING or PAUSED), not while they start.
  auto running = std::count_if(tasks_.begin(), tasks_.end(), [](const auto& t) { return t.second->running.load(); });
  options_.metrics->set_running(connectors_.size(), static_cast<size_t>(running));
}

size_t Worker::stuck_threads() const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (const auto& t : cancelled_tasks_) n += t->is_finished() ? 0 : 1;
  for (const auto& c : cancelled_connectors_) n += c->is_finished() ? 0 : 1;
  return n;
}

Result<storage::Producer*> Worker::shared_producer() {
  std::lock_guard lk(shared_mu_);
  if (shared_producer_) return shared_producer_.get();
  // The per-task producers' settings; one client for all tasks.
  storage::ClientProps overrides = options_.producer_overrides;
  overrides.emplace("acks", "all");
  overrides.emplace("client.id", "connector-producer-shared");
  // Its own poll thread serves every task's delivery reports: no task
  // thread can serve them for the others. Its librdkafka errors are
  // classified; the tasks on it ask (SourceTaskLoop::throw_if_producer_fatal).
  storage::ClientProps merged = options_.client;
  for (const auto& [k, v] : overrides) merged[k] = v;
  auto p = storage::Producer::create(options_.client, overrides, storage::Producer::Deliveries::PollThread,
                                     std::make_shared<storage::ClientErrorObserver>(merged));
  if (!p) return p.error();
  shared_producer_ = std::move(p).value();
  producers_created_.fetch_add(1);
  spdlog::info("created the shared producer of this worker's source tasks (producer.shared=true)");
  return shared_producer_.get();
}

void Worker::stop_all() {
  std::vector<ConnectorTaskId> ids;
  std::vector<std::string> names;
  {
    std::lock_guard lk(mu_);
    for (const auto& [id, _] : tasks_) ids.push_back(id);
    for (const auto& [n, _] : connectors_) names.push_back(n);
  }
  // Tasks and connectors are signalled together and awaited against one
  // graceful-timeout deadline, so stop_all takes about one timeout at most.
  for (const auto& id : ids) request_stop_task(id);
  signal_connectors(names);
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.task_shutdown_graceful_timeout_ms);
  for (const auto& id : ids) await_task_stopped(id, remaining_ms(deadline));
  await_connectors(names, deadline);
  // Tasks abandoned earlier (stop_tasks / stop_tasks_async that timed out)
  // were cut off by the call that abandoned them; if such a call is still
  // cutting, wait for it so that every task is stopped or cut off now.
  std::vector<std::shared_ptr<TaskRunner>> abandoned;
  {
    std::lock_guard lk(mu_);
    abandoned = cancelled_tasks_;
  }
  for (auto& r : abandoned) r->cut_off();
}

}  // namespace kc::runtime
