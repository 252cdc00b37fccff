#include "worker/plugins/plugin_host.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>

#include <spdlog/spdlog.h>

namespace kc::connectors {
namespace {

namespace fs = std::filesystem;
using data::Value;

// ---------------------------------------------------------------- handles
// Each opaque handle is the runtime object itself, cast.

const ConfigMap* C(const kc_config* c) { return reinterpret_cast<const ConfigMap*>(c); }
ConfigMap* C(kc_config* c) { return reinterpret_cast<ConfigMap*>(c); }
const kc_config* H(const ConfigMap* c) { return reinterpret_cast<const kc_config*>(c); }
const data::SchemaPtr* S(const kc_schema* s) { return reinterpret_cast<const data::SchemaPtr*>(s); }
const kc_schema* H(const data::SchemaPtr& s) { return s ? reinterpret_cast<const kc_schema*>(&s) : nullptr; }
data::SchemaPtr schema_of(const kc_schema* s) { return s ? *S(s) : nullptr; }
const Value* V(const kc_value* v) { return reinterpret_cast<const Value*>(v); }
Value* V(kc_value* v) { return reinterpret_cast<Value*>(v); }
const kc_value* H(const Value* v) { return reinterpret_cast<const kc_value*>(v); }
const OrderedJson* J(const kc_json* j) { return reinterpret_cast<const OrderedJson*>(j); }
OrderedJson* J(kc_json* j) { return reinterpret_cast<OrderedJson*>(j); }
SourceRecord* SR(kc_source_record* r) { return reinterpret_cast<SourceRecord*>(r); }
const SourceRecord* SR(const kc_source_record* r) { return reinterpret_cast<const SourceRecord*>(r); }
const SinkRecord* KR(const kc_sink_record* r) { return reinterpret_cast<const SinkRecord*>(r); }
const data::Headers* HD(const kc_headers* h) { return reinterpret_cast<const data::Headers*>(h); }
data::Headers* HD(kc_headers* h) { return reinterpret_cast<data::Headers*>(h); }
const TopicPartitionOffsets* O(const kc_offsets* o) { return reinterpret_cast<const TopicPartitionOffsets*>(o); }
TopicPartitionOffsets* O(kc_offsets* o) { return reinterpret_cast<TopicPartitionOffsets*>(o); }
const TopicPartitions* P(const kc_partitions* p) { return reinterpret_cast<const TopicPartitions*>(p); }

// The message attached to the current plugin call or failed host call.
thread_local std::string t_error;

/// The context of a task with no stop to see (a sink task the runtime did
/// not initialize, a NULL handle): its naps are plain sleeps.
const SinkTaskContext kNoStop{};

void fail(std::string msg) { t_error = std::move(msg); }
std::string str(const char* s) { return s ? std::string(s) : std::string(); }

// ---------------------------------------------------------------- registration

/// A registered class: the table as the plugin declared it, copied.
struct PluginClass {
  kc_connector_class table{};
  kc_source_task_class source{};
  kc_sink_task_class sink{};
  std::string class_name;
  std::string version;
  std::string origin;  ///< the file (or "built-in")
};
using ClassPtr = std::shared_ptr<const PluginClass>;

}  // namespace
}  // namespace kc::connectors

/// What a registration collects before anything reaches the registry.
struct kc_registrar {
  std::string origin;
  std::vector<kc::connectors::PluginDesc> descs;
};

