// kconnectd connector plugins in C++ (header-only, C++17), over the C ABI of
// kconnectd/plugin.h. Writing a connector looks like Kafka Connect's Java
// API: derive from SourceConnector / SinkConnector and SourceTask /
// SinkTask, describe the config with ConfigDef, and register the classes in
// a KCONNECTD_PLUGIN block. Exceptions thrown by your code are caught at the
// boundary: RetriableError becomes KC_RETRIABLE, any other exception
// KC_ERROR with its what() as the message (the task or connector FAILS
// with it as trace). See include/kconnectd/README.md.
#ifndef KCONNECTD_PLUGIN_HPP
#define KCONNECTD_PLUGIN_HPP

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "kconnectd/plugin.h"

namespace kconnectd {

namespace detail {
/// The worker's function table, set by the registration entry point.
inline const kc_host_api* g_host = nullptr;
}  // namespace detail

/// The host function table (valid once the plugin is registered).
inline const kc_host_api& host() { return *detail::g_host; }

/// Log levels of log() (the worker's levels).
enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3 };
/// Writes `message` to the worker's log at `level` (kc_host_api.log).
inline void log(LogLevel level, const std::string& message) {
  host().log(static_cast<int>(level), message.c_str());
}

/// Connect's ConnectException: fails the task or connector with its message.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// Connect's RetriableException: put() is retried with the same records.
class RetriableError : public Error {
 public:
  using Error::Error;
};

/// A connector or task config (string -> string).
using Config = std::map<std::string, std::string>;
/// `key`'s value; throws Error "<who> requires the '<key>' setting" when it
/// is missing or empty.
inline std::string require_setting(const Config& c, const std::string& key, const std::string& who) {
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) throw Error(who + " requires the '" + key + "' setting");
  return it->second;
}

