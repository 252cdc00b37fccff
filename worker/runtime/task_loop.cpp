// The frame every task thread runs in: status and metrics reports, pause handling, the start/failure/stop sequence.
#include "worker/runtime/worker_internal.h"

#include "common/secrets.h"

namespace kc::runtime {

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

}  // namespace

void report_task(const TaskEnv& env, TaskRunner& r, StatusState s, const std::optional<std::string>& trace) {
  if (r.cancelled.load()) return;
  const bool running = s == StatusState::Running || s == StatusState::Paused;
  if (r.running.exchange(running) != running && env.on_running_changed) env.on_running_changed();
  if (env.tm) env.tm->set_state(to_metrics(s));
  if (env.status) env.status->on_task_status(r.id, s, trace);
}

void report_task_end(const TaskEnv& env, TaskRunner& r, std::optional<std::string> failure) {
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

std::string call_timeout_message(const std::string& who, const char* call, int timeout_ms) {
  return who + ": " + call + "() did not return within " + std::to_string(timeout_ms) +
         " ms (connector.call.timeout.ms)";
}

void report_startup(const TaskEnv& env, bool& reported, bool ok) {
  if (reported) return;
  reported = true;
  if (env.options.metrics) env.options.metrics->task_startup_result(ok);
}

void TaskLoop::run() {
  if (env_.observer) env_.observer->on_task_start(env_.options.worker_id, id_);
  try {
    const auto begun = std::chrono::steady_clock::now();
    start();
    // Client created, offsets read, the plugin's start() returned (the
    // start breakdown of bench/dataplane reads this line).
    spdlog::info("{} started in {} ms", what_,
                 std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - begun).count());
    report_task(env_, r_, r_.paused.load() ? StatusState::Paused : StatusState::Running);
    bool was_paused = reapply_pause_ ? false : r_.paused.load();
    while (!r_.stop.stop_requested()) {
      const bool paused = r_.paused.load();
      if (paused != was_paused) {
        target_state_changed(paused);
        report_task(env_, r_, paused ? StatusState::Paused : StatusState::Running);
        was_paused = paused;
      }
      if (!step(paused)) break;
    }
    stopping();
  } catch (const std::exception& e) {
    failure_ = trace_of(e, what_);
    report_startup(env_, startup_reported_, false);
    failed();
  }
  release();
  report_task_end(env_, r_, failure_);
}

}  // namespace kc::runtime
