#include "worker/runtime/error_handling.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include <spdlog/spdlog.h>

#include "common/strings.h"
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

std::string trimmed_lower(std::string v) {
  v = kc::trim(v);
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v;
}

std::string invalid(const std::string& key, const std::string& value, const std::string& why) {
  return "Invalid value " + value + " for configuration " + key + ": " + why;
}

/// Collects every bad key (validate) or stops at the first (parse).
struct Reader {
  const connectors::ConfigMap& config;
  std::map<std::string, std::string> errors;

  const std::string* find(const std::string& key) const {
    auto it = config.find(key);
    return it == config.end() ? nullptr : &it->second;
  }
  bool boolean(const std::string& key, bool dflt) {
    const auto* v = find(key);
    if (!v) return dflt;
    auto t = trimmed_lower(*v);
    if (t == "true") return true;
    if (t == "false") return false;
    errors.emplace(key, invalid(key, *v, "Expected value to be either true or false"));
    return dflt;
  }
  int64_t number(const std::string& key, int64_t dflt, int64_t min, const char* type) {
    const auto* v = find(key);
    if (!v) return dflt;
    auto t = kc::trim(*v);
    int64_t n = 0;
    try {
      size_t used = 0;
      n = std::stoll(t, &used);
      if (used != t.size()) throw std::invalid_argument(t);
    } catch (const std::exception&) {
      errors.emplace(key, invalid(key, *v, std::string("Not a number of type ") + type));
      return dflt;
    }
    if (n < min) {
      errors.emplace(key, invalid(key, *v, "Value must be at least " + std::to_string(min)));
      return dflt;
    }
    return n;
  }
};

}  // namespace

std::map<std::string, std::string> ErrorHandlingConfig::validate(const connectors::ConfigMap& config, bool sink) {
  Reader r{config, {}};
  if (const auto* v = r.find("errors.tolerance")) {
    auto t = trimmed_lower(*v);
    if (t != "none" && t != "all")
      r.errors.emplace("errors.tolerance", invalid("errors.tolerance", *v, "String must be one of: none, all"));
  }
  r.number("errors.retry.timeout", 0, -1, "LONG");
  r.number("errors.retry.delay.max.ms", 60000, 1, "LONG");
  r.boolean("errors.log.enable", false);
  r.boolean("errors.log.include.messages", false);
  if (sink) {
    r.number("errors.deadletterqueue.topic.replication.factor", 3, -1, "SHORT");
    r.boolean("errors.deadletterqueue.context.headers.enable", false);
    if (const auto* dlq = r.find("errors.deadletterqueue.topic.name"); dlq && !kc::trim(*dlq).empty()) {
      const auto name = kc::trim(*dlq);
      if (const auto* topics = r.find("topics")) {
        auto list = kc::split_comma_list(*topics);
        if (std::find(list.begin(), list.end(), name) != list.end())
          r.errors.emplace("errors.deadletterqueue.topic.name",
                           "The DLQ topic '" + name + "' may not be included in the list of topics ('topics=" +
                               *topics + "') consumed by the connector");
      }
    }
  }
  return r.errors;
}

Result<ErrorHandlingConfig> ErrorHandlingConfig::parse(const connectors::ConfigMap& config, bool sink) {
  auto errors = validate(config, sink);
  if (!errors.empty()) return Error{errors.begin()->first, errors.begin()->second};
  Reader r{config, {}};
  ErrorHandlingConfig c;
  if (const auto* v = r.find("errors.tolerance")) c.tolerate_all = trimmed_lower(*v) == "all";
  c.retry_timeout_ms = r.number("errors.retry.timeout", 0, -1, "LONG");
  c.retry_delay_max_ms = r.number("errors.retry.delay.max.ms", 60000, 1, "LONG");
  c.log_enable = r.boolean("errors.log.enable", false);
  c.log_include_messages = r.boolean("errors.log.include.messages", false);
  if (sink) {
    if (const auto* v = r.find("errors.deadletterqueue.topic.name")) c.dlq_topic = kc::trim(*v);
    c.dlq_replication_factor =
        static_cast<int16_t>(r.number("errors.deadletterqueue.topic.replication.factor", 3, -1, "SHORT"));
    c.dlq_context_headers = r.boolean("errors.deadletterqueue.context.headers.enable", false);
  }
  return c;
}

ErrorHandler::ErrorHandler(ErrorHandlingConfig config, connect::ConnectorTaskId id,
                           std::shared_ptr<metrics::TaskMetrics> metrics, const std::atomic<bool>* stop_requested,
                           DlqSend dlq)
    : config_(std::move(config)),
      id_(std::move(id)),
      metrics_(std::move(metrics)),
      stop_requested_(stop_requested),
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
    const bool stopping = stop_requested_ && stop_requested_->load();
    if (!failure.retriable || !time_left || stopping) break;
    if (metrics_) metrics_->error_retry();
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
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
  if (metrics_) metrics_->dlq_request();
  auto extra = config_.dlq_context_headers ? dlq_context_headers(failure, consumed, id_)
                                           : std::vector<std::pair<std::string, std::optional<std::string>>>{};
  auto metrics = metrics_;
  auto topic = config_.dlq_topic;
  const bool queued = dlq_(topic, *consumed, std::move(extra), [metrics, topic] {
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
