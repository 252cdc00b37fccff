// Routing: RegexRouter and TimestampRouter rename the topic, Filter drops the record.
#include "worker/transforms/builtin_util.h"
#include "worker/transforms/config_def.h"
#include "worker/transforms/date_format.h"
#include "worker/transforms/java_regex.h"

namespace kc::transforms::detail {

namespace {

// ---------------------------------------------------------------- RegexRouter

class RegexRouter final : public Transformation {
 public:
  static constexpr std::string_view kName = "RegexRouter";
  static constexpr std::string_view kDoc =
      "Update the record topic using the configured regular expression and replacement string.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"regex", "STRING", std::nullopt, "HIGH", "Regular expression to use for matching."},
            {"replacement", "STRING", std::nullopt, "HIGH", "Replacement string."}};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
    auto re = r.required_string("regex");
    if (!re) return re.error();
    auto rp = r.required_string("replacement");
    if (!rp) return rp.error();
    auto c = JavaRegex::compile(*re);
    if (!c) return invalid_value("regex", *re, "Invalid regex: " + c.error().message);
    regex_ = std::move(*c);
    replacement_ = *rp;
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    if (!regex_->matches(ref.rec.topic)) return Outcome::kKept;
    auto t = regex_->replace_first(ref.rec.topic, replacement_);
    if (!t) return t.error();
    ref.rec.topic = std::move(*t);
    return Outcome::kKept;
  }

 private:
  std::optional<JavaRegex> regex_;
  std::string replacement_;
};

// ---------------------------------------------------------------- TimestampRouter

std::string headers_to_string(const data::Headers& h) {
  if (h.empty()) return "ConnectHeaders(headers=)";
  std::string out = "ConnectHeaders(headers=[";
  for (size_t i = 0; i < h.list().size(); ++i) {
    const auto& x = h.list()[i];
    out += (i ? ", " : "") + std::string("ConnectHeader(key=") + x.key + ", value=" + data::java_to_string(x.value) +
           ", schema=" + (x.schema ? x.schema->to_string() : "null") + ")";
  }
  return out + "])";
}

// ConnectRecord.toString with the SinkRecord / SourceRecord prefix.
std::string record_to_string(const RecordRef& ref) {
  const auto& r = ref.rec;
  std::string prefix;
  if (ref.sink) {
    const auto& s = *ref.sink;
    prefix = "SinkRecord{kafkaOffset=" + std::to_string(s.kafka_offset) + ", timestampType=" +
             std::string(data::timestamp_type_name(s.timestamp_type)) + ", originalTopic=" + s.original_topic +
             ", originalKafkaPartition=" + (s.original_kafka_partition ? std::to_string(*s.original_kafka_partition) : "null") +
             ", originalKafkaOffset=" + std::to_string(s.original_kafka_offset) + "} ";
  } else {
    auto map_text = [](const data::Map& m) { return m.empty() ? std::string("null") : data::java_to_string(Value(m)); };
    prefix = "SourceRecord{sourcePartition=" + map_text(ref.source ? ref.source->source_partition : data::Map{}) +
             ", sourceOffset=" + map_text(ref.source ? ref.source->source_offset : data::Map{}) + "} ";
  }
  auto schema_text = [](const SchemaPtr& s) { return s ? s->to_string() : std::string("null"); };
  return prefix + "ConnectRecord{topic='" + r.topic + "', kafkaPartition=" +
         (r.kafka_partition ? std::to_string(*r.kafka_partition) : "null") + ", key=" + data::java_to_string(r.key) +
         ", keySchema=" + schema_text(r.key_schema) + ", value=" + data::java_to_string(r.value) +
         ", valueSchema=" + schema_text(r.value_schema) + ", timestamp=" +
         (r.timestamp ? std::to_string(*r.timestamp) : "null") + ", headers=" + headers_to_string(r.headers) + "}";
}

class TimestampRouter final : public Transformation {
 public:
  static constexpr std::string_view kName = "TimestampRouter";
  static constexpr std::string_view kDoc =
      "Update the record's topic field as a function of the original topic value and the record timestamp.";
  static std::vector<ConfigKeyDef> defs() {
    return {{"topic.format", "STRING", "${topic}-${timestamp}", "HIGH",
             "Format string which can contain <code>${topic}</code> and <code>${timestamp}</code> as placeholders for the topic and timestamp, respectively."},
            {"timestamp.format", "STRING", "yyyyMMdd", "HIGH",
             "Format string for the timestamp that is compatible with <code>java.text.SimpleDateFormat</code>."}};
  }
  Status configure(const Config& config) override {
    ConfigReader r(config, defs());
    auto t = r.required_string("topic.format");
    if (!t) return t.error();
    auto f = r.required_string("timestamp.format");
    if (!f) return f.error();
    auto c = SimpleDateFormat::compile(*f);
    if (!c) return invalid_value("timestamp.format", *f, c.error().message);
    topic_format_ = *t;
    format_ = std::move(*c);
    return ok_status();
  }
  Result<Outcome> apply(RecordRef ref) override {
    if (!ref.rec.timestamp) return data_error("Timestamp missing on record: " + record_to_string(ref));
    std::string ts = format_->format(*ref.rec.timestamp);
    std::string out = replace_all(topic_format_, "${topic}", ref.rec.topic);
    ref.rec.topic = replace_all(out, "${timestamp}", ts);
    return Outcome::kKept;
  }

 private:
  static std::string replace_all(const std::string& s, std::string_view from, const std::string& to) {
    std::string out;
    size_t pos = 0;
    while (true) {
      size_t hit = s.find(from, pos);
      if (hit == std::string::npos) break;
      out.append(s, pos, hit - pos);
      out += to;
      pos = hit + from.size();
    }
    out.append(s, pos);
    return out;
  }
  std::string topic_format_;
  std::optional<SimpleDateFormat> format_;
};

// ---------------------------------------------------------------- Filter

class Filter final : public Transformation {
 public:
  static constexpr std::string_view kName = "Filter";
  static constexpr std::string_view kDoc =
      "Drops all records, filtering them from subsequent transformations in the chain. This is intended to be used conditionally to filter out records matching (or not matching) a particular Predicate.";
  static std::vector<ConfigKeyDef> defs() { return {}; }
  Status configure(const Config&) override { return ok_status(); }
  Result<Outcome> apply(RecordRef) override { return Outcome::kDropped; }
};

}  // namespace

void add_routing(std::vector<PluginInfo>& out) { add_plugins<Filter, RegexRouter, TimestampRouter>(out); }

}  // namespace kc::transforms::detail
