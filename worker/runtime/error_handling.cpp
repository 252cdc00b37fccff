#include "worker/runtime/error_handling.h"

#include <algorithm>
#include <cctype>

#include <spdlog/spdlog.h>

#include "common/stop_wait.h"
#include "common/strings.h"
#include "worker/connectors/config_def.h"
#include "worker/metrics/worker_metrics.h"

namespace kc::runtime {

const char* stage_name(Stage s) {
  switch (s) {
    case Stage::KEY_CONVERTER: return "KEY_CONVERTER";
    case Stage::VALUE_CONVERTER: return "VALUE_CONVERTER";
    case Stage::HEADER_CONVERTER: return "HEADER_CONVERTER";
    case Stage::TRANSFORMATION: return "TRANSFORMATION";
    case Stage::TASK_PUT: return "TASK_PUT";
    case Stage::TASK_POLL: return "TASK_POLL";
    case Stage::KAFKA_PRODUCE: return "KAFKA_PRODUCE";
    case Stage::KAFKA_CONSUME: return "KAFKA_CONSUME";
  }
  return "UNKNOWN";
}

namespace {

std::string trimmed_lower(std::string_view v) {
  std::string t = kc::trim(v);
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return t;
}

}  // namespace

std::map<std::string, std::string> ErrorHandlingConfig::validate(const connectors::ConfigMap& config, bool sink) {
  auto v = connectors::validate_config("", connectors::error_handling_config_defs(sink),
                                       sink ? connectors::ConfigRule(&connectors::dlq_topic_rule) : nullptr, config);
  std::map<std::string, std::string> errors;
  for (const auto& e : v.configs)
    if (!e.value.errors.empty()) errors.emplace(e.definition.name, e.value.errors.front());
  return errors;
}

Result<ErrorHandlingConfig> ErrorHandlingConfig::parse(const connectors::ConfigMap& config, bool sink) {
  auto errors = validate(config, sink);
  if (!errors.empty()) return Error{errors.begin()->first, errors.begin()->second};
  // Validated above: every present value has its type.
  auto text = [&](const std::string& key) -> std::optional<std::string> {
    auto it = config.find(key);
    if (it == config.end()) return std::nullopt;
    return kc::trim(it->second);
  };
  auto number = [&](const std::string& key, int64_t dflt) {
    auto t = text(key);
    return t ? std::stoll(*t) : dflt;
  };
  auto boolean = [&](const std::string& key) {
    auto t = text(key);
    return t && trimmed_lower(*t) == "true";
  };
  ErrorHandlingConfig c;
  c.tolerate_all = trimmed_lower(text("errors.tolerance").value_or("none")) == "all";
  c.retry_timeout_ms = number("errors.retry.timeout", 0);
  c.retry_delay_max_ms = number("errors.retry.delay.max.ms", 60000);
  c.log_enable = boolean("errors.log.enable");
  c.log_include_messages = boolean("errors.log.include.messages");
  if (sink) {
    c.dlq_topic = text("errors.deadletterqueue.topic.name").value_or("");
    c.dlq_replication_factor = static_cast<int16_t>(number("errors.deadletterqueue.topic.replication.factor", 3));
    c.dlq_context_headers = boolean("errors.deadletterqueue.context.headers.enable");
  }
  return c;
}

ErrorHandler::ErrorHandler(ErrorHandlingConfig config, connect::ConnectorTaskId id,
                           std::shared_ptr<metrics::TaskMetrics> metrics, std::stop_token stop,
                           DlqSend dlq)
    : config_(std::move(config)),
      id_(std::move(id)),
      metrics_(std::move(metrics)),
      stop_(std::move(stop)),
      dlq_(std::move(dlq)) {}

void ErrorHandler::retry_or_fail(StageFailure failure, const ConsumedRecord* consumed,
                                 const std::function<std::optional<StageFailure>()>& attempt) {
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  int64_t delay_ms = 300;  // Connect's RETRIES_DELAY_MIN_MS, doubled per retry
  for (;;) {
    if (metrics_) metrics_->error_failure();
    const auto elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count();
    const bool time_left = config_.retry_timeout_ms < 0 || elapsed_ms + delay_ms <= config_.retry_timeout_ms;
    if (!failure.retriable || !time_left || stop_.stop_requested()) break;
    if (metrics_) metrics_->error_retry();
    // A stop ends the backoff at once: the record fails with the last failure.
    if (wait_for_stop(stop_, std::chrono::milliseconds(delay_ms))) break;
    delay_ms = std::min(delay_ms * 2, config_.retry_delay_max_ms);
    auto next = attempt();
    if (!next) return;
    failure = std::move(*next);
  }
  fail_record(failure, consumed);
}

void ErrorHandler::fail(const StageFailure& failure, const ConsumedRecord* consumed) {
  if (metrics_) metrics_->error_failure();
  fail_record(failure, consumed);
}

void ErrorHandler::fail_record(const StageFailure& failure, const ConsumedRecord* consumed) {
  if (metrics_) {
    metrics_->error_record();
    metrics_->error_at(std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count());
  }
  if (!config_.tolerate_all)
    throw ToleranceExceeded("Tolerance exceeded in error handler: " + std::string(stage_name(failure.stage)) +
                            " with class '" + failure.executing_class + "' failed: " + failure.exception_class + ": " +
                            failure.message);
  report(failure, consumed);
  if (metrics_) metrics_->error_skipped();
}

void ErrorHandler::report(const StageFailure& failure, const ConsumedRecord* consumed) {
  if (config_.log_enable) {
    std::string where;
    if (config_.log_include_messages && consumed)
      where = ", where consumed record is {topic='" + consumed->topic + "', partition=" +
              std::to_string(consumed->partition) + ", offset=" + std::to_string(consumed->offset) + "}";
    spdlog::error("Error encountered in task {}. Executing stage '{}' with class '{}'{}. {}: {}", id_.to_string(),
                  stage_name(failure.stage), failure.executing_class, where, failure.exception_class,
                  failure.message);
    if (metrics_) metrics_->error_logged();
  }
  if (config_.dlq_topic.empty() || !consumed || !dlq_) return;
  check_dlq();
  if (metrics_) metrics_->dlq_request();
  auto extra = config_.dlq_context_headers ? dlq_context_headers(failure, consumed, id_)
                                           : std::vector<std::pair<std::string, std::optional<std::string>>>{};
  auto metrics = metrics_;
  auto topic = config_.dlq_topic;
  const bool queued = dlq_(topic, config_.dlq_replication_factor, *consumed, std::move(extra), [metrics, topic] {
    spdlog::error("Could not produce message to dead letter queue. topic={}", topic);
    if (metrics) metrics->dlq_failure();
  });
  if (!queued) {
    spdlog::error("Could not produce message to dead letter queue. topic={}", topic);
    if (metrics_) metrics_->dlq_failure();
  }
}

std::vector<std::pair<std::string, std::optional<std::string>>> dlq_context_headers(
    const StageFailure& failure, const ConsumedRecord* consumed, const connect::ConnectorTaskId& id) {
  const std::string prefix = "__connect.errors.";
  std::vector<std::pair<std::string, std::optional<std::string>>> h;
  h.emplace_back(prefix + "topic", consumed ? consumed->topic : std::string());
  h.emplace_back(prefix + "partition", std::to_string(consumed ? consumed->partition : -1));
  h.emplace_back(prefix + "offset", std::to_string(consumed ? consumed->offset : -1));
  h.emplace_back(prefix + "connector.name", id.connector);
  h.emplace_back(prefix + "task.id", std::to_string(id.task));
  h.emplace_back(prefix + "stage", stage_name(failure.stage));
  h.emplace_back(prefix + "class.name", failure.executing_class);
  h.emplace_back(prefix + "exception.class.name", failure.exception_class);
  h.emplace_back(prefix + "exception.message", failure.message);
  // Java's printStackTrace starts with Throwable.toString(); there are no
  // JVM frames to follow it.
  h.emplace_back(prefix + "exception.stacktrace", failure.exception_class + ": " + failure.message + "\n");
  return h;
}

}  // namespace kc::runtime