namespace kc::connectors {
namespace {

std::string number_text(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  std::string s = std::to_string(v);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

ConfigKeyDef key_def(const kc_config_key& k) {
  ConfigKeyDef d;
  d.name = k.name;
  d.type = static_cast<ConfigType>(std::clamp<int>(k.type, 0, static_cast<int>(ConfigType::Password)));
  d.required = k.required != 0;
  if (k.default_value) d.default_value = k.default_value;
  d.importance = static_cast<ConfigImportance>(std::clamp<int>(k.importance, 0, 2));
  d.documentation = str(k.documentation);
  d.group = str(k.group);
  d.display_name = k.display_name ? k.display_name : k.name;
  if (k.has_min) d.at_least = k.min;
  std::optional<double> max;
  if (k.has_max) max = k.max;
  std::vector<std::string> one_of;
  for (const char* const* p = k.one_of; p && *p; ++p) one_of.emplace_back(*p);
  const bool non_empty = k.non_empty != 0;
  if (max || !one_of.empty() || non_empty) {
    d.check = [max, one_of, non_empty](const std::string& value) -> std::optional<std::string> {
      if (non_empty) {
        if (auto e = non_empty_string(value)) return e;
      }
      if (max) {
        try {
          if (std::stod(value) > *max) return "Value must be no more than " + number_text(*max);
        } catch (const std::exception&) {
        }
      }
      if (!one_of.empty() && std::find(one_of.begin(), one_of.end(), value) == one_of.end()) {
        std::string all;
        for (const auto& o : one_of) all += (all.empty() ? "" : ", ") + o;
        return "String must be one of: " + all;
      }
      return std::nullopt;
    };
  }
  return d;
}

/// Clears the message slot before a plugin call, so a message left by a
/// host call the plugin recovered from is not reported later.
struct Fresh {
  Fresh() { t_error.clear(); }
};

/// Throws ConnectError (RetriableError for KC_RETRIABLE when `retriable`)
/// with the plugin's message when `st` is not KC_OK.
void check(kc_status st, const PluginClass& cls, const char* what, bool retriable = false) {
  if (st == KC_OK) return;
  std::string msg = t_error.empty() ? cls.class_name + " " + what + " failed" : t_error;
  t_error.clear();
  if (retriable && st == KC_RETRIABLE) throw RetriableError(msg);
  throw ConnectError(msg);
}

// ---------------------------------------------------------------- adapters

class PluginSourceTask : public SourceTask, public SourceTaskContext {
 public:
  explicit PluginSourceTask(ClassPtr cls) : cls_(std::move(cls)) {}
  ~PluginSourceTask() override {
    if (self_ && cls_->source.destroy) cls_->source.destroy(self_);
  }
  void start(const ConfigMap& config, SourceTaskContext& ctx) override {
    ctx_ = &ctx;
    t_error.clear();
    check(cls_->source.create(cls_->table.class_data, &self_), *cls_, "task create");
    check(cls_->source.start(self_, H(&config), reinterpret_cast<const kc_source_task_context*>(ctx_)), *cls_,
          "task start");
  }
  std::vector<SourceRecord> poll() override {
    Fresh fresh;
    std::vector<SourceRecord> out;
    out.reserve(last_poll_);  // room for as many as last time: records are not moved while added
    check(cls_->source.poll(self_, reinterpret_cast<kc_source_records*>(&out)), *cls_, "task poll");
    last_poll_ = std::min<size_t>(out.size(), 4096);
    return out;
  }
  void commit() override {
    Fresh fresh;
    if (self_ && cls_->source.commit) check(cls_->source.commit(self_), *cls_, "task commit");
  }
  bool wants_commit_record() const override { return cls_->source.commit_record != nullptr; }
  void commit_record(const SourceRecord& record, const RecordMetadata& md) override {
    Fresh fresh;
    if (!self_ || !cls_->source.commit_record) return;
    kc_record_metadata m{md.topic.c_str(), md.partition, md.offset, md.timestamp_ms};
    check(cls_->source.commit_record(self_, reinterpret_cast<const kc_source_record*>(&record), &m), *cls_,
          "task commit_record");
  }
  void stop() override {
    Fresh fresh;
    if (self_) check(cls_->source.stop(self_), *cls_, "task stop");
  }
  // SourceTaskContext (unused: the handle given is the runtime's own).
  std::optional<OrderedJson> offset(const OrderedJson& p) const override { return ctx_->offset(p); }
  const std::string& connector_name() const override { return ctx_->connector_name(); }
  int32_t task_number() const override { return ctx_->task_number(); }
  bool wait_stopped(std::chrono::milliseconds timeout) const override { return ctx_->wait_stopped(timeout); }

 private:
  ClassPtr cls_;
  void* self_ = nullptr;
  SourceTaskContext* ctx_ = nullptr;
  size_t last_poll_ = 0;  ///< records the last poll returned (capped): the next one's reserve
};

class PluginSinkTask : public SinkTask {
 public:
  explicit PluginSinkTask(ClassPtr cls) : cls_(std::move(cls)) {}
  ~PluginSinkTask() override {
    if (self_ && cls_->sink.destroy) cls_->sink.destroy(self_);
  }
  void initialize(SinkTaskContext& ctx) override { ctx_ = &ctx; }
  /// create, then (ABI 1.3 classes) initialize with the context's handle,
  /// then start. A task the runtime never initialized gets kNoStop.
  void start(const ConfigMap& config) override {
    Fresh fresh;
    t_error.clear();
    check(cls_->sink.create(cls_->table.class_data, &self_), *cls_, "task create");
    if (cls_->sink.initialize)
      check(cls_->sink.initialize(self_, reinterpret_cast<const kc_sink_task_context*>(ctx_ ? ctx_ : &kNoStop)),
            *cls_, "task initialize");
    check(cls_->sink.start(self_, H(&config)), *cls_, "task start");
  }
  void put(const std::vector<SinkRecord>& records) override {
    Fresh fresh;
    check(cls_->sink.put(self_, reinterpret_cast<const kc_sink_records*>(&records)), *cls_, "task put",
          /*retriable=*/true);
  }
  void flush(const TopicPartitionOffsets& offsets) override {
    Fresh fresh;
    if (cls_->sink.flush)
      check(cls_->sink.flush(self_, reinterpret_cast<const kc_offsets*>(&offsets)), *cls_, "task flush");
  }
  TopicPartitionOffsets pre_commit(const TopicPartitionOffsets& current) override {
    Fresh fresh;
    if (!cls_->sink.pre_commit) return SinkTask::pre_commit(current);
    TopicPartitionOffsets out = current;
    check(cls_->sink.pre_commit(self_, reinterpret_cast<const kc_offsets*>(&current),
                                reinterpret_cast<kc_offsets*>(&out)),
          *cls_, "task pre_commit");
    return out;
  }
  void open(const TopicPartitions& parts) override {
    Fresh fresh;
    if (self_ && cls_->sink.open)
      check(cls_->sink.open(self_, reinterpret_cast<const kc_partitions*>(&parts)), *cls_, "task open");
  }
  void close(const TopicPartitions& parts) override {
    Fresh fresh;
    if (self_ && cls_->sink.close)
      check(cls_->sink.close(self_, reinterpret_cast<const kc_partitions*>(&parts)), *cls_, "task close");
  }
  void stop() override {
    Fresh fresh;
    if (self_) check(cls_->sink.stop(self_), *cls_, "task stop");
  }

 private:
  ClassPtr cls_;
  void* self_ = nullptr;
  const SinkTaskContext* ctx_ = nullptr;  ///< the runtime's, set by initialize()
};

class PluginConnector : public Connector {
 public:
  explicit PluginConnector(ClassPtr cls) : cls_(std::move(cls)), detached_("") {}
  ~PluginConnector() override {
    if (self_ && cls_->table.destroy) cls_->table.destroy(self_);
  }
  void initialize(ConnectorContext& ctx) override { ctx_ = &ctx; }
  ConnectorType type() const override {
    return cls_->table.type == KC_SINK ? ConnectorType::Sink : ConnectorType::Source;
  }
  std::string version() const override { return cls_->version; }
  void start(const ConfigMap& config) override {
    Fresh fresh;
    ensure();
    check(cls_->table.start(self_, H(&config)), *cls_, "start");
  }
  std::vector<ConfigMap> task_configs(int max_tasks) override {
    Fresh fresh;
    ensure();
    std::vector<ConfigMap> out;
    // No truncation here: generate_task_configs applies tasks.max.enforce
    // to the count the plugin produced, and its TaskConfigsCap bounds it.
    check(cls_->table.task_configs(self_, max_tasks, reinterpret_cast<kc_task_configs*>(&out)), *cls_,
          "task_configs");
    return out;
  }
  void stop() override {
    Fresh fresh;
    if (self_) check(cls_->table.stop(self_), *cls_, "stop");
  }
  std::unique_ptr<SourceTask> create_source_task() override {
    return type() == ConnectorType::Source ? std::make_unique<PluginSourceTask>(cls_) : nullptr;
  }
  std::unique_ptr<SinkTask> create_sink_task() override {
    return type() == ConnectorType::Sink ? std::make_unique<PluginSinkTask>(cls_) : nullptr;
  }
  /// The context plugins reach through their kc_connector_context handle.
  ConnectorContext& context() { return ctx_ ? *ctx_ : detached_; }
  ExactlyOnceSupport exactly_once_support(const ConfigMap& config) override {
    if (!cls_->table.exactly_once_support) return ExactlyOnceSupport::Unknown;
    Fresh fresh;
    ensure();
    kc_exactly_once_support out = KC_EXACTLY_ONCE_UNKNOWN;
    check(cls_->table.exactly_once_support(self_, H(&config), &out), *cls_, "exactly_once_support");
    switch (out) {
      case KC_EXACTLY_ONCE_SUPPORTED: return ExactlyOnceSupport::Supported;
      case KC_EXACTLY_ONCE_UNSUPPORTED: return ExactlyOnceSupport::Unsupported;
      case KC_EXACTLY_ONCE_UNKNOWN: break;
    }
    return ExactlyOnceSupport::Unknown;
  }

 private:
  void ensure() {
    if (self_) return;
    t_error.clear();
    check(cls_->table.create(cls_->table.class_data, reinterpret_cast<const kc_connector_context*>(this), &self_),
          *cls_, "create");
  }
  ClassPtr cls_;
  void* self_ = nullptr;
  ConnectorContext* ctx_ = nullptr;
  DetachedConnectorContext detached_;
};

PluginConnector* CX(const kc_connector_context* c) {
  return const_cast<PluginConnector*>(reinterpret_cast<const PluginConnector*>(c));
}
const SourceTaskContext* TX(const kc_source_task_context* c) { return reinterpret_cast<const SourceTaskContext*>(c); }
const SinkTaskContext* KX(const kc_sink_task_context* c) { return reinterpret_cast<const SinkTaskContext*>(c); }

/// The plugin's Connector.validate as a ConfigRule: a transient instance.
ConfigRule validate_rule(const ClassPtr& cls) {
  if (!cls->table.validate) return {};
  return [cls](const ConfigMap& config, ConfigErrors& errors) {
    PluginConnector probe(cls);
    void* self = nullptr;
    t_error.clear();
    if (cls->table.create(cls->table.class_data, reinterpret_cast<const kc_connector_context*>(&probe), &self) !=
        KC_OK) {
      errors["connector.class"].push_back(t_error.empty() ? cls->class_name + " create failed" : t_error);
      t_error.clear();
      return;
    }
    if (cls->table.validate(self, H(&config), reinterpret_cast<kc_config_errors*>(&errors)) != KC_OK) {
      errors["connector.class"].push_back(t_error.empty() ? cls->class_name + " validate failed" : t_error);
      t_error.clear();
    }
    if (cls->table.destroy) cls->table.destroy(self);
  };
}

kc_status h_register(kc_registrar* reg, const kc_connector_class* in) {
  if (!reg || !in) return fail("register_connector: null argument"), KC_ERROR;
  auto cls = std::make_shared<PluginClass>();
  std::memcpy(&cls->table, in, std::min(in->struct_size, sizeof(kc_connector_class)));
  const auto& t = cls->table;
  if (!t.class_name || !*t.class_name) return fail("register_connector: class_name is missing"), KC_ERROR;
  cls->class_name = t.class_name;
  cls->version = t.version && *t.version ? t.version : "unknown";
  cls->origin = reg->origin;
  const std::string who = "connector class " + cls->class_name + ": ";
  if (!t.create || !t.start || !t.task_configs || !t.stop)
    return fail(who + "create, start, task_configs and stop are required"), KC_ERROR;
  if (t.type != KC_SOURCE && t.type != KC_SINK) return fail(who + "type must be KC_SOURCE or KC_SINK"), KC_ERROR;
  if (t.type == KC_SOURCE) {
    if (!t.source_task) return fail(who + "a source needs source_task"), KC_ERROR;
    std::memcpy(&cls->source, t.source_task, std::min(t.source_task->struct_size, sizeof(kc_source_task_class)));
    if (!cls->source.create || !cls->source.start || !cls->source.poll || !cls->source.stop)
      return fail(who + "source task create, start, poll and stop are required"), KC_ERROR;
  } else {
    if (!t.sink_task) return fail(who + "a sink needs sink_task"), KC_ERROR;
    std::memcpy(&cls->sink, t.sink_task, std::min(t.sink_task->struct_size, sizeof(kc_sink_task_class)));
    if (!cls->sink.create || !cls->sink.start || !cls->sink.put || !cls->sink.stop)
      return fail(who + "sink task create, start, put and stop are required"), KC_ERROR;
  }
  for (const auto& d : reg->descs)
    if (d.class_name == cls->class_name) return fail(who + "declared twice"), KC_ERROR;
  PluginDesc desc;
  desc.class_name = cls->class_name;
  desc.type = t.type == KC_SINK ? ConnectorType::Sink : ConnectorType::Source;
  desc.version = cls->version;
  for (size_t i = 0; i < t.config_key_count; ++i) {
    if (!t.config_keys || !t.config_keys[i].name || !*t.config_keys[i].name)
      return fail(who + "config key " + std::to_string(i) + " has no name"), KC_ERROR;
    desc.config_defs.push_back(key_def(t.config_keys[i]));
    if (t.config_key_orders) desc.config_defs.back().order_in_group = t.config_key_orders[i];
  }
  for (const char* const* a = t.aliases; a && *a; ++a) desc.aliases.emplace_back(*a);
  desc.location = reg->origin;
  // Pointers into the plugin's memory are not kept past registration.
  cls->table.class_name = nullptr;
  cls->table.version = nullptr;
  cls->table.aliases = nullptr;
  cls->table.config_keys = nullptr;
  cls->table.config_key_orders = nullptr;
  ClassPtr shared = cls;
  desc.factory = [shared] { return std::make_unique<PluginConnector>(shared); };
  desc.config_rule = validate_rule(shared);
  reg->descs.push_back(std::move(desc));
  return KC_OK;
}

// ---------------------------------------------------------------- host functions

void h_set_error(const char* m) { t_error = str(m); }
const char* h_last_error() { return t_error.c_str(); }
void h_log(int level, const char* m) {
  switch (level) {
    case 0: spdlog::debug("{}", str(m)); break;
    case 1: spdlog::info("{}", str(m)); break;
    case 2: spdlog::warn("{}", str(m)); break;
    default: spdlog::error("{}", str(m)); break;
  }
}

const char* h_config_get(const kc_config* c, const char* key) {
  auto it = C(c)->find(str(key));
  return it == C(c)->end() ? nullptr : it->second.c_str();
}
size_t h_config_size(const kc_config* c) { return C(c)->size(); }
void h_config_foreach(const kc_config* c, void (*fn)(const char*, const char*, void*), void* user) {
  for (const auto& [k, v] : *C(c)) fn(k.c_str(), v.c_str(), user);
}
// Past the TaskConfigsCap of this thread (tasks.max.limit configs,
// kMaxTaskConfigsBytes bytes) nothing more is kept: add returns NULL and
// set ignores the write, so a plugin producing without bound cannot take
// the worker's memory; generate_task_configs then fails the connector.
kc_config* h_task_configs_add(kc_task_configs* out) {
  if (auto* cap = TaskConfigsCap::current(); cap && !cap->add_config()) return nullptr;
  auto* v = reinterpret_cast<std::vector<ConfigMap>*>(out);
  return reinterpret_cast<kc_config*>(&v->emplace_back());
}
void h_config_set(kc_config* c, const char* k, const char* v) {
  if (!c) return;
  std::string key = str(k), value = str(v);
  if (auto* cap = TaskConfigsCap::current(); cap && !cap->add_bytes(key.size() + value.size())) return;
  (*C(c))[std::move(key)] = std::move(value);
}
// A message already on the key (a per-key check's, which the plugin's own
// parse may repeat) is not listed twice.
void h_config_error_add(kc_config_errors* e, const char* k, const char* m) {
  auto& list = (*reinterpret_cast<ConfigErrors*>(e))[str(k)];
  std::string message = str(m);
  if (std::find(list.begin(), list.end(), message) == list.end()) list.push_back(std::move(message));
}

const char* h_connector_name(const kc_connector_context* c) { return CX(c)->context().connector_name().c_str(); }
void h_request_reconfig(const kc_connector_context* c) { CX(c)->context().request_task_reconfiguration(); }
void h_raise_error(const kc_connector_context* c, const char* m) { CX(c)->context().raise_error(str(m)); }
const char* h_task_connector_name(const kc_source_task_context* c) { return TX(c)->connector_name().c_str(); }
int32_t h_task_number(const kc_source_task_context* c) { return TX(c)->task_number(); }
int h_source_offset(const kc_source_task_context* c, const kc_json* p, kc_json* out) {
  auto off = TX(c)->offset(*J(p));
  if (!off) return 0;
  *J(out) = std::move(*off);
  return 1;
}

// The longest nap one wait_stopped call takes (plugin.h): bounds what a
// plugin asks for, and keeps steady_clock's now() + timeout from overflowing.
constexpr int64_t kMaxWaitStoppedMs = int64_t{24} * 60 * 60 * 1000;

/// One wait_stopped call: the timeout bounded to [0, kMaxWaitStoppedMs],
/// 1 on a stop request. Nothing escapes to the plugin.
template <typename Ctx>
int wait_stopped(const Ctx& ctx, int64_t timeout_ms) {
  try {
    const std::chrono::milliseconds timeout(std::clamp<int64_t>(timeout_ms, 0, kMaxWaitStoppedMs));
    return ctx.wait_stopped(timeout) ? 1 : 0;
  } catch (const std::exception& e) {
    fail(std::string("wait_stopped: ") + e.what());
    return 0;
  }
}
int h_source_task_wait_stopped(const kc_source_task_context* c, int64_t ms) {
  return c ? wait_stopped(*TX(c), ms) : wait_stopped(kNoStop, ms);
}
int h_sink_task_wait_stopped(const kc_sink_task_context* c, int64_t ms) {
  return wait_stopped(c ? *KX(c) : kNoStop, ms);
}

const kc_schema* h_schema_predefined(kc_schema_type t, int opt) {
  using namespace data;
  switch (t) {
    case KC_INT8: return H(opt ? OPTIONAL_INT8_SCHEMA() : INT8_SCHEMA());
    case KC_INT16: return H(opt ? OPTIONAL_INT16_SCHEMA() : INT16_SCHEMA());
    case KC_INT32: return H(opt ? OPTIONAL_INT32_SCHEMA() : INT32_SCHEMA());
    case KC_INT64: return H(opt ? OPTIONAL_INT64_SCHEMA() : INT64_SCHEMA());
    case KC_FLOAT32: return H(opt ? OPTIONAL_FLOAT32_SCHEMA() : FLOAT32_SCHEMA());
    case KC_FLOAT64: return H(opt ? OPTIONAL_FLOAT64_SCHEMA() : FLOAT64_SCHEMA());
    case KC_BOOLEAN: return H(opt ? OPTIONAL_BOOLEAN_SCHEMA() : BOOLEAN_SCHEMA());
    case KC_STRING: return H(opt ? OPTIONAL_STRING_SCHEMA() : STRING_SCHEMA());
    case KC_BYTES: return H(opt ? OPTIONAL_BYTES_SCHEMA() : BYTES_SCHEMA());
    default: return fail("schema_predefined: no predefined schema for that type"), nullptr;
  }
}
kc_schema_type h_schema_type(const kc_schema* s) { return static_cast<kc_schema_type>((*S(s))->type()); }
int h_schema_optional(const kc_schema* s) { return (*S(s))->optional() ? 1 : 0; }
const char* h_schema_name(const kc_schema* s) {
  const auto& n = (*S(s))->name();
  return n ? n->c_str() : nullptr;
}
int h_schema_version(const kc_schema* s, int32_t* out) {
  const auto& v = (*S(s))->version();
  if (!v) return 0;
  *out = *v;
  return 1;
}
const char* h_schema_doc(const kc_schema* s) {
  const auto& d = (*S(s))->doc();
  return d ? d->c_str() : nullptr;
}
const char* h_schema_parameter(const kc_schema* s, const char* k) {
  const auto* p = (*S(s))->parameter(str(k));
  return p ? p->c_str() : nullptr;
}
const kc_value* h_schema_default_value(const kc_schema* s) {
  const Value* v = s && *S(s) ? (*S(s))->default_value() : nullptr;
  return v ? H(v) : nullptr;
}
int h_schema_equals(const kc_schema* a, const kc_schema* b) {
  const auto sa = schema_of(a), sb = schema_of(b);
  if (sa == sb) return 1;
  return sa && sb && *sa == *sb ? 1 : 0;
}
size_t h_schema_field_count(const kc_schema* s) { return (*S(s))->fields().size(); }
const char* h_schema_field_name(const kc_schema* s, size_t i) {
  const auto& f = (*S(s))->fields();
  return i < f.size() ? f[i].name.c_str() : nullptr;
}
const kc_schema* h_schema_field_schema(const kc_schema* s, size_t i) {
  const auto& f = (*S(s))->fields();
  return i < f.size() ? H(f[i].schema) : nullptr;
}
int h_schema_field_index(const kc_schema* s, const char* name) {
  const auto* f = (*S(s))->field(str(name));
  return f ? f->index : -1;
}
const kc_schema* h_schema_key_schema(const kc_schema* s) { return H((*S(s))->key_schema()); }
const kc_schema* h_schema_value_schema(const kc_schema* s) { return H((*S(s))->value_schema()); }

data::SchemaBuilder* B(kc_schema_builder* b) { return reinterpret_cast<data::SchemaBuilder*>(b); }
kc_schema_builder* HB(data::SchemaBuilder* b) { return reinterpret_cast<kc_schema_builder*>(b); }
kc_schema_builder* h_sb_new(kc_schema_type t) {
  if (t < KC_INT8 || t > KC_STRUCT || t == KC_ARRAY || t == KC_MAP)
    return fail("schema_builder_new: use schema_builder_array / _map for ARRAY and MAP"), nullptr;
  return HB(new data::SchemaBuilder(static_cast<data::Type>(t)));
}
kc_schema_builder* h_sb_array(const kc_schema* v) { return HB(new auto(data::SchemaBuilder::array(schema_of(v)))); }
kc_schema_builder* h_sb_map(const kc_schema* k, const kc_schema* v) {
  return HB(new auto(data::SchemaBuilder::map(schema_of(k), schema_of(v))));
}
kc_schema_builder* h_sb_logical(const char* name, int32_t scale) {
  const std::string n = str(name);
  if (n == data::kDecimalLogicalName) return HB(new auto(data::decimal_builder(scale)));
  if (n == data::kDateLogicalName) return HB(new auto(data::date_builder()));
  if (n == data::kTimeLogicalName) return HB(new auto(data::time_builder()));
  if (n == data::kTimestampLogicalName) return HB(new auto(data::timestamp_builder()));
  return fail("schema_builder_logical: unknown logical type " + n), nullptr;
}
void h_sb_optional(kc_schema_builder* b) { B(b)->optional(); }
void h_sb_name(kc_schema_builder* b, const char* n) { B(b)->name(str(n)); }
void h_sb_version(kc_schema_builder* b, int32_t v) { B(b)->version(v); }
void h_sb_doc(kc_schema_builder* b, const char* d) { B(b)->doc(str(d)); }
void h_sb_parameter(kc_schema_builder* b, const char* k, const char* v) { B(b)->parameter(str(k), str(v)); }
void h_sb_field(kc_schema_builder* b, const char* n, const kc_schema* s) { B(b)->field(str(n), schema_of(s)); }
const kc_schema* h_schema_build(kc_schema_builder* b) {
  auto r = B(b)->build();
  delete B(b);
  if (!r) return fail(r.error().message), nullptr;
  return reinterpret_cast<const kc_schema*>(new data::SchemaPtr(std::move(r.value())));
}
void h_sb_free(kc_schema_builder* b) { delete B(b); }
void h_schema_release(const kc_schema* s) { delete S(s); }

kc_value* h_value_new() { return reinterpret_cast<kc_value*>(new Value()); }
void h_value_free(kc_value* v) { delete V(v); }
kc_value_kind h_value_kind(const kc_value* v) { return static_cast<kc_value_kind>(V(v)->v.index()); }
template <typename T>
T get_or(const kc_value* v) {
  const T* p = V(v)->get_if<T>();
  return p ? *p : T{};
}
int8_t h_int8(const kc_value* v) { return get_or<int8_t>(v); }
int16_t h_int16(const kc_value* v) { return get_or<int16_t>(v); }
int32_t h_int32(const kc_value* v) { return get_or<int32_t>(v); }
int64_t h_int64(const kc_value* v) { return get_or<int64_t>(v); }
float h_float32(const kc_value* v) { return get_or<float>(v); }
double h_float64(const kc_value* v) { return get_or<double>(v); }
int h_boolean(const kc_value* v) { return get_or<bool>(v) ? 1 : 0; }
const char* h_string(const kc_value* v, size_t* len) {
  const auto* s = V(v)->get_if<std::string>();
  if (len) *len = s ? s->size() : 0;
  return s ? s->c_str() : nullptr;
}
const char* h_bytes(const kc_value* v, size_t* len) {
  const auto* b = V(v)->get_if<data::Bytes>();
  if (len) *len = b ? b->data.size() : 0;
  return b ? b->data.data() : nullptr;
}
size_t h_array_size(const kc_value* v) {
  const auto* a = V(v)->get_if<data::Array>();
  return a ? a->size() : 0;
}
const kc_value* h_array_get(const kc_value* v, size_t i) {
  const auto* a = V(v)->get_if<data::Array>();
  return a && i < a->size() ? H(&(*a)[i]) : nullptr;
}
size_t h_map_size(const kc_value* v) {
  const auto* m = V(v)->get_if<data::Map>();
  return m ? m->size() : 0;
}
const kc_value* h_map_key(const kc_value* v, size_t i) {
  const auto* m = V(v)->get_if<data::Map>();
  return m && i < m->size() ? H(&(*m)[i].first) : nullptr;
}
const kc_value* h_map_value(const kc_value* v, size_t i) {
  const auto* m = V(v)->get_if<data::Map>();
  return m && i < m->size() ? H(&(*m)[i].second) : nullptr;
}
const kc_schema* h_struct_schema(const kc_value* v) {
  const auto* s = V(v)->get_if<data::Struct>();
  return s ? H(s->schema()) : nullptr;
}
const kc_value* h_struct_get(const kc_value* v, const char* f) {
  const auto* s = V(v)->get_if<data::Struct>();
  if (!s) return fail("struct_get: not a struct"), nullptr;
  auto r = s->get(str(f));
  if (!r) return fail(r.error().message), nullptr;
  return H(r.value());
}
const kc_value* h_struct_at(const kc_value* v, size_t i) {
  const auto* s = V(v)->get_if<data::Struct>();
  return s && i < s->schema()->fields().size() ? H(&s->at(i)) : nullptr;
}
const char* h_decimal(const kc_value* v, size_t* len, int32_t* scale) {
  const auto* d = V(v)->get_if<data::BigDecimal>();
  if (len) *len = d ? d->unscaled.size() : 0;
  if (scale) *scale = d ? d->scale : 0;
  return d ? d->unscaled.data() : nullptr;
}
int64_t h_date(const kc_value* v) { return get_or<data::JavaDate>(v).epoch_ms; }
char* h_to_string(const kc_value* v) { return strdup(data::java_to_string(*V(v)).c_str()); }
void h_string_free(char* s) { std::free(s); }

void h_set_null(kc_value* v) { *V(v) = Value(); }
void h_set_int8(kc_value* v, int8_t x) { *V(v) = Value(x); }
void h_set_int16(kc_value* v, int16_t x) { *V(v) = Value(x); }
void h_set_int32(kc_value* v, int32_t x) { *V(v) = Value(x); }
void h_set_int64(kc_value* v, int64_t x) { *V(v) = Value(x); }
void h_set_float32(kc_value* v, float x) { *V(v) = Value(x); }
void h_set_float64(kc_value* v, double x) { *V(v) = Value(x); }
void h_set_boolean(kc_value* v, int x) { *V(v) = Value(x != 0); }
void h_set_string(kc_value* v, const char* s, size_t n) { *V(v) = Value(std::string(s ? s : "", s ? n : 0)); }
void h_set_bytes(kc_value* v, const char* b, size_t n) { *V(v) = Value(data::Bytes{std::string(b ? b : "", b ? n : 0)}); }
void h_set_decimal(kc_value* v, const char* u, size_t n, int32_t scale) {
  if (!u || n == 0) u = "", n = 1;  // zero: one 0x00 byte (BigInteger's minimal form)
  *V(v) = Value(data::BigDecimal::from_unscaled_bytes(std::string_view(u, n), scale));
}
void h_set_date(kc_value* v, int64_t ms) { *V(v) = Value(data::JavaDate{ms}); }
void h_set_array(kc_value* v) { *V(v) = Value(data::Array{}); }
void h_set_map(kc_value* v) { *V(v) = Value(data::Map{}); }
kc_status h_set_struct(kc_value* v, const kc_schema* s) {
  auto r = data::Struct::of(schema_of(s));
  if (!r) return fail(r.error().message), KC_ERROR;
  *V(v) = Value(std::move(r.value()));
  return KC_OK;
}
kc_status h_array_append(kc_value* a, kc_value* item) {
  auto* arr = V(a)->get_if<data::Array>();
  if (!arr) return fail("value_array_append: not a list"), KC_ERROR;
  const_cast<data::Array*>(arr)->push_back(std::exchange(*V(item), Value()));
  return KC_OK;
}
kc_status h_map_put(kc_value* m, kc_value* k, kc_value* item) {
  auto* map = V(m)->get_if<data::Map>();
  if (!map) return fail("value_map_put: not a map"), KC_ERROR;
  const_cast<data::Map*>(map)->emplace_back(std::exchange(*V(k), Value()), std::exchange(*V(item), Value()));
  return KC_OK;
}
kc_status h_struct_put(kc_value* s, const char* f, kc_value* item) {
  if (!V(s)->is<data::Struct>()) return fail("value_struct_put: not a struct"), KC_ERROR;
  auto st = V(s)->as<data::Struct>().put(str(f), std::exchange(*V(item), Value()));
  if (!st) return fail(st.error().message), KC_ERROR;
  return KC_OK;
}
void h_value_copy(kc_value* d, const kc_value* s) { *V(d) = *V(s); }

size_t h_headers_size(const kc_headers* h) { return HD(h)->size(); }
const char* h_header_key(const kc_headers* h, size_t i) {
  return i < HD(h)->size() ? HD(h)->list()[i].key.c_str() : nullptr;
}
const kc_schema* h_header_schema(const kc_headers* h, size_t i) {
  return i < HD(h)->size() ? H(HD(h)->list()[i].schema) : nullptr;
}
const kc_value* h_header_value(const kc_headers* h, size_t i) {
  return i < HD(h)->size() ? H(&HD(h)->list()[i].value) : nullptr;
}
void h_headers_add(kc_headers* h, const char* k, const kc_schema* s, kc_value* v) {
  HD(h)->add(str(k), schema_of(s), v ? std::exchange(*V(v), Value()) : Value());
}

kc_json* h_json_new() { return reinterpret_cast<kc_json*>(new OrderedJson(OrderedJson::object())); }
void h_json_free(kc_json* j) { delete J(j); }
// A committed offset read back may be a non-object (another writer's
// data): setting a key then starts a fresh object instead of throwing
// through the plugin's C frames.
OrderedJson& object(kc_json* j) {
  if (!J(j)->is_object()) *J(j) = OrderedJson::object();
  return *J(j);
}
void h_json_set_string(kc_json* j, const char* k, const char* v) { object(j)[str(k)] = str(v); }
void h_json_set_int64(kc_json* j, const char* k, int64_t v) { object(j)[str(k)] = v; }
void h_json_set_double(kc_json* j, const char* k, double v) { object(j)[str(k)] = v; }
void h_json_set_boolean(kc_json* j, const char* k, int v) { object(j)[str(k)] = v != 0; }
const OrderedJson* member(const kc_json* j, const char* k) {
  if (!J(j)->is_object()) return nullptr;
  auto it = J(j)->find(str(k));
  return it == J(j)->end() ? nullptr : &*it;
}
int h_json_has(const kc_json* j, const char* k) { return member(j, k) ? 1 : 0; }
int h_json_get_string(const kc_json* j, const char* k, const char** out) {
  const auto* m = member(j, k);
  if (!m || !m->is_string()) return 0;
  *out = m->get_ref<const std::string&>().c_str();
  return 1;
}
int h_json_get_int64(const kc_json* j, const char* k, int64_t* out) {
  const auto* m = member(j, k);
  if (!m || !m->is_number_integer()) return 0;
  *out = m->get<int64_t>();
  return 1;
}
int h_json_get_double(const kc_json* j, const char* k, double* out) {
  const auto* m = member(j, k);
  if (!m || !m->is_number()) return 0;
  *out = m->get<double>();
  return 1;
}
int h_json_get_boolean(const kc_json* j, const char* k, int* out) {
  const auto* m = member(j, k);
  if (!m || !m->is_boolean()) return 0;
  *out = m->get<bool>() ? 1 : 0;
  return 1;
}

kc_source_record* h_records_add(kc_source_records* out) {
  return reinterpret_cast<kc_source_record*>(&reinterpret_cast<std::vector<SourceRecord>*>(out)->emplace_back());
}
void h_sr_topic(kc_source_record* r, const char* t) { SR(r)->topic.assign(t ? t : ""); }  // no temporary per record
void h_sr_partition(kc_source_record* r, int32_t p) { SR(r)->kafka_partition = p; }
void h_sr_timestamp(kc_source_record* r, int64_t ms) { SR(r)->timestamp_ms = ms; }
void h_sr_key(kc_source_record* r, const kc_schema* s, kc_value* v) {
  SR(r)->key = Data{schema_of(s), v ? std::exchange(*V(v), Value()) : Value()};
}
void h_sr_value(kc_source_record* r, const kc_schema* s, kc_value* v) {
  SR(r)->value = Data{schema_of(s), v ? std::exchange(*V(v), Value()) : Value()};
}
// The last partition given on this thread, so records of one partition
// share one copy (as Java's records share one Map).
struct PartitionCache {
  const kc_json* handle = nullptr;
  std::shared_ptr<const OrderedJson> shared;
};
thread_local PartitionCache t_partition;
void h_sr_source_partition(kc_source_record* r, const kc_json* p) {
  if (t_partition.handle != p || !t_partition.shared || *t_partition.shared != *J(p)) {
    t_partition.handle = p;
    t_partition.shared = std::make_shared<const OrderedJson>(*J(p));
  }
  SR(r)->source_partition = SharedJson(t_partition.shared);
}
kc_json* h_sr_source_offset(kc_source_record* r) { return reinterpret_cast<kc_json*>(&SR(r)->source_offset); }
kc_headers* h_sr_headers(kc_source_record* r) { return reinterpret_cast<kc_headers*>(&SR(r)->headers); }
const char* h_sr_get_topic(const kc_source_record* r) { return SR(r)->topic.c_str(); }
const kc_schema* h_sr_key_schema(const kc_source_record* r) { return H(SR(r)->key.schema); }
const kc_value* h_sr_get_key(const kc_source_record* r) { return H(&SR(r)->key.value); }
const kc_schema* h_sr_value_schema(const kc_source_record* r) { return H(SR(r)->value.schema); }
const kc_value* h_sr_get_value(const kc_source_record* r) { return H(&SR(r)->value.value); }
const kc_json* h_sr_get_offset(const kc_source_record* r) {
  return reinterpret_cast<const kc_json*>(&SR(r)->source_offset);
}

size_t h_sinks_size(const kc_sink_records* rs) {
  return reinterpret_cast<const std::vector<SinkRecord>*>(rs)->size();
}
const kc_sink_record* h_sinks_at(const kc_sink_records* rs, size_t i) {
  const auto* v = reinterpret_cast<const std::vector<SinkRecord>*>(rs);
  return i < v->size() ? reinterpret_cast<const kc_sink_record*>(&(*v)[i]) : nullptr;
}
const char* h_k_topic(const kc_sink_record* r) { return KR(r)->topic.c_str(); }
int32_t h_k_partition(const kc_sink_record* r) { return KR(r)->kafka_partition; }
int64_t h_k_offset(const kc_sink_record* r) { return KR(r)->kafka_offset; }
int64_t h_k_timestamp(const kc_sink_record* r) { return KR(r)->timestamp_ms; }
const kc_schema* h_k_key_schema(const kc_sink_record* r) { return H(KR(r)->key.schema); }
const kc_value* h_k_key(const kc_sink_record* r) { return H(&KR(r)->key.value); }
const kc_schema* h_k_value_schema(const kc_sink_record* r) { return H(KR(r)->value.schema); }
const kc_value* h_k_value(const kc_sink_record* r) { return H(&KR(r)->value.value); }
const kc_headers* h_k_headers(const kc_sink_record* r) { return reinterpret_cast<const kc_headers*>(&KR(r)->headers); }

size_t h_offsets_size(const kc_offsets* o) { return O(o)->size(); }
void h_offsets_at(const kc_offsets* o, size_t i, const char** t, int32_t* p, int64_t* off) {
  if (i >= O(o)->size()) return;
  auto it = std::next(O(o)->begin(), static_cast<std::ptrdiff_t>(i));
  if (t) *t = it->first.first.c_str();
  if (p) *p = it->first.second;
  if (off) *off = it->second;
}
void h_offsets_set(kc_offsets* o, const char* t, int32_t p, int64_t off) { (*O(o))[{str(t), p}] = off; }
void h_offsets_remove(kc_offsets* o, const char* t, int32_t p) { O(o)->erase({str(t), p}); }
size_t h_partitions_size(const kc_partitions* p) { return P(p)->size(); }
void h_partitions_at(const kc_partitions* p, size_t i, const char** t, int32_t* part) {
  if (i >= P(p)->size()) return;
  if (t) *t = (*P(p))[i].first.c_str();
  if (part) *part = (*P(p))[i].second;
}

// Registration, errors, logging, configs and the contexts' calls.
void set_plugin_calls(kc_host_api& h) {
  h.register_connector = h_register;
  h.set_error = h_set_error;
  h.last_error = h_last_error;
  h.log = h_log;
  h.config_get = h_config_get;
  h.config_size = h_config_size;
  h.config_foreach = h_config_foreach;
  h.task_configs_add = h_task_configs_add;
  h.config_set = h_config_set;
  h.config_error_add = h_config_error_add;
  h.connector_name = h_connector_name;
  h.request_task_reconfiguration = h_request_reconfig;
  h.raise_error = h_raise_error;
  h.task_connector_name = h_task_connector_name;
  h.task_number = h_task_number;
  h.source_offset = h_source_offset;
  h.source_task_wait_stopped = h_source_task_wait_stopped;
  h.sink_task_wait_stopped = h_sink_task_wait_stopped;
}

// Schemas and SchemaBuilder.
void set_schema_calls(kc_host_api& h) {
  h.schema_predefined = h_schema_predefined;
  h.schema_type = h_schema_type;
  h.schema_optional = h_schema_optional;
  h.schema_name = h_schema_name;
  h.schema_version = h_schema_version;
  h.schema_doc = h_schema_doc;
  h.schema_parameter = h_schema_parameter;
  h.schema_field_count = h_schema_field_count;
  h.schema_field_name = h_schema_field_name;
  h.schema_field_schema = h_schema_field_schema;
  h.schema_field_index = h_schema_field_index;
  h.schema_key_schema = h_schema_key_schema;
  h.schema_value_schema = h_schema_value_schema;
  h.schema_builder_new = h_sb_new;
  h.schema_builder_array = h_sb_array;
  h.schema_builder_map = h_sb_map;
  h.schema_builder_logical = h_sb_logical;
  h.schema_builder_optional = h_sb_optional;
  h.schema_builder_name = h_sb_name;
  h.schema_builder_version = h_sb_version;
  h.schema_builder_doc = h_sb_doc;
  h.schema_builder_parameter = h_sb_parameter;
  h.schema_builder_field = h_sb_field;
  h.schema_build = h_schema_build;
  h.schema_builder_free = h_sb_free;
  h.schema_release = h_schema_release;
  h.schema_default_value = h_schema_default_value;
  h.schema_equals = h_schema_equals;
}

// Values: read, set, build.
void set_value_calls(kc_host_api& h) {
  h.value_new = h_value_new;
  h.value_free = h_value_free;
  h.value_kind = h_value_kind;
  h.value_int8 = h_int8;
  h.value_int16 = h_int16;
  h.value_int32 = h_int32;
  h.value_int64 = h_int64;
  h.value_float32 = h_float32;
  h.value_float64 = h_float64;
  h.value_boolean = h_boolean;
  h.value_string = h_string;
  h.value_bytes = h_bytes;
  h.value_array_size = h_array_size;
  h.value_array_get = h_array_get;
  h.value_map_size = h_map_size;
  h.value_map_key = h_map_key;
  h.value_map_value = h_map_value;
  h.value_struct_schema = h_struct_schema;
  h.value_struct_get = h_struct_get;
  h.value_struct_at = h_struct_at;
  h.value_decimal = h_decimal;
  h.value_date = h_date;
  h.value_to_string = h_to_string;
  h.string_free = h_string_free;
  h.value_set_null = h_set_null;
  h.value_set_int8 = h_set_int8;
  h.value_set_int16 = h_set_int16;
  h.value_set_int32 = h_set_int32;
  h.value_set_int64 = h_set_int64;
  h.value_set_float32 = h_set_float32;
  h.value_set_float64 = h_set_float64;
  h.value_set_boolean = h_set_boolean;
  h.value_set_string = h_set_string;
  h.value_set_bytes = h_set_bytes;
  h.value_set_decimal = h_set_decimal;
  h.value_set_date = h_set_date;
  h.value_set_array = h_set_array;
  h.value_set_map = h_set_map;
  h.value_set_struct = h_set_struct;
  h.value_array_append = h_array_append;
  h.value_map_put = h_map_put;
  h.value_struct_put = h_struct_put;
  h.value_copy = h_value_copy;
}

// Source and sink records, headers, offsets, partitions, JSON partitions/offsets.
void set_record_calls(kc_host_api& h) {
  h.headers_size = h_headers_size;
  h.header_key = h_header_key;
  h.header_schema = h_header_schema;
  h.header_value = h_header_value;
  h.headers_add = h_headers_add;
  h.json_new = h_json_new;
  h.json_free = h_json_free;
  h.json_set_string = h_json_set_string;
  h.json_set_int64 = h_json_set_int64;
  h.json_set_double = h_json_set_double;
  h.json_set_boolean = h_json_set_boolean;
  h.json_has = h_json_has;
  h.json_get_string = h_json_get_string;
  h.json_get_int64 = h_json_get_int64;
  h.json_get_double = h_json_get_double;
  h.json_get_boolean = h_json_get_boolean;
  h.source_records_add = h_records_add;
  h.source_record_set_topic = h_sr_topic;
  h.source_record_set_partition = h_sr_partition;
  h.source_record_set_timestamp = h_sr_timestamp;
  h.source_record_set_key = h_sr_key;
  h.source_record_set_value = h_sr_value;
  h.source_record_set_source_partition = h_sr_source_partition;
  h.source_record_source_offset = h_sr_source_offset;
  h.source_record_headers = h_sr_headers;
  h.source_record_topic = h_sr_get_topic;
  h.source_record_key_schema = h_sr_key_schema;
  h.source_record_key = h_sr_get_key;
  h.source_record_value_schema = h_sr_value_schema;
  h.source_record_value = h_sr_get_value;
  h.source_record_get_source_offset = h_sr_get_offset;
  h.sink_records_size = h_sinks_size;
  h.sink_records_at = h_sinks_at;
  h.sink_record_topic = h_k_topic;
  h.sink_record_partition = h_k_partition;
  h.sink_record_offset = h_k_offset;
  h.sink_record_timestamp = h_k_timestamp;
  h.sink_record_key_schema = h_k_key_schema;
  h.sink_record_key = h_k_key;
  h.sink_record_value_schema = h_k_value_schema;
  h.sink_record_value = h_k_value;
  h.sink_record_headers = h_k_headers;
  h.offsets_size = h_offsets_size;
  h.offsets_at = h_offsets_at;
  h.offsets_set = h_offsets_set;
  h.offsets_remove = h_offsets_remove;
  h.partitions_size = h_partitions_size;
  h.partitions_at = h_partitions_at;
}

kc_host_api make_host_api() {
  kc_host_api h{};
  h.struct_size = sizeof(kc_host_api);
  h.abi_version = KC_PLUGIN_ABI_VERSION;
  set_plugin_calls(h);
  set_schema_calls(h);
  set_value_calls(h);
  set_record_calls(h);
  return h;
}

}  // namespace

const kc_host_api& plugin_host_api() {
  static const kc_host_api api = make_host_api();
  return api;
}

Status register_plugin(kc_plugin_register_fn fn, const std::string& origin, PluginRegistry& registry) {
  kc_registrar reg{origin, {}};
  t_error.clear();
  kc_status st = KC_ERROR;
  try {
    st = fn(&plugin_host_api(), &reg);
  } catch (...) {  // a C++ plugin that let an exception out of its entry point
    t_error = "the registration function threw an exception";
    st = KC_ERROR;
  }
  if (st != KC_OK) {
    std::string msg = t_error.empty() ? "the registration function returned an error" : "registration failed: " + t_error;
    t_error.clear();
    return Error{"", msg};
  }
  if (reg.descs.empty()) return Error{"", "the registration function declared no connector class"};
  for (auto& d : reg.descs) registry.add(std::move(d));
  return ok_status();
}

PluginLoadResult load_plugin_file(const std::string& file, PluginRegistry& registry) {
  PluginLoadResult res{file, {}, {}};
  dlerror();
  void* h = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    res.error = std::string("cannot be loaded: ") + (e ? e : "dlopen failed");
    return res;
  }
  auto refuse = [&](std::string why) {
    res.error = std::move(why);
    dlclose(h);
    return res;
  };
  const auto* version = static_cast<const uint32_t*>(dlsym(h, KC_PLUGIN_ABI_SYMBOL));
  if (!version) return refuse("missing symbol " KC_PLUGIN_ABI_SYMBOL " (not a kconnectd plugin?)");
  const uint32_t major = *version >> 16, minor = *version & 0xffffu;
  if (major != KC_PLUGIN_ABI_VERSION_MAJOR)
    return refuse("built for plugin ABI " + std::to_string(major) + "." + std::to_string(minor) +
                  ", this worker supports major version " + std::to_string(KC_PLUGIN_ABI_VERSION_MAJOR));
  auto* entry = reinterpret_cast<kc_plugin_register_fn>(dlsym(h, KC_PLUGIN_ENTRY_POINT));
  if (!entry) return refuse("missing entry point " KC_PLUGIN_ENTRY_POINT);
  // A scratch registry first, so a failed registration adds nothing.
  PluginRegistry scratch;
  if (auto st = register_plugin(entry, file, scratch); !st) return refuse(st.error().message);
  for (auto& d : scratch.list()) {
    res.classes.push_back(d.class_name);
    registry.add(std::move(d));
  }
  return res;  // the handle stays open for the life of the process
}

std::vector<PluginLoadResult> load_plugins(const std::vector<std::string>& plugin_path, PluginRegistry& registry) {
  std::vector<PluginLoadResult> out;
  for (const auto& dir : plugin_path) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
      spdlog::warn("plugin.path entry {} is not a directory; skipped", dir);
      continue;
    }
    // The .so files of the directory and of each immediate subdirectory.
    std::vector<std::string> files;
    auto collect = [&](const fs::path& d) {
      std::error_code e2;
      for (const auto& ent : fs::directory_iterator(d, e2)) {
        std::error_code e3;
        if (ent.path().extension() == ".so" && ent.is_regular_file(e3)) files.push_back(ent.path().string());
      }
    };
    collect(dir);
    for (const auto& ent : fs::directory_iterator(dir, ec)) {
      std::error_code e3;
      if (ent.is_directory(e3)) collect(ent.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      auto r = load_plugin_file(f, registry);
      if (r.error.empty()) {
        std::string names;
        for (const auto& c : r.classes) names += (names.empty() ? "" : ", ") + c;
        spdlog::info("plugin {} loaded: {}", f, names);
      } else {
        spdlog::warn("plugin {} refused: {}", f, r.error);
      }
      out.push_back(std::move(r));
    }
  }
  return out;
}

}  // namespace kc::connectors
