// The metric declaration table (metric_defs.h).
#include "worker/metrics/metric_defs.h"

#include <array>
#include <stdexcept>
#include <string>

namespace kc::metrics {
namespace {

constexpr MetricType C = MetricType::Counter;
constexpr MetricType G = MetricType::Gauge;
constexpr const char* kTask = "connector,task";

const std::array kMetrics = {
    // connect-coordinator-metrics
    MetricDef{"coordinator_assigned_connectors", G, "", "Connectors in this worker's current assignment snapshot.",
              "assigned-connectors (connect-coordinator-metrics)"},
    MetricDef{"coordinator_assigned_tasks", G, "", "Tasks in this worker's current assignment snapshot.",
              "assigned-tasks (connect-coordinator-metrics)"},
    MetricDef{"coordinator_joins_total", C, "", "JoinGroup round trips completed.",
              "join-total (connect-coordinator-metrics)"},
    MetricDef{"coordinator_join_time_avg_seconds", G, "", "Average JoinGroup round trip, seconds, over the process life.",
              "join-time-avg (connect-coordinator-metrics)"},
    MetricDef{"coordinator_join_time_max_seconds", G, "", "Maximum JoinGroup round trip, seconds.",
              "join-time-max (connect-coordinator-metrics)"},
    MetricDef{"coordinator_syncs_total", C, "", "SyncGroup round trips completed.",
              "sync-total (connect-coordinator-metrics)"},
    MetricDef{"coordinator_sync_time_avg_seconds", G, "", "Average SyncGroup round trip, seconds, over the process life.",
              "sync-time-avg (connect-coordinator-metrics)"},
    MetricDef{"coordinator_sync_time_max_seconds", G, "", "Maximum SyncGroup round trip, seconds.",
              "sync-time-max (connect-coordinator-metrics)"},
    MetricDef{"coordinator_heartbeats_total", C, "", "Heartbeat round trips completed.",
              "heartbeat-total (connect-coordinator-metrics)"},
    MetricDef{"coordinator_heartbeat_response_time_avg_seconds", G, "",
              "Average Heartbeat round trip, seconds, over the process life.", "(ours)"},
    MetricDef{"coordinator_heartbeat_response_time_max_seconds", G, "", "Maximum Heartbeat round trip, seconds.",
              "heartbeat-response-time-max (connect-coordinator-metrics)"},
    MetricDef{"coordinator_last_heartbeat_seconds_ago", G, "",
              "Seconds since the last Heartbeat response, -1 if none yet.",
              "last-heartbeat-seconds-ago (connect-coordinator-metrics)"},
    MetricDef{"coordinator_failed_rebalances_total", C, "", "Failed JoinGroup/SyncGroup attempts.",
              "failed-rebalance-total (connect-coordinator-metrics)"},
    // connect-worker-rebalance-metrics
    MetricDef{"rebalance_completed_total", C, "", "Rebalances completed by this worker.",
              "completed-rebalances-total (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_time_avg_seconds", G, "",
              "Average time from receiving an assignment to having applied it, seconds.",
              "rebalance-avg-time-ms (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_time_max_seconds", G, "",
              "Maximum time from receiving an assignment to having applied it, seconds.",
              "rebalance-max-time-ms (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_time_since_last_seconds", G, "", "Seconds since the last completed rebalance, +Inf if none.",
              "time-since-last-rebalance-ms (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_epoch", G, "", "Group generation of the current assignment, -1 before the first.",
              "epoch (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalancing", G, "",
              "1 from the start of a JoinGroup round until its assignment is applied on this worker, else 0.",
              "rebalancing (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_protocol_info", G, "protocol",
              "1, with the selected Connect protocol as the label: eager, compatible or sessioned, in upper case.",
              "connect-protocol (connect-worker-rebalance-metrics)"},
    MetricDef{"rebalance_leader_info", G, "leader_url", "1, with the REST URL of the group leader as the label.",
              "leader-name (connect-worker-rebalance-metrics)"},
    // connect-worker-metrics
    MetricDef{"worker_connectors_running", G, "", "Connectors running on this worker.",
              "connector-count (connect-worker-metrics)"},
    MetricDef{"worker_tasks_running", G, "",
              "Tasks started on this worker and not ended: RUNNING or PAUSED, not still starting.",
              "task-count (connect-worker-metrics)"},
    // process
    MetricDef{"process_resident_memory_bytes", G, "", "Resident memory of the worker process, bytes (/proc/self/statm).",
              "(ours; Prometheus' process collector name)"},
    MetricDef{"process_threads", G, "", "Threads of the worker process (/proc/self/stat).", "(ours)"},
    MetricDef{"process_start_time_seconds", G, "", "When the worker process started, seconds since the Unix epoch.",
              "(ours; Prometheus' process collector name)"},
    MetricDef{"worker_connector_startup_attempts_total", C, "", "Connector starts attempted.",
              "connector-startup-attempts-total (connect-worker-metrics)"},
    MetricDef{"worker_connector_startup_success_total", C, "", "Connector starts that succeeded.",
              "connector-startup-success-total (connect-worker-metrics)"},
    MetricDef{"worker_connector_startup_failure_total", C, "", "Connector starts that failed.",
              "connector-startup-failure-total (connect-worker-metrics)"},
    MetricDef{"worker_task_startup_attempts_total", C, "", "Task starts attempted.",
              "task-startup-attempts-total (connect-worker-metrics)"},
    MetricDef{"worker_task_startup_success_total", C, "", "Task starts that succeeded.",
              "task-startup-success-total (connect-worker-metrics)"},
    MetricDef{"worker_task_startup_failure_total", C, "", "Task starts that failed.",
              "task-startup-failure-total (connect-worker-metrics)"},
    // per task
    MetricDef{"task_status", G, "connector,task,state",
              "1 for the task's current state, 0 for the others; state is unassigned, running, paused, failed or "
              "restarting. The task's series disappear when it stops on this worker.",
              "status (connector-task-metrics)"},
    MetricDef{"task_offset_commit_success_total", C, kTask, "Successful offset commits of the task.",
              "offset-commit-completion-total (connector-task-metrics)"},
    MetricDef{"task_offset_commit_failure_total", C, kTask, "Failed offset commits of the task.",
              "offset-commit-skip-total (connector-task-metrics), counted as failures"},
    MetricDef{"source_task_records_polled_total", C, kTask, "Records returned by the source task's poll().",
              "source-record-poll-total (source-task-metrics)"},
    MetricDef{"source_task_records_written_total", C, kTask, "Records the source task handed to the producer.",
              "source-record-write-total (source-task-metrics)"},
    MetricDef{"sink_task_records_read_total", C, kTask, "Records the sink task read from Kafka.",
              "sink-record-read-total (sink-task-metrics)"},
    MetricDef{"sink_task_records_sent_total", C, kTask, "Records the sink task delivered to put().",
              "sink-record-send-total (sink-task-metrics)"},
    MetricDef{"task_error_record_failures_total", C, kTask, "Failed attempts of a record stage.",
              "total-record-failures (task-error-metrics)"},
    MetricDef{"task_error_record_errors_total", C, kTask, "Records that ended in an error.",
              "total-record-errors (task-error-metrics)"},
    MetricDef{"task_error_records_skipped_total", C, kTask, "Records skipped under errors.tolerance=all.",
              "total-records-skipped (task-error-metrics)"},
    MetricDef{"task_error_retries_total", C, kTask, "Retries of retriable failures.",
              "total-retries (task-error-metrics)"},
    MetricDef{"task_error_errors_logged_total", C, kTask, "Errors written to the log.",
              "total-errors-logged (task-error-metrics)"},
    MetricDef{"task_error_deadletterqueue_produce_requests_total", C, kTask, "Records sent to the dead letter queue.",
              "deadletterqueue-produce-requests (task-error-metrics)"},
    MetricDef{"task_error_deadletterqueue_produce_failures_total", C, kTask, "Dead letter queue writes that failed.",
              "deadletterqueue-produce-failures (task-error-metrics)"},
    MetricDef{"task_error_last_error_timestamp_seconds", G, kTask, "Epoch seconds of the task's last error; 0 = none.",
              "last-error-timestamp (task-error-metrics)"},
};

}  // namespace

std::span<const MetricDef> metric_defs() { return kMetrics; }

std::string help_text(const MetricDef& def) {
  if (std::string_view(def.connect) == "(ours)") return def.help;
  return std::string(def.help) + " (" + def.connect + ")";
}

const MetricDef& metric_def(std::string_view name) {
  for (const auto& m : kMetrics)
    if (name == m.name) return m;
  throw std::logic_error("metric " + std::string(name) + " is not declared in worker/metrics/metric_defs.cpp");
}

}  // namespace kc::metrics
