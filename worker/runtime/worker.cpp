#include "worker/runtime/worker.h"

#include "common/secrets.h"
#include "common/strings.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>

#include <spdlog/spdlog.h>

#include "worker/runtime/converter.h"
#include "worker/runtime/record_pipeline.h"
#include "worker/runtime/record_transforms.h"
#include "worker/storage/records.h"
#include "worker/storage/transactional_producer.h"

namespace kc::runtime {

using Clock = std::chrono::steady_clock;
using connectors::ConnectorType;

namespace {

std::string trace_of(const std::exception& e, const std::string& where) {
  return std::string("kc::connectors::ConnectError: ") + e.what() + "\n\tat " + where;
}

/// Calls `task.stop()` (a SourceTask or SinkTask). What it throws becomes
/// `failure`, traced at "stop of <what>", unless the task already failed:
/// the first failure is the one reported.
template <typename Task>
void stop_task(Task& task, std::optional<std::string>& failure, const std::string& what) {
  try {
    task.stop();
  } catch (const std::exception& e) {
    if (!failure) failure = trace_of(e, "stop of " + what);
  }
}

int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}


/// Settings under `prefix` with the prefix stripped.

}  // namespace

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

// ------------------------------------------------------------------ runners

/// Shared state of one task thread.
struct Worker::TaskRunner {
  ConnectorTaskId id;
  std::atomic<bool> stop_requested{false};
  /// The task missed its graceful stop: it is forgotten by the Worker and cut
  /// off from Kafka; whatever it does later is discarded (no status, no
  /// metrics, no produce, no offset commit).
  std::atomic<bool> cancelled{false};
  std::atomic<bool> paused{false};
  /// Started and not yet ended: the last state it reported is RUNNING or
  /// PAUSED (kconnectd_worker_tasks_running counts these only).
  std::atomic<bool> running{false};
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;
  std::mutex join_mu;
  std::thread thread;

  // The task's Kafka client, reachable from the thread that cuts the task
  // off. The task thread holds kafka_mu only around short client calls
  // (consumer poll of at most 100 ms, subscribe, pause/resume, issuing an
  // offset commit, a source offset commit) and checks `cancelled` under it
  // first; it clears the pointers under it before it closes or destroys the
  // client itself. So librdkafka never sees a close racing a consumer call.
  std::mutex kafka_mu;
  rd_kafka_t* consumer = nullptr;  ///< sink consumer until closed; guarded by kafka_mu
  rd_kafka_t* producer = nullptr;  ///< own source producer until destroyed; guarded by kafka_mu
  /// Sends through the Worker's shared producer, from its start until it
  /// ends; guarded by kafka_mu.
  bool on_shared_producer = false;
  bool kafka_cut = false;          ///< cut_off() already ran; guarded by kafka_mu
  /// Set (shared producer only) by the task thread around each record it
  /// hands to the producer; it checks `cancelled` after setting it. A
  /// cut-off stores `cancelled` and then waits while this is set (both
  /// seq_cst, so one of them sees the other): once it returns, the task
  /// sends nothing more. The shared producer cannot be purged for one task.
  std::atomic<bool> sending{false};