/// `key` as a whole number, `def` when missing or empty; throws Error with
/// ConfigDef's "Invalid value X for configuration K: Not a number of type
/// INT" otherwise.
inline int64_t int_setting(const Config& c, const std::string& key, int64_t def) {
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) return def;
  try {
    size_t used = 0;
    int64_t v = std::stoll(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw Error("Invalid value " + it->second + " for configuration " + key + ": Not a number of type INT");
}

/// `key` as a number, `def` when missing or empty; throws Error "Invalid
/// value X for configuration K: Not a number" otherwise.
inline double double_setting(const Config& c, const std::string& key, double def) {
  auto it = c.find(key);
  if (it == c.end() || it->second.empty()) return def;
  try {
    return std::stod(it->second);
  } catch (const std::exception&) {
    throw Error("Invalid value " + it->second + " for configuration " + key + ": Not a number");
  }
}

/// (topic, partition) -> next offset to consume.
using Offsets = std::map<std::pair<std::string, int32_t>, int64_t>;
/// A list of (topic, partition).
using TopicPartitions = std::vector<std::pair<std::string, int32_t>>;

namespace detail {
/// Runs `f`, turning exceptions into a status and a message (the ABI rule:
/// nothing is thrown across the boundary).
template <typename F>
kc_status guard(F&& f) noexcept {
  try {
    f();
    return KC_OK;
  } catch (const RetriableError& e) {
    host().set_error(e.what());
    return KC_RETRIABLE;
  } catch (const std::exception& e) {
    host().set_error(e.what());
    return KC_ERROR;
  } catch (...) {
    host().set_error("unknown exception");
    return KC_ERROR;
  }
}
/// Throws Error with the host's last error when `st` is not KC_OK.
inline void ok(kc_status st) {
  if (st != KC_OK) throw Error(host().last_error());
}
inline Config to_config(const kc_config* c) {
  Config out;
  host().config_foreach(
      c, [](const char* k, const char* v, void* u) { (*static_cast<Config*>(u))[k] = v; }, &out);
  return out;
}
}  // namespace detail

// ---------------------------------------------------------------- schemas

/// A Connect schema (immutable). Empty (no schema) when default-made.
class Schema {
 public:
  Schema() = default;
  /// A borrowed schema (from a record, a field, or predefined).
  static Schema borrow(const kc_schema* s) { return Schema(s, nullptr); }
  /// Schema.INT32_SCHEMA, Schema.OPTIONAL_STRING_SCHEMA, ... (primitive types).
  static Schema of(kc_schema_type t, bool optional = false) {
    return borrow(host().schema_predefined(t, optional ? 1 : 0));
  }
  static Schema string() { return of(KC_STRING); }
  static Schema int64() { return of(KC_INT64); }
  static Schema int32() { return of(KC_INT32); }
  static Schema bytes() { return of(KC_BYTES); }
  static Schema boolean() { return of(KC_BOOLEAN); }
  static Schema float64() { return of(KC_FLOAT64); }

  explicit operator bool() const { return s_ != nullptr; }
  const kc_schema* handle() const { return s_; }
  kc_schema_type type() const { return host().schema_type(s_); }
  bool optional() const { return host().schema_optional(s_) != 0; }
  /// nullopt when unnamed.
  std::optional<std::string> name() const {
    const char* n = host().schema_name(s_);
    return n ? std::optional<std::string>(n) : std::nullopt;
  }
  /// A schema parameter (e.g. Decimal's "scale"); nullopt when absent.
  std::optional<std::string> parameter(const std::string& key) const {
    const char* p = host().schema_parameter(s_, key.c_str());
    return p ? std::optional<std::string>(p) : std::nullopt;
  }
  /// Schema.defaultValue() (ABI 1.2): a view of the default, or nullopt
  /// when there is none or the worker is older than 1.2.
  std::optional<const kc_value*> default_value() const;
  /// Schema.equals (ABI 1.2): both empty, or equal by value. A worker
  /// older than 1.2 compares handles only.
  bool equals(const Schema& other) const;
  size_t field_count() const { return host().schema_field_count(s_); }
  /// The field named `name`, or nullopt when the struct has none.
  std::optional<size_t> field_index(const std::string& name) const {
    const int i = host().schema_field_index(s_, name.c_str());
    return i < 0 ? std::nullopt : std::optional<size_t>(static_cast<size_t>(i));
  }
  std::string field_name(size_t i) const { return host().schema_field_name(s_, i); }
  Schema field_schema(size_t i) const { return Schema(host().schema_field_schema(s_, i), owner_); }

 private:
  friend class SchemaBuilder;
  Schema(const kc_schema* s, std::shared_ptr<const kc_schema> owner) : s_(s), owner_(std::move(owner)) {}
  const kc_schema* s_ = nullptr;
  std::shared_ptr<const kc_schema> owner_;  ///< set for built schemas
};

/// Connect's SchemaBuilder: `SchemaBuilder::struct_().name("x").field("a",
/// Schema::int32()).build()`. build() throws Error on a bad schema.
class SchemaBuilder {
 public:
  static SchemaBuilder struct_() { return SchemaBuilder(host().schema_builder_new(KC_STRUCT)); }
  static SchemaBuilder of(kc_schema_type t) { return SchemaBuilder(host().schema_builder_new(t)); }
  static SchemaBuilder array(const Schema& v) { return SchemaBuilder(host().schema_builder_array(v.handle())); }
  static SchemaBuilder map(const Schema& k, const Schema& v) {
    return SchemaBuilder(host().schema_builder_map(k.handle(), v.handle()));
  }
  SchemaBuilder(SchemaBuilder&& o) noexcept : b_(std::exchange(o.b_, nullptr)) {}
  SchemaBuilder(const SchemaBuilder&) = delete;
  ~SchemaBuilder() {
    if (b_) host().schema_builder_free(b_);
  }
  SchemaBuilder& optional() { return host().schema_builder_optional(b_), *this; }
  SchemaBuilder& name(const std::string& n) { return host().schema_builder_name(b_, n.c_str()), *this; }
  SchemaBuilder& version(int32_t v) { return host().schema_builder_version(b_, v), *this; }
  SchemaBuilder& doc(const std::string& d) { return host().schema_builder_doc(b_, d.c_str()), *this; }
  SchemaBuilder& field(const std::string& n, const Schema& s) {
    return host().schema_builder_field(b_, n.c_str(), s.handle()), *this;
  }
  Schema build() {
    const kc_schema* s = host().schema_build(std::exchange(b_, nullptr));
    if (!s) throw Error(host().last_error());
    std::shared_ptr<const kc_schema> owner(s, [](const kc_schema* p) { host().schema_release(p); });
    return Schema(s, owner);
  }

 private:
  explicit SchemaBuilder(kc_schema_builder* b) : b_(b) {
    if (!b_) throw Error(host().last_error());
  }
  kc_schema_builder* b_;
};

/// True when the worker's host table has the member `m` (added in a later
/// MINOR than some workers have).
#define KCONNECTD_HOST_HAS(m) \
  (::kconnectd::host().struct_size >= offsetof(kc_host_api, m) + sizeof(::kconnectd::host().m))

inline std::optional<const kc_value*> Schema::default_value() const {
  if (!s_ || !KCONNECTD_HOST_HAS(schema_default_value)) return std::nullopt;
  const kc_value* v = host().schema_default_value(s_);
  return v ? std::optional<const kc_value*>(v) : std::nullopt;
}
inline bool Schema::equals(const Schema& other) const {
  if (s_ == other.s_) return true;
  if (!s_ || !other.s_ || !KCONNECTD_HOST_HAS(schema_equals)) return false;
  return host().schema_equals(s_, other.s_) != 0;
}

// ---------------------------------------------------------------- values

/// A read-only view of a runtime value (a record's key, a struct field...).
class ValueView {
 public:
  explicit ValueView(const kc_value* v) : v_(v) {}
  const kc_value* handle() const { return v_; }
  kc_value_kind kind() const { return v_ ? host().value_kind(v_) : KC_VALUE_NULL; }
  bool is_null() const { return kind() == KC_VALUE_NULL; }
  int8_t as_int8() const { return host().value_int8(v_); }
  int16_t as_int16() const { return host().value_int16(v_); }
  int32_t as_int32() const { return host().value_int32(v_); }
  float as_float32() const { return host().value_float32(v_); }
  /// java.util.Date's epoch ms (DATE kind).
  int64_t as_date() const { return host().value_date(v_); }
  int64_t as_int64() const { return host().value_int64(v_); }
  double as_float64() const { return host().value_float64(v_); }
  bool as_boolean() const { return host().value_boolean(v_) != 0; }
  /// STRING's text (BYTES: use as_bytes). Throws Error on another kind.
  std::string as_string() const {
    size_t n = 0;
    const char* p = host().value_string(v_, &n);
    if (!p) throw Error("value is not a string");
    return std::string(p, n);
  }
  std::string as_bytes() const {
    size_t n = 0;
    const char* p = host().value_bytes(v_, &n);
    if (!p) throw Error("value is not bytes");
    return std::string(p, n);
  }
  /// STRING's text without a copy (valid while the value is); nullopt on
  /// another kind. The fast path for sinks that write text as it is.
  std::optional<std::string_view> string_ref() const {
    size_t n = 0;
    const char* p = v_ ? host().value_string(v_, &n) : nullptr;
    return p ? std::optional<std::string_view>(std::string_view(p, n)) : std::nullopt;
  }
  /// BYTES' bytes without a copy (valid while the value is); nullopt on
  /// another kind.
  std::optional<std::string_view> bytes_ref() const {
    size_t n = 0;
    const char* p = v_ ? host().value_bytes(v_, &n) : nullptr;
    return p ? std::optional<std::string_view>(std::string_view(p, n)) : std::nullopt;
  }
  size_t size() const { return kind() == KC_VALUE_MAP ? host().value_map_size(v_) : host().value_array_size(v_); }
  ValueView at(size_t i) const { return ValueView(host().value_array_get(v_, i)); }
  /// Struct.get(field). Throws Error for an unknown field.
  ValueView get(const std::string& field) const {
    const kc_value* f = host().value_struct_get(v_, field.c_str());
    if (!f) throw Error(host().last_error());
    return ValueView(f);
  }
  /// String.valueOf(value), as Connect prints it.
  std::string to_string() const {
    char* s = host().value_to_string(v_);
    std::string out(s);
    host().string_free(s);
    return out;
  }

 private:
  const kc_value* v_;
};

/// An owned value being built; moved into a record, list, map or struct.
class Value {
 public:
  Value() : v_(host().value_new()) {}
  Value(Value&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  Value(const Value&) = delete;
  Value& operator=(Value&& o) noexcept {
    std::swap(v_, o.v_);
    return *this;
  }
  ~Value() {
    if (v_) host().value_free(v_);
  }
  static Value of(int32_t x) { return Value().set(x); }
  static Value of(int64_t x) { return Value().set(x); }
  static Value of(double x) { return Value().set(x); }
  static Value of(bool x) { return Value().set(x); }
  static Value of(const std::string& s) { return Value().set(s); }
  static Value of(const char* s) { return Value().set(std::string(s)); }
  static Value bytes(const std::string& b) {
    Value v;
    host().value_set_bytes(v.v_, b.data(), b.size());
    return v;
  }
  /// A struct of `schema` with every field null; fill it with put().
  static Value struct_of(const Schema& schema) {
    Value v;
    detail::ok(host().value_set_struct(v.v_, schema.handle()));
    return v;
  }
  static Value list() {
    Value v;
    host().value_set_array(v.v_);
    return v;
  }
  Value&& set(int32_t x) && { return host().value_set_int32(v_, x), std::move(*this); }
  Value&& set(int64_t x) && { return host().value_set_int64(v_, x), std::move(*this); }
  Value&& set(double x) && { return host().value_set_float64(v_, x), std::move(*this); }
  Value&& set(bool x) && { return host().value_set_boolean(v_, x ? 1 : 0), std::move(*this); }
  Value&& set(const std::string& s) && { return host().value_set_string(v_, s.data(), s.size()), std::move(*this); }
  /// Struct.put (validated; throws Error with Connect's message).
  Value& put(const std::string& field, Value item) {
    detail::ok(host().value_struct_put(v_, field.c_str(), item.v_));
    return *this;
  }
  /// List.add.
  Value& append(Value item) {
    detail::ok(host().value_array_append(v_, item.v_));
    return *this;
  }
  kc_value* handle() { return v_; }
  ValueView view() const { return ValueView(v_); }

 private:
  kc_value* v_;
};

/// A source partition or offset: a JSON object of strings and numbers.
class Json {
 public:
  Json() : j_(host().json_new()), owned_(true) {}
  /// A view of the runtime's object (not freed).
  explicit Json(kc_json* j) : j_(j), owned_(false) {}
  Json(Json&& o) noexcept : j_(std::exchange(o.j_, nullptr)), owned_(o.owned_) {}
  Json(const Json&) = delete;
  ~Json() {
    if (j_ && owned_) host().json_free(j_);
  }
  Json& set(const std::string& k, const std::string& v) { return host().json_set_string(j_, k.c_str(), v.c_str()), *this; }
  Json& set(const std::string& k, const char* v) { return set(k, std::string(v)); }
  Json& set(const std::string& k, int64_t v) { return host().json_set_int64(j_, k.c_str(), v), *this; }
  Json& set(const std::string& k, int v) { return set(k, static_cast<int64_t>(v)); }
  Json& set(const std::string& k, double v) { return host().json_set_double(j_, k.c_str(), v), *this; }
  std::optional<int64_t> get_int64(const std::string& k) const {
    int64_t v = 0;
    return host().json_get_int64(j_, k.c_str(), &v) ? std::optional<int64_t>(v) : std::nullopt;
  }
  std::optional<std::string> get_string(const std::string& k) const {
    const char* v = nullptr;
    return host().json_get_string(j_, k.c_str(), &v) ? std::optional<std::string>(v) : std::nullopt;
  }
  kc_json* handle() const { return j_; }

 private:
  kc_json* j_;
  bool owned_;
};

// ---------------------------------------------------------------- records

/// A source record being built in the runtime's batch (SourceRecord).
class SourceRecord {
 public:
  explicit SourceRecord(kc_source_record* r) : r_(r) {}
  SourceRecord& topic(const std::string& t) { return host().source_record_set_topic(r_, t.c_str()), *this; }
  SourceRecord& kafka_partition(int32_t p) { return host().source_record_set_partition(r_, p), *this; }
  SourceRecord& timestamp(int64_t ms) { return host().source_record_set_timestamp(r_, ms), *this; }
  SourceRecord& key(const Schema& s, Value v) { return host().source_record_set_key(r_, s.handle(), v.handle()), *this; }
  SourceRecord& value(const Schema& s, Value v) {
    return host().source_record_set_value(r_, s.handle(), v.handle()), *this;
  }
  /// A STRING value from `text` (copied once, into the record): no value
  /// handle is made per record, for sources that emit many strings.
  SourceRecord& value(const Schema& s, std::string_view text) {
    kc_value* slot = scratch();
    host().value_set_string(slot, text.data(), text.size());
    return host().source_record_set_value(r_, s.handle(), slot), *this;  // moves it out, leaves null
  }
  /// Records given the same Json share one copy.
  SourceRecord& source_partition(const Json& p) {
    return host().source_record_set_source_partition(r_, p.handle()), *this;
  }
  /// The record's own offset object, set in place.
  Json source_offset() { return Json(host().source_record_source_offset(r_)); }
  SourceRecord& header(const std::string& k, const Schema& s, Value v) {
    return host().headers_add(host().source_record_headers(r_), k.c_str(), s.handle(), v.handle()), *this;
  }

 private:
  /// This thread's reusable value slot for the string fast path.
  static kc_value* scratch() {
    thread_local Value slot;
    return slot.handle();
  }
  kc_source_record* r_;
};

/// What one poll() returns: add() appends a record in place.
class SourceRecords {
 public:
  explicit SourceRecords(kc_source_records* out) : out_(out) {}
  SourceRecord add() { return SourceRecord(host().source_records_add(out_)); }

 private:
  kc_source_records* out_;
};

/// A record handed to a sink task (SinkRecord); valid during put().
class SinkRecord {
 public:
  explicit SinkRecord(const kc_sink_record* r) : r_(r) {}
  std::string topic() const { return host().sink_record_topic(r_); }
  int32_t kafka_partition() const { return host().sink_record_partition(r_); }
  int64_t kafka_offset() const { return host().sink_record_offset(r_); }
  int64_t timestamp() const { return host().sink_record_timestamp(r_); }
  Schema key_schema() const { return Schema::borrow(host().sink_record_key_schema(r_)); }
  ValueView key() const { return ValueView(host().sink_record_key(r_)); }
  Schema value_schema() const { return Schema::borrow(host().sink_record_value_schema(r_)); }
  ValueView value() const { return ValueView(host().sink_record_value(r_)); }

 private:
  const kc_sink_record* r_;
};

/// A polled source record, read back in commit_record().
class SourceRecordView {
 public:
  explicit SourceRecordView(const kc_source_record* r) : r_(r) {}
  std::string topic() const { return host().source_record_topic(r_); }
  ValueView key() const { return ValueView(host().source_record_key(r_)); }
  ValueView value() const { return ValueView(host().source_record_value(r_)); }
  /// A source offset field (nullopt when absent or not an integer).
  std::optional<int64_t> offset_int64(const std::string& k) const {
    int64_t v = 0;
    return host().json_get_int64(host().source_record_get_source_offset(r_), k.c_str(), &v)
               ? std::optional<int64_t>(v)
               : std::nullopt;
  }

 private:
  const kc_source_record* r_;
};

/// The records of one put().
class SinkRecords {
 public:
  explicit SinkRecords(const kc_sink_records* rs) : rs_(rs) {}
  size_t size() const { return host().sink_records_size(rs_); }
  SinkRecord operator[](size_t i) const { return SinkRecord(host().sink_records_at(rs_, i)); }

 private:
  const kc_sink_records* rs_;
};

// ---------------------------------------------------------------- contexts

namespace detail {
/// The nap of a context with no stop to see (a worker older than ABI 1.3).
inline bool sleep_unstoppable(std::chrono::milliseconds timeout) {
  std::this_thread::sleep_for(timeout);
  return false;
}
}  // namespace detail

/// Connect's SourceTaskContext (with its OffsetStorageReader).
class SourceTaskContext {
 public:
  /// No handle yet (SourceTask::context() before start()).
  SourceTaskContext() = default;
  explicit SourceTaskContext(const kc_source_task_context* c) : c_(c) {}
  /// The committed offset of `partition`, or nullopt.
  std::optional<Json> offset(const Json& partition) const {
    Json out;
    if (!host().source_offset(c_, partition.handle(), out.handle())) return std::nullopt;
    return std::optional<Json>(std::move(out));
  }
  std::string connector_name() const { return host().task_connector_name(c_); }
  int32_t task_number() const { return host().task_number(c_); }
  /// Waits up to `timeout` for this task's stop (ABI 1.3's
  /// source_task_wait_stopped): true as soon as the worker asked the task
  /// to stop (at once when it already had), false when the time passed.
  /// For backoffs and idle waits in poll(), which then returns at once on
  /// true. A worker older than 1.3 has no such call: it sleeps the whole
  /// timeout and answers false.
  bool wait_stopped(std::chrono::milliseconds timeout) const {
    if (!c_ || !KCONNECTD_HOST_HAS(source_task_wait_stopped)) return detail::sleep_unstoppable(timeout);
    return host().source_task_wait_stopped(c_, timeout.count()) != 0;
  }

 private:
  const kc_source_task_context* c_ = nullptr;
};

/// Connect's SinkTaskContext (ABI 1.3; only the stop-aware nap so far).
class SinkTaskContext {
 public:
  /// No handle: a worker older than 1.3 (it never initializes the task).
  SinkTaskContext() = default;
  explicit SinkTaskContext(const kc_sink_task_context* c) : c_(c) {}
  /// As SourceTaskContext::wait_stopped, for backoffs in put() (a put()
  /// that gives up on true may throw RetriableError: the records are not
  /// committed). Without a handle or a 1.3 worker it sleeps the whole
  /// timeout and answers false.
  bool wait_stopped(std::chrono::milliseconds timeout) const {
    if (!c_ || !KCONNECTD_HOST_HAS(sink_task_wait_stopped)) return detail::sleep_unstoppable(timeout);
    return host().sink_task_wait_stopped(c_, timeout.count()) != 0;
  }

 private:
  const kc_sink_task_context* c_ = nullptr;
};

/// Connect's ConnectorContext.
class ConnectorContext {
 public:
  explicit ConnectorContext(const kc_connector_context* c) : c_(c) {}
  std::string connector_name() const { return host().connector_name(c_); }
  void request_task_reconfiguration() const { host().request_task_reconfiguration(c_); }
  void raise_error(const std::string& m) const { host().raise_error(c_, m.c_str()); }

 private:
  const kc_connector_context* c_;
};

// ---------------------------------------------------------------- base classes

template <typename C, typename T>
struct Tables;

/// Connect's Connector (base of SourceConnector and SinkConnector).
class Connector {
 public:
  virtual ~Connector() = default;
  /// The context, valid from construction on.
  const ConnectorContext& context() const { return *ctx_; }
  virtual void start(const Config& config) = 0;
  /// Up to max_tasks task configs.
  virtual std::vector<Config> task_configs(int max_tasks) = 0;
  virtual void stop() = 0;
  /// Extra validation (Connector.validate): key -> messages. Default none.
  virtual std::map<std::string, std::vector<std::string>> validate(const Config& config) {
    (void)config;
    return {};
  }

 private:
  template <typename, typename>
  friend struct Tables;
  std::optional<ConnectorContext> ctx_;
};
/// What a source connector declares (SourceConnector.exactlyOnceSupport,
/// KIP-618); Unknown is Connect's null.
enum class ExactlyOnceSupport { Unknown, Supported, Unsupported };

/// Connect's SourceConnector.
class SourceConnector : public Connector {
 public:
  /// Whether this connector's tasks deliver exactly once with `config` when
  /// the worker commits their records and source offsets in one
  /// transaction (`exactly.once.support=required` needs Supported). Called
  /// on a fresh instance, before any start(). Default Unknown.
  virtual ExactlyOnceSupport exactly_once_support(const Config& config) {
    (void)config;
    return ExactlyOnceSupport::Unknown;
  }
};
class SinkConnector : public Connector {};

/// Connect's SourceTask.
class SourceTask {
 public:
  virtual ~SourceTask() = default;
  /// The task's context (also handed to start()), valid from start() on:
  /// `context().wait_stopped(100ms)` naps in poll().
  const SourceTaskContext& context() const { return ctx_; }
  virtual void start(const Config& config, const SourceTaskContext& ctx) = 0;
  /// Appends the next records (none when nothing is ready; return within ~1 s).
  virtual void poll(SourceRecords& out) = 0;
  /// The offsets of the records polled so far were committed.
  virtual void commit() {}
  /// `record` was acknowledged by Kafka (`md`; partition -1 when it was not
  /// sent, e.g. dropped by a transform). Runs on the task thread. Only
  /// tasks that override it are called (others cost nothing per record).
  virtual void commit_record(const SourceRecordView& record, const kc_record_metadata& md) {
    (void)record;
    (void)md;
  }
  virtual void stop() = 0;

 private:
  template <typename, typename>
  friend struct Tables;
  SourceTaskContext ctx_;
};

/// Connect's SinkTask.
class SinkTask {
 public:
  virtual ~SinkTask() = default;
  /// The task's context (SinkTask.initialize), valid from start() on:
  /// `context().wait_stopped(backoff)` in put(). A worker older than ABI
  /// 1.3 gives none: its naps are plain sleeps.
  const SinkTaskContext& context() const { return ctx_; }
  virtual void start(const Config& config) = 0;
  virtual void put(const SinkRecords& records) = 0;
  /// Makes everything put so far durable.
  virtual void flush(const Offsets& offsets) { (void)offsets; }
  /// The offsets to commit; default flush(current), then all of them.
  virtual Offsets pre_commit(const Offsets& current) {
    flush(current);
    return current;
  }
  virtual void open(const TopicPartitions& partitions) { (void)partitions; }
  virtual void close(const TopicPartitions& partitions) { (void)partitions; }
  virtual void stop() = 0;

 private:
  template <typename, typename>
  friend struct Tables;
  SinkTaskContext ctx_;
};

// ---------------------------------------------------------------- config definition

/// One key of a ConfigDef; chain its setters.
struct ConfigKey {
  std::string name;
  kc_config_type type = KC_CONFIG_STRING;
  bool required = false;
  std::optional<std::string> default_value;
  kc_importance importance = KC_IMPORTANCE_MEDIUM;
  std::string documentation;
  std::optional<double> min, max;
  std::vector<std::string> one_of;
  bool non_empty = false;
  std::string display_name;  ///< "" = the name
  std::string group;         ///< "" = none (ConfigDef's group, for UIs)
  int32_t order = -1;        ///< orderInGroup (ABI 1.2); -1 = none
};

/// Connect's ConfigDef: `ConfigDef().define("topic", KC_CONFIG_STRING,
/// KC_IMPORTANCE_HIGH, "The topic").non_empty()`; setters after define()
/// apply to the key just defined. Groups (UI hints) are set once for a run
/// of keys, as Kafka's configs write them with a running orderInGroup:
/// `ConfigDef().begin_group("Mirror").define("a", ...).define("b", ...)`
/// puts "a" and "b" in group "Mirror" with orders 1 and 2.
class ConfigDef {
 public:
  /// A required key (no default).
  ConfigDef& define(const std::string& name, kc_config_type type, kc_importance imp, const std::string& doc) {
    return add(ConfigKey{name, type, true, std::nullopt, imp, doc, {}, {}, {}, false, {}, {}, -1});
  }
  /// A key with a default.
  ConfigDef& define(const std::string& name, kc_config_type type, const std::string& def, kc_importance imp,
                    const std::string& doc) {
    return add(ConfigKey{name, type, false, def, imp, doc, {}, {}, {}, false, {}, {}, -1});
  }
  /// Starts group `g` (a UI hint): every key defined after it, until the
  /// next begin_group() or end_group(), is in `g`, numbered 1, 2, ... in
  /// definition order (its orderInGroup). group() and order() on one key
  /// still override. An empty `g` is end_group().
  ConfigDef& begin_group(const std::string& g) {
    current_group_ = g;
    next_order_ = 1;
    return *this;
  }
  /// Ends the current group: keys defined after it have no group and no
  /// order (unless set per key).
  ConfigDef& end_group() { return begin_group(""); }
  ConfigDef& at_least(double v) { return keys_.back().min = v, *this; }
  ConfigDef& at_most(double v) { return keys_.back().max = v, *this; }
  ConfigDef& one_of(std::vector<std::string> v) { return keys_.back().one_of = std::move(v), *this; }
  ConfigDef& non_empty() { return keys_.back().non_empty = true, *this; }
  /// The display name (UI hint); default the key's name.
  ConfigDef& display(const std::string& d) { return keys_.back().display_name = d, *this; }
  /// The group the key just defined is shown in (UI hint); default the
  /// begin_group() in force, else none.
  ConfigDef& group(const std::string& g) { return keys_.back().group = g, *this; }
  /// Its place within the group (ConfigDef's orderInGroup; UI hint);
  /// default its place after begin_group(), else none (-1).
  ConfigDef& order(int32_t n) { return keys_.back().order = n, *this; }
  /// Makes the key just defined optional with a null default (ConfigDef's
  /// `define(name, type, null, importance, doc)`): absent is fine.
  ConfigDef& optional() {
    keys_.back().required = false;
    keys_.back().default_value.reset();
    return *this;
  }
  const std::vector<ConfigKey>& keys() const { return keys_; }

 private:
  ConfigDef& add(ConfigKey k) {
    if (!current_group_.empty()) {
      k.group = current_group_;
      k.order = next_order_++;
    }
    keys_.push_back(std::move(k));
    return *this;
  }
  std::vector<ConfigKey> keys_;
  std::string current_group_;  ///< set by begin_group(); "" = none
  int32_t next_order_ = 1;     ///< the order the next key of the group gets
};

// ---------------------------------------------------------------- registration

/// The C tables of one connector class C with tasks T.
template <typename C, typename T>
struct Tables {
  static kc_status create(void*, const kc_connector_context* ctx, void** self) {
    return detail::guard([&] {
      auto* c = new C();
      c->ctx_.emplace(ctx);
      *self = c;
    });
  }
  static kc_status start(void* self, const kc_config* cfg) {
    return detail::guard([&] { static_cast<C*>(self)->start(detail::to_config(cfg)); });
  }
  static kc_status task_configs(void* self, int32_t max, kc_task_configs* out) {
    return detail::guard([&] {
      for (const auto& tc : static_cast<C*>(self)->task_configs(max)) {
        kc_config* c = host().task_configs_add(out);
        if (!c) break;  // past the host's cap: it keeps nothing more
        for (const auto& [k, v] : tc) host().config_set(c, k.c_str(), v.c_str());
      }
    });
  }
  static kc_status stop(void* self) {
    return detail::guard([&] { static_cast<C*>(self)->stop(); });
  }
  static kc_status validate(void* self, const kc_config* cfg, kc_config_errors* errs) {
    return detail::guard([&] {
      for (const auto& [k, msgs] : static_cast<C*>(self)->validate(detail::to_config(cfg)))
        for (const auto& m : msgs) host().config_error_add(errs, k.c_str(), m.c_str());
    });
  }
  static void destroy(void* self) { delete static_cast<C*>(self); }
  static kc_status exactly_once_support(void* self, const kc_config* cfg, kc_exactly_once_support* out) {
    return detail::guard([&] {
      switch (static_cast<C*>(self)->exactly_once_support(detail::to_config(cfg))) {
        case ExactlyOnceSupport::Supported: *out = KC_EXACTLY_ONCE_SUPPORTED; break;
        case ExactlyOnceSupport::Unsupported: *out = KC_EXACTLY_ONCE_UNSUPPORTED; break;
        case ExactlyOnceSupport::Unknown: *out = KC_EXACTLY_ONCE_UNKNOWN; break;
      }
    });
  }

  static kc_status task_create(void*, void** self) {
    return detail::guard([&] { *self = new T(); });
  }
  static void task_destroy(void* self) { delete static_cast<T*>(self); }
  static kc_status task_stop(void* self) {
    return detail::guard([&] { static_cast<T*>(self)->stop(); });
  }
  // Source tasks.
  static kc_status src_start(void* self, const kc_config* cfg, const kc_source_task_context* ctx) {
    return detail::guard([&] {
      T* t = static_cast<T*>(self);
      t->SourceTask::ctx_ = SourceTaskContext(ctx);
      t->start(detail::to_config(cfg), t->SourceTask::ctx_);
    });
  }
  static kc_status src_poll(void* self, kc_source_records* out) {
    return detail::guard([&] {
      SourceRecords rs(out);
      static_cast<T*>(self)->poll(rs);
    });
  }
  static kc_status src_commit(void* self) {
    return detail::guard([&] { static_cast<T*>(self)->commit(); });
  }
  static kc_status src_commit_record(void* self, const kc_source_record* r, const kc_record_metadata* md) {
    return detail::guard([&] { static_cast<T*>(self)->commit_record(SourceRecordView(r), *md); });
  }
  // Sink tasks.
  static kc_status sink_initialize(void* self, const kc_sink_task_context* ctx) {
    return detail::guard([&] { static_cast<T*>(self)->SinkTask::ctx_ = SinkTaskContext(ctx); });
  }
  static kc_status sink_start(void* self, const kc_config* cfg) {
    return detail::guard([&] { static_cast<T*>(self)->start(detail::to_config(cfg)); });
  }
  static kc_status sink_put(void* self, const kc_sink_records* rs) {
    return detail::guard([&] { static_cast<T*>(self)->put(SinkRecords(rs)); });
  }
  static Offsets read_offsets(const kc_offsets* o) {
    Offsets out;
    for (size_t i = 0, n = host().offsets_size(o); i < n; ++i) {
      const char* t = nullptr;
      int32_t p = 0;
      int64_t off = 0;
      host().offsets_at(o, i, &t, &p, &off);
      out[{t, p}] = off;
    }
    return out;
  }
  static TopicPartitions read_partitions(const kc_partitions* ps) {
    TopicPartitions out;
    for (size_t i = 0, n = host().partitions_size(ps); i < n; ++i) {
      const char* t = nullptr;
      int32_t p = 0;
      host().partitions_at(ps, i, &t, &p);
      out.emplace_back(t, p);
    }
    return out;
  }
  static kc_status sink_flush(void* self, const kc_offsets* o) {
    return detail::guard([&] { static_cast<T*>(self)->flush(read_offsets(o)); });
  }
  static kc_status sink_pre_commit(void* self, const kc_offsets* cur, kc_offsets* out) {
    return detail::guard([&] {
      Offsets chosen = static_cast<T*>(self)->pre_commit(read_offsets(cur));
      for (const auto& [tp, off] : read_offsets(cur))
        if (!chosen.count(tp)) host().offsets_remove(out, tp.first.c_str(), tp.second);
      for (const auto& [tp, off] : chosen) host().offsets_set(out, tp.first.c_str(), tp.second, off);
    });
  }
  static kc_status sink_open(void* self, const kc_partitions* ps) {
    return detail::guard([&] { static_cast<T*>(self)->open(read_partitions(ps)); });
  }
  static kc_status sink_close(void* self, const kc_partitions* ps) {
    return detail::guard([&] { static_cast<T*>(self)->close(read_partitions(ps)); });
  }
};

/// Declares connector classes (inside KCONNECTD_PLUGIN).
class Registrar {
 public:
  explicit Registrar(kc_registrar* r) : r_(r) {}
  /// A source connector class C whose tasks are T.
  template <typename C, typename T>
  void source(const std::string& class_name, const std::string& version, const ConfigDef& def = {},
              const std::vector<std::string>& aliases = {}) {
    static_assert(std::is_base_of_v<SourceConnector, C> && std::is_base_of_v<SourceTask, T>);
    using X = Tables<C, T>;
    // commit_record only when T overrides it (its member pointer type is then T's).
    constexpr bool per_record =
        !std::is_same_v<decltype(&T::commit_record), decltype(&SourceTask::commit_record)>;
    kc_source_task_class t{sizeof(kc_source_task_class), &X::task_create, &X::src_start, &X::src_poll,
                           &X::src_commit, per_record ? &X::src_commit_record : nullptr, &X::task_stop,
                           &X::task_destroy};
    add<C, T>(class_name, version, def, aliases, KC_SOURCE, &t, nullptr);
  }
  /// A sink connector class C whose tasks are T.
  template <typename C, typename T>
  void sink(const std::string& class_name, const std::string& version, const ConfigDef& def = {},
            const std::vector<std::string>& aliases = {}) {
    static_assert(std::is_base_of_v<SinkConnector, C> && std::is_base_of_v<SinkTask, T>);
    using X = Tables<C, T>;
    kc_sink_task_class t{sizeof(kc_sink_task_class), &X::task_create, &X::sink_start, &X::sink_put,
                         &X::sink_flush, &X::sink_pre_commit, &X::sink_open, &X::sink_close,
                         &X::task_stop, &X::task_destroy, &X::sink_initialize};
    add<C, T>(class_name, version, def, aliases, KC_SINK, nullptr, &t);
  }

 private:
  template <typename C, typename T>
  void add(const std::string& class_name, const std::string& version, const ConfigDef& def,
           const std::vector<std::string>& aliases, kc_connector_type type, const kc_source_task_class* src,
           const kc_sink_task_class* sink) {
    using X = Tables<C, T>;
    // The host copies every string and table during the call.
    std::vector<kc_config_key> keys;
    std::vector<int32_t> orders;
    std::vector<std::vector<const char*>> one_ofs;
    one_ofs.reserve(def.keys().size());
    for (const auto& k : def.keys()) {
      kc_config_key c{};
      c.name = k.name.c_str();
      c.type = k.type;
      c.required = k.required ? 1 : 0;
      c.default_value = k.default_value ? k.default_value->c_str() : nullptr;
      c.importance = k.importance;
      c.documentation = k.documentation.c_str();
      if (k.min) c.has_min = 1, c.min = *k.min;
      if (k.max) c.has_max = 1, c.max = *k.max;
      if (!k.one_of.empty()) {
        auto& v = one_ofs.emplace_back();
        for (const auto& s : k.one_of) v.push_back(s.c_str());
        v.push_back(nullptr);
        c.one_of = v.data();
      }
      c.non_empty = k.non_empty ? 1 : 0;
      c.display_name = k.display_name.empty() ? nullptr : k.display_name.c_str();
      c.group = k.group.empty() ? nullptr : k.group.c_str();
      orders.push_back(k.order);
      keys.push_back(c);
    }
    std::vector<const char*> alias_ptrs;
    for (const auto& a : aliases) alias_ptrs.push_back(a.c_str());
    alias_ptrs.push_back(nullptr);
    kc_connector_class cls{};
    cls.struct_size = sizeof(kc_connector_class);
    cls.class_name = class_name.c_str();
    cls.aliases = alias_ptrs.data();
    cls.type = type;
    cls.version = version.c_str();
    cls.config_keys = keys.data();
    cls.config_key_count = keys.size();
    cls.config_key_orders = orders.data();
    cls.create = &X::create;
    cls.start = &X::start;
    cls.task_configs = &X::task_configs;
    cls.stop = &X::stop;
    cls.validate = &X::validate;
    cls.destroy = &X::destroy;
    cls.source_task = src;
    cls.sink_task = sink;
    if constexpr (std::is_base_of_v<SourceConnector, C>) cls.exactly_once_support = &X::exactly_once_support;
    detail::ok(host().register_connector(r_, &cls));
  }
  kc_registrar* r_;
};

namespace detail {
/// The body of an entry point: keeps the host table, runs `body` guarded.
inline kc_status run_register(const kc_host_api* h, kc_registrar* r, void (*body)(Registrar&)) noexcept {
  g_host = h;
  return guard([&] {
    Registrar reg(r);
    body(reg);
  });
}
}  // namespace detail

}  // namespace kconnectd

/// Defines the plugin's entry point and ABI symbol; the block that follows
/// declares its classes through `reg`:
///   KCONNECTD_PLUGIN(reg) { reg.source<MyConnector, MyTask>("com.x.MyConnector", "1.0"); }
#define KCONNECTD_PLUGIN(reg)                                                                      \
  static void kconnectd_plugin_body(::kconnectd::Registrar&);                                      \
  KC_PLUGIN_DECLARE_ABI();                                                                         \
  extern "C" KC_PLUGIN_EXPORT kc_status kc_plugin_register(const kc_host_api* h, kc_registrar* r) { \
    return ::kconnectd::detail::run_register(h, r, &kconnectd_plugin_body);                        \
  }                                                                                                \
  static void kconnectd_plugin_body(::kconnectd::Registrar& reg)

/// The same for connectors linked into the daemon: defines the registration
/// function `fn` (a kc_plugin_register_fn) without exporting anything.
#define KCONNECTD_BUILTIN_PLUGIN(fn, reg)                                                   \
  static void fn##_body(::kconnectd::Registrar&);                                          \
  kc_status fn(const kc_host_api* h, kc_registrar* r) {                                     \
    return ::kconnectd::detail::run_register(h, r, &fn##_body);                             \
  }                                                                                         \
  static void fn##_body(::kconnectd::Registrar& reg)

#endif  // KCONNECTD_PLUGIN_HPP
