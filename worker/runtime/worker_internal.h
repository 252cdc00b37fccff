#pragma once
// Internal to worker/runtime: the runners, a task thread's environment and the frame its loop runs in.

#include <condition_variable>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "common/stop_wait.h"
#include "worker/runtime/worker.h"
#include "worker/storage/broker_check.h"

namespace kc::runtime {

using Clock = std::chrono::steady_clock;

/// A plugin exception as a status trace: "<ConnectError>: what\n\tat where".
inline std::string trace_of(const std::exception& e, const std::string& where) {
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

/// Milliseconds left until `deadline`, 0 once it passed.
inline int remaining_ms(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::max<int64_t>(0, left));
}

/// What a plugin call past connector.call.timeout.ms reports: "<who>:
/// <call>() did not return within <ms> ms (connector.call.timeout.ms)".
std::string call_timeout_message(const std::string& who, const char* call, int timeout_ms);

/// The thread of a task or connector runner and how it ends: the thread
/// marks itself finished (under `mu`, waking `cv`) as its last act; others
/// wait for that with a deadline, then join it (once, under `join_mu`).
struct RunnerThread {
  std::mutex mu;
  std::condition_variable cv;
  bool finished = false;  ///< guarded by mu
  std::mutex join_mu;
  std::thread thread;

  /// Waits until the thread finished, then joins it; false at `deadline`.
  bool wait_until(Clock::time_point deadline) {
    std::unique_lock lk(mu);
    if (!cv.wait_until(lk, deadline, [&] { return finished; })) return false;
    lk.unlock();
    join();
    return true;
  }
  void join() {
    std::lock_guard jl(join_mu);
    if (thread.joinable()) thread.join();
  }
  bool is_finished() {
    std::lock_guard lk(mu);
    return finished;
  }
  /// The thread's last act.
  void mark_finished() {
    std::lock_guard lk(mu);
    finished = true;
    cv.notify_all();
  }
};

/// Shared state of one task thread.
struct TaskRunner : RunnerThread {
  ConnectorTaskId id;
  /// The task's stop request. Its token wakes every wait of the task
  /// thread at once (retry backoffs, the paused nap, zombie fencing), so a
  /// stop never waits out a sleep.
  std::stop_source stop;
  /// The task missed its graceful stop: it is forgotten by the Worker and cut
  /// off from Kafka; whatever it does later is discarded (no status, no
  /// metrics, no produce, no offset commit).
  std::atomic<bool> cancelled{false};
  std::atomic<bool> paused{false};
  /// Started and not yet ended: the last state it reported is RUNNING or
  /// PAUSED (kconnectd_worker_tasks_running counts these only).
  std::atomic<bool> running{false};

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
  /// The task thread clears it with end_send(), which wakes that wait.
  std::atomic<bool> sending{false};

  /// The task thread handed its record to the shared producer: clears
  /// `sending` and wakes a cut-off waiting in cancel_sends().
  void end_send() {
    sending.store(false);
    sending.notify_all();
  }

  /// Marks the task stopping and cancelled, and waits until it is not in
  /// the middle of handing records to a shared producer (at most one
  /// send_view, which waits at most 5 s while librdkafka's queue is full).
  void cancel_sends() {
    stop.request_stop();
    cancelled.store(true);
    sending.wait(true);  // atomic wait: end_send() wakes it
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

};

/// Shared state of one connector thread: runs queued jobs in order.
struct ConnectorRunner : RunnerThread {
  std::string name;
  std::atomic<bool> cancelled{false};
  std::deque<std::function<void()>> jobs;
  bool stop_requested = false;  ///< guarded by mu, as the jobs
  bool failed = false;  ///< start() threw; guarded by mu
  /// The parsed config it started from: its `raw` (placeholders) and
  /// resolved `values` give task configs their placeholders back
  /// (providers::restore_placeholders).
  ConnectorConfigPtr config;

