#include "worker/runtime/record_pipeline.h"

#include "common/strings.h"

namespace kc::runtime {

using connectors::Data;

RecordPipeline::RecordPipeline(RecordPipelineParts parts) : parts_(std::move(parts)) {}

namespace {

/// Converts one key or value for the producer: a view when the converter
/// is the identity on it, else the converter's bytes under the error handler.
bool convert_for_producer(const Converter& conv, const std::string& conv_class, Stage stage, ErrorHandler& errors,
                          const std::string& topic, const Data& data, std::optional<std::string_view>& view,
                          std::optional<std::string>& bytes) {
  bytes.reset();
  if (conv.from_connect_view(data, view)) return true;
  auto converted = errors.execute<std::optional<std::string>>(stage, conv_class,
                                                              [&] { return conv.from_connect(topic, data); });
  if (!converted) return false;
  bytes = std::move(*converted);
  view = bytes ? std::optional<std::string_view>(*bytes) : std::nullopt;
  return true;
}

/// The original consumed record, for the log and the dead letter queue.
ConsumedRecord consumed_of(const rd_kafka_message_t* m, const std::string& topic) {
  ConsumedRecord c;
  c.topic = topic;
  c.partition = m->partition;
  c.offset = m->offset;
  c.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
  if (m->key) c.key.emplace(static_cast<const char*>(m->key), m->key_len);
  if (m->payload) c.value.emplace(static_cast<const char*>(m->payload), m->len);
  c.headers = storage::headers_of(m);
  return c;
}

}  // namespace

bool RecordPipeline::to_producer(connectors::SourceRecord& record, ProducerRecordView& out) const {
  auto& errors = *parts_.errors;
  if (parts_.transforms) {
    StageFailure failure{Stage::TRANSFORMATION, "", "org.apache.kafka.connect.errors.DataException", "", false};
    auto kept = parts_.transforms->apply_source(record, failure);
    if (!kept) {
      if (failure.message.empty()) failure.message = kept.error().message;
      errors.fail(failure, nullptr);
      return false;
    }
    if (!*kept) return false;
  }
  if (!convert_for_producer(*parts_.key_converter, parts_.key_converter_class, Stage::KEY_CONVERTER, errors,
                            record.topic, record.key, out.key, out.key_bytes))
    return false;
  if (!convert_for_producer(*parts_.value_converter, parts_.value_converter_class, Stage::VALUE_CONVERTER, errors,
                            record.topic, record.value, out.value, out.value_bytes))
    return false;
  out.headers.clear();
  for (const auto& h : record.headers.list()) {
    auto bytes = errors.execute<std::optional<std::string>>(Stage::HEADER_CONVERTER, parts_.header_converter_class, [&] {
      return parts_.header_converter->from_connect_header(record.topic, h.key, h.schema, h.value);
    });
    if (!bytes) return false;
    out.headers.emplace_back(h.key, std::move(*bytes));
  }
  return true;
}

bool RecordPipeline::from_consumer(const rd_kafka_message_t* m, const std::string& topic,
                                   connectors::SinkRecord& out) const {
  auto& errors = *parts_.errors;
  // Built only when a stage fails: the DLQ gets the original bytes.
  std::optional<ConsumedRecord> original;
  auto consumed = [&]() -> const ConsumedRecord* {
    if (!original) original = consumed_of(m, topic);
    return &*original;
  };
  out.topic = topic;
  out.kafka_partition = m->partition;
  out.kafka_offset = m->offset;
  out.timestamp_ms = rd_kafka_message_timestamp(m, nullptr);
  out.headers = data::Headers();

  // Each stage's first attempt runs without the original record; a failure
  // re-runs it under the error handler with the original for reporting.
  auto convert = [&](const Converter& conv, const std::string& cls, Stage stage, const void* ptr, size_t len,
                     Data& into) -> bool {
    std::optional<std::string> bytes;
    if (ptr) bytes.emplace(static_cast<const char*>(ptr), len);
    auto first = conv.to_connect_owned(topic, std::move(bytes));
    if (first) {
      into = std::move(first).value();
      return true;
    }
    auto again = errors.execute<Data>(
        stage, cls,
        [&] {
          std::optional<std::string> b;
          if (ptr) b.emplace(static_cast<const char*>(ptr), len);
          return conv.to_connect(topic, b);
        },
        consumed());
    if (!again) return false;
    into = std::move(*again);
    return true;
  };
  if (!convert(*parts_.key_converter, parts_.key_converter_class, Stage::KEY_CONVERTER, m->key, m->key_len, out.key))
    return false;
  if (!convert(*parts_.value_converter, parts_.value_converter_class, Stage::VALUE_CONVERTER, m->payload, m->len,
               out.value))
    return false;
  rd_kafka_headers_t* hdrs = nullptr;
  if (rd_kafka_message_headers(m, &hdrs) == RD_KAFKA_RESP_ERR_NO_ERROR && hdrs) {
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    for (size_t i = 0; rd_kafka_header_get_all(hdrs, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      std::optional<std::string> bytes;
      if (value) bytes.emplace(static_cast<const char*>(value), size);
      const std::string key(name);
      auto h = errors.execute<data::SchemaAndValue>(
          Stage::HEADER_CONVERTER, parts_.header_converter_class,
          [&] { return parts_.header_converter->to_connect_header(topic, key, bytes ? &*bytes : nullptr); },
          consumed());
      if (!h) return false;
      out.headers.add(key, std::move(h->schema), std::move(h->value));
    }
  }
  if (parts_.transforms) {
    StageFailure failure{Stage::TRANSFORMATION, "", "org.apache.kafka.connect.errors.DataException", "", false};
    auto kept = parts_.transforms->apply_sink(out, failure);
    if (!kept) {
      if (failure.message.empty()) failure.message = kept.error().message;
      errors.fail(failure, consumed());
      return false;
    }
    if (!*kept) return false;
  }
  return true;
}

Result<std::unique_ptr<RecordPipeline>> make_record_pipeline(
    const ConnectorConfig& config, const connect::ConnectorTaskId& id, std::shared_ptr<metrics::TaskMetrics> metrics,
    std::stop_token stop, ErrorHandler::DlqSend dlq,
    const std::function<Result<std::unique_ptr<RecordTransforms>>(const connectors::ConfigMap&)>& make_transforms) {
  RecordPipelineParts parts;
  auto named = [](const std::string& key, Error e) {
    e.message = (e.field.empty() || e.field == "converter" ? "" : e.field + ": ") + e.message;
    e.field = key;
    return e;
  };
  const auto& [kcls, kcfg] = config.key_converter;
  const auto& [vcls, vcfg] = config.value_converter;
  const auto& [hcls, hcfg] = config.header_converter;
  auto kc = make_converter(kcls, kcfg, true);
  if (!kc) return named("key.converter", kc.error());
  auto vc = make_converter(vcls, vcfg, false);
  if (!vc) return named("value.converter", vc.error());
  auto hc = converters::make_header_converter(hcls, hcfg);
  if (!hc) return named("header.converter", hc.error());
  auto resolved = [](const std::string& cls) {
    auto full = converters::resolve_converter_class(cls);
    return full ? std::string(*full) : cls;
  };
  parts.key_converter = std::move(kc).value();
  parts.value_converter = std::move(vc).value();
  parts.header_converter = std::move(hc).value();
  parts.key_converter_class = resolved(kcls);
  parts.value_converter_class = resolved(vcls);
  parts.header_converter_class = resolved(hcls);
  if (make_transforms && !config.transform_chain.empty()) {
    auto t = make_transforms(config.transform_chain);
    if (!t) return t.error();
    parts.transforms = std::move(t).value();
  }
  if (config.errors_error) return *config.errors_error;
  parts.errors = std::make_unique<ErrorHandler>(config.errors, id, std::move(metrics), std::move(stop),
                                                std::move(dlq));
  return std::make_unique<RecordPipeline>(std::move(parts));
}

}  // namespace kc::runtime
