#include "worker/runtime/record_transforms.h"

#include "common/strings.h"
#include "worker/transforms/chain.h"

namespace kc::runtime {

namespace {

using connectors::Data;

// Moves the fields both record kinds share into Connect's record.
template <typename From>
void move_common_in(From& from, data::ConnectRecord& to) {
  to.topic = std::move(from.topic);
  to.key_schema = std::move(from.key.schema);
  to.key = std::move(from.key.value);
  to.value_schema = std::move(from.value.schema);
  to.value = std::move(from.value.value);
  to.headers = std::move(from.headers);
}

template <typename To>
void move_common_out(data::ConnectRecord& from, To& to) {
  to.topic = std::move(from.topic);
  to.key = Data{std::move(from.key_schema), std::move(from.key)};
  to.value = Data{std::move(from.value_schema), std::move(from.value)};
  to.headers = std::move(from.headers);
}

Result<bool> outcome_of(const Result<transforms::Outcome>& out, const transforms::ApplyError& error,
                        StageFailure& failure) {
  if (!out) {
    failure.stage = Stage::TRANSFORMATION;
    failure.executing_class = error.class_name;
    failure.message = error.message.empty() ? out.error().message : error.message;
    return out.error();
  }
  return *out == transforms::Outcome::kKept;
}

/// RecordTransforms over a TransformChain. The chain is used from the task
/// thread only (transforms keep schema caches), hence `mutable`.
class ChainTransforms final : public RecordTransforms {
 public:
  explicit ChainTransforms(transforms::TransformChain chain) : chain_(std::move(chain)) {}

  Result<bool> apply_source(connectors::SourceRecord& record, StageFailure& failure) const override {
    // The source partition and offset stay on `record`: no built-in
    // transform reads them, and the task loop commits them as they are.
    data::SourceRecord r;
    move_common_in(record, r);
    r.kafka_partition = record.kafka_partition;
    r.timestamp = record.timestamp_ms;
    transforms::ApplyError error;
    auto out = chain_.apply(r, &error);
    move_common_out(r, record);
    record.kafka_partition = r.kafka_partition;
    record.timestamp_ms = r.timestamp;
    return outcome_of(out, error, failure);
  }

  Result<bool> apply_sink(connectors::SinkRecord& record, StageFailure& failure) const override {
    data::SinkRecord r;
    r.original_topic = record.topic;
    r.original_kafka_partition = record.kafka_partition;
    r.original_kafka_offset = record.kafka_offset;
    move_common_in(record, r);
    r.kafka_partition = record.kafka_partition;
    r.kafka_offset = record.kafka_offset;
    if (record.timestamp_ms >= 0) {
      r.timestamp = record.timestamp_ms;
      r.timestamp_type = data::TimestampType::CREATE_TIME;
    }
    transforms::ApplyError error;
    auto out = chain_.apply(r, &error);
    move_common_out(r, record);
    record.kafka_partition = r.kafka_partition.value_or(*r.original_kafka_partition);
    record.kafka_offset = r.kafka_offset;
    record.timestamp_ms = r.timestamp.value_or(-1);
    return outcome_of(out, error, failure);
  }

 private:
  mutable transforms::TransformChain chain_;
};

}  // namespace

Result<std::unique_ptr<RecordTransforms>> make_record_transforms(const connectors::ConfigMap& connector_config) {
  auto it = connector_config.find("transforms");
  if (it == connector_config.end() || kc::trim(it->second).empty()) return std::unique_ptr<RecordTransforms>();
  auto chain = transforms::TransformChain::build(connector_config, nullptr);
  if (!chain) return chain.error();
  return std::unique_ptr<RecordTransforms>(std::make_unique<ChainTransforms>(std::move(chain).value()));
}

}  // namespace kc::runtime
