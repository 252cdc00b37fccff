#include "worker/metrics/worker_metrics.h"
#include "worker/metrics/metric_defs.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>

#include <unistd.h>

namespace kc::metrics {

namespace {

int64_t steady_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The family's `# HELP` text: the declaration table's (metric_defs.h);
/// throws std::logic_error for an undeclared family.
std::string help(const char* name) { return help_text(metric_def(name)); }

/// The counter / gauge series `name{labels}` of a declared family.
std::shared_ptr<Counter> counter(Registry& r, const char* name, const Labels& labels = {}) {
  return r.counter(name, help(name), labels);
}
std::shared_ptr<Gauge> gauge(Registry& r, const char* name, const Labels& labels = {}) {
  return r.gauge(name, help(name), labels);
}

constexpr TaskState kAllStates[] = {TaskState::Unassigned, TaskState::Running, TaskState::Paused, TaskState::Failed,
                                    TaskState::Restarting};

}  // namespace

const char* to_string(TaskState s) {
  switch (s) {
    case TaskState::Unassigned:
      return "unassigned";
    case TaskState::Running:
      return "running";
    case TaskState::Paused:
      return "paused";
    case TaskState::Failed:
      return "failed";
    case TaskState::Restarting:
      return "restarting";
  }
  return "unassigned";
}

// ------------------------------------------------------------------ TaskMetrics

void TaskMetrics::set_state(TaskState s) {
  for (size_t i = 0; i < std::size(kAllStates); ++i) state_[i]->set(kAllStates[i] == s ? 1.0 : 0.0);
}
void TaskMetrics::offset_commit(bool ok) { (ok ? commit_ok_ : commit_fail_)->inc(); }
void TaskMetrics::source_polled(uint64_t n) {
  if (polled_) polled_->inc(static_cast<double>(n));
}
void TaskMetrics::source_written(uint64_t n) {
  if (written_) written_->inc(static_cast<double>(n));
}
void TaskMetrics::sink_read(uint64_t n) {
  if (read_) read_->inc(static_cast<double>(n));
}
void TaskMetrics::sink_sent(uint64_t n) {
  if (sent_) sent_->inc(static_cast<double>(n));
}
void TaskMetrics::error_failure() { failures_->inc(); }
void TaskMetrics::error_record() { errors_->inc(); }
void TaskMetrics::error_skipped() { skipped_->inc(); }
void TaskMetrics::error_retry() { retries_->inc(); }
void TaskMetrics::error_logged() { logged_->inc(); }
void TaskMetrics::dlq_request() { dlq_requests_->inc(); }
void TaskMetrics::dlq_failure() { dlq_failures_->inc(); }
void TaskMetrics::error_at(int64_t epoch_ms) { last_error_->set(static_cast<double>(epoch_ms) / 1000.0); }

// ------------------------------------------------------------------ WorkerMetrics

void WorkerMetrics::AvgMax::add(double v) {
  std::lock_guard lk(mu);
  sum += v;
  ++count;
  max = count == 1 ? v : std::max(max, v);
  avg_g->set(sum / static_cast<double>(count) / 1000.0);
  max_g->set(max / 1000.0);
}

WorkerMetrics::WorkerMetrics(NowMs now) : now_(now ? std::move(now) : NowMs(steady_ms)) {
  auto& r = registry_;
  // connect-coordinator-metrics
  assigned_connectors_ = gauge(r, "coordinator_assigned_connectors");
  assigned_tasks_ = gauge(r, "coordinator_assigned_tasks");
  joins_ = counter(r, "coordinator_joins_total");
  syncs_ = counter(r, "coordinator_syncs_total");
  heartbeats_ = counter(r, "coordinator_heartbeats_total");
  failed_rebalances_ = counter(r, "coordinator_failed_rebalances_total");
  join_.avg_g = gauge(r, "coordinator_join_time_avg_seconds");
  join_.max_g = gauge(r, "coordinator_join_time_max_seconds");
  sync_.avg_g = gauge(r, "coordinator_sync_time_avg_seconds");
  sync_.max_g = gauge(r, "coordinator_sync_time_max_seconds");
  heartbeat_.avg_g = gauge(r, "coordinator_heartbeat_response_time_avg_seconds");
  heartbeat_.max_g = gauge(r, "coordinator_heartbeat_response_time_max_seconds");
  r.gauge_fn("coordinator_last_heartbeat_seconds_ago", help("coordinator_last_heartbeat_seconds_ago"), {},
             [this] {
               const int64_t t = last_heartbeat_ms_.load();
               return t < 0 ? -1.0 : static_cast<double>(now_() - t) / 1000.0;
             });
  // connect-worker-rebalance-metrics
  completed_rebalances_ = counter(r, "rebalance_completed_total");
  rebalance_.avg_g = gauge(r, "rebalance_time_avg_seconds");
  rebalance_.max_g = gauge(r, "rebalance_time_max_seconds");
  r.gauge_fn("rebalance_time_since_last_seconds", help("rebalance_time_since_last_seconds"), {},
             [this] {
               const int64_t t = last_rebalance_ms_.load();
               return t < 0 ? std::numeric_limits<double>::infinity() : static_cast<double>(now_() - t) / 1000.0;
             });
  epoch_ = gauge(r, "rebalance_epoch");
  epoch_->set(-1);
  rebalancing_ = gauge(r, "rebalancing");
  gauge(r, "rebalance_protocol_info");
  gauge(r, "rebalance_leader_info");
  // connect-worker-metrics
  connector_count_ = gauge(r, "worker_connectors_running");
  task_count_ = gauge(r, "worker_tasks_running");
  conn_attempts_ = counter(r, "worker_connector_startup_attempts_total");
  conn_success_ = counter(r, "worker_connector_startup_success_total");
  conn_failure_ = counter(r, "worker_connector_startup_failure_total");
  task_attempts_ = counter(r, "worker_task_startup_attempts_total");
  task_success_ = counter(r, "worker_task_startup_success_total");
  task_failure_ = counter(r, "worker_task_startup_failure_total");
  // process (the web console's worker table, and Prometheus' process_* names)
  (void)read_process_stats();  // pins the start time at construction
  r.gauge_fn("process_resident_memory_bytes", help("process_resident_memory_bytes"), {},
             [] { return static_cast<double>(read_process_stats().rss_bytes); });
  r.gauge_fn("process_threads", help("process_threads"), {},
             [] { return static_cast<double>(read_process_stats().threads); });
  r.gauge_fn("process_start_time_seconds", help("process_start_time_seconds"), {},
             [] { return static_cast<double>(read_process_stats().start_ms) / 1000.0; });
}

void WorkerMetrics::record_join(double latency_ms) {
  joins_->inc();
  join_.add(latency_ms);
}

void WorkerMetrics::record_sync(double latency_ms) {
  syncs_->inc();
  sync_.add(latency_ms);
}

void WorkerMetrics::record_heartbeat(double latency_ms) {
  heartbeats_->inc();
  heartbeat_.add(latency_ms);
  last_heartbeat_ms_.store(now_());
}

void WorkerMetrics::record_failed_rebalance() { failed_rebalances_->inc(); }

void WorkerMetrics::set_assigned(size_t connectors, size_t tasks) {
  assigned_connectors_->set(static_cast<double>(connectors));
  assigned_tasks_->set(static_cast<double>(tasks));
}

void WorkerMetrics::rebalance_started() { rebalancing_->set(1); }

void WorkerMetrics::assignment_received(int32_t generation, const std::string& protocol,
                                        const std::string& leader_url) {
  epoch_->set(generation);
  rebalancing_->set(1);
  std::string proto_upper = protocol == "default" ? "EAGER" : protocol;
  for (auto& c : proto_upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
  std::lock_guard lk(info_mu_);
  if (proto_upper != protocol_label_) {
    if (!protocol_label_.empty()) registry_.remove("rebalance_protocol_info", {{"protocol", protocol_label_}});
    protocol_label_ = proto_upper;
    gauge(registry_, "rebalance_protocol_info", {{"protocol", protocol_label_}})->set(1);
  }
  if (leader_url != leader_label_) {
    if (!leader_label_.empty()) registry_.remove("rebalance_leader_info", {{"leader_url", leader_label_}});
    leader_label_ = leader_url;
    if (!leader_label_.empty()) gauge(registry_, "rebalance_leader_info", {{"leader_url", leader_label_}})->set(1);
  }
}

void WorkerMetrics::rebalance_completed(double duration_ms) {
  completed_rebalances_->inc();
  rebalance_.add(duration_ms);
  last_rebalance_ms_.store(now_());
  rebalancing_->set(0);
}

void WorkerMetrics::set_running(size_t connectors, size_t tasks) {
  connector_count_->set(static_cast<double>(connectors));
  task_count_->set(static_cast<double>(tasks));
}

void WorkerMetrics::connector_startup_attempt() { conn_attempts_->inc(); }
void WorkerMetrics::connector_startup_result(bool ok) { (ok ? conn_success_ : conn_failure_)->inc(); }
void WorkerMetrics::task_startup_attempt() { task_attempts_->inc(); }
void WorkerMetrics::task_startup_result(bool ok) { (ok ? task_success_ : task_failure_)->inc(); }

std::shared_ptr<TaskMetrics> WorkerMetrics::task(const std::string& connector, int32_t task, bool source) {
  auto m = std::make_shared<TaskMetrics>();
  const Labels l{{"connector", connector}, {"task", std::to_string(task)}};
  for (size_t i = 0; i < std::size(kAllStates); ++i) {
    Labels ls = l;
    ls.emplace_back("state", to_string(kAllStates[i]));
    m->state_[i] = gauge(registry_, "task_status", ls);
  }
  m->commit_ok_ = counter(registry_, "task_offset_commit_success_total", l);
  m->commit_fail_ = counter(registry_, "task_offset_commit_failure_total", l);
  // task-error-metrics
  m->failures_ = counter(registry_, "task_error_record_failures_total", l);
  m->errors_ = counter(registry_, "task_error_record_errors_total", l);
  m->skipped_ = counter(registry_, "task_error_records_skipped_total", l);
  m->retries_ = counter(registry_, "task_error_retries_total", l);
  m->logged_ = counter(registry_, "task_error_errors_logged_total", l);
  m->dlq_requests_ = counter(registry_, "task_error_deadletterqueue_produce_requests_total", l);
  m->dlq_failures_ = counter(registry_, "task_error_deadletterqueue_produce_failures_total", l);
  m->last_error_ = gauge(registry_, "task_error_last_error_timestamp_seconds", l);
  if (source) {
    m->polled_ = counter(registry_, "source_task_records_polled_total", l);
    m->written_ = counter(registry_, "source_task_records_written_total", l);
  } else {
    m->read_ = counter(registry_, "sink_task_records_read_total", l);
    m->sent_ = counter(registry_, "sink_task_records_sent_total", l);
  }
  {
    std::lock_guard lk(tasks_mu_);
    record_counters_[connector + "-" + std::to_string(task)] = source ? m->polled_ : m->read_;
  }
  return m;
}

void WorkerMetrics::remove_task(const std::string& connector, int32_t task) {
  registry_.remove_matching({{"connector", connector}, {"task", std::to_string(task)}});
}

std::map<std::string, double> WorkerMetrics::task_record_totals() const {
  std::lock_guard lk(tasks_mu_);
  std::map<std::string, double> out;
  for (const auto& [id, c] : record_counters_) out[id] = c ? c->value() : 0.0;
  return out;
}

ProcessStats read_process_stats() {
  static const int64_t start_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                      std::chrono::system_clock::now().time_since_epoch())
                                      .count();
  ProcessStats st;
  st.start_ms = start_ms;
  if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
    unsigned long long size = 0, resident = 0;
    if (std::fscanf(f, "%llu %llu", &size, &resident) == 2)
      st.rss_bytes = resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    std::fclose(f);
  }
  if (std::FILE* f = std::fopen("/proc/self/stat", "r")) {
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    // Fields after the command name, which is in parentheses and may hold
    // spaces: state is field 3, num_threads field 20.
    if (const char* p = std::strrchr(buf, ')')) {
      int field = 2;
      for (const char* q = p + 1; *q != '\0'; ++q) {
        if (*q != ' ') continue;
        ++field;
        if (field == 20) {
          st.threads = std::strtoull(q + 1, nullptr, 10);
          break;
        }
      }
    }
  }
  return st;
}

}  // namespace kc::metrics