  /// Marks the task stopping and cancelled, and waits until it is not in
  /// the middle of handing records to a shared producer (at most one
  /// send_view, which waits at most 5 s while librdkafka's queue is full).
  void cancel_sends() {
    stop_requested.store(true);
    cancelled.store(true);
    while (sending.load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }

  /// Cuts the task off from Kafka (Connect's KAFKA-15826 fix): marks it
  /// cancelled and stopping, then closes its sink consumer (which leaves
  /// group `connect-<connector>` at once; the revocation commits nothing for
  /// a cancelled task) or purges its own source producer's queued and
  /// in-flight records (later sends are refused by the task loop). A task on
  /// the shared producer is not purged: it sends nothing after this returns
  /// and its records in flight commit no offsets. Blocks only for a client
  /// call already under way on the task thread and for the consumer's
  /// LeaveGroup. Idempotent: a second call waits for the first to finish
  /// and returns "". Returns what it did, for the log ("" if the client was
  /// already closed by the task itself).
  std::string cut_off() {
    cancel_sends();
    std::lock_guard lk(kafka_mu);
    if (kafka_cut) return "";
    kafka_cut = true;
    std::string what;
    if (consumer) {
      rd_kafka_consumer_close(consumer);
      consumer = nullptr;
      what = "consumer closed, left group connect-" + id.connector;
    }
    if (producer) {
      rd_kafka_purge(producer, RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
      what = "producer purged";
    }
    if (on_shared_producer)
      what = "no more sends to the shared producer; its records in flight commit no offsets";
    return what;
  }

  bool wait_until(Clock::time_point deadline) {
    std::unique_lock lk(mu);
    if (!cv.wait_until(lk, deadline, [&] { return finished; })) return false;
    lk.unlock();
    join();
    return true;
  }
  void join() {
    std::lock_guard lk(join_mu);
    if (thread.joinable()) thread.join();
  }
  void mark_finished() {
    std::lock_guard lk(mu);
    finished = true;
    cv.notify_all();
  }
};

/// Shared state of one connector thread: runs queued jobs in order.
struct Worker::ConnectorRunner {
  std::string name;
  std::atomic<bool> cancelled{false};
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::function<void()>> jobs;
  bool stop_requested = false;
  bool finished = false;
  bool failed = false;  ///< start() threw; guarded by mu
  /// The config as written (placeholders) and its resolution: task configs
  /// get the placeholders back (providers::restore_placeholders).
  ConfigMap raw_config;
  providers::ResolvedConfig resolved;
  std::mutex join_mu;
  std::thread thread;

  void post(std::function<void()> job) {
    std::lock_guard lk(mu);
    jobs.push_back(std::move(job));
    cv.notify_all();
  }
  bool wait_until(Clock::time_point deadline) {
    std::unique_lock lk(mu);
    if (!cv.wait_until(lk, deadline, [&] { return finished; })) return false;
    lk.unlock();
    std::lock_guard jl(join_mu);
    if (thread.joinable()) thread.join();
    return true;
  }
};

/// The ConnectorContext of a running connector: reconfiguration requests go
/// to WorkerOptions::on_task_reconfiguration; raise_error marks it FAILED.
class Worker::RunnerContext : public connectors::ConnectorContext {
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

namespace {

/// Everything a task thread needs, copied so it never touches the Worker.
struct TaskEnv {
  WorkerOptions options;
  storage::OffsetBackingStore* offsets = nullptr;
  StatusListener* status = nullptr;
  TaskObserver* observer = nullptr;
  ConfigMap task_config;
  std::unique_ptr<RecordPipeline> pipeline;  ///< converters, transforms, error handling
  std::shared_ptr<metrics::TaskMetrics> tm;  ///< null when the Worker has no metrics
  /// Called on the task thread when the task starts or stops running (the
  /// Worker recounts its running tasks); may be empty.
  std::function<void()> on_running_changed;
  /// Source tasks with producer.shared: the Worker's producer (it outlives
  /// the task thread); null = the task creates its own.
  storage::Producer* shared_producer = nullptr;
  /// Why the shared producer could not be created (the task fails with it).
  std::optional<std::string> shared_producer_error;
  /// The Worker's count of source producers created (a task that creates
  /// its own adds one). Outlives the task thread.
  std::atomic<int64_t>* producers_created = nullptr;
  /// Secret values of the task's and its connector's configs (resolved),
  /// scrubbed out of every failure text (secrets::scrub).
  std::vector<std::string> secret_values;
  /// Exactly-once source tasks: the herder's checks around the producer's
  /// creation, and the connector config (transaction.boundary,
  /// transaction.boundary.interval.ms, offsets.storage.topic).
  ExactlyOnceTaskChecks eos_checks;
  ConfigMap connector_config;
  /// The Worker's watchdog of plugin calls (poll, put); outlives the task thread.
  CallWatchdog* watchdog = nullptr;
};

class SourceContext : public connectors::SourceTaskContext {
 public:
  /// `primary` (may be null) is read first, then `fallback`: a connector
  /// with its own offsets.storage.topic falls back to the worker's topic,
  /// as Connect's ConnectorOffsetBackingStore does.
  SourceContext(storage::OffsetBackingStore* primary, ConnectorTaskId id,
                storage::OffsetBackingStore* fallback = nullptr)
      : primary_(primary), fallback_(fallback), id_(std::move(id)) {}
  std::optional<connectors::OrderedJson> offset(const connectors::OrderedJson& partition) const override {
    for (auto* store : {primary_, fallback_})
      if (store)
        if (auto o = store->get(id_.connector, partition)) return o;
    return std::nullopt;
  }
  const std::string& connector_name() const override { return id_.connector; }
  int32_t task_number() const override { return id_.task; }

 private:
  storage::OffsetBackingStore* primary_;
  storage::OffsetBackingStore* fallback_;
  ConnectorTaskId id_;
};

}  // namespace

// ------------------------------------------------------------------ task loops

namespace {

metrics::TaskState to_metrics(StatusState s) {
  switch (s) {
    case StatusState::Running: return metrics::TaskState::Running;
    case StatusState::Paused: return metrics::TaskState::Paused;
    case StatusState::Failed: return metrics::TaskState::Failed;
    case StatusState::Restarting: return metrics::TaskState::Restarting;
    case StatusState::Unassigned:
    case StatusState::Stopped:
    case StatusState::Destroyed: return metrics::TaskState::Unassigned;
  }
  return metrics::TaskState::Unassigned;
}

template <typename Runner>
void report_task(const TaskEnv& env, Runner& r, StatusState s, const std::optional<std::string>& trace = {}) {
  if (r.cancelled.load()) return;
  const bool running = s == StatusState::Running || s == StatusState::Paused;
  if (r.running.exchange(running) != running && env.on_running_changed) env.on_running_changed();
  if (env.tm) env.tm->set_state(to_metrics(s));
  if (env.status) env.status->on_task_status(r.id, s, trace);
}

/// The end of a task thread: a failure (secrets scrubbed) is logged and
/// reported FAILED with its trace, a clean end UNASSIGNED; the late end of
/// an abandoned (cut off) task is only logged, since its failure (often the
/// purge's delivery errors) is nobody's business any more. Then the
/// observer hears of the stop.
template <typename Runner>
void report_task_end(const TaskEnv& env, Runner& r, std::optional<std::string> failure) {
  const auto& id = r.id;
  if (r.cancelled.load()) {
    spdlog::info("abandoned task {} ended{}", id.to_string(), failure ? " (failed)" : "");
  } else if (failure) {
    failure = secrets::scrub(*failure, env.secret_values);
    spdlog::error("task {} failed: {}", id.to_string(), *failure);
    report_task(env, r, StatusState::Failed, failure);
  } else {
    report_task(env, r, StatusState::Unassigned);
  }
  if (env.observer) env.observer->on_task_stop(env.options.worker_id, id);
}

/// What a plugin call past connector.call.timeout.ms reports: "<who>:
/// <call>() did not return within <ms> ms (connector.call.timeout.ms)".
std::string call_timeout_message(const std::string& who, const char* call, int timeout_ms) {
  return who + ": " + call + "() did not return within " + std::to_string(timeout_ms) +
         " ms (connector.call.timeout.ms)";
}

/// Runs one plugin call of task `r` under connector.call.timeout.ms: at
/// the deadline the task is reported FAILED naming the call (from the
/// watchdog's thread; the call goes on); when the call returns late, the
/// task ends FAILED with the same message. Task thread.
template <typename Runner, typename Fn>
auto watched_task_call(const TaskEnv& env, Runner& r, const char* call, Fn&& fn) {
  const int ms = env.options.connector_call_timeout_ms;
  const std::string why = call_timeout_message("task " + r.id.to_string(), call, ms);
  std::optional<CallWatchdog::Guard> guard;
  if (env.watchdog)
    guard.emplace(env.watchdog->watch(ms, [&env, &r, &why] {
      spdlog::error("{}", why);
      report_task(env, r, StatusState::Failed, why);
    }));
  const auto late = [&] { return guard && guard->fired(); };
  try {
    auto out = fn();
    if (late()) throw connectors::ConnectError(why);
    return out;
  } catch (const connectors::RetriableError&) {
    if (late()) throw connectors::ConnectError(why);  // no retry: it is FAILED already
    throw;
  }
}

/// Topic tracking of one task (Connect's recordActiveTopic): reports each
/// topic to the listener the first time this task uses it.
class ActiveTopics {
 public:
  void record(const TaskEnv& env, const ConnectorTaskId& id, const std::string& topic) {
    if (env.status && seen_.insert(topic).second) env.status->on_topic_active(id, topic);
  }

 private:
  std::set<std::string> seen_;
};

/// Startup outcome of a task, counted once (metrics).
void report_startup(const TaskEnv& env, bool& reported, bool ok) {
  if (reported) return;
  reported = true;
  if (env.options.metrics) env.options.metrics->task_startup_result(ok);
}

/// The task's metrics, or null once it was cancelled (late results of an
/// abandoned task change no metrics).
template <typename Runner>
metrics::TaskMetrics* live_metrics(const TaskEnv& env, const Runner& r) {
  return r.cancelled.load() ? nullptr : env.tm.get();
}

/// Delivery outcome of one source task run, shared by the task thread and
/// its batches. Batches may outlive the task (records still in flight when
/// it ends), so this is reference-counted rather than on the task's stack.
struct TaskDeliveries {
  std::atomic<bool> failed{false};
  /// The task waits for its own records (final drain): a batch whose last
  /// report arrives then wakes it through `cv`.
  std::atomic<bool> draining{false};
  std::mutex mu;
  std::condition_variable cv;
  std::string first;  ///< the first delivery error; guarded by mu

  void record(rd_kafka_resp_err_t err) {
    std::lock_guard lk(mu);
    if (!failed.exchange(true)) first = std::string("produce: ") + rd_kafka_err2str(err);
  }
  /// Called by whoever completes a batch. The lock pairs with the drain's
  /// predicate check, so its wake-up is not lost.
  void batch_reported() {
    if (!draining.load()) return;
    { std::lock_guard lk(mu); }
    cv.notify_all();
  }
};

/// The records of one poll() on their way to Kafka: how many the producer
/// has not reported on yet, and the last source offset per source partition
/// among them. Delivery reports count down on whichever thread serves them
/// (the task thread with its own producer, the shared producer's poll
/// thread otherwise); a failure is recorded before its count-down. A
/// batch's offsets become committable once it and every batch before it
/// are fully reported and no record failed (Connect's SubmittedRecords), so
/// a periodic commit never waits for the producer and never covers a record
/// not yet acknowledged.
///
/// Lifetime: owned by the task's in-flight queue (shared_ptr) and, from
/// arm() until its count reaches zero, by itself (`keep_alive`): librdkafka
/// holds raw pointers to it as the records' opaque. The call that brings
/// the count to zero (the last report, or the task taking off the records
/// it never sent) drops that self-reference. So a task may end, or be cut
/// off, with records in flight: the batch lives on until their reports.
struct InFlightBatch;

/// The delivery report of one record of a task that overrides
/// SourceTask::commit_record: keeps what Kafka said about the record in its
/// batch, then counts it down there. Only such tasks pay for one per record.
struct RecordAck final : storage::Producer::Delivery {
  RecordAck(InFlightBatch* b, size_t i) : batch(b), index(i) {}
  void delivered(rd_kafka_resp_err_t err) override;
  void delivered_message(const rd_kafka_message_t* msg) override;
  InFlightBatch* batch;
  size_t index;
};

struct InFlightBatch final : storage::Producer::Delivery {
  explicit InFlightBatch(std::shared_ptr<TaskDeliveries> d) : deliveries(std::move(d)) {}

  /// Counts `n` records as unreported and holds `self` (this batch) until
  /// all are accounted for. Task thread, before the first send.
  void arm(std::shared_ptr<InFlightBatch> self, int64_t n) {
    keep_alive = std::move(self);
    unreported.store(n);
  }
  void delivered(rd_kafka_resp_err_t err) override {
    if (err) deliveries->record(err);
    count_down(1);
  }
  /// Takes `n` records off the count: reports, or records of the poll that
  /// were never handed to the producer. May destroy this batch (when no one
  /// else holds it); touches nothing of it afterwards.
  void count_down(int64_t n) {
    if (n == 0 || unreported.fetch_sub(n) != n) return;
    auto d = deliveries;                        // `this` may go with the next line
    std::shared_ptr<InFlightBatch> self = std::move(keep_alive);
    self.reset();
    d->batch_reported();
  }
  bool done() const { return sealed && unreported.load() == 0; }

  std::shared_ptr<TaskDeliveries> deliveries;
  std::shared_ptr<InFlightBatch> keep_alive;  ///< set from arm() until the count reaches zero
  std::atomic<int64_t> unreported{0};
  bool sealed = false;  ///< every record of the poll was handed to the producer (task thread only)
  /// Offset key (storage::encode_offset_key) -> the last partition/offset.
  std::map<std::string, std::pair<storage::SourcePartition, storage::SourceOffset>> offsets;
  /// Tasks with commit_record only (else empty): the records as polled,
  /// what Kafka reported for each (partition -1: not sent, e.g. dropped by
  /// a transform), whether its delivery failed, and one report per record.
  /// Written by the reports before their count-down, read by the task
  /// thread once done().
  std::vector<connectors::SourceRecord> polled;
  std::vector<connectors::RecordMetadata> acks;
  std::vector<uint8_t> failed;
  std::vector<RecordAck> record_acks;
};

void RecordAck::delivered(rd_kafka_resp_err_t err) { batch->delivered(err); }

void RecordAck::delivered_message(const rd_kafka_message_t* msg) {
  if (msg->err) {
    batch->failed[index] = 1;
  } else {
    auto& md = batch->acks[index];
    md.topic = rd_kafka_topic_name(msg->rkt);
    md.partition = msg->partition;
    md.offset = msg->offset;
    md.timestamp_ms = rd_kafka_message_timestamp(msg, nullptr);
  }
  batch->delivered(msg->err);  // may destroy the batch and this report: nothing after it
}

template <typename Runner>
void run_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, Runner& r) {
  const auto& id = r.id;
  std::optional<std::string> failure;
  bool delivery_failed_flag = false;
  auto deliveries = std::make_shared<TaskDeliveries>();
  std::deque<std::shared_ptr<InFlightBatch>> in_flight;
  /// Acknowledged offsets not committed yet.
  std::map<std::string, std::pair<storage::SourcePartition, storage::SourceOffset>> pending;
  // Exactly one of these is set once the task has a producer: its own, or
  // the Worker's shared one (never purged, flushed or polled from here).
  std::unique_ptr<storage::Producer> own_producer;
  storage::Producer* producer = nullptr;
  const bool shared = env.shared_producer != nullptr || env.shared_producer_error.has_value();

  // SourceTask.commitRecord is called only for tasks that override it.
  const bool commit_records = task->wants_commit_record();
  // Moves the offsets of the acknowledged prefix of `in_flight` to `pending`
  // (and hands its records to commit_record, on this thread).
  auto collect_acked = [&] {
    while (!in_flight.empty() && in_flight.front()->done()) {
      auto& b = *in_flight.front();
      for (auto& [key, po] : b.offsets) pending[key] = std::move(po);
      for (size_t i = 0; i < b.polled.size(); ++i) {
        if (b.failed[i]) continue;
        try {
          task->commit_record(b.polled[i], b.acks[i]);
        } catch (const std::exception& e) {  // logged, as Connect does
          spdlog::error("{}: exception thrown while calling task.commitRecord(): {}", id.to_string(), e.what());
        }
      }
      in_flight.pop_front();
    }
  };
  // Waits until the producer reported on every record of this task, at
  // most offset.flush.timeout.ms. Its own producer is flushed; on the shared
  // one the task waits for its own batches only, never for other tasks'
  // records. Errors on timeout.
  auto drain = [&]() -> Status {
    if (!shared) return producer->flush(env.options.offset_flush_timeout_ms);
    const auto deadline = Clock::now() + std::chrono::milliseconds(env.options.offset_flush_timeout_ms);
    deliveries->draining.store(true);
    std::unique_lock lk(deliveries->mu);
    const bool all = deliveries->cv.wait_until(lk, deadline, [&] {
      return r.cancelled.load() ||
             std::all_of(in_flight.begin(), in_flight.end(), [](const auto& b) { return b->done(); });
    });
    if (!all)
      return Error{"flush", "timed out after " + std::to_string(env.options.offset_flush_timeout_ms) +
                                " ms waiting for the acks of this task's records"};
    return ok_status();
  };
  // Commits the offsets of acknowledged records. `drain_first` (the final
  // commit) first waits until the producer reported on every record of the
  // task. nullopt when there was nothing to commit or the task was cut off.
  auto commit_acked = [&](bool drain_first) -> std::optional<Status> {
    if (r.cancelled.load() || (pending.empty() && in_flight.empty())) return std::nullopt;
    if (drain_first) {
      auto st = drain();
      if (r.cancelled.load()) return std::nullopt;  // cut off meanwhile: nothing to commit
      if (!st) spdlog::warn("{}: {}; committing the acknowledged records only", id.to_string(), st.error().to_string());
    }
    if (deliveries->failed.load()) return Error{"produce", "a record failed to be delivered"};
    collect_acked();
    if (pending.empty()) return std::nullopt;
    if (!env.offsets) return ok_status();
    std::vector<std::pair<storage::SourcePartition, std::optional<storage::SourceOffset>>> batch;
    batch.reserve(pending.size());
    for (const auto& [_, po] : pending) batch.emplace_back(po.first, po.second);
    // Checked and written under kafka_mu: once cut_off() returned, no commit
    // of this task can land (a cut-off waits for one already under way).
    std::lock_guard lk(r.kafka_mu);
    if (r.cancelled.load()) return std::nullopt;
    auto st = env.offsets->commit(id.connector, batch, env.options.offset_flush_timeout_ms);
    if (st) pending.clear();
    return st;
  };
  auto commit = [&](bool drain_first) -> Status {
    auto st = commit_acked(drain_first);
    if (!st) return ok_status();
    if (auto* tm = live_metrics(env, r)) tm->offset_commit(st->ok());
    if (st->ok()) {
      // SourceTask.commit once the offsets are written; as Connect, its
      // failure is logged and the task goes on.
      try {
        task->commit();
      } catch (const std::exception& e) {
        spdlog::error("{}: exception thrown while calling task.commit(): {}", id.to_string(), e.what());
      }
    }
    return *st;
  };
  bool startup_reported = false;

  if (env.observer) env.observer->on_task_start(env.options.worker_id, id);
  SourceContext ctx(env.offsets, id);
  try {
    if (shared) {
      if (env.shared_producer_error)
        throw connectors::ConnectError("could not create the shared producer: " + *env.shared_producer_error);
      producer = env.shared_producer;
    } else {
      storage::ClientProps overrides = env.options.producer_overrides;
      overrides.emplace("acks", "all");
      overrides.emplace("client.id", "connector-producer-" + id.to_string());
      // The task thread serves its delivery reports (between polls, while the
      // queue is full, in flushes): it frees the records it allocated.
      auto p = storage::Producer::create(env.options.client, overrides, storage::Producer::Deliveries::Caller);
      if (!p) throw connectors::ConnectError("could not create producer: " + p.error().to_string());
      own_producer = std::move(p).value();
      producer = own_producer.get();
      if (env.producers_created) env.producers_created->fetch_add(1);
    }
    {
      std::lock_guard lk(r.kafka_mu);
      if (r.cancelled.load()) throw connectors::ConnectError("cut off before it started");
      if (shared) r.on_shared_producer = true;
      else r.producer = producer->handle();
    }
    // Offsets may have been committed by the previous owner on another worker.
    if (env.offsets) {
      auto st = env.offsets->read_to_end(std::max(env.options.offset_flush_timeout_ms, 10000));
      if (!st) throw connectors::ConnectError("could not read the offsets topic: " + st.error().to_string());
    }
    task->start(env.task_config, ctx);
    report_startup(env, startup_reported, true);
    report_task(env, r, r.paused.load() ? StatusState::Paused : StatusState::Running);
    bool was_paused = r.paused.load();
    auto last_commit = Clock::now();
    ActiveTopics active_topics;
    ProducerRecordView converted;  // reused: its buffers keep their capacity
    while (!r.stop_requested.load()) {
      bool paused = r.paused.load();
      if (paused != was_paused) {
        report_task(env, r, paused ? StatusState::Paused : StatusState::Running);
        was_paused = paused;
      }
      if (!paused) {
        auto records = watched_task_call(env, r, "poll", [&] { return task->poll(); });
        if (r.cancelled.load()) break;  // cut off while in poll(): its records are dropped
        if (!records.empty()) {
          if (auto* tm = live_metrics(env, r)) tm->source_polled(records.size());
          auto& batch = *in_flight.emplace_back(std::make_shared<InFlightBatch>(deliveries));
          // Counted for the whole poll up front (one atomic operation); the
          // records not handed to the producer are taken off when the block
          // ends, also on an exception, so the count always reaches zero.
          if (commit_records) {
            batch.polled = records;  // as polled: the pipeline changes `records`
            batch.acks.resize(records.size());
            batch.failed.assign(records.size(), 0);
            batch.record_acks.reserve(records.size());
            for (size_t i = 0; i < records.size(); ++i) batch.record_acks.emplace_back(&batch, i);
          }
          batch.arm(in_flight.back(), static_cast<int64_t>(records.size()));
          size_t sent = 0;
          struct Seal {
            InFlightBatch& batch;
            const size_t total;
            const size_t& sent;
            std::atomic<bool>* sending;  ///< cleared when the sends are over (shared producer only)
            ~Seal() {
              if (sending) sending->store(false);
              batch.sealed = true;
              batch.count_down(static_cast<int64_t>(total - sent));
            }
          } seal{batch, records.size(), sent, shared ? &r.sending : nullptr};
          const std::string* topic_name = nullptr;  // of rkt
          rd_kafka_topic_t* rkt = nullptr;
          auto slot = batch.offsets.end();          // of the previous record's partition
          const storage::SourcePartition* slot_partition = nullptr;  // the previous record's partition object
          for (auto& rec : records) {
            // Transformed and converted; false = dropped by a transform or
            // skipped after a tolerated error: not sent, but its offset
            // counts as handled (Connect commits it too).
            const bool send = env.pipeline->to_producer(rec, converted);
            if (send) {
              if (!topic_name || *topic_name != rec.topic) {
                rkt = producer->topic(rec.topic);
                topic_name = &rec.topic;
                active_topics.record(env, id, rec.topic);
              }
              // Shared producer: `sending` is set around each send and
              // `cancelled` checked after setting it, so nothing is sent once
              // a cut-off returned (see TaskRunner::sending) and a cut-off
              // waits for one send at most, never for the transforms or
              // converters; the producer is not purged for us. (The Seal
              // clears `sending` on a break or an exception.)
              if (shared) {
                r.sending.store(true);
                if (r.cancelled.load()) break;
              }
              // A record's own timestamp, else the producer's time (as Connect).
              storage::Producer::Delivery* report = &batch;
              if (commit_records) report = &batch.record_acks[static_cast<size_t>(&rec - records.data())];
              auto st = producer->send_view(rkt, converted.key, converted.value, report,
                                            rec.kafka_partition.value_or(-1), rec.timestamp_ms.value_or(0),
                                            converted.headers.empty() ? nullptr : &converted.headers);
              if (!st) throw connectors::ConnectError(st.error().to_string());
              ++sent;  // queued: its report will come, even if it is purged
              if (shared) r.sending.store(false);
              // Own producer: cut_off() sets `cancelled` before it purges.
              // If it is not set yet, the purge comes after this send and
              // removes the record if it is still queued; if it is set, the
              // purge may have run before the send, so purge again here.
              if (!shared && r.cancelled.load()) {
                rd_kafka_purge(producer->handle(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
                break;
              }
            }
            // The last record of each source partition in the poll wins.
            // Records of one partition usually come in runs, most often
            // sharing one partition object: the key is encoded only when
            // the partition changes.
            const auto& part = rec.source_partition.get();
            if (&part != slot_partition && (slot == batch.offsets.end() || slot->second.first != part)) {
              auto key = storage::encode_offset_key(id.connector, part);
              slot = batch.offsets.find(key);
              if (slot == batch.offsets.end())
                slot = batch.offsets.emplace(std::move(key), std::pair{part, storage::SourceOffset()}).first;
            }
            slot_partition = &part;
            slot->second.second = std::move(rec.source_offset);
          }
          if (auto* tm = live_metrics(env, r); tm && sent) tm->source_written(sent);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      producer->serve_deliveries();  // no-op on the shared producer (its poll thread serves them)
      if (commit_records) collect_acked();  // commit_record soon after the acks, not at the next commit
      if (deliveries->failed.load()) {
        delivery_failed_flag = true;
        std::lock_guard lk(deliveries->mu);
        throw connectors::ConnectError("Unrecoverable exception from producer send callback: " + deliveries->first);
      }
      if (Clock::now() - last_commit >= std::chrono::milliseconds(env.options.offset_flush_interval_ms)) {
        auto st = commit(/*drain_first=*/false);
        if (!st) spdlog::error("{}: offset commit failed: {}", id.to_string(), st.error().to_string());
        last_commit = Clock::now();
      }
    }
  } catch (const std::exception& e) {
    failure = trace_of(e, "source task " + id.to_string());
    report_startup(env, startup_reported, false);
  }
  // Final commit: the next owner resumes from here. Skipped when records
  // failed delivery (their offsets must not be committed) or the task was
  // cut off after its graceful timeout (commit() checks that under kafka_mu).
  if (producer && !delivery_failed_flag) {
    auto st = commit(/*drain_first=*/true);
    if (!st) spdlog::error("{}: final offset commit failed: {}", id.to_string(), st.error().to_string());
  }
  stop_task(*task, failure, "source task " + id.to_string());
  if (producer) {
    std::lock_guard lk(r.kafka_mu);
    r.producer = nullptr;
    r.on_shared_producer = false;
  }
  // Its own producer is flushed and destroyed here; batches still in flight
  // on the shared producer stay alive (their self-references) until their
  // reports, which then change nothing but their own counts.
  own_producer.reset();
  producer = nullptr;
  report_task_end(env, r, failure);
}

/// `transaction.boundary` of an exactly-once source task (KIP-618).
enum class TxnBoundary { Poll, Interval };

/// One record of the open transaction, kept until it commits: an abortable
/// failure aborts the transaction, and the same records (and offsets) are
/// sent again in a new one, since the task cannot rewind its source.
struct TxnRecord {
  rd_kafka_topic_t* topic = nullptr;
  std::optional<std::string> key, value;
  int32_t partition = -1;
  int64_t timestamp_ms = 0;
  storage::RecordHeaders headers;
};

/// Delivery reports of a transactional producer, served by the task
/// thread. A failed record makes its transaction abortable; the commit
/// reports it, so a report only has to be received.
struct TxnReports final : storage::Producer::Delivery {
  void delivered(rd_kafka_resp_err_t) override {}
};

/// The trace of a task whose transactional producer hit a fatal error
/// during `call`: fenced out by a newer producer (zombie fencing, or a new
/// owner's init_transactions), or unusable otherwise.
std::string fatal_producer_text(const ConnectorTaskId& id, const std::string& transactional_id,
                                const storage::TxnError& e, const std::string& call) {
  if (e.fenced())
    return "The producer of exactly-once source task " + id.to_string() + " (transactional.id " + transactional_id +
           ") was fenced out by a newer producer with the same transactional id, most likely because the task "
           "was started elsewhere; this instance stops and produces nothing more. " + e.to_string(call);
  return "The transactional producer of task " + id.to_string() + " (transactional.id " + transactional_id +
         ") failed fatally; the task stops. " + e.to_string(call);
}

/// An exactly-once source task (Connect's ExactlyOnceWorkerSourceTask,
/// KIP-618): the herder's fencing check, then its own transactional
/// producer (init_transactions fences any older instance), then poll →
/// transforms → converters → send inside a transaction; at each boundary
/// the source offsets of the transaction's records are sent to the offsets
/// topic by the same producer and the transaction commits, so records and
/// offsets become visible together or not at all. An abortable failure
/// aborts and sends the transaction again (up to 5 times); a fatal one
/// (fenced) fails the task at once. On a graceful stop the open
/// transaction commits; on a failure it is aborted.
template <typename Runner>
void run_exactly_once_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, Runner& r) {
  constexpr int kMaxAttempts = 5;
  const auto& id = r.id;
  std::optional<std::string> failure;
  bool startup_reported = false;
  TxnReports reports;  // declared before the producer: it outlives every report
  std::unique_ptr<storage::OffsetBackingStore> connector_offsets;  // its own offsets.storage.topic
  std::unique_ptr<storage::TransactionalProducer> txp;
  std::string txn_id = storage::task_transactional_id(env.options.group_id, id);
  std::vector<TxnRecord> txn_records;
  std::map<std::string, std::pair<storage::SourcePartition, storage::SourceOffset>> txn_offsets;
  bool in_txn = false;
  bool producer_dead = false;  // fatal error: no commit, no abort
  Clock::time_point txn_started;
  rd_kafka_topic_t* offsets_rkt = nullptr;
  storage::OffsetBackingStore* offsets_store = nullptr;  // where the offsets go (set at start)
  const int txn_timeout_ms = std::max(env.options.offset_flush_timeout_ms, 10000);
  auto cfg = [&](const std::string& key) -> std::string {
    auto it = env.connector_config.find(key);
    return it == env.connector_config.end() ? "" : trim(it->second);
  };

  auto throw_if = [&](const storage::TxnResult& e, const std::string& call) {
    if (!e) return;
    if (e->kind == storage::TxnError::Kind::Fatal) {
      producer_dead = true;
      throw connectors::ConnectError(fatal_producer_text(id, txn_id, *e, call));
    }
    throw connectors::ConnectError("task " + id.to_string() + ": " + e->to_string(call));
  };
  auto send = [&](const TxnRecord& rec) {
    auto st = txp->producer().send_view(rec.topic, rec.key, rec.value, &reports, rec.partition, rec.timestamp_ms,
                                        rec.headers.empty() ? nullptr : &rec.headers);
    if (!st) {
      throw_if(txp->fatal_error(), "produce");
      throw connectors::ConnectError(st.error().to_string());
    }
  };
  auto begin = [&] {
    throw_if(txp->begin(), "begin_transaction");
    in_txn = true;
    txn_started = Clock::now();
  };
  // Commits the open transaction with its offsets. false = the task was cut
  // off meanwhile (nothing committed: the next owner's init aborts it).
  auto commit = [&]() -> bool {
    for (int attempt = 1;; ++attempt) {
      // The records first, then their offsets: on a broker that shows open
      // transactions (librdkafka's mock) offsets never get ahead of their
      // records; on Kafka it costs one round trip, the commit is atomic anyway.
      (void)txp->producer().flush(txn_timeout_ms);
      std::vector<std::pair<std::string, std::string>> offset_records;
      storage::TxnResult e;
      {
        // Under kafka_mu, offsets included: once cut_off() returned (it may
        // have purged records during the flush above), neither an offset
        // nor a commit of this task lands, so no offset gets ahead of its
        // records on a broker that shows open transactions.
        std::lock_guard lk(r.kafka_mu);
        if (r.cancelled.load()) return false;
        offset_records.reserve(txn_offsets.size());
        for (const auto& [key, po] : txn_offsets) {
          // The offset store's write rule (every worker can read it back);
          // a refused offset fails the task and its transaction is aborted,
          // as Connect fails a flush.
          auto encoded = storage::encode_offset_record(id.connector, po.first, std::optional(po.second));
          if (!encoded)
            throw connectors::ConnectError("task " + id.to_string() + ": " + encoded.error().message);
          offset_records.emplace_back(key, encoded->value.value_or("null"));
          send(TxnRecord{offsets_rkt, key, offset_records.back().second, -1, 0, {}});
        }
        e = txp->commit(txn_timeout_ms);
        for (int retry = 0; e && e->kind == storage::TxnError::Kind::Retriable && retry < kMaxAttempts; ++retry)
          e = txp->commit(txn_timeout_ms);
      }
      if (auto* tm = live_metrics(env, r)) tm->offset_commit(!e);
      if (!e) {
        if (offsets_store) offsets_store->remember(offset_records);  // get() sees them at once
        in_txn = false;
        txn_records.clear();
        txn_offsets.clear();
        try {
          task->commit();
        } catch (const std::exception& ex) {  // logged, as Connect does
          spdlog::error("{}: exception thrown while calling task.commit(): {}", id.to_string(), ex.what());
        }
        return true;
      }
      if (e->kind == storage::TxnError::Kind::Fatal || attempt >= kMaxAttempts) throw_if(e, "commit_transaction");
      spdlog::warn("{}: {}; aborting and sending its {} records again (attempt {} of {})", id.to_string(),
                   e->to_string("commit_transaction"), txn_records.size(), attempt + 1, kMaxAttempts);
      throw_if(txp->abort(txn_timeout_ms), "abort_transaction");
      in_txn = false;
      begin();
      for (const auto& rec : txn_records) send(rec);
    }
  };

  if (env.observer) env.observer->on_task_start(env.options.worker_id, id);
  std::unique_ptr<SourceContext> ctx;
  try {
    const std::string boundary_name = cfg("transaction.boundary").empty() ? "poll" : cfg("transaction.boundary");
    std::string low = boundary_name;
    std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
    if (low != "poll" && low != "interval")
      throw connectors::ConnectError("transaction.boundary=" + boundary_name +
                                     " is not supported for this connector: it cannot define its own transaction "
                                     "boundaries; use poll or interval");
    const TxnBoundary boundary = low == "poll" ? TxnBoundary::Poll : TxnBoundary::Interval;
    int64_t interval_ms = env.options.offset_flush_interval_ms;
    if (!cfg("transaction.boundary.interval.ms").empty()) interval_ms = std::stoll(cfg("transaction.boundary.interval.ms"));
    // Zombie fencing first (Connect's preProducerCheck): no producer of this
    // task's generation may start before the older generation is fenced out.
    if (env.eos_checks.before_producer)
      if (auto st = env.eos_checks.before_producer(r.stop_requested); !st)
        throw connectors::ConnectError("zombie fencing for connector " + id.connector +
                                       " failed, so the task cannot start: " + st.error().to_string());
    storage::OffsetBackingStore* offsets = env.offsets;
    if (const auto topic = connector_offsets_topic(env.connector_config, true,
                                                   env.offsets ? env.offsets->topic() : std::string());
        topic) {
      storage::OffsetBackingStore::Options oo;
      oo.client = env.options.client;
      oo.topic = *topic;
      oo.partitions = env.options.offset_topic_partitions;
      oo.replication_factor = env.options.offset_topic_replication_factor;
      oo.client_id = "connector-offsets-" + id.to_string();
      auto store = storage::OffsetBackingStore::open(oo);
      if (!store)
        throw connectors::ConnectError("could not open the offsets topic " + *topic + ": " + store.error().to_string());
      connector_offsets = std::move(store).value();
      offsets = connector_offsets.get();
    }
    storage::ClientProps overrides = env.options.producer_overrides;
    overrides["client.id"] = "connector-producer-" + id.to_string();
    auto p = storage::TransactionalProducer::create(env.options.client, overrides, txn_id);
    if (!p) throw connectors::ConnectError("could not create the transactional producer: " + p.error().to_string());
    txp = std::move(p).value();
    if (env.producers_created) env.producers_created->fetch_add(1);
    {
      std::lock_guard lk(r.kafka_mu);
      if (r.cancelled.load()) throw connectors::ConnectError("cut off before it started");
      r.producer = txp->producer().handle();
    }
    throw_if(txp->init(txn_timeout_ms), "init_transactions");
    if (env.eos_checks.after_producer)
      if (auto st = env.eos_checks.after_producer(); !st) throw connectors::ConnectError(st.error().to_string());
    offsets_rkt = txp->producer().topic(offsets ? offsets->topic() : std::string("connect-offsets"));
    offsets_store = offsets;
    // Offsets committed by the previous owner (read_committed: only those
    // of committed transactions).
    for (auto* store : {offsets, connector_offsets ? env.offsets : nullptr})
      if (store)
        if (auto st = store->read_to_end(std::max(env.options.offset_flush_timeout_ms, 10000)); !st)
          throw connectors::ConnectError("could not read the offsets topic " + store->topic() + ": " +
                                         st.error().to_string());
    ctx = std::make_unique<SourceContext>(offsets, id, connector_offsets ? env.offsets : nullptr);
    task->start(env.task_config, *ctx);
    report_startup(env, startup_reported, true);
    report_task(env, r, r.paused.load() ? StatusState::Paused : StatusState::Running);
    bool was_paused = r.paused.load();
    ActiveTopics active_topics;
    ProducerRecordView converted;
    const std::string* topic_name = nullptr;
    rd_kafka_topic_t* rkt = nullptr;
    while (!r.stop_requested.load()) {
      bool paused = r.paused.load();
      if (paused != was_paused) {
        report_task(env, r, paused ? StatusState::Paused : StatusState::Running);
        was_paused = paused;
      }
      bool polled_some = false;
      if (!paused) {
        auto records = watched_task_call(env, r, "poll", [&] { return task->poll(); });
        if (r.cancelled.load()) break;  // cut off while in poll(): its records are dropped
        if (!records.empty()) {
          polled_some = true;
          if (auto* tm = live_metrics(env, r)) tm->source_polled(records.size());
          if (!in_txn) begin();
          size_t sent = 0;
          const connectors::OrderedJson* last_partition = nullptr;  // of `slot`, valid during this poll
          auto slot = txn_offsets.end();
          for (auto& rec : records) {
            if (env.pipeline->to_producer(rec, converted)) {
              if (!topic_name || *topic_name != rec.topic) {
                rkt = txp->producer().topic(rec.topic);
                topic_name = &rec.topic;
                active_topics.record(env, id, rec.topic);
              }
              auto& kept = txn_records.emplace_back();
              kept.topic = rkt;
              if (converted.key) kept.key.emplace(*converted.key);
              if (converted.value) kept.value.emplace(*converted.value);
              kept.partition = rec.kafka_partition.value_or(-1);
              kept.timestamp_ms = rec.timestamp_ms.value_or(0);
              kept.headers = converted.headers;
              send(kept);
              ++sent;
            }
            // The last offset of each source partition in the transaction
            // wins; the key is encoded only when the partition object changes.
            const auto& part = rec.source_partition.get();
            if (&part != last_partition) {
              auto key = storage::encode_offset_key(id.connector, part);
              slot = txn_offsets.try_emplace(std::move(key), part, storage::SourceOffset()).first;
              last_partition = &part;
            }
            slot->second.second = std::move(rec.source_offset);
          }
          topic_name = nullptr;  // `records` goes away: its topic strings with it
          if (auto* tm = live_metrics(env, r); tm && sent) tm->source_written(sent);
        }
      } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
      txp->producer().serve_deliveries();
      throw_if(txp->fatal_error(), "produce");
      const bool boundary_reached =
          in_txn && (boundary == TxnBoundary::Poll ? polled_some
                                                   : Clock::now() - txn_started >= std::chrono::milliseconds(interval_ms));
      if (boundary_reached && !commit()) break;
    }
    // A graceful stop commits what was polled (Connect's final commit).
    if (in_txn && !r.cancelled.load()) commit();
  } catch (const std::exception& e) {
    failure = trace_of(e, "source task " + id.to_string());
    report_startup(env, startup_reported, false);
    if (txp && in_txn && !producer_dead && !r.cancelled.load()) {
      if (auto a = txp->abort(txn_timeout_ms)) spdlog::warn("{}: {}", id.to_string(), a->to_string("abort_transaction"));
    }
  }
  stop_task(*task, failure, "source task " + id.to_string());
  if (txp) {
    std::lock_guard lk(r.kafka_mu);
    r.producer = nullptr;
  }
  txp.reset();
  report_task_end(env, r, failure);
}

/// Sink consumer state shared with librdkafka's rebalance callback. The
/// callback runs inside rd_kafka_consumer_poll / close: on the task thread,
/// or on the thread that cuts the task off (its consumer close). In the
/// latter case it only reads the atomics and touches no other member.
struct SinkState {
  connectors::SinkTask* task = nullptr;
  ConnectorTaskId id;
  connectors::TopicPartitionOffsets consumed;   ///< next offset per partition, written to the plugin
  connectors::TopicPartitionOffsets committed;  ///< what the group has
  std::optional<std::string> failure;  ///< a plugin's open()/close() failure, thrown by the task loop
  /// No more commits: set by the task thread before its own close.
  std::atomic<bool> cancelled{false};
  /// The runner's flag, set by the thread that cuts the task off.
  const std::atomic<bool>* abandoned = nullptr;
  /// The task's pause request (Worker::set_target_state): newly assigned
  /// partitions of a paused task are paused at once, so it fetches nothing.
  const std::atomic<bool>* paused = nullptr;
  std::mutex* kafka_mu = nullptr;      ///< the runner's kafka_mu
  int commit_timeout_ms = 5000;        ///< offset.flush.timeout.ms
  metrics::TaskMetrics* tm = nullptr;  ///< offset-commit counts; may be null

  /// Calls the plugin's open()/close() with `parts` from inside the
  /// rebalance callback (a C callback: nothing may be thrown through it);
  /// the first failure is kept in `failure` for the task loop to throw.
  template <typename Fn>
  void call_plugin(const char* what, const rd_kafka_topic_partition_list_t* parts, Fn&& fn) {
    connectors::TopicPartitions tps;
    tps.reserve(static_cast<size_t>(parts->cnt));
    for (int i = 0; i < parts->cnt; ++i) tps.emplace_back(parts->elems[i].topic, parts->elems[i].partition);
    try {
      fn(tps);
    } catch (const std::exception& e) {
      if (!failure) failure = std::string("SinkTask ") + what + " failed: " + e.what();
    }
  }

  /// True once nothing may be committed any more.
  bool discarded() const { return cancelled.load() || (abandoned && abandoned->load()); }

  /// Flushes the plugin and commits `consumed` for `only` (all if null).
  /// `locked`: the caller already holds kafka_mu (the rebalance callback,
  /// inside a consumer call); otherwise it is taken just to issue the commit,
  /// and the reply is awaited without it, so a cut-off never waits for a
  /// slow broker. A commit is issued only if the task was not cut off.
  Status commit(rd_kafka_t* rk, const rd_kafka_topic_partition_list_t* only, bool locked) {
    connectors::TopicPartitionOffsets todo;
    for (const auto& [tp, off] : consumed) {
      bool in = !only;
      for (int i = 0; only && i < only->cnt; ++i)
        if (tp.first == only->elems[i].topic && tp.second == only->elems[i].partition) in = true;
      auto c = committed.find(tp);
      if (in && (c == committed.end() || c->second != off)) todo[tp] = off;
    }
    if (todo.empty() || discarded()) return ok_status();
    try {
      // SinkTask.preCommit (default: flush, then all of them); only the
      // partitions asked about are committed.
      auto chosen = task->pre_commit(todo);
      for (auto it = chosen.begin(); it != chosen.end();)
        it = todo.count(it->first) ? std::next(it) : chosen.erase(it);
      todo = std::move(chosen);
    } catch (const std::exception& e) {
      if (tm && !discarded()) tm->offset_commit(false);
      return Error{"flush", e.what()};
    }
    if (todo.empty() || discarded()) return ok_status();
    auto* list = rd_kafka_topic_partition_list_new(static_cast<int>(todo.size()));
    for (const auto& [tp, off] : todo) rd_kafka_topic_partition_list_add(list, tp.first.c_str(), tp.second)->offset = off;
    rd_kafka_queue_t* replies = rd_kafka_queue_new(rk);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    bool issued = false;
    {
      std::unique_lock<std::mutex> lk;
      if (!locked && kafka_mu) lk = std::unique_lock(*kafka_mu);
      if (!discarded()) {
        err = rd_kafka_commit_queue(rk, list, replies, nullptr, nullptr);
        issued = true;
      }
    }
    rd_kafka_topic_partition_list_destroy(list);
    if (issued && !err) {
      err = RD_KAFKA_RESP_ERR__TIMED_OUT;
      const auto deadline = Clock::now() + std::chrono::milliseconds(commit_timeout_ms);
      while (rd_kafka_event_t* ev = rd_kafka_queue_poll(replies, remaining_ms(deadline))) {
        const bool done = rd_kafka_event_type(ev) == RD_KAFKA_EVENT_OFFSET_COMMIT;
        if (done) err = rd_kafka_event_error(ev);
        rd_kafka_event_destroy(ev);
        if (done) break;
      }
    }
    rd_kafka_queue_destroy(replies);
    if (!issued) return ok_status();  // cut off during the plugin's flush()
    const bool failed = err && err != RD_KAFKA_RESP_ERR__NO_OFFSET;
    if (tm && !discarded()) tm->offset_commit(!failed);
    if (failed) return Error{"commit", rd_kafka_err2str(err)};
    for (const auto& [tp, off] : todo) committed[tp] = off;
    return ok_status();
  }
};

void sink_rebalance_cb(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* parts, void* opaque) {
  auto* s = static_cast<SinkState*>(opaque);
  bool cooperative = std::string(rd_kafka_rebalance_protocol(rk)) == "COOPERATIVE";
  if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
    if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_assign(rk, parts));
    else rd_kafka_assign(rk, parts);
    // Eager (range) reassigns every partition on each group rebalance.
    if (s->paused && s->paused->load()) rd_kafka_pause_partitions(rk, parts);
    if (!s->discarded()) s->call_plugin("open", parts, [&](const auto& tps) { s->task->open(tps); });
    return;
  }
  if (s->abandoned && s->abandoned->load()) {
    // Cut off (maybe called from the cutting thread's close while the task
    // thread is still in the plugin): give the partitions up, commit nothing
    // and leave the task thread's maps alone.
    if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
    else rd_kafka_assign(rk, nullptr);
    return;
  }
  // Revoked (or lost): commit what was written for those partitions first,
  // so their next owner starts after it.
  if (!rd_kafka_assignment_lost(rk)) {
    auto st = s->commit(rk, parts, /*locked=*/true);
    if (!st) spdlog::warn("{}: commit on revocation failed: {}", s->id.to_string(), st.error().to_string());
  }
  // SinkTask.close after their commit: on revocation, and for every
  // partition when the task's own close() revokes them at stop.
  s->call_plugin("close", parts, [&](const auto& tps) { s->task->close(tps); });
  for (int i = 0; i < parts->cnt; ++i) {
    std::pair<std::string, int32_t> tp{parts->elems[i].topic, parts->elems[i].partition};
    s->consumed.erase(tp);
    s->committed.erase(tp);
  }
  if (cooperative) rd_kafka_error_destroy(rd_kafka_incremental_unassign(rk, parts));
  else rd_kafka_assign(rk, nullptr);
}

template <typename Runner>
void run_sink_task(TaskEnv env, std::unique_ptr<connectors::SinkTask> task, Runner& r, ConfigMap connector_config) {
  const auto& id = r.id;
  std::optional<std::string> failure;
  SinkState state;
  state.task = task.get();
  state.id = id;
  state.abandoned = &r.cancelled;
  state.paused = &r.paused;
  state.kafka_mu = &r.kafka_mu;
  state.commit_timeout_ms = env.options.offset_flush_timeout_ms;
  state.tm = env.tm.get();
  bool startup_reported = false;
  storage::RdKafkaPtr consumer;
  rd_kafka_queue_t* consumer_queue = nullptr;  ///< the consumer's queue (batch reads); released before close
  bool registered = false;  ///< r.consumer was set: cut_off() may close it
  bool started = false;

  if (env.observer) env.observer->on_task_start(env.options.worker_id, id);
  try {
    // KIP-458: refused overrides are caught when the config is validated;
    // a config written before the policy changed fails here, as Connect.
    if (auto bad = override_violations(env.options.client_override_policy, connector_config); !bad.empty())
      throw connectors::ConnectError("Client Config Overrides not allowed: " + bad.front().message);
    storage::ClientProps overrides = env.options.consumer_overrides;
    overrides["group.id"] = sink_consumer_group_id(id.connector, connector_config, env.options.consumer_overrides);
    // Range, as Connect's sink consumers effectively use. Not
    // cooperative-sticky: librdkafka < 2.3 aborts when such a consumer is
    // closed before its first assignment (librdkafka #4312), which a task
    // stopped right after it started hits. `consumer.` may override it.
    overrides.emplace("partition.assignment.strategy", "range");
    overrides["enable.auto.commit"] = "false";
    overrides["enable.auto.offset.store"] = "false";
    overrides.emplace("auto.offset.reset", "earliest");
    overrides.emplace("client.id", "connector-consumer-" + id.to_string());
    // librdkafka < 2.1 stops fetching a partition for fetch.error.backoff.ms
    // (500 ms) once the local queue holds queued.min.messages (100,000)
    // records or queued.max.messages.kbytes: a sink that drains the queue
    // faster starves for half a second each time (0.5-0.8 s gaps in
    // bench/dataplane). The queue stays bounded by the kbytes limit (64 MB);
    // 100 ms is the Java consumer's retry.backoff.ms. `consumer.` overrides.
    overrides.emplace("queued.min.messages", "1000000");
    overrides.emplace("fetch.error.backoff.ms", "100");
    // The connector's consumer.override.* last (Connect's order), except
    // that the framework keeps committing offsets itself.
    for (auto& [k, v] : connector_client_overrides(connector_config, kConsumerOverridePrefix))
      if (k != "enable.auto.commit" && k != "enable.auto.offset.store") overrides[k] = v;
    auto c = storage::make_client(RD_KAFKA_CONSUMER, env.options.client, overrides, [&](rd_kafka_conf_t* conf) {
      rd_kafka_conf_set_rebalance_cb(conf, &sink_rebalance_cb);
      rd_kafka_conf_set_opaque(conf, &state);
    });
    if (!c) throw connectors::ConnectError("could not create consumer: " + c.error().to_string());
    consumer = std::move(c).value();
    rd_kafka_poll_set_consumer(consumer.get());
    consumer_queue = rd_kafka_queue_get_consumer(consumer.get());
    {
      std::lock_guard lk(r.kafka_mu);
      if (r.cancelled.load()) throw connectors::ConnectError("cut off before it started");
      r.consumer = consumer.get();
      registered = true;
    }

    task->start(env.task_config);
    started = true;
    report_startup(env, startup_reported, true);
    std::vector<std::string> topics;
    if (auto it = connector_config.find("topics"); it != connector_config.end() && !it->second.empty())
      topics = kc::split_comma_list(it->second);
    else if (auto rx = connector_config.find("topics.regex"); rx != connector_config.end())
      topics = {rx->second.rfind('^', 0) == 0 ? rx->second : "^" + rx->second};
    auto* sub = rd_kafka_topic_partition_list_new(static_cast<int>(topics.size()));
    for (const auto& t : topics) rd_kafka_topic_partition_list_add(sub, t.c_str(), RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    {
      std::lock_guard lk(r.kafka_mu);
      if (!r.cancelled.load()) err = rd_kafka_subscribe(consumer.get(), sub);
    }
    rd_kafka_topic_partition_list_destroy(sub);
    if (err) throw connectors::ConnectError(std::string("subscribe failed: ") + rd_kafka_err2str(err));

    report_task(env, r, r.paused.load() ? StatusState::Paused : StatusState::Running);
    bool was_paused = false;
    auto last_commit = Clock::now();
    ActiveTopics active_topics;
    std::vector<rd_kafka_message_t*> msgs(static_cast<size_t>(std::max(1, env.options.sink_max_batch)));
    std::vector<connectors::SinkRecord> batch;
    batch.reserve(msgs.size());
    struct ReadEnd {
      std::string topic;
      int32_t partition;
      int64_t offset;  ///< the last consumed in this read
    };
    std::vector<ReadEnd> read_ends;  ///< per run of one partition in the read
    const rd_kafka_topic_t* topic_rkt = nullptr;  ///< the topic handle `topic` was read from
    std::string topic;
    while (!r.stop_requested.load()) {
      bool paused = r.paused.load();
      if (paused != was_paused) {
        {
          std::lock_guard lk(r.kafka_mu);
          rd_kafka_topic_partition_list_t* assigned = nullptr;
          if (!r.cancelled.load() && rd_kafka_assignment(consumer.get(), &assigned) == RD_KAFKA_RESP_ERR_NO_ERROR &&
              assigned) {
            if (paused) rd_kafka_pause_partitions(consumer.get(), assigned);
            else rd_kafka_resume_partitions(consumer.get(), assigned);
            rd_kafka_topic_partition_list_destroy(assigned);
          }
        }
        report_task(env, r, paused ? StatusState::Paused : StatusState::Running);
        was_paused = paused;
      }
      // One lock and two client calls per batch (a cut-off waits at most
      // for them): the first message waits up to 100 ms (and serves
      // rebalances); the rest of the batch is what is already fetched.
      size_t got = 0;
      {
        std::lock_guard lk(r.kafka_mu);
        if (!r.cancelled.load()) {
          if (rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer.get(), 100)) {
            msgs[0] = m;
            got = 1;
            if (msgs.size() > 1) {
              const ssize_t more = rd_kafka_consume_batch_queue(consumer_queue, 0, msgs.data() + 1, msgs.size() - 1);
              if (more > 0) got += static_cast<size_t>(more);
            }
          }
        }
      }
      if (state.failure) throw connectors::ConnectError(*state.failure);
      batch.clear();
      read_ends.clear();
      try {
        for (size_t i = 0; i < got; ++i) {
          rd_kafka_message_t* m = msgs[i];
          if (m->err) {
            if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
              spdlog::warn("{}: consumer: {}", id.to_string(), rd_kafka_message_errstr(m));
            continue;
          }
          if (m->rkt != topic_rkt) {
            topic_rkt = m->rkt;
            topic = rd_kafka_topic_name(m->rkt);
          }
          // Every consumed record counts as handled once put() returns,
          // including those skipped or dropped below; a transform may
          // rename the topic, so the consumed position is kept apart.
          if (read_ends.empty() || read_ends.back().partition != m->partition || read_ends.back().topic != topic)
            read_ends.push_back(ReadEnd{topic, m->partition, m->offset});
          else
            read_ends.back().offset = m->offset;
          auto& rec = batch.emplace_back();
          if (!env.pipeline->from_consumer(m, topic, rec)) batch.pop_back();
        }
      } catch (...) {
        for (size_t i = 0; i < got; ++i) rd_kafka_message_destroy(msgs[i]);
        throw;
      }
      for (size_t i = 0; i < got; ++i) rd_kafka_message_destroy(msgs[i]);
      if (!read_ends.empty() && !r.cancelled.load()) {
        if (auto* tm = live_metrics(env, r)) tm->sink_read(got);
        bool put_done = batch.empty();
        for (int64_t backoff_ms = 100; !put_done;) {
          try {
            watched_task_call(env, r, "put", [&] {
              task->put(batch);
              return true;
            });
            put_done = true;
          } catch (const connectors::RetriableError& e) {
            // Connect hands the same records to put() again after a
            // backoff, for as long as the task runs.
            spdlog::warn("{}: put() failed with a retriable error, retrying in {} ms: {}", id.to_string(), backoff_ms,
                         secrets::scrub(e.what(), env.secret_values));
            if (auto* tm = live_metrics(env, r)) tm->error_retry();
            std::this_thread::sleep_for(std::chrono::milliseconds(backoff_ms));
            backoff_ms = std::min<int64_t>(backoff_ms * 2, 10000);
            if (r.stop_requested.load() || r.cancelled.load()) break;
          }
        }
        if (put_done) {
          if (auto* tm = live_metrics(env, r)) tm->sink_sent(batch.size());
          // The next offset per partition: records of a partition come in
          // runs, so the map is touched once per run, not per record.
          for (const auto& end : read_ends) {
            state.consumed[{end.topic, end.partition}] = end.offset + 1;
            // No topic-status write either once cut off during put().
            if (!r.cancelled.load()) active_topics.record(env, id, end.topic);
          }
        }
      }
      if (Clock::now() - last_commit >= std::chrono::milliseconds(env.options.offset_flush_interval_ms)) {
        auto st = state.commit(consumer.get(), nullptr, /*locked=*/false);
        if (!st) spdlog::error("{}: offset commit failed: {}", id.to_string(), st.error().to_string());
        last_commit = Clock::now();
      }
    }
  } catch (const std::exception& e) {
    failure = trace_of(e, "sink task " + id.to_string());
    report_startup(env, startup_reported, false);
  }
  if (consumer) {
    // Skipped (inside commit) when the task was cut off.
    if (started && !failure) {
      auto st = state.commit(consumer.get(), nullptr, /*locked=*/false);
      if (!st) spdlog::error("{}: final offset commit failed: {}", id.to_string(), st.error().to_string());
    }
    bool close_here;
    {
      std::lock_guard lk(r.kafka_mu);
      state.cancelled.store(true);  // close() revokes everything; nothing more to write
      close_here = !registered || r.consumer != nullptr;  // else cut_off() already closed it
      r.consumer = nullptr;
    }
    if (consumer_queue) rd_kafka_queue_destroy(consumer_queue);
    if (close_here) rd_kafka_consumer_close(consumer.get());
    consumer.reset();
  }
  if (started) stop_task(*task, failure, "sink task " + id.to_string());
  report_task_end(env, r, failure);
}

}  // namespace

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
  for (auto& c : cc) {
    std::lock_guard jl(c->join_mu);
    if (c->thread.joinable()) c->thread.join();
  }
}

void Worker::set_observer(TaskObserver* observer) { observer_.store(observer); }

Status Worker::start_connector(const std::string& name, const ConfigMap& config_in, TargetState target) {
  std::shared_ptr<metrics::WorkerMetrics> wm = options_.metrics;
  if (wm) wm->connector_startup_attempt();
  auto early_fail = [&wm](Error e) -> Status {
    if (wm) wm->connector_startup_result(false);
    return e;
  };
  ConfigMap raw = config_in;
  raw.emplace("name", name);
  auto resolved = resolve_config(raw);
  if (!resolved) return early_fail(resolved.error());
  const ConfigMap& config = resolved->config;
  auto cls = config.find("connector.class");
  if (cls == config.end()) return early_fail(Error{"connector.class", "missing connector.class for connector " + name});
  // Connect's "ConnectorConfig values" dump, as written (placeholders, not
  // their secrets); PASSWORD keys of the plugin's ConfigDef read [hidden].
  spdlog::info("{}", secrets::describe_config("connector " + name + " config values", raw,
                                              registry_->secret_predicate(raw)));
  auto created = registry_->create(cls->second);
  if (!created) return early_fail(created.error());
  std::shared_ptr<connectors::Connector> connector = std::move(created).value();
  // What a failure text must never quote: the resolved values of its secret
  // keys and of every provider-resolved key.
  auto hidden = std::make_shared<const std::vector<std::string>>(
      secrets::secret_values(config, registry_->secret_predicate(raw, resolved->resolved_keys)));

  auto runner = std::make_shared<ConnectorRunner>();
  runner->name = name;
  runner->raw_config = raw;
  runner->resolved = *resolved;
  std::lock_guard map_lock(mu_);  // held until the thread handle is stored
  if (connectors_.count(name))
    return early_fail(Error{"connector", "connector " + name + " is already running on this worker"});
  connectors_[name] = runner;
  connector_instances_[name] = connector;
  connector_configs_[name] = config;
  update_running_metrics_locked();
  StatusListener* status = status_;
  auto context = std::make_shared<RunnerContext>(
      name, options_.on_task_reconfiguration, [runner, status, hidden](const std::string& message) {
        {
          std::lock_guard lk(runner->mu);
          if (runner->failed) return;
          runner->failed = true;
        }
        const std::string shown = secrets::scrub(message, *hidden);
        spdlog::error("connector {} raised an error: {}", runner->name, shown);
        if (status && !runner->cancelled.load()) status->on_connector_status(runner->name, StatusState::Failed, shown);
      });
  // tasks.max outside 1..tasks.max.limit fails the connector before its
  // plugin runs: no task configs are ever generated for it.
  auto tasks_max = connectors::parse_tasks_max(config, options_.tasks_max_limit);
  std::optional<std::string> bad_tasks_max;
  if (!tasks_max) bad_tasks_max = "Connector " + name + " cannot start: " + tasks_max.error().message;
  runner->thread = std::thread([runner, connector, context, config, target, status, wm, hidden, bad_tasks_max,
                                watchdog = &watchdog_, call_ms = options_.connector_call_timeout_ms] {
    auto report = [&](StatusState s, const std::optional<std::string>& trace) {
      if (status && !runner->cancelled.load()) status->on_connector_status(runner->name, s, trace);
    };
    bool ok = true;
    try {
      if (bad_tasks_max) throw connectors::ConnectError(*bad_tasks_max);
      connector->initialize(*context);
      {
        // start() past connector.call.timeout.ms: FAILED now, naming the call.
        const std::string why = call_timeout_message("connector " + runner->name, "start", call_ms);
        auto guard = watchdog->watch(call_ms, [runner, status, why] {
          {
            std::lock_guard lk(runner->mu);
            if (runner->failed) return;
            runner->failed = true;
          }
          spdlog::error("{}", why);
          if (status && !runner->cancelled.load()) status->on_connector_status(runner->name, StatusState::Failed, why);
        });
        connector->start(config);
        if (guard.fired()) throw connectors::ConnectError(why);
      }
      if (wm) wm->connector_startup_result(true);
      report(target == TargetState::Paused ? StatusState::Paused : StatusState::Running, std::nullopt);
    } catch (const std::exception& e) {
      ok = false;
      if (wm) wm->connector_startup_result(false);
      auto trace = secrets::scrub(trace_of(e, "start of connector " + runner->name), *hidden);
      spdlog::error("connector {} failed: {}", runner->name, trace);
      {
        std::lock_guard lk(runner->mu);
        runner->failed = true;
      }
      report(StatusState::Failed, trace);
    }
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
    if (ok) {
      try {
        connector->stop();
        report(StatusState::Unassigned, std::nullopt);
      } catch (const std::exception& e) {
        report(StatusState::Failed, secrets::scrub(trace_of(e, "stop of connector " + runner->name), *hidden));
      }
    }
    std::lock_guard lk(runner->mu);
    runner->finished = true;
    runner->cv.notify_all();
  });
  return ok_status();
}

Result<std::vector<ConfigMap>> Worker::connector_task_configs(const std::string& name, int timeout_ms) {
  std::shared_ptr<ConnectorRunner> runner;
  std::shared_ptr<connectors::Connector> connector;
  ConfigMap config;
  {
    std::lock_guard lk(mu_);
    auto it = connectors_.find(name);
    if (it == connectors_.end()) return Error{"connector", "connector " + name + " is not running on this worker"};
    runner = it->second;
    connector = connector_instances_[name];
    config = connector_configs_[name];
  }
  auto tasks_max = connectors::parse_tasks_max(config, options_.tasks_max_limit);
  if (!tasks_max) return tasks_max.error();
  auto promise = std::make_shared<std::promise<Result<std::vector<ConfigMap>>>>();
  auto future = promise->get_future();
  runner->post([promise, connector, runner, tasks = *tasks_max, limit = options_.tasks_max_limit]() {
    bool failed;
    {
      std::lock_guard lk(runner->mu);
      failed = runner->failed;
    }
    if (failed) {
      promise->set_value(Error{"connector", "connector " + runner->name + " failed to start"});
      return;
    }
    try {
      auto configs = connectors::generate_task_configs(*connector, runner->name, tasks, limit);
      if (configs) providers::restore_placeholders(runner->raw_config, runner->resolved, *configs);
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
      bool failed;
      {
        std::lock_guard lk(runner->mu);
        failed = runner->failed;
      }
      if (status && !failed && !runner->cancelled.load())
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

Result<std::unique_ptr<RecordPipeline>> Worker::make_task_pipeline(const ConnectorTaskId& id,
                                                                    const ConfigMap& connector_config, bool sink,
                                                                    const std::atomic<bool>& stop_requested) const {
  PipelineDefaults defaults{options_.key_converter,        options_.value_converter,
                            options_.header_converter,     options_.key_converter_config,
                            options_.value_converter_config, options_.header_converter_config};
  // The dead letter queue's producer and topic are made on the first
  // record that needs them, on the task's thread.
  ErrorHandler::DlqSend dlq;
  if (sink) {
    // The producer is made on first use; the topic check and the producer's
    // creation (broker I/O, up to 30 s) run outside the lock, so a second
    // caller never waits on I/O behind it (one of two racing creations is
    // dropped).
    struct DlqState {
      std::mutex mu;
      std::shared_ptr<storage::Producer> producer;
    };
    auto state = std::make_shared<DlqState>();
    const auto client = options_.client;
    const auto overrides = options_.producer_overrides;
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
        auto p = storage::Producer::create(client, overrides);
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
  return make_record_pipeline(connector_config, defaults, sink, id, nullptr, &stop_requested, std::move(dlq),
                              make_record_transforms);
}

Result<providers::ResolvedConfig> Worker::resolve_config(const ConfigMap& config) const {
  if (!options_.config_transformer) return providers::ResolvedConfig{config, {}};
  return options_.config_transformer->transform(config);
}

Status Worker::start_task(const ConnectorTaskId& id, const ConfigMap& connector_config_in,
                          const ConfigMap& task_config_in, TargetState target, ExactlyOnceTaskChecks eos_checks) {
  if (options_.metrics) options_.metrics->task_startup_attempt();
  auto early_fail = [this](Error e) -> Status {
    if (options_.metrics) options_.metrics->task_startup_result(false);
    return e;
  };
  // Placeholders resolve here, on the herder's apply strand (file reads),
  // for the connector and task configs alike.
  auto connector_resolved = resolve_config(connector_config_in);
  if (!connector_resolved) return early_fail(connector_resolved.error());
  auto task_resolved = resolve_config(task_config_in);
  if (!task_resolved) return early_fail(task_resolved.error());
  const ConfigMap& connector_config = connector_resolved->config;
  const ConfigMap& task_config = task_resolved->config;
  auto cls = connector_config.find("connector.class");
  if (cls == connector_config.end())
    return early_fail(Error{"connector.class", "missing connector.class for task " + id.to_string()});
  auto created = registry_->create(cls->second);
  if (!created) return early_fail(created.error());
  auto connector = std::move(created).value();

  TaskEnv env;
  env.options = options_;
  env.offsets = offsets_;
  env.status = status_;
  env.observer = observer_.load();
  env.task_config = task_config;
  {
    // A task failure text must not quote a secret of its configs.
    auto hidden = secrets::secret_values(
        connector_config, registry_->secret_predicate(connector_config_in, connector_resolved->resolved_keys));
    auto task_hidden = secrets::secret_values(
        task_config, registry_->secret_predicate(connector_config_in, task_resolved->resolved_keys));
    hidden.insert(hidden.end(), task_hidden.begin(), task_hidden.end());
    std::sort(hidden.begin(), hidden.end(), [](const auto& a, const auto& b) { return a.size() > b.size(); });
    env.secret_values = std::move(hidden);
  }
  spdlog::debug("{}", secrets::describe_config("task " + id.to_string() + " config values", task_config_in,
                                               registry_->secret_predicate(connector_config_in)));
  env.on_running_changed = [this] {
    std::lock_guard lk(mu_);
    update_running_metrics_locked();
  };
  env.producers_created = &producers_created_;
  env.watchdog = &watchdog_;
  auto runner = std::make_shared<TaskRunner>();
  auto pipeline =
      make_task_pipeline(id, connector_config, connector->type() == ConnectorType::Sink, runner->stop_requested);
  if (!pipeline) return early_fail(pipeline.error());
  env.pipeline = std::move(pipeline).value();

  runner->id = id;
  runner->paused.store(target != TargetState::Started);
  std::unique_ptr<connectors::SourceTask> source;
  std::unique_ptr<connectors::SinkTask> sink;
  if (connector->type() == ConnectorType::Source) {
    source = connector->create_source_task();
    if (!source) return early_fail(Error{"connector.class", cls->second + " created no source task"});
    // At-least-once source tasks share the Worker's producer when asked to;
    // exactly-once ones keep their own (a transaction is per producer).
    if (options_.producer_shared && !options_.exactly_once_source) {
      auto p = shared_producer();
      if (p) env.shared_producer = *p;
      else env.shared_producer_error = p.error().to_string();  // the task fails with it, as with its own producer
    }
  } else {
    sink = connector->create_sink_task();
    if (!sink) return early_fail(Error{"connector.class", cls->second + " created no sink task"});
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
    env.connector_config = connector_config;
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
    runner->thread = std::thread(
        [env = std::move(env), task = std::move(sink), runner, connector_config]() mutable {
          run_sink_task(std::move(env), std::move(task), *runner, connector_config);
          runner->mark_finished();
        });
  }
  return ok_status();
}

void Worker::request_stop_task(const ConnectorTaskId& id) {
  std::lock_guard lk(mu_);
  auto it = tasks_.find(id);
  if (it != tasks_.end()) it->second->stop_requested.store(true);
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

void Worker::update_running_metrics_locked() {
  if (!options_.metrics) return;
  // Tasks count once started (RUNNING or PAUSED), not while they start.
  auto running = std::count_if(tasks_.begin(), tasks_.end(), [](const auto& t) { return t.second->running.load(); });
  options_.metrics->set_running(connectors_.size(), static_cast<size_t>(running));
}

size_t Worker::stuck_threads() const {
  std::lock_guard lk(mu_);
  size_t n = 0;
  for (const auto& t : cancelled_tasks_) {
    std::lock_guard tl(t->mu);
    n += t->finished ? 0 : 1;
  }
  for (const auto& c : cancelled_connectors_) {
    std::lock_guard cl(c->mu);
    n += c->finished ? 0 : 1;
  }
  return n;
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

Result<storage::Producer*> Worker::shared_producer() {
  std::lock_guard lk(shared_mu_);
  if (shared_producer_) return shared_producer_.get();
  // The per-task producers' settings; one client for all tasks.
  storage::ClientProps overrides = options_.producer_overrides;
  overrides.emplace("acks", "all");
  overrides.emplace("client.id", "connector-producer-shared");
  // Its own poll thread serves every task's delivery reports: no task
  // thread can serve them for the others.
  auto p = storage::Producer::create(options_.client, overrides, storage::Producer::Deliveries::PollThread);
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
