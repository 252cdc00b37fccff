#pragma once
// Error handling in the record pipeline (KIP-298, KIP-610): the connector's
// `errors.*` settings, the retry-with-tolerance operator that runs each
// stage (key, value and header conversion, each transform), the log
// reporter and, for sink connectors, the dead letter queue reporter with
// Connect's `__connect.errors.*` context headers.
//
// Threading: one ErrorHandler per task, used on that task's thread only; the
// dead letter queue's delivery reports arrive on its producer's poll thread
// and only touch atomic metrics.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "common/result.h"
#include "protocol/connect/types.h"
#include "worker/connectors/connector.h"

namespace kc::metrics {
class TaskMetrics;
}
namespace kc::storage {
class Producer;
}

namespace kc::runtime {

/// Connect's Stage enum: where in the pipeline an operation runs. Its name
/// is the `__connect.errors.stage` header value.
enum class Stage {
  KEY_CONVERTER,
  VALUE_CONVERTER,
  HEADER_CONVERTER,
  TRANSFORMATION,
  TASK_PUT,
  TASK_POLL,
  KAFKA_PRODUCE,
  KAFKA_CONSUME
};

/// "KEY_CONVERTER", "VALUE_CONVERTER", ... (Stage.name()).
const char* stage_name(Stage s);

/// The connector's `errors.*` settings (ConnectorConfig / SinkConnectorConfig).
struct ErrorHandlingConfig {
  /// errors.tolerance: false = none (the default: the first error fails the
  /// task), true = all (records that fail are skipped).
  bool tolerate_all = false;
  /// errors.retry.timeout (ms): how long a retriable failure is retried;
  /// 0 = no retry (default), -1 = forever.
  int64_t retry_timeout_ms = 0;
  /// errors.retry.delay.max.ms: the cap of the exponential backoff (default 60000).
  int64_t retry_delay_max_ms = 60000;
  /// errors.log.enable (default false).
  bool log_enable = false;
  /// errors.log.include.messages (default false): the record's coordinates
  /// in the log line.
  bool log_include_messages = false;
  /// errors.deadletterqueue.topic.name (sink connectors; "" = no DLQ).
  std::string dlq_topic;
  /// errors.deadletterqueue.topic.replication.factor (default 3; the mock
  /// and small clusters are capped at their broker count when the topic is created).
  int16_t dlq_replication_factor = 3;
  /// errors.deadletterqueue.context.headers.enable (default false).
  bool dlq_context_headers = false;

  /// Reads and validates the settings from a connector config. A source
  /// connector's `errors.deadletterqueue.*` keys are ignored, as in Connect.
  /// Errors (field = the key): "Invalid value X for configuration
  /// errors.tolerance: String must be one of: none, all", "... Not a number
  /// of type LONG", a negative delay, and a DLQ topic that the sink itself
  /// consumes ("The DLQ topic 'x' may not be included in the list of topics
  /// ('topics=...') consumed by the connector").
  static Result<ErrorHandlingConfig> parse(const connectors::ConfigMap& config, bool sink);
  /// Per-key validation messages for the validate endpoint (empty = valid).
  static std::map<std::string, std::string> validate(const connectors::ConfigMap& config, bool sink);
};

/// A stage's failure on one record: what ran and Connect's exception.
struct StageFailure {
  Stage stage = Stage::VALUE_CONVERTER;
  std::string executing_class;  ///< e.g. "org.apache.kafka.connect.json.JsonConverter"
  std::string exception_class = "org.apache.kafka.connect.errors.DataException";
  std::string message;
  bool retriable = false;  ///< a RetriableException: retried within errors.retry.timeout
};

/// The consumed record a sink failure is about: what the dead letter queue
/// receives (the original key, value, headers and timestamp) and the
/// coordinates for the log and context headers.
struct ConsumedRecord {
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
  int64_t timestamp_ms = -1;  ///< -1 = none
  std::optional<std::string> key;
  std::optional<std::string> value;
  std::vector<std::pair<std::string, std::optional<std::string>>> headers;
};

/// Thrown when a failure is not tolerated: the task fails with it
/// ("Tolerance exceeded in error handler", Connect's ConnectException).
class ToleranceExceeded : public connectors::ConnectError {
 public:
  using connectors::ConnectError::ConnectError;
};

/// Connect's RetryWithToleranceOperator with its reporters, for one task.
class ErrorHandler {
 public:
  /// Sends one record to the dead letter queue `topic` (created with
  /// `replication_factor` when missing); `on_failed` runs (on any thread)
  /// when the write fails. Returns false when it could not be queued.
  using DlqSend = std::function<bool(const std::string& topic, int replication_factor, const ConsumedRecord& record,
                                     std::vector<std::pair<std::string, std::optional<std::string>>> extra_headers,
                                     std::function<void()> on_failed)>;

