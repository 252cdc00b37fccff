#pragma once
// WorkerMetrics: the metrics of one kconnectd worker, i.e. Kafka Connect's
// connect-coordinator-metrics, connect-worker-rebalance-metrics and
// connect-worker-metrics (reference section 8) plus per-task counters,
// mapped to Prometheus names (see README.md for the full table).
//
// Who updates what:
//   * the herder (io thread and pool): coordinator timings (from the
//     coordinator's request-timing hook), assignment sizes, rebalance
//     start/completion, failed rebalances;
//   * the runtime Worker (its task threads): startup attempts/outcomes,
//     task states, records polled/written/read/sent, offset commits.
// Every method is thread-safe and non-blocking (atomics; registration of a
// new task series takes the registry mutex briefly).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "worker/metrics/registry.h"

namespace kc::metrics {

/// Task states as exposed by kconnectd_task_status{state=...} (Connect's
/// TaskStatus states, lower-case).
enum class TaskState { Unassigned, Running, Paused, Failed, Restarting };

/// "unassigned", "running", "paused", "failed", "restarting".
const char* to_string(TaskState s);

/// Metrics of one task, labelled {connector, task}. Obtained from
/// WorkerMetrics::task(); thread-safe; stays valid after the task's series
/// were removed (updates are then not rendered).
class TaskMetrics {
 public:
  /// Sets kconnectd_task_status{state=s} to 1 and every other state to 0.
  void set_state(TaskState s);
  /// Counts one offset commit attempt of this task (success or failure).
  void offset_commit(bool ok);
  /// Source task: records returned by poll() (no-op for a sink task; the
  /// same holds for the other kind's counters below).
  void source_polled(uint64_t n);
  /// Source task: records handed to the producer (written to Kafka).
  void source_written(uint64_t n);
  /// Sink task: records read from Kafka.
  void sink_read(uint64_t n);
  /// Sink task: records delivered to the plugin's put().
  void sink_sent(uint64_t n);

  // Connect's task-error-metrics (KIP-298), counted by the task's error
  // handler (worker/runtime/error_handling.h).
  /// A failed attempt of a stage (total-record-failures).
  void error_failure();
  /// A record that ended in an error (total-record-errors).
  void error_record();
  /// A record skipped under errors.tolerance=all (total-records-skipped).
  void error_skipped();
  /// A retry of a retriable failure (total-retries).
  void error_retry();
  /// An error written to the log (total-errors-logged).
  void error_logged();
  /// A record sent to the dead letter queue (deadletterqueue-produce-requests).
  void dlq_request();
  /// A dead letter queue write that failed (deadletterqueue-produce-failures).
  void dlq_failure();
  /// Sets last-error-timestamp from epoch ms (exported in seconds, as
  /// Prometheus names units).
  void error_at(int64_t epoch_ms);

 private:
  friend class WorkerMetrics;
  std::shared_ptr<Gauge> state_[5];
  std::shared_ptr<Counter> commit_ok_, commit_fail_;
  std::shared_ptr<Counter> polled_, written_, read_, sent_;
  std::shared_ptr<Counter> failures_, errors_, skipped_, retries_, logged_, dlq_requests_, dlq_failures_;
  std::shared_ptr<Gauge> last_error_;
};

/// This process's resident memory and thread count, read from /proc/self
/// (Linux). Zero when /proc cannot be read.
struct ProcessStats {
  uint64_t rss_bytes = 0;  ///< resident set size, bytes (statm resident pages x page size)
  uint64_t threads = 0;    ///< threads of the process (stat field 20)
  int64_t start_ms = 0;    ///< wall-clock ms since the epoch when this process started (from its first call)
};

/// Reads ProcessStats now. Never throws.
ProcessStats read_process_stats();

/// The worker's metrics (see file comment). Create one per worker and share
/// it (shared_ptr) between the herder, the runtime and the REST route.
class WorkerMetrics {
 public:
  /// Monotonic clock in milliseconds; tests pass a fake one.
  using NowMs = std::function<int64_t()>;

  /// `now` defaults to std::chrono::steady_clock. Registers every
  /// worker-level family so the first scrape already lists them.
  explicit WorkerMetrics(NowMs now = {});
  WorkerMetrics(const WorkerMetrics&) = delete;
  WorkerMetrics& operator=(const WorkerMetrics&) = delete;

