#pragma once
// A task's record pipeline, as Connect's WorkerSourceTask / WorkerSinkTask
// run it: source records go transforms -> key, value and header converters
// -> producer; consumed records go key, value and header converters ->
// transforms -> put(). Every stage runs under the task's ErrorHandler
// (errors.tolerance, retries, log and dead letter queue reporting).
//
// With no transforms and no headers the pipeline adds nothing to the data
// plane's fast path: the task loop keeps its converter views.
//
// Threading: one pipeline per task, used on the task's thread only.

#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "common/result.h"
#include "worker/connectors/connector.h"
#include "worker/converters/converters.h"
#include "worker/runtime/connector_config.h"
#include "worker/runtime/converter.h"
#include "worker/runtime/error_handling.h"
#include "worker/storage/kafka_client.h"

namespace kc::runtime {

/// A transform chain as the runtime uses it (worker/transforms builds it
/// from `transforms=` and `predicates=`).
class RecordTransforms {
 public:
  virtual ~RecordTransforms() = default;
  /// Applies the chain to a source record in place. Returns false when a
  /// transform dropped the record; a StageFailure (stage TRANSFORMATION, the
  /// transform's class) when one failed.
  virtual Result<bool> apply_source(connectors::SourceRecord& record, StageFailure& failure) const = 0;
  /// The same for a sink record.
  virtual Result<bool> apply_sink(connectors::SinkRecord& record, StageFailure& failure) const = 0;
};

/// The parts of a task's pipeline (see file comment).
struct RecordPipelineParts {
  std::unique_ptr<Converter> key_converter;
  std::unique_ptr<Converter> value_converter;
  std::unique_ptr<converters::HeaderConverter> header_converter;
  std::string key_converter_class, value_converter_class, header_converter_class;
  std::unique_ptr<RecordTransforms> transforms;  ///< null = none
  std::unique_ptr<ErrorHandler> errors;
};

/// A record ready for the producer: key and value bytes (views into the
/// source record or into the owned buffers) and the converted headers.
struct ProducerRecordView {
  std::optional<std::string_view> key, value;
  std::optional<std::string> key_bytes, value_bytes;  ///< when not a view into the record
  storage::RecordHeaders headers;
};

/// See file comment.
class RecordPipeline {
 public:
  explicit RecordPipeline(RecordPipelineParts parts);

  /// Source side: runs the transforms (when any) on `record`, then the
  /// converters, filling `out`. Returns false when the record was dropped by
  /// a transform or skipped after a tolerated error (its source offset still
  /// counts as handled, as Connect commits it). Throws ToleranceExceeded
  /// when an error is not tolerated.
  bool to_producer(connectors::SourceRecord& record, ProducerRecordView& out) const;

  /// Sink side: the consumed message `m` of `topic` through the key, value
  /// and header converters, then the transforms, into `out`. Returns false
  /// when skipped (tolerated error, reported to the DLQ with the original
  /// bytes) or dropped. Throws ToleranceExceeded when not tolerated.
  bool from_consumer(const rd_kafka_message_t* m, const std::string& topic, connectors::SinkRecord& out) const;

  /// The key / value converters (the task loop's fast paths use them).
  const Converter& key_converter() const { return *parts_.key_converter; }
  const Converter& value_converter() const { return *parts_.value_converter; }
  /// True when there are transforms.
  bool has_transforms() const { return parts_.transforms != nullptr; }
  /// The task's error handler.
  ErrorHandler& errors() const { return *parts_.errors; }

 private:
  RecordPipelineParts parts_;
};

/// Builds a task's pipeline from its connector's typed config: its
/// converters (the worker's unless the connector sets the role), its
/// `errors.*` settings (`config.errors`, or `config.errors_error`), and the
/// chain `make_transforms` (may be empty) builds from
/// `config.transform_chain` (not called when that is empty). `dlq` sends
/// to the dead letter queue (sinks with errors.deadletterqueue.topic.name);
/// `stop` is the task's stop token (ends retry backoffs).
/// Errors name the config key ("value.converter: Class X could not be found.").
Result<std::unique_ptr<RecordPipeline>> make_record_pipeline(
    const ConnectorConfig& config, const connect::ConnectorTaskId& id, std::shared_ptr<metrics::TaskMetrics> metrics,
    std::stop_token stop, ErrorHandler::DlqSend dlq,
    const std::function<Result<std::unique_ptr<RecordTransforms>>(const connectors::ConfigMap&)>& make_transforms);

}  // namespace kc::runtime