  /// `metrics` may be null; `stop` (the task's stop token; a default token
  /// never stops) ends retries when the task is stopping, also in the
  /// middle of a backoff wait (as Connect's backoff, which a stop wakes);
  /// `dlq` is required when the config names a DLQ topic.
  ErrorHandler(ErrorHandlingConfig config, connect::ConnectorTaskId id, std::shared_ptr<metrics::TaskMetrics> metrics,
               std::stop_token stop, DlqSend dlq = {});

  /// Runs `op` (returning Result<T>) for one record at `stage`. `op`
  /// returns the result or an Error (a DataException: never retried) and
  /// may throw connectors::RetriableError (retried with backoff 300 ms
  /// doubling up to errors.retry.delay.max.ms, within errors.retry.timeout)
  /// or another exception (not retried). On final failure the failure is
  /// counted; under errors.tolerance=all it is logged and reported to the
  /// DLQ (when `consumed` is given) and nullopt is returned (skip the
  /// record); otherwise ToleranceExceeded is thrown. The first attempt runs
  /// inline: no allocation when it succeeds.
  template <typename T, typename Op>
  std::optional<T> execute(Stage stage, const std::string& executing_class, Op&& op,
                           const ConsumedRecord* consumed = nullptr) {
    std::optional<T> out;
    auto attempt = [&]() -> std::optional<StageFailure> {
      try {
        auto r = op();
        if (r) {
          out.emplace(std::move(r).value());
          return std::nullopt;
        }
        return StageFailure{stage, executing_class, "org.apache.kafka.connect.errors.DataException",
                            r.error().message, false};
      } catch (const connectors::RetriableError& e) {
        return StageFailure{stage, executing_class, "org.apache.kafka.connect.errors.RetriableException", e.what(),
                            true};
      } catch (const std::exception& e) {
        return StageFailure{stage, executing_class, "org.apache.kafka.connect.errors.ConnectException", e.what(),
                            false};
      }
    };
    auto first = attempt();
    if (!first) return out;
    retry_or_fail(std::move(*first), consumed, attempt);
    return out;
  }

  /// Reports a failure that happened outside execute() (e.g. a transform
  /// chain that gave its own StageFailure): counts it, then skips (returns)
  /// or throws ToleranceExceeded as execute() does.
  void fail(const StageFailure& failure, const ConsumedRecord* consumed);

  /// Throws connectors::ConnectError when the dead letter queue's writer
  /// has met a cause no retry fixes (its producer's classified
  /// credentials, TLS or ACL failure, issue 27 item 1); returns otherwise.
  using DlqCheck = std::function<void()>;
  /// Installs the check (before the task thread starts).
  void set_dlq_check(DlqCheck check) { dlq_check_ = std::move(check); }
  /// Runs the check, if any: the sink loop calls it after each read, and
  /// report() before each write to the queue, so a queue that cannot be
  /// written fails its task with the classified line. Throws its error.
  void check_dlq() const {
    if (dlq_check_) dlq_check_();
  }

  /// The settings in force.
  const ErrorHandlingConfig& config() const { return config_; }
  /// Sets the task's metrics once they exist (before the task thread starts).
  void set_metrics(std::shared_ptr<metrics::TaskMetrics> metrics) { metrics_ = std::move(metrics); }

 private:
  /// After `failure`, retries `attempt` while the failure is retriable and
  /// time is left, then fails (skip or throw) unless an attempt succeeded.
  void retry_or_fail(StageFailure failure, const ConsumedRecord* consumed,
                     const std::function<std::optional<StageFailure>()>& attempt);
  /// Counts the record's error, then skips (returns) or throws.
  void fail_record(const StageFailure& failure, const ConsumedRecord* consumed);
  void report(const StageFailure& failure, const ConsumedRecord* consumed);

  ErrorHandlingConfig config_;
  connect::ConnectorTaskId id_;
  std::shared_ptr<metrics::TaskMetrics> metrics_;
  std::stop_token stop_;
  DlqSend dlq_;
  DlqCheck dlq_check_;
};

/// The `__connect.errors.*` context headers Connect's DeadLetterQueueReporter
/// adds (topic, partition, offset, connector.name, task.id, stage,
/// class.name, exception.class.name, exception.message,
/// exception.stacktrace), values as UTF-8 text.
std::vector<std::pair<std::string, std::optional<std::string>>> dlq_context_headers(
    const StageFailure& failure, const ConsumedRecord* consumed, const connect::ConnectorTaskId& id);

}  // namespace kc::runtime