  /// The underlying registry (for extra metrics and tests).
  Registry& registry() { return registry_; }
  /// The Prometheus text exposition of every metric.
  [[nodiscard]] std::string render() const { return registry_.render(); }

  // ---------------------------------------------------------------- coordinator
  /// A JoinGroup round trip completed (any answer from the broker) after `latency_ms`.
  void record_join(double latency_ms);
  /// A SyncGroup round trip completed after `latency_ms`.
  void record_sync(double latency_ms);
  /// A Heartbeat round trip completed after `latency_ms`.
  void record_heartbeat(double latency_ms);
  /// A JoinGroup or SyncGroup attempt failed (error code or connection error).
  void record_failed_rebalance();
  /// Size of the current assignment snapshot (everything this worker owns).
  void set_assigned(size_t connectors, size_t tasks);

  // ---------------------------------------------------------------- rebalance
  /// A rebalance started here (JoinGroup about to be sent): rebalancing = 1.
  void rebalance_started();
  /// An assignment of `generation` arrived (SyncGroup done) under `protocol`
  /// ("default"/"compatible"/"sessioned") from the leader at `leader_url`.
  void assignment_received(int32_t generation, const std::string& protocol, const std::string& leader_url);
  /// The assignment has been applied (revocations stopped, new work
  /// started) `duration_ms` after it arrived: completed-rebalances +1,
  /// rebalancing = 0, avg/max time updated.
  void rebalance_completed(double duration_ms);

  // ---------------------------------------------------------------- worker
  /// Connectors and tasks running on this worker now; `tasks` counts only
  /// tasks that started (RUNNING or PAUSED), not those still starting.
  void set_running(size_t connectors, size_t tasks);
  /// A connector start was attempted.
  void connector_startup_attempt();
  /// A connector start finished: `ok` = its start() succeeded.
  void connector_startup_result(bool ok);
  /// A task start was attempted.
  void task_startup_attempt();
  /// A task start finished: `ok` = its start() succeeded.
  void task_startup_result(bool ok);

  // ---------------------------------------------------------------- per task
  /// The metrics of task `connector`-`task`, created on first use: status
  /// and offset commits, plus the source counters (`source`) or the sink
  /// counters (otherwise).
  std::shared_ptr<TaskMetrics> task(const std::string& connector, int32_t task, bool source);
  /// Drops every series of that task (when it is stopped or moved away).
  void remove_task(const std::string& connector, int32_t task);

  /// Records each task on this worker has handled since it started here:
  /// source_task_records_polled_total or sink_task_records_read_total,
  /// keyed "<connector>-<task>" (the web console's records/s). Thread-safe.
  [[nodiscard]] std::map<std::string, double> task_record_totals() const;

 private:
  /// Running average and maximum of a latency given in ms, exposed in
  /// seconds (over the lifetime of the process).
  struct AvgMax {
    std::mutex mu;
    double sum = 0;
    uint64_t count = 0;
    double max = 0;
    std::shared_ptr<Gauge> avg_g, max_g;
    void add(double v);
  };

  NowMs now_;
  Registry registry_;

  std::shared_ptr<Gauge> assigned_connectors_, assigned_tasks_;
  std::shared_ptr<Counter> joins_, syncs_, heartbeats_, failed_rebalances_;
  AvgMax join_, sync_, heartbeat_;
  std::atomic<int64_t> last_heartbeat_ms_{-1};

  std::shared_ptr<Counter> completed_rebalances_;
  AvgMax rebalance_;
  std::shared_ptr<Gauge> epoch_, rebalancing_;
  std::atomic<int64_t> last_rebalance_ms_{-1};
  std::mutex info_mu_;
  mutable std::mutex tasks_mu_;
  std::map<std::string, std::shared_ptr<Counter>> record_counters_;  // "c-n" → polled or read
  std::string protocol_label_, leader_label_;

  std::shared_ptr<Gauge> connector_count_, task_count_;
  std::shared_ptr<Counter> conn_attempts_, conn_success_, conn_failure_;
  std::shared_ptr<Counter> task_attempts_, task_success_, task_failure_;
};

}  // namespace kc::metrics