  void post(std::function<void()> job) {
    std::lock_guard lk(mu);
    jobs.push_back(std::move(job));
    cv.notify_all();
  }
  /// Marks the connector failed; false if it was already (the first
  /// failure is the one reported).
  bool mark_failed() {
    std::lock_guard lk(mu);
    return !std::exchange(failed, true);
  }
  bool has_failed() {
    std::lock_guard lk(mu);
    return failed;
  }
};

/// A task client's overrides: `worker` (the worker's `producer.*` or
/// `consumer.*`), then `connector` (the connector's `<prefix>*` keys, prefix
/// stripped; the connector's win, as in Connect's Worker.baseProducerConfigs
/// and baseConsumerConfigs), its Kafka `sasl.jaas.config` translated to
/// librdkafka's sasl.username / sasl.password
/// (config::translate_jaas_config). Does not check the override policy
/// (ConnectorConfig::override_violations). Throws connectors::ConnectError
/// "<prefix>sasl.jaas.config: <why>" for JAAS text it cannot use.
storage::ClientProps connector_client_props(const storage::ClientProps& worker,
                                            const std::map<std::string, std::string>& connector,
                                            std::string_view prefix);

/// connector_client_props for `config`'s task producers and its sink
/// tasks' dead letter queue: the worker's `producer.*` (`options`), then
/// the connector's `producer.override.*`. Throws as connector_client_props.
storage::ClientProps connector_producer_overrides(const WorkerOptions& options, const ConnectorConfig& config);

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
  /// creation.
  ExactlyOnceTaskChecks eos_checks;
  /// The connector's typed config, parsed once by start_task: the loops
  /// read its fields (client overrides, sink topics and group, transaction
  /// boundary, offsets topic), never the map.
  std::shared_ptr<const ConnectorConfig> connector_config;
  /// The Worker's watchdog of plugin calls (poll, put); outlives the task thread.
  CallWatchdog* watchdog = nullptr;
};

/// A source task's context: committed offsets, and naps that end on the
/// task's stop token (TaskRunner::stop).
class SourceContext : public connectors::SourceTaskContext {
 public:
  /// `primary` (may be null) is read first, then `fallback`: a connector
  /// with its own offsets.storage.topic falls back to the worker's topic,
  /// as Connect's ConnectorOffsetBackingStore does.
  SourceContext(storage::OffsetBackingStore* primary, ConnectorTaskId id, std::stop_token stop,
                storage::OffsetBackingStore* fallback = nullptr)
      : primary_(primary), fallback_(fallback), id_(std::move(id)), stop_(std::move(stop)) {}
  std::optional<connectors::OrderedJson> offset(const connectors::OrderedJson& partition) const override {
    for (auto* store : {primary_, fallback_})
      if (store)
        if (auto o = store->get(id_.connector, partition)) return o;
    return std::nullopt;
  }
  const std::string& connector_name() const override { return id_.connector; }
  int32_t task_number() const override { return id_.task; }
  bool wait_stopped(std::chrono::milliseconds timeout) const override { return wait_for_stop(stop_, timeout); }

 private:
  storage::OffsetBackingStore* primary_;
  storage::OffsetBackingStore* fallback_;
  ConnectorTaskId id_;
  std::stop_token stop_;
};

/// A sink task's context: naps that end on the task's stop token
/// (TaskRunner::stop).
class SinkContext : public connectors::SinkTaskContext {
 public:
  explicit SinkContext(std::stop_token stop) : stop_(std::move(stop)) {}
  bool wait_stopped(std::chrono::milliseconds timeout) const override { return wait_for_stop(stop_, timeout); }

