#pragma once
// The connector API: what a connector plugin implements, and the records it
// exchanges with the runtime. A small subset of Kafka Connect's
// org.apache.kafka.connect.{connector,source,sink} API.
//
// Errors: plugin methods report failure by throwing (ConnectError or any
// std::exception). The runtime catches them at this boundary and marks the
// connector or task FAILED with the message as its trace.

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/result.h"
#include "worker/data/record.h"
#include "worker/data/value.h"

namespace kc::connectors {

/// A connector or task configuration (string -> string, like Connect).
using ConfigMap = std::map<std::string, std::string>;
/// JSON object whose member order is kept (source partitions and offsets).
using OrderedJson = nlohmann::ordered_json;

/// Failure thrown by plugins (Connect's ConnectException).
class ConnectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A failure that may succeed when tried again (Connect's
/// RetriableException): a sink task's put() that throws it gets the same
/// records again after a backoff; a pipeline stage is retried within
/// errors.retry.timeout.
class RetriableError : public ConnectError {
 public:
  using ConnectError::ConnectError;
};

/// Connect's SchemaAndValue, in the data model of worker/data: `schema`
/// nullptr means schemaless; `value` is the Java object (a null Value is a
/// Java null). Connectors build keys and values from it; converters and
/// transforms act on it.
struct Data {
  data::SchemaPtr schema;
  data::Value value;

  /// A string with Connect's STRING_SCHEMA (OPTIONAL_STRING_SCHEMA and a
  /// null value when `s` is nullopt).
  static Data string(std::optional<std::string> s);
  /// A byte[] with BYTES_SCHEMA.
  static Data bytes(std::string b);
  /// A Java null with no schema.
  static Data null() { return Data{}; }
  /// Same schema (by value) and equal values.
  friend bool operator==(const Data& a, const Data& b);
};

/// An immutable JSON value whose copies share it: copying one copies a
/// pointer. A source task gives every record the same source partition this
/// way (Java's records share one partition Map the same way). Converts from
/// an OrderedJson (then it owns a copy) and to `const OrderedJson&`.
class SharedJson {
 public:
  /// An empty object (shares nothing: no reference count to touch, so
  /// records built on many threads do not contend on one).
  SharedJson() = default;
  SharedJson(OrderedJson value);  // implicit: `record.source_partition = OrderedJson{...}`
  /// Shares an already built value (nullptr = an empty object).
  explicit SharedJson(std::shared_ptr<const OrderedJson> value) : value_(std::move(value)) {}
  const OrderedJson& get() const { return value_ ? *value_ : empty(); }
  operator const OrderedJson&() const { return get(); }
  const OrderedJson& operator*() const { return get(); }
  const OrderedJson* operator->() const { return &get(); }
  /// Equal values; cheap when both share one.
  friend bool operator==(const SharedJson& a, const SharedJson& b) {
    return a.value_ == b.value_ || a.get() == b.get();
  }
  friend bool operator==(const SharedJson& a, const OrderedJson& b) { return a.get() == b; }

 private:
  /// The empty object every default SharedJson reads as.
  static const OrderedJson& empty();
  std::shared_ptr<const OrderedJson> value_;  ///< null: the empty object
};

/// A record produced by a source task. `source_partition` and
/// `source_offset` are JSON objects; the runtime commits the offset of the
/// last record it sent per partition. A record whose `source_offset` was
/// never set (null, the default: no allocation per record) carries no offset
/// of its own: its partition keeps the offset of the last record that had
/// one. A task reading a stream may so set the offset on the last record of
/// each poll only.
struct SourceRecord {
  SharedJson source_partition;
  OrderedJson source_offset;
  std::string topic;
  std::optional<int32_t> kafka_partition;  ///< nullopt = default partitioner
  Data key;
  Data value;
  std::optional<int64_t> timestamp_ms;     ///< nullopt = producer's time
  data::Headers headers;                   ///< converted by the header converter
};

/// A record handed to a sink task.
struct SinkRecord {
  std::string topic;
  int32_t kafka_partition = 0;
  int64_t kafka_offset = 0;
  Data key;
  Data value;
  int64_t timestamp_ms = -1;
  data::Headers headers;  ///< the record's headers, through the header converter
};

/// Topic-partition -> next offset to consume (i.e. last handled + 1).
using TopicPartitionOffsets = std::map<std::pair<std::string, int32_t>, int64_t>;
/// A list of topic-partitions (SinkTask.open / close).
using TopicPartitions = std::vector<std::pair<std::string, int32_t>>;

/// What the producer reported for an acknowledged source record (Connect's
/// RecordMetadata). `offset` and `timestamp_ms` are -1 when unknown.
struct RecordMetadata {
  std::string topic;
  int32_t partition = -1;
  int64_t offset = -1;
  int64_t timestamp_ms = -1;
};

/// What the runtime offers a source task (Connect's SourceTaskContext).
class SourceTaskContext {
 public:
  virtual ~SourceTaskContext() = default;
  /// Last committed offset of `partition` for this task's connector, or
  /// nullopt. Reads a local cache; does not block.
  virtual std::optional<OrderedJson> offset(const OrderedJson& partition) const = 0;
  /// The connector's name.
  virtual const std::string& connector_name() const = 0;
  /// The task number.
  virtual int32_t task_number() const = 0;
  /// A nap the task's stop ends (plugin ABI 1.3's source_task_wait_stopped):
  /// waits up to `timeout` and returns true as soon as the task's stop is
  /// requested (at once when it already was), false when the time passed.
  /// The runtime's context ends it on the task's stop token; this default,
  /// for contexts with no stop to see (tests, tools), sleeps the whole
  /// timeout and returns false.
  virtual bool wait_stopped(std::chrono::milliseconds timeout) const;
};

/// What the runtime offers a sink task (Connect's SinkTaskContext; only
/// the stop-aware nap so far).
class SinkTaskContext {
 public:
  virtual ~SinkTaskContext() = default;
  /// As SourceTaskContext::wait_stopped (plugin ABI 1.3's
  /// sink_task_wait_stopped); this default sleeps the whole timeout and
  /// returns false.
  virtual bool wait_stopped(std::chrono::milliseconds timeout) const;
};

/// A source task. All methods run on the task's own thread.
class SourceTask {
 public:
  virtual ~SourceTask() = default;
  /// Starts with the task config. `ctx` outlives the task.
  virtual void start(const ConfigMap& config, SourceTaskContext& ctx) = 0;
  /// Returns the next records, or an empty vector when none are ready.
  /// Must return within about 1 s so that stop requests are noticed.
  virtual std::vector<SourceRecord> poll() = 0;
  /// SourceTask.commit: the offsets of the records polled so far were
  /// written to the offsets topic. Default: nothing.
  virtual void commit() {}
  /// True when commit_record() does something: only then does the runtime
  /// keep each record until Kafka acknowledges it (no per-record cost else).
  virtual bool wants_commit_record() const { return false; }
  /// SourceTask.commitRecord: `record` (as polled, before transforms) was
  /// acknowledged by Kafka with `metadata`. Runs on the task
  /// thread. Default: nothing.
  virtual void commit_record(const SourceRecord& record, const RecordMetadata& metadata) {
    (void)record;
    (void)metadata;
  }
  /// Releases resources. Called once, after the last poll().
  virtual void stop() = 0;
};

/// A sink task. All methods run on the task's own thread.
class SinkTask {
 public:
  virtual ~SinkTask() = default;
  /// SinkTask.initialize: called once before start() with a context that
  /// outlives the task. Default: nothing (a task never initialized naps
  /// with no stop to see).
  virtual void initialize(SinkTaskContext& ctx) { (void)ctx; }
  /// Starts with the task config.
  virtual void start(const ConfigMap& config) = 0;
  /// Writes (or buffers) records.
  virtual void put(const std::vector<SinkRecord>& records) = 0;
  /// Makes everything put so far durable; the runtime then commits `offsets`
  /// to the consumer group.
  virtual void flush(const TopicPartitionOffsets& offsets) = 0;
  /// SinkTask.preCommit: the offsets to commit for `current` (the consumed
  /// positions not committed yet). Default, as Connect: flush(current),
  /// then commit all of them. Entries left out are not committed.
  virtual TopicPartitionOffsets pre_commit(const TopicPartitionOffsets& current) {
    flush(current);
    return current;
  }
  /// SinkTask.open: partitions newly assigned to this task. Default: nothing.
  virtual void open(const TopicPartitions& partitions) { (void)partitions; }
  /// SinkTask.close: partitions revoked from this task (and all of them
  /// before stop()), after their offsets were committed. Default: nothing.
  virtual void close(const TopicPartitions& partitions) { (void)partitions; }
  /// Releases resources. Called once, after the final flush.
  virtual void stop() = 0;
};

/// Source or sink.
enum class ConnectorType { Source, Sink };

/// What a source connector declares for one config (KIP-618's
/// SourceConnector.exactlyOnceSupport). Unknown is Connect's null: the
/// connector does not say.
enum class ExactlyOnceSupport { Unknown, Supported, Unsupported };

/// "source" / "sink" (REST spelling).
const char* connector_type_name(ConnectorType t);

/// What the runtime offers a running connector (Connect's ConnectorContext).
/// Methods may be called from any thread the connector owns.
class ConnectorContext {
 public:
  virtual ~ConnectorContext() = default;
  /// The connector's name.
  virtual const std::string& connector_name() const = 0;
  /// Asks for new task configs (Connect's requestTaskReconfiguration): the
  /// task configs are generated again and written if they differ, e.g. when
  /// a source gained partitions. Returns at once.
  virtual void request_task_reconfiguration() = 0;
  /// Fails the connector with `message` (Connect's raiseError): its status
  /// becomes FAILED with the message as its trace.
  virtual void raise_error(const std::string& message) = 0;
};

/// The context of a transient connector instance (the leader's task-config
/// generation): it has a name, and drops reconfiguration requests and errors
/// (the generation's own result reports failures).
class DetachedConnectorContext : public ConnectorContext {
 public:
  explicit DetachedConnectorContext(std::string name) : name_(std::move(name)) {}
  const std::string& connector_name() const override { return name_; }
  void request_task_reconfiguration() override {}
  void raise_error(const std::string&) override {}

 private:
  std::string name_;
};

/// A connector instance. start/task_configs/stop run on the connector's own
/// thread (or the caller of Worker::connector_task_configs); never
/// concurrently with each other.
class Connector {
 public:
  virtual ~Connector() = default;
  /// Called once before start() with a context that outlives the
  /// connector. A transient instance (the leader's task-config generation,
  /// validation) gets a context whose requests do nothing.
  virtual void initialize(ConnectorContext& ctx) { (void)ctx; }
  /// Source or sink.
  virtual ConnectorType type() const = 0;
  /// Plugin version string.
  virtual std::string version() const { return "0.1.0"; }
  /// Validates and keeps the connector config. Throws on invalid config.
  virtual void start(const ConfigMap& config) = 0;
  /// Up to `max_tasks` task configs (from `tasks.max`).
  virtual std::vector<ConfigMap> task_configs(int max_tasks) = 0;
  /// Stops the connector.
  virtual void stop() = 0;
  /// A new source task (source connectors only; nullptr for sinks).
  virtual std::unique_ptr<SourceTask> create_source_task() { return nullptr; }
  /// A new sink task (sink connectors only; nullptr for sources).
  virtual std::unique_ptr<SinkTask> create_sink_task() { return nullptr; }
  /// SourceConnector.exactlyOnceSupport (KIP-618): whether this source's
  /// tasks deliver exactly once with `config` when the worker commits their
  /// records and offsets in one transaction. Called on a fresh instance
  /// (no start()) during validation. Default Unknown (Connect's null).
  /// Throws on a broken config; validation reports the message.
  virtual ExactlyOnceSupport exactly_once_support(const ConfigMap& config) {
    (void)config;
    return ExactlyOnceSupport::Unknown;
  }
  /// SourceConnector.canDefineTransactionBoundaries: true when the
  /// connector can define its own transactions (`transaction.boundary=
  /// connector`). The plugin ABI offers no TransactionContext yet, so every
  /// connector here answers false (Connect's default).
  virtual bool can_define_transaction_boundaries(const ConfigMap& config) {
    (void)config;
    return false;
  }
};

// ---------------------------------------------------------------- task counts
// tasks.max is read here and nowhere else (STYLE 14): the herder's leader
// (task-config generation) and runtime::Worker (the connector's owner)
// share parse_tasks_max and generate_task_configs; parse_tasks_max and
// create-time validation share the rule itself (config_def.h
// tasks_max_value).

/// A connector's task-count settings (Connect's ConnectorConfig).
struct TasksMax {
  int32_t max_tasks = 1;  ///< tasks.max: 1..the worker's tasks.max.limit
  bool enforce = true;    ///< tasks.max.enforce (KIP-1004): more task configs than tasks.max fail the connector
};

/// Reads `tasks.max` (default 1) and `tasks.max.enforce` (default true) of
/// a connector config. tasks.max goes through config_def.h tasks_max_value,
/// the rule create-time validation applies, so its errors are the same
/// ("Invalid value 0 for configuration tasks.max: Value must be at least
/// 1"; above `limit`, the worker's tasks.max.limit: "Value must be no more
/// than <limit> (the worker's tasks.max.limit)").
Result<TasksMax> parse_tasks_max(const ConfigMap& config, int32_t limit);

/// Hard bounds on what one task_configs() call may hand back, whatever the
/// connector does: at most the worker's tasks.max.limit configs and
/// kMaxTaskConfigsBytes bytes of keys and values in all. The plugin host
/// stops accepting configs past them (see TaskConfigsCap).
inline constexpr size_t kMaxTaskConfigsBytes = size_t{64} << 20;

/// While alive, bounds the task configs that plugin code on this thread
/// hands to the plugin host (worker/plugins/plugin_host.cpp): the
/// host's task_configs_add returns NULL past `max_configs`, and config_set
/// ignores writes past kMaxTaskConfigsBytes; either marks the cap as hit.
/// A thread-local because the C ABI call has no room for it; set by
/// generate_task_configs around the connector's task_configs().
class TaskConfigsCap {
 public:
  explicit TaskConfigsCap(size_t max_configs);
  ~TaskConfigsCap();
  TaskConfigsCap(const TaskConfigsCap&) = delete;
  TaskConfigsCap& operator=(const TaskConfigsCap&) = delete;

  /// The cap active on this thread, or nullptr.
  static TaskConfigsCap* current();
  /// Counts one more config; false (and hit) past max_configs.
  bool add_config();
  /// Counts `bytes` more; false (and hit) past kMaxTaskConfigsBytes.
  bool add_bytes(size_t bytes);
  /// Whether the connector tried to go past a bound.
  bool hit() const { return hit_; }

 private:
  size_t max_configs_;
  size_t configs_ = 0;
  size_t bytes_ = 0;
  bool hit_ = false;
  TaskConfigsCap* previous_;
};

/// Connect's TooManyTasksException message (KIP-1004): `connector`
/// generated `generated` task configs, more than `max_tasks`.
std::string too_many_tasks_message(const std::string& connector, size_t generated, int32_t max_tasks);

/// Calls `connector.task_configs(tasks.max)` under a TaskConfigsCap of
/// `limit` (tasks.max.limit) configs, then applies tasks.max.enforce as
/// Connect's Worker does: more configs than tasks.max is an error with
/// too_many_tasks_message when enforced, a warn line otherwise (the configs
/// are kept, at most `limit`). A connector that went past the cap is an
/// error naming the cap. Exceptions of the connector propagate. Blocking:
/// runs the plugin on the calling thread.
Result<std::vector<ConfigMap>> generate_task_configs(Connector& connector, const std::string& name,
                                                     const TasksMax& tasks, int32_t limit);

}  // namespace kc::connectors
