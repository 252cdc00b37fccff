// Task lifecycle: building a task's pipeline and thread, stopping tasks, and cutting abandoned ones off from Kafka.
#include "worker/runtime/worker_internal.h"

#include <algorithm>

#include "common/secrets.h"
#include "worker/storage/broker_check.h"
#include "worker/runtime/record_transforms.h"

namespace kc::runtime {

using connectors::ConnectorType;

Result<std::unique_ptr<RecordPipeline>> Worker::make_task_pipeline(const ConnectorTaskId& id,
                                                                    const ConnectorConfig& config,
                                                                    std::stop_token stop) const {
  // The dead letter queue's producer and topic are made on the first
  // record that needs them, on the task's thread.
  ErrorHandler::DlqSend dlq;
  // The producer is made on first use; the topic check and the producer's
  // creation (broker I/O, up to 30 s) run outside the lock, so a second
  // caller never waits on I/O behind it (one of two racing creations is
  // dropped).
  struct DlqState {
    std::mutex mu;
    std::shared_ptr<storage::Producer> producer;  ///< owns its ClientErrorObserver
  };
  std::shared_ptr<DlqState> dlq_state;
  if (config.type == ConnectorType::Sink) {
    auto state = dlq_state = std::make_shared<DlqState>();
    const auto client = options_.client;
    // Connect's DLQ producer: the worker's producer.*, then the
    // connector's producer.override.*.
    storage::ClientProps overrides;
    try {
      overrides = connector_producer_overrides(options_, config);
    } catch (const connectors::ConnectError& e) {
      return Error{"", e.what()};
    }
    overrides.emplace("client.id", "connector-dlq-producer-" + id.to_string());  // Connect's name
    dlq = [state, client, overrides](const std::string& topic, int rf, const ConsumedRecord& record,
                                     storage::RecordHeaders extra, std::function<void()> on_failed) -> bool {
      std::shared_ptr<storage::Producer> producer;
      {
        std::lock_guard lk(state->mu);
        producer = state->producer;
      }
      if (!producer) {
        storage::TopicSpec spec{topic, 1, rf, {}};
        auto made = storage::ensure_topic(client, spec, 30000);
        if (!made) spdlog::warn("dead letter queue topic {}: {}", topic, made.error().to_string());
        // Its librdkafka errors are classified (issue 27 item 1): a cause
        // no retry fixes fails the task (check_dlq), since its records
        // would otherwise be lost quietly.
        storage::ClientProps merged = client;
        for (const auto& [k, v] : overrides) merged[k] = v;
        auto p = storage::Producer::create(client, overrides, storage::Producer::Deliveries::PollThread,
                                           std::make_shared<storage::ClientErrorObserver>(merged));
        if (!p) {
          spdlog::error("dead letter queue producer for {}: {}", topic, p.error().to_string());
          return false;
        }
        std::lock_guard lk(state->mu);
        if (!state->producer) state->producer = std::move(p).value();
        producer = state->producer;
      }
      storage::RecordHeaders headers = record.headers;
      headers.insert(headers.end(), std::make_move_iterator(extra.begin()), std::make_move_iterator(extra.end()));
      auto st = producer->send(
          topic, record.key, record.value,
          [on_failed = std::move(on_failed)](std::optional<Error> e) {
            if (e) on_failed();
          },
          -1, &headers, record.timestamp_ms > 0 ? record.timestamp_ms : 0);
      return st.ok();
    };
  }
  auto pipeline = make_record_pipeline(config, id, nullptr, std::move(stop), std::move(dlq), make_record_transforms);
  if (pipeline && dlq_state) {
    (*pipeline)->errors().set_dlq_check([dlq_state] {
      std::shared_ptr<storage::Producer> producer;
      {
        std::lock_guard lk(dlq_state->mu);
        producer = dlq_state->producer;
      }
      if (!producer || !producer->errors()) return;
      if (auto v = producer->errors()->fatal())
        throw connectors::ConnectError("dead letter queue producer: " + v->message);
    });
  }
  return pipeline;
}

Status Worker::start_task(const ConnectorTaskId& id, const ConfigMap& connector_config,
                          const ConfigMap& task_config, TargetState target, ExactlyOnceTaskChecks eos_checks) {
  auto parsed = read_connector_config(id.connector, connector_config);
  if (!parsed) return refuse_start(StartKind::Task, parsed.error());
  return start_task(id, std::move(parsed).value(), task_config, target, std::move(eos_checks));
}

Status Worker::start_task(const ConnectorTaskId& id, ConnectorConfigPtr config, const ConfigMap& task_config_in,
                          TargetState target, ExactlyOnceTaskChecks eos_checks) {
  if (options_.metrics) options_.metrics->task_startup_attempt();
  auto early_fail = [this](Error e) -> Status {
    if (options_.metrics) options_.metrics->task_startup_result(false);
    return e;
  };
  // The task config's placeholders resolve here, on the herder's apply
  // strand (file reads); its connector's config was read once, where it
  // entered (the caller's ConnectorConfigPtr): everything below reads its
  // fields.
  auto task_resolved = resolve_config(task_config_in);
  if (!task_resolved) return early_fail(task_resolved.error());
  const ConfigMap& task_config = task_resolved->config;
  if (!config->values.count("connector.class"))
    return early_fail(Error{"connector.class", "missing connector.class for task " + id.to_string()});
  auto created = registry_->create(config->connector_class);
  if (!created) return early_fail(created.error());
  auto connector = std::move(created).value();

  TaskEnv env;
  env.options = options_;
  env.offsets = offsets_;
  env.status = status_;
  env.observer = observer_.load();
  env.task_config = task_config;
  env.connector_config = config;
  // A task failure text must not quote a secret of its configs.
  env.secret_values = config->task_secret_values(task_config, task_resolved->resolved_keys);
  spdlog::debug("{}", secrets::describe_config("task " + id.to_string() + " config values", task_config_in,
                                               config->is_secret));
  env.on_running_changed = [this] {
    std::lock_guard lk(mu_);
    update_running_metrics_locked();
  };
  env.producers_created = &producers_created_;
  env.watchdog = &watchdog_;
  auto runner = std::make_shared<TaskRunner>();
  auto pipeline = make_task_pipeline(id, *config, runner->stop.get_token());
  if (!pipeline) return early_fail(pipeline.error());
  env.pipeline = std::move(pipeline).value();

  runner->id = id;
  runner->paused.store(target != TargetState::Started);
  std::unique_ptr<connectors::SourceTask> source;
  std::unique_ptr<connectors::SinkTask> sink;
  if (connector->type() == ConnectorType::Source) {
    source = connector->create_source_task();
    if (!source) return early_fail(Error{"connector.class", config->connector_class + " created no source task"});
    // At-least-once source tasks share the Worker's producer when asked to;
    // exactly-once ones keep their own (a transaction is per producer), and
    // so do connectors with producer.override.* (the shared producer has
    // the worker's settings only).
    if (options_.producer_shared && !options_.exactly_once_source && config->producer_overrides.empty()) {
      auto p = shared_producer();
      if (p) env.shared_producer = *p;
      else env.shared_producer_error = p.error().to_string();  // the task fails with it, as with its own producer
    }
  } else {
    sink = connector->create_sink_task();
    if (!sink) return early_fail(Error{"connector.class", config->connector_class + " created no sink task"});
  }
  std::lock_guard lk(mu_);
  if (tasks_.count(id))
    return early_fail(Error{"task", "task " + id.to_string() + " is already running on this worker"});
  if (options_.metrics) env.tm = options_.metrics->task(id.connector, id.task, static_cast<bool>(source));
  env.pipeline->errors().set_metrics(env.tm);
  tasks_[id] = runner;
  update_running_metrics_locked();
  if (source && options_.exactly_once_source) {
    env.eos_checks = std::move(eos_checks);
    runner->thread = std::thread([env = std::move(env), task = std::move(source), runner]() mutable {
      run_exactly_once_source_task(std::move(env), std::move(task), *runner);
      runner->mark_finished();
    });
  } else if (source) {
    runner->thread = std::thread([env = std::move(env), task = std::move(source), runner]() mutable {
      run_source_task(std::move(env), std::move(task), *runner);
      runner->mark_finished();
    });
  } else {
    runner->thread = std::thread([env = std::move(env), task = std::move(sink), runner]() mutable {
      run_sink_task(std::move(env), std::move(task), *runner);
      runner->mark_finished();
    });
  }
  return ok_status();
}

void Worker::request_stop_task(const ConnectorTaskId& id) {
  std::lock_guard lk(mu_);
  auto it = tasks_.find(id);
  if (it != tasks_.end()) it->second->stop.request_stop();
}

bool Worker::await_task_stopped(const ConnectorTaskId& id, int timeout_ms) {
  std::shared_ptr<TaskRunner> r;
  {
    std::lock_guard lk(mu_);
    auto it = tasks_.find(id);
    if (it == tasks_.end()) return true;
    r = it->second;
  }
  bool ok = r->wait_until(Clock::now() + std::chrono::milliseconds(timeout_ms));
  bool first_to_abandon = false;
  {
    std::lock_guard lk(mu_);
    // Cancelled before it is forgotten, so that no late status or metrics
    // state of it follows the removal.
    if (!ok) first_to_abandon = !r->cancelled.exchange(true);
    auto it = tasks_.find(id);
    if (it != tasks_.end() && it->second == r) {
      tasks_.erase(it);
      if (options_.metrics) options_.metrics->remove_task(id.connector, id.task);
      update_running_metrics_locked();
    }
    if (first_to_abandon) cancelled_tasks_.push_back(r);
  }
  if (!ok) {
    // Outside mu_: closing the consumer waits for its LeaveGroup. Every
    // caller that timed out returns only after the cut-off is done.
    auto what = r->cut_off();
    if (first_to_abandon || !what.empty())
      spdlog::warn("task {} did not stop within the graceful timeout ({} ms); abandoned and cut off from Kafka ({})",
                   id.to_string(), options_.task_shutdown_graceful_timeout_ms,
                   what.empty() ? "its client was already closing" : what);
  }
  return ok;
}

bool Worker::stop_task(const ConnectorTaskId& id) {
  request_stop_task(id);
  return await_task_stopped(id, options_.task_shutdown_graceful_timeout_ms);
}

std::vector<ConnectorTaskId> Worker::stop_tasks(const std::vector<ConnectorTaskId>& ids) {
  for (const auto& id : ids) request_stop_task(id);
  auto deadline = Clock::now() + std::chrono::milliseconds(options_.task_shutdown_graceful_timeout_ms);
  std::vector<ConnectorTaskId> timed_out;
  for (const auto& id : ids)
    if (!await_task_stopped(id, remaining_ms(deadline))) timed_out.push_back(id);
  return timed_out;
}

void Worker::stop_tasks_async(std::vector<ConnectorTaskId> ids,
                              std::function<void(std::vector<ConnectorTaskId> timed_out)> done) {
  for (const auto& id : ids) request_stop_task(id);
  reap_helpers();
  auto finished = std::make_shared<std::atomic<bool>>(false);
  std::lock_guard lk(mu_);
  helper_done_.push_back(finished);
  helpers_.emplace_back([this, ids = std::move(ids), done = std::move(done), finished] {
    auto timed_out = stop_tasks(ids);
    if (done) done(std::move(timed_out));
    finished->store(true);
  });
}

void Worker::reap_helpers() {
  std::vector<std::thread> to_join;
  {
    std::lock_guard lk(mu_);
    for (size_t i = 0; i < helpers_.size();) {
      if (helper_done_[i]->load()) {
        to_join.push_back(std::move(helpers_[i]));
        helpers_.erase(helpers_.begin() + static_cast<std::ptrdiff_t>(i));
        helper_done_.erase(helper_done_.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
  }
  for (auto& t : to_join) t.join();
}

std::set<ConnectorTaskId> Worker::task_ids() const {
  std::lock_guard lk(mu_);
  std::set<ConnectorTaskId> out;
  for (const auto& [id, _] : tasks_) out.insert(id);
  return out;
}

std::vector<ConnectorTaskId> Worker::cut_off_all() {
  std::vector<std::shared_ptr<TaskRunner>> runners;
  {
    std::lock_guard lk(mu_);
    for (auto& [id, r] : tasks_) {
      // Cancelled before it is forgotten: nothing of it follows (status, metrics).
      if (!r->cancelled.exchange(true)) cancelled_tasks_.push_back(r);
      runners.push_back(r);
      if (options_.metrics) options_.metrics->remove_task(id.connector, id.task);
    }
    tasks_.clear();
    update_running_metrics_locked();
    // Every task goes, so the shared producer may be purged: once no task
    // sends any more (abandoned ones were stopped from sending when they
    // were cut off). Still under mu_, so a task started after this call
    // (registered under mu_ before it can send) loses nothing to the purge.
    std::lock_guard sl(shared_mu_);
    if (shared_producer_) {
      for (auto& r : runners) r->cancel_sends();
      rd_kafka_purge(shared_producer_->handle(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      spdlog::warn("shared producer purged: every task on it was cut off");
    }
  }
  std::vector<ConnectorTaskId> ids;
  for (auto& r : runners) {
    auto what = r->cut_off();
    spdlog::warn("task {} cut off from Kafka ({})", r->id.to_string(), what.empty() ? "its client was already closing" : what);
    ids.push_back(r->id);
  }
  return ids;
}

}  // namespace kc::runtime