 private:
  std::stop_token stop_;
};

/// Reports task state `s` (and `trace`) to the status listener and the
/// task's metrics, and recounts the Worker's running tasks when the task
/// starts or stops running. Nothing once the task was cancelled (cut off).
void report_task(const TaskEnv& env, TaskRunner& r, StatusState s, const std::optional<std::string>& trace = {});

/// The end of a task thread: a failure (secrets scrubbed) is logged and
/// reported FAILED with its trace, a clean end UNASSIGNED; the late end of
/// an abandoned (cut off) task is only logged, since its failure (often the
/// purge's delivery errors) is nobody's business any more. Then the
/// observer hears of the stop.
void report_task_end(const TaskEnv& env, TaskRunner& r, std::optional<std::string> failure);

/// Startup outcome of a task, counted once (metrics).
void report_startup(const TaskEnv& env, bool& reported, bool ok);

/// The task's metrics, or null once it was cancelled (late results of an
/// abandoned task change no metrics).
inline metrics::TaskMetrics* live_metrics(const TaskEnv& env, const TaskRunner& r) {
  return r.cancelled.load() ? nullptr : env.tm.get();
}

/// Runs one plugin call of task `r` under connector.call.timeout.ms: at
/// the deadline the task is reported FAILED naming the call (from the
/// watchdog's thread; the call goes on); when the call returns late, the
/// task ends FAILED with the same message. Task thread.
template <typename Fn>
auto watched_task_call(const TaskEnv& env, TaskRunner& r, const char* call, Fn&& fn) {
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

/// The frame of one task thread, shared by the three task loops: it tells
/// the observer, runs start(), reports the task RUNNING or PAUSED, follows
/// pause requests, calls step() until a stop is requested, and turns an
/// exception into the task's failure (trace at `what`); release() then
/// gives back the plugin and the Kafka client, and the end is reported
/// (report_task_end). Task thread only.
class TaskLoop {
 public:
  /// `what` names the task in traces: "source task <id>" / "sink task <id>".
  TaskLoop(TaskEnv env, TaskRunner& r, std::string what)
      : env_(std::move(env)), r_(r), id_(r.id), what_(std::move(what)) {}
  virtual ~TaskLoop() = default;
  TaskLoop(const TaskLoop&) = delete;
  TaskLoop& operator=(const TaskLoop&) = delete;

  /// Runs the task to its end (stop requested, failed or cut off).
  void run();

 protected:
  /// Creates the client and starts the plugin; calls started() once the
  /// plugin's start() returned. Throws on failure.
  virtual void start() = 0;
  /// A pause or resume request arrived (before its state is reported).
  virtual void target_state_changed(bool /*paused*/) {}
  /// One pass of the loop; false leaves it (cut off). Throws on failure.
  virtual bool step(bool paused) = 0;
  /// After the loop ended without a failure; may throw (a failure).
  virtual void stopping() {}
  /// After a failure (`failure_` is set).
  virtual void failed() {}
  /// Always last: final commit, the plugin's stop(), the client's close.
  virtual void release() = 0;

  /// The plugin started: counted once as a startup success.
  void started() { report_startup(env_, startup_reported_, true); }
  /// Registers the task's Kafka client for cut_off() under kafka_mu
  /// (`set` stores it in the runner). Throws if the task was cut off
  /// before it started.
  template <typename Fn>
  void claim_client(Fn&& set) {
    std::lock_guard lk(r_.kafka_mu);
    if (r_.cancelled.load()) throw connectors::ConnectError("cut off before it started");
    set();
  }

  TaskEnv env_;
  TaskRunner& r_;
  const ConnectorTaskId& id_;
  const std::string what_;
  std::optional<std::string> failure_;
  /// The first pass re-applies a pause requested before start (sink tasks:
  /// their assigned partitions must be paused), instead of taking the
  /// state at start as the last one applied.
  bool reapply_pause_ = false;

 private:
  bool startup_reported_ = false;
};

/// Offset key (storage::encode_offset_key) -> the last source partition and
/// offset of the records seen for it.
using SourceOffsets = std::map<std::string, std::pair<storage::SourcePartition, storage::SourceOffset>>;

/// The base of both source task loops: the plugin task, its poll, its
/// commit() and stop(), the topic handles and the source offsets of the
/// records it sends (source_task.cpp).
class SourceTaskLoop : public TaskLoop {
 public:
  SourceTaskLoop(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r)
      : TaskLoop(std::move(env), r, "source task " + r.id.to_string()), task_(std::move(task)) {}

 protected:
  /// One poll() under connector.call.timeout.ms, counted in the metrics;
  /// while paused, a 100 ms nap and no records. nullopt: the task was cut
  /// off meanwhile (its records are dropped).
  std::optional<std::vector<connectors::SourceRecord>> poll_records(bool paused);
  /// SourceTask.commit once offsets are written; as Connect, its failure
  /// is logged and the task goes on.
  void commit_task();
  /// The producer's handle of `topic` (a record's), kept while the records
  /// of one poll share it; the first use of a topic is reported active.
  rd_kafka_topic_t* topic_handle(storage::Producer& producer, const std::string& topic);
  /// Forgets the handle's topic name: the records it pointed into go away.
  void end_of_poll() { topic_name_ = nullptr; }
  /// The overrides of this task's own producer: the worker's `producer.*`,
  /// then the connector's `producer.override.*` (KIP-458, Connect's
  /// Worker.baseProducerConfigs: the connector's win). Throws
  /// connectors::ConnectError "Client Config Overrides not allowed: ..."
  /// when the worker's policy refuses one of the connector's overrides (a
  /// config written before the policy changed), as the sink consumer does.
  storage::ClientProps own_producer_overrides() const;
  /// An observer for a producer made from the worker's client settings and
  /// `overrides` (its ClientErrorObserver sees the same security settings).
  std::shared_ptr<storage::ClientErrorObserver> producer_observer(const storage::ClientProps& overrides) const;
  /// Throws connectors::ConnectError "producer: <classified line>" when
  /// `producer`'s observer (if any) has classified a cause no retry fixes
  /// (credentials, TLS, ACLs; storage::fails_running_client). It first
  /// serves the producer's queued reports when `serve` (a producer whose
  /// deliveries this thread serves), so an error reported during a blocking
  /// call is seen. `shared`: the Worker's shared producer, where a denied
  /// topic is left to the delivery reports of the task that sent to it (so
  /// it fails only that task), while a cause of the client itself fails
  /// every task on it.
  void throw_if_producer_fatal(storage::Producer& producer, bool shared, bool serve = false) const;
  /// Keeps `rec`'s source offset as the last of its source partition in
  /// `into` (moves it out of `rec`). Records of one partition usually come
  /// in runs sharing one partition object, so the key is encoded only when
  /// the partition changes. `new_poll` starts over (a new `into` or poll).
  void keep_offset(SourceOffsets& into, connectors::SourceRecord& rec, bool new_poll);

  std::unique_ptr<connectors::SourceTask> task_;
  ProducerRecordView converted_;  ///< reused: its buffers keep their capacity

 private:
  ActiveTopics active_topics_;
  const std::string* topic_name_ = nullptr;  ///< of topic_rkt_
  rd_kafka_topic_t* topic_rkt_ = nullptr;
  SourceOffsets::iterator slot_;                            ///< the previous record's partition
  const storage::SourcePartition* slot_partition_ = nullptr;  ///< its partition object
};

/// An at-least-once source task (Connect's WorkerSourceTask): poll →
/// transforms → converters → produce; offsets of acknowledged records are
/// committed every offset.flush.interval.ms and on stop (source_task.cpp).
void run_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r);

/// An exactly-once source task (Connect's ExactlyOnceWorkerSourceTask,
/// KIP-618; exactly_once_source_task.cpp).
void run_exactly_once_source_task(TaskEnv env, std::unique_ptr<connectors::SourceTask> task, TaskRunner& r);

/// A sink task (Connect's WorkerSinkTask): consume → converters →
/// transforms → put; offsets committed after flush (sink_task.cpp).
void run_sink_task(TaskEnv env, std::unique_ptr<connectors::SinkTask> task, TaskRunner& r);

}  // namespace kc::runtime
