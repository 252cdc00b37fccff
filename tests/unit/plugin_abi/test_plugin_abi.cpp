// The host side of include/kconnectd/plugin.h: registration, config
// definitions and validators, records through the handles (no copies of
// the source partition), connector context, sink open/close/pre_commit,
// errors and exceptions turned into ConnectError / RetriableError, and the
// minor versions meeting (1.2 / 1.3 plugins and workers).
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <stop_token>
#include <thread>
#include <utility>

#include <kconnectd/plugin.hpp>

#include "common/stop_wait.h"
#include "worker/plugins/plugin_host.h"

namespace cx = kc::connectors;
namespace kd = kconnectd;

namespace {

// What the test plugin saw (one test at a time).
struct Seen {
  std::vector<kd::TopicPartitions> opened, closed;
  std::vector<std::string> put_values;
  int64_t resumed_from = -1;
  bool committed = false;
} seen;

class Src : public kd::SourceTask {
 public:
  void start(const kd::Config& c, const kd::SourceTaskContext& ctx) override {
    topic_ = c.at("topic");
    part_.set("file", "f").set("n", 1);
    if (auto o = ctx.offset(part_)) seen.resumed_from = o->get_int64("pos").value_or(-2);
    schema_ = kd::SchemaBuilder::struct_()
                  .name("t.S")
                  .field("s", kd::Schema::string())
                  .field("l", kd::SchemaBuilder::array(kd::Schema::int32()).build())
                  .build();
  }
  void poll(kd::SourceRecords& out) override {
    for (int i = 0; i < 2; ++i) {
      auto v = kd::Value::struct_of(schema_);
      v.put("s", kd::Value::of("x" + std::to_string(i)));
      auto l = kd::Value::list();
      l.append(kd::Value::of(int32_t{i})).append(kd::Value::of(int32_t{42}));
      v.put("l", std::move(l));
      auto r = out.add();
      r.topic(topic_).key(kd::Schema::string(), kd::Value::of("k")).value(schema_, std::move(v));
      r.source_partition(part_).timestamp(1000 + i).kafka_partition(i);
      r.source_offset().set("pos", int64_t{10 + i});
      r.header("h", kd::Schema::int64(), kd::Value::of(int64_t{7}));
    }
  }
  void commit() override { seen.committed = true; }
  void commit_record(const kd::SourceRecordView& r, const kc_record_metadata& md) override {
    seen.put_values.push_back(r.value().get("s").as_string() + "@" + md.topic + "/" + std::to_string(md.partition) +
                              "/" + std::to_string(md.offset) + " pos " +
                              std::to_string(r.offset_int64("pos").value_or(-1)));
  }
  void stop() override {}

 private:
  std::string topic_;
  kd::Json part_;
  kd::Schema schema_;
};

class SrcConn : public kd::SourceConnector {
 public:
  void start(const kd::Config& c) override {
    if (c.count("fail")) throw std::runtime_error("start refused: " + c.at("fail"));
    c_ = c;
    context().request_task_reconfiguration();
    if (c.count("raise")) context().raise_error(c.at("raise"));
  }
  std::vector<kd::Config> task_configs(int max) override { return std::vector<kd::Config>(max + 2, c_); }
  void stop() override {}
  std::map<std::string, std::vector<std::string>> validate(const kd::Config& c) override {
    if (c.count("topic") && c.at("topic") == "forbidden") return {{"topic", {"topic may not be 'forbidden'"}}};
    return {};
  }

 private:
  kd::Config c_;
};

class Sink : public kd::SinkTask {
 public:
  void start(const kd::Config&) override {}
  void put(const kd::SinkRecords& rs) override {
    for (size_t i = 0; i < rs.size(); ++i) {
      auto v = rs[i].value();
      if (v.kind() == KC_VALUE_STRING && v.as_string() == "retry") throw kd::RetriableError("later please");
      if (v.kind() == KC_VALUE_STRING && v.as_string() == "bad") throw std::runtime_error("cannot write bad");
      seen.put_values.push_back(rs[i].topic() + ":" + std::to_string(rs[i].kafka_offset()) + ":" +
                                (v.kind() == KC_VALUE_STRUCT ? v.get("a").to_string() : v.to_string()));
    }
  }
  kd::Offsets pre_commit(const kd::Offsets& cur) override {
    kd::Offsets out = cur;
    out.erase({"t", 1});  // not durable yet
    return out;
  }
  void open(const kd::TopicPartitions& p) override { seen.opened.push_back(p); }
  void close(const kd::TopicPartitions& p) override { seen.closed.push_back(p); }
  void stop() override {}
};

class SinkConn : public kd::SinkConnector {
 public:
  void start(const kd::Config&) override {}
  std::vector<kd::Config> task_configs(int) override { return {{}}; }
  void stop() override {}
};

kd::ConfigDef defs() {
  return kd::ConfigDef()
      .define("topic", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "topic")
      .non_empty()
      .define("mode", KC_CONFIG_STRING, "a", KC_IMPORTANCE_LOW, "mode")
      .one_of({"a", "b"})
      .define("n", KC_CONFIG_INT, "5", KC_IMPORTANCE_MEDIUM, "n")
      .at_least(1)
      .at_most(10);
}

}  // namespace

KCONNECTD_BUILTIN_PLUGIN(test_plugins, reg) {
  reg.source<SrcConn, Src>("t.SourceConnector", "9.9", defs(), {"TSrc"});
  reg.sink<SinkConn, Sink>("t.SinkConnector", "8.8");
}

namespace {

struct Ctx : cx::ConnectorContext {
  std::string name = "c1";
  int reconfigs = 0;
  std::vector<std::string> errors;
  const std::string& connector_name() const override { return name; }
  void request_task_reconfiguration() override { ++reconfigs; }
  void raise_error(const std::string& m) override { errors.push_back(m); }
};

struct TaskCtx : cx::SourceTaskContext {
  std::string name = "c1";
  std::optional<cx::OrderedJson> offset(const cx::OrderedJson& p) const override {
    if (p == cx::OrderedJson{{"file", "f"}, {"n", 1}}) return cx::OrderedJson{{"pos", 5}};
    return std::nullopt;
  }
  const std::string& connector_name() const override { return name; }
  int32_t task_number() const override { return 0; }
};

cx::PluginRegistry& registry() {
  static cx::PluginRegistry* r = [] {
    auto* reg = new cx::PluginRegistry();
    auto st = cx::register_plugin(&test_plugins, "test", *reg);
    if (!st) FAIL(st.error().message);
    return reg;
  }();
  return *r;
}

}  // namespace

TEST_CASE("plugin ABI: declared classes reach the registry with their names, version and config defs") {
  auto d = registry().find("TSrc");
  REQUIRE(d);
  CHECK(d->class_name == "t.SourceConnector");
  CHECK(d->version == "9.9");
  CHECK(d->type == cx::ConnectorType::Source);
  CHECK(registry().find("SourceConnector"));  // simple name alias, as built-ins
  REQUIRE(d->config_defs.size() == 3);
  CHECK(d->config_defs[0].required);
  CHECK(d->config_defs[1].default_value == "a");
  CHECK(d->config_defs[2].type == cx::ConfigType::Int);
  auto s = registry().find("t.SinkConnector");
  REQUIRE(s);
  CHECK(s->type == cx::ConnectorType::Sink);
  CHECK(s->version == "8.8");
}

TEST_CASE("plugin ABI: validators and Connector.validate apply with Connect's messages") {
  auto v = registry().validate({{"connector.class", "TSrc"}, {"name", "x"}, {"mode", "c"}, {"n", "11"},
                                {"topic", "forbidden"}});
  std::map<std::string, std::vector<std::string>> errs;
  for (const auto& c : v.configs) errs[c.value.name] = c.value.errors;
  CHECK(errs["mode"] == std::vector<std::string>{"Invalid value c for configuration mode: String must be one of: a, b"});
  CHECK(errs["n"] == std::vector<std::string>{"Invalid value 11 for configuration n: Value must be no more than 10"});
  CHECK(errs["topic"] == std::vector<std::string>{"topic may not be 'forbidden'"});
  CHECK(v.error_count == 3);
  auto ok = registry().validate({{"connector.class", "TSrc"}, {"name", "x"}, {"topic", "t"}, {"n", "10"}});
  CHECK(ok.error_count == 0);
}

TEST_CASE("plugin ABI: a source connector and task through the handles") {
  auto c = registry().create("TSrc");
  REQUIRE(c);
  Ctx ctx;
  (*c)->initialize(ctx);
  (*c)->start({{"topic", "out"}});
  CHECK(ctx.reconfigs == 1);
  // The host hands back what the plugin made (2 extra); tasks.max.enforce
  // (KIP-1004) is applied around it by generate_task_configs, as the leader
  // does: an error with Connect's message, or the configs kept when lenient.
  CHECK((*c)->task_configs(2).size() == 4);
  kc::connectors::TasksMax two;
  two.max_tasks = 2;
  auto enforced = kc::connectors::generate_task_configs(**c, "x", two, 1000);
  REQUIRE_FALSE(enforced);
  CHECK(enforced.error().message == kc::connectors::too_many_tasks_message("x", 4, 2));
  two.enforce = false;
  auto lenient = kc::connectors::generate_task_configs(**c, "x", two, 1000);
  REQUIRE(lenient);
  CHECK(lenient.value().size() == 4);
  // Past the worker's cap (tasks.max.limit) even a lenient connector fails.
  CHECK_FALSE(kc::connectors::generate_task_configs(**c, "x", two, 3));
  auto task = (*c)->create_source_task();
  REQUIRE(task);
  CHECK_FALSE((*c)->create_sink_task());
  TaskCtx tctx;
  seen = {};
  task->start({{"topic", "out"}}, tctx);
  CHECK(seen.resumed_from == 5);
  auto recs = task->poll();
  REQUIRE(recs.size() == 2);
  const auto& r = recs[1];
  CHECK(r.topic == "out");
  CHECK(r.kafka_partition == 1);
  CHECK(r.timestamp_ms == 1001);
  CHECK(r.key == cx::Data::string("k"));
  REQUIRE(r.value.schema);
  CHECK(r.value.schema->name() == "t.S");
  CHECK(kc::data::java_to_string(r.value.value) == "Struct{s=x1,l=[1, 42]}");
  CHECK(r.source_partition == cx::OrderedJson{{"file", "f"}, {"n", 1}});
  CHECK(r.source_offset == cx::OrderedJson{{"pos", 11}});
  // One partition object for both records, as Java's records share a Map.
  CHECK(&recs[0].source_partition.get() == &recs[1].source_partition.get());
  REQUIRE(r.headers.size() == 1);
  CHECK(r.headers.list()[0].key == "h");
  CHECK(r.headers.list()[0].value == kc::data::Value(int64_t{7}));
  task->commit();
  CHECK(seen.committed);
  REQUIRE(task->wants_commit_record());
  task->commit_record(recs[1], cx::RecordMetadata{"out", 1, 77, 5});
  CHECK(seen.put_values == std::vector<std::string>{"x1@out/1/77 pos 11"});
  task->stop();
  (*c)->stop();
}

TEST_CASE("plugin ABI: errors and exceptions become ConnectError with the plugin's message") {
  auto c = registry().create("TSrc");
  REQUIRE(c);
  Ctx ctx;
  (*c)->initialize(ctx);
  CHECK_THROWS_WITH((*c)->start({{"topic", "t"}, {"fail", "no"}}), "start refused: no");
  auto c2 = registry().create("TSrc");
  (*c2)->initialize(ctx);
  (*c2)->start({{"topic", "t"}, {"raise", "connector broke"}});
  CHECK(ctx.errors == std::vector<std::string>{"connector broke"});
}

TEST_CASE("plugin ABI: sink put, pre_commit, open and close") {
  auto c = registry().create("t.SinkConnector");
  REQUIRE(c);
  auto task = (*c)->create_sink_task();
  REQUIRE(task);
  seen = {};
  task->start({});
  task->open({{"t", 0}, {"t", 1}});
  REQUIRE(seen.opened.size() == 1);
  CHECK(seen.opened[0] == kd::TopicPartitions{{"t", 0}, {"t", 1}});

  auto schema = kc::data::SchemaBuilder::struct_().field("a", kc::data::INT32_SCHEMA()).build().value();
  kc::data::Struct st(schema);
  REQUIRE(st.put("a", int32_t{3}));
  std::vector<cx::SinkRecord> batch(2);
  batch[0].topic = "t";
  batch[0].kafka_offset = 4;
  batch[0].value = cx::Data{schema, kc::data::Value(st)};
  batch[1].topic = "t";
  batch[1].kafka_offset = 5;
  batch[1].value = cx::Data::string("plain");
  task->put(batch);
  CHECK(seen.put_values == std::vector<std::string>{"t:4:3", "t:5:plain"});

  auto out = task->pre_commit({{{"t", 0}, 6}, {{"t", 1}, 9}});
  CHECK(out == cx::TopicPartitionOffsets{{{"t", 0}, 6}});

  std::vector<cx::SinkRecord> retry(1);
  retry[0].value = cx::Data::string("retry");
  CHECK_THROWS_AS(task->put(retry), cx::RetriableError);
  retry[0].value = cx::Data::string("bad");
  try {
    task->put(retry);
    FAIL("put must throw");
  } catch (const cx::RetriableError&) {
    FAIL("a plain exception is not retriable");
  } catch (const cx::ConnectError& e) {
    CHECK(std::string(e.what()) == "cannot write bad");
  }
  task->close({{"t", 0}});
  REQUIRE(seen.closed.size() == 1);
  CHECK(seen.closed[0] == kd::TopicPartitions{{"t", 0}});
  task->stop();
}

namespace {
kc_status bad_table(const kc_host_api* h, kc_registrar* r) {
  kc_connector_class c{};
  c.struct_size = sizeof c;
  c.class_name = "t.NoFunctions";
  c.type = KC_SOURCE;
  return h->register_connector(r, &c);
}
kc_status refuses(const kc_host_api* h, kc_registrar* r) {
  (void)r;
  h->set_error("license expired");
  return KC_ERROR;
}
}  // namespace

TEST_CASE("plugin ABI: bad registrations are refused and add nothing") {
  cx::PluginRegistry reg;
  auto a = cx::register_plugin(&bad_table, "x.so", reg);
  REQUIRE_FALSE(a);
  CHECK(a.error().message ==
        "registration failed: connector class t.NoFunctions: create, start, task_configs and stop are required");
  auto b = cx::register_plugin(&refuses, "y.so", reg);
  REQUIRE_FALSE(b);
  CHECK(b.error().message == "registration failed: license expired");
  CHECK(reg.list().empty());
}

TEST_CASE("plugin ABI: load_plugin_file refuses a missing file and a non-ELF file, naming the reason") {
  cx::PluginRegistry reg;
  auto r = cx::load_plugin_file("/nonexistent/x.so", reg);
  CHECK(r.error.find("cannot be loaded") == 0);
  CHECK(r.error.find("No such file") != std::string::npos);
  CHECK(reg.list().empty());
  // A text file named .so, long enough for an ELF header check.
  const std::string text_so = std::string(KC_BINARY_DIR) + "/test_plugin_abi_not_elf.so";
  {
    std::ofstream f(text_so);
    f << std::string(200, 'x') << "\n";
  }
  auto t = cx::load_plugin_file(text_so, reg);
  CHECK(t.error.find("cannot be loaded: ") == 0);
  CHECK(t.error.find("invalid ELF header") != std::string::npos);
  CHECK(t.classes.empty());
  CHECK(reg.list().empty());
  std::remove(text_so.c_str());
}

// ---------------------------------------------------------------- ABI 1.2

namespace {

/// What SchemaSink saw: per record, field "a"'s default (or "none") and
/// whether its value schema equals the previous record's.
std::vector<std::string> schema_seen;

class SchemaSink : public kd::SinkTask {
 public:
  void start(const kd::Config&) override {}
  void put(const kd::SinkRecords& rs) override {
    for (size_t i = 0; i < rs.size(); ++i) {
      const kd::Schema s = rs[i].value_schema();
      const auto a = s.field_index("a");
      const auto dv = a ? s.field_schema(*a).default_value() : std::nullopt;
      std::string line = dv ? kd::ValueView(*dv).to_string() : std::string("none");
      if (i > 0) line += rs[i - 1].value_schema().equals(s) ? " same" : " other";
      schema_seen.push_back(line);
    }
  }
  void stop() override {}
};

KCONNECTD_BUILTIN_PLUGIN(abi12_plugins, reg) {
  reg.sink<SinkConn, SchemaSink>("t.SchemaSink", "1.2",
                                 kd::ConfigDef()
                                     .define("first", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "first")
                                     .group("G")
                                     .order(2)
                                     .define("second", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "second"));
}

KCONNECTD_BUILTIN_PLUGIN(grouped_plugins, reg) {
  reg.sink<SinkConn, SchemaSink>("t.GroupedSink", "1.2",
                                 kd::ConfigDef()
                                     .begin_group("G")
                                     .define("first", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "first")
                                     .define("second", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "second")
                                     .end_group()
                                     .define("third", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "third"));
}

/// A class table as a 1.1 plugin builds it: struct_size ends before
/// config_key_orders, so whatever follows must be ignored.
kc_status abi11_table(const kc_host_api* h, kc_registrar* r) {
  static const kc_config_key key{"k", KC_CONFIG_STRING, 0, "", KC_IMPORTANCE_LOW, "k"};
  static const kc_sink_task_class task = [] {
    kc_sink_task_class t{};
    t.struct_size = sizeof t;
    t.create = [](void*, void** self) { return *self = nullptr, KC_OK; };
    t.start = [](void*, const kc_config*) { return KC_OK; };
    t.put = [](void*, const kc_sink_records*) { return KC_OK; };
    t.stop = [](void*) { return KC_OK; };
    return t;
  }();
  static const int32_t garbage[] = {77};
  kc_connector_class c{};
  c.struct_size = offsetof(kc_connector_class, config_key_orders);
  c.class_name = "t.Abi11Sink";
  c.type = KC_SINK;
  c.config_keys = &key;
  c.config_key_count = 1;
  c.create = [](void*, const kc_connector_context*, void** self) { return *self = nullptr, KC_OK; };
  c.start = [](void*, const kc_config*) { return KC_OK; };
  c.task_configs = [](void*, int32_t, kc_task_configs*) { return KC_OK; };
  c.stop = [](void*) { return KC_OK; };
  c.sink_task = &task;
  c.config_key_orders = garbage;  // past struct_size: not the plugin's
  return h->register_connector(r, &c);
}

}  // namespace

TEST_CASE("plugin ABI 1.2: config key orders reach the registry, a 1.1 class table gets none") {
  cx::PluginRegistry reg;
  REQUIRE(cx::register_plugin(&abi12_plugins, "abi12", reg));
  auto d = reg.find("t.SchemaSink");
  REQUIRE(d);
  REQUIRE(d->config_defs.size() == 2);
  CHECK(d->config_defs[0].group == "G");
  CHECK(d->config_defs[0].order_in_group == 2);
  CHECK(d->config_defs[1].order_in_group == -1);
  REQUIRE(cx::register_plugin(&abi11_table, "abi11.so", reg));
  auto old = reg.find("t.Abi11Sink");
  REQUIRE(old);
  REQUIRE(old->config_defs.size() == 1);
  CHECK(old->config_defs[0].order_in_group == -1);
}

TEST_CASE("plugin ConfigDef: begin_group sets the group and a running order for the defines after it") {
  const auto def = kd::ConfigDef()
                       .define("before", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "no group")
                       .begin_group("Source")
                       .define("a", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "a")
                       .define("b", KC_CONFIG_INT, "1", KC_IMPORTANCE_LOW, "b")
                       .at_least(0)
                       .define("c", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "c")
                       .group("Other")  // a per-key setter still wins
                       .order(9)
                       .begin_group("Target")
                       .define("d", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "d")
                       .end_group()
                       .define("after", KC_CONFIG_STRING, "", KC_IMPORTANCE_LOW, "no group");
  std::vector<std::string> seen;
  for (const auto& k : def.keys()) seen.push_back(k.name + " " + k.group + " " + std::to_string(k.order));
  CHECK(seen == std::vector<std::string>{"before  -1", "a Source 1", "b Source 2", "c Other 9", "d Target 1",
                                         "after  -1"});
  CHECK(def.keys()[2].min == 0);  // setters after a grouped define still apply to that key

  // Through the C ABI into the registry, as /validate reads them.
  cx::PluginRegistry reg;
  REQUIRE(cx::register_plugin(&grouped_plugins, "grouped", reg));
  auto d = reg.find("t.GroupedSink");
  REQUIRE(d);
  REQUIRE(d->config_defs.size() == 3);
  CHECK(d->config_defs[0].group == "G");
  CHECK(d->config_defs[0].order_in_group == 1);
  CHECK(d->config_defs[1].group == "G");
  CHECK(d->config_defs[1].order_in_group == 2);
  CHECK(d->config_defs[2].group.empty());
  CHECK(d->config_defs[2].order_in_group == -1);
}

TEST_CASE("plugin ABI 1.2: a sink reads schema defaults and compares schemas by value") {
  cx::PluginRegistry reg;
  REQUIRE(cx::register_plugin(&abi12_plugins, "abi12", reg));
  auto c = reg.create("t.SchemaSink");
  REQUIRE(c);
  auto task = (*c)->create_sink_task();
  REQUIRE(task);
  task->start({});
  auto with_default = [](int32_t d) {
    auto b = kc::data::SchemaBuilder::int32();
    b.default_value(kc::data::Value(d));
    return kc::data::SchemaBuilder::struct_().field("a", b.build().value()).build().value();
  };
  auto record = [](const kc::data::SchemaPtr& s) {
    cx::SinkRecord r;
    r.topic = "t";
    kc::data::Struct st(s);
    REQUIRE(st.put("a", int32_t{1}));
    r.value = cx::Data{s, kc::data::Value(st)};
    return r;
  };
  auto plain = kc::data::SchemaBuilder::struct_().field("a", kc::data::INT32_SCHEMA()).build().value();
  // Two distinct but equal schemas, then a different default.
  std::vector<cx::SinkRecord> batch{record(with_default(7)), record(with_default(7)), record(with_default(8)),
                                    record(plain)};
  schema_seen.clear();
  task->put(batch);
  CHECK(schema_seen == std::vector<std::string>{"7", "7 same", "8 other", "none other"});

  // Against a 1.1 worker (a host table that ends before the 1.2 members)
  // plugin.hpp answers "no default" and compares handles only.
  kc_host_api old = *kd::detail::g_host;
  old.struct_size = offsetof(kc_host_api, schema_default_value);
  const kc_host_api* saved = std::exchange(kd::detail::g_host, &old);
  schema_seen.clear();
  task->put(batch);
  kd::detail::g_host = saved;
  CHECK(schema_seen == std::vector<std::string>{"none", "none other", "none other", "none other"});
  task->stop();
}

// ---------------------------------------------------------------- ABI 1.3

namespace {

/// What the napping tasks saw: the answer of their last wait_stopped, and
/// whether one is under way (so the test requests the stop during it).
std::atomic<int> nap_result{-1};
std::atomic<bool> napping{false};

/// Naps `nap.ms` in every poll through context().wait_stopped.
class NapSource : public kd::SourceTask {
 public:
  void start(const kd::Config& c, const kd::SourceTaskContext&) override { nap_ = kd::int_setting(c, "nap.ms", 0); }
  void poll(kd::SourceRecords&) override {
    napping = true;
    nap_result = context().wait_stopped(std::chrono::milliseconds(nap_)) ? 1 : 0;
    napping = false;
  }
  void stop() override {}

 private:
  int64_t nap_ = 0;
};

/// Naps `nap.ms` in every put, as a sink backing off before a retry.
class NapSink : public kd::SinkTask {
 public:
  void start(const kd::Config& c) override { nap_ = kd::int_setting(c, "nap.ms", 0); }
  void put(const kd::SinkRecords&) override {
    napping = true;
    nap_result = context().wait_stopped(std::chrono::milliseconds(nap_)) ? 1 : 0;
    napping = false;
    if (nap_result == 1) throw kd::RetriableError("stopped during the backoff");
  }
  void stop() override {}

 private:
  int64_t nap_ = 0;
};

KCONNECTD_BUILTIN_PLUGIN(abi13_plugins, reg) {
  reg.source<SrcConn, NapSource>("t.NapSource", "1.3");
  reg.sink<SinkConn, NapSink>("t.NapSink", "1.3");
}

/// A task context whose stop is a std::stop_source, as the runtime's
/// (worker/runtime SourceContext / SinkContext end their naps on the
/// task's stop token the same way).
struct StoppableSourceCtx : TaskCtx {
  std::stop_source stop;
  bool wait_stopped(std::chrono::milliseconds t) const override { return kc::wait_for_stop(stop.get_token(), t); }
};
struct StoppableSinkCtx : cx::SinkTaskContext {
  std::stop_source stop;
  bool wait_stopped(std::chrono::milliseconds t) const override { return kc::wait_for_stop(stop.get_token(), t); }
};

cx::PluginRegistry& abi13_registry() {
  static cx::PluginRegistry* r = [] {
    auto* reg = new cx::PluginRegistry();
    auto st = cx::register_plugin(&abi13_plugins, "abi13", *reg);
    if (!st) FAIL(st.error().message);
    return reg;
  }();
  return *r;
}

/// Runs `call` on its own thread, requests `stop` once the call naps, and
/// joins it: the nap of 60 s must end on the stop for the join to return.
template <typename Call>
void stop_during_nap(std::stop_source& stop, Call call) {
  nap_result = -1;
  napping = false;
  std::thread t(call);
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!napping && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
  CHECK(napping);  // the stop came during the nap, not before it
  stop.request_stop();
  t.join();
}

std::unique_ptr<cx::SourceTask> nap_source(StoppableSourceCtx& ctx, const std::string& nap_ms) {
  auto c = abi13_registry().create("t.NapSource");
  REQUIRE(c);
  auto task = (*c)->create_source_task();
  task->start({{"nap.ms", nap_ms}}, ctx);
  return task;
}

}  // namespace

TEST_CASE("plugin ABI 1.3: a source task's wait_stopped ends with 1 when its stop is requested, 0 on timeout") {
  StoppableSourceCtx ctx;
  SECTION("a 60 s nap ends on the stop: the call answers 1 and its thread joins") {
    auto task = nap_source(ctx, "60000");
    stop_during_nap(ctx.stop, [&] { task->poll(); });
    CHECK(nap_result == 1);
  }
  SECTION("no stop: the nap runs out and answers 0") {
    auto task = nap_source(ctx, "20");
    task->poll();
    CHECK(nap_result == 0);
  }
  SECTION("a stop requested before the nap: 1 at once") {
    ctx.stop.request_stop();
    auto task = nap_source(ctx, "60000");
    task->poll();
    CHECK(nap_result == 1);
  }
}

TEST_CASE("plugin ABI 1.3: a sink task gets its context through initialize, and a stop ends a put() backoff") {
  StoppableSinkCtx ctx;
  auto c = abi13_registry().create("t.NapSink");
  REQUIRE(c);
  auto task = (*c)->create_sink_task();
  task->initialize(ctx);
  task->start({{"nap.ms", "60000"}});
  std::vector<cx::SinkRecord> batch(1);
  bool retriable = false;
  stop_during_nap(ctx.stop, [&] {
    try {
      task->put(batch);
    } catch (const cx::RetriableError&) {
      retriable = true;
    }
  });
  CHECK(nap_result == 1);
  CHECK(retriable);  // the put gave its records back
  task->stop();

  // A sink task the runtime never initialized naps with no stop to see.
  auto plain = (*c)->create_sink_task();
  plain->start({{"nap.ms", "20"}});
  plain->put(batch);
  CHECK(nap_result == 0);
}

TEST_CASE("plugin ABI 1.3: the host call bounds its input: NULL context, negative and huge timeouts") {
  const kc_host_api& h = cx::plugin_host_api();
  REQUIRE(h.struct_size >= offsetof(kc_host_api, sink_task_wait_stopped) + sizeof h.sink_task_wait_stopped);
  CHECK(h.abi_version == ((1u << 16) | 3u));
  CHECK(h.source_task_wait_stopped(nullptr, 1) == 0);  // nothing to stop it: a plain nap
  CHECK(h.sink_task_wait_stopped(nullptr, -5) == 0);   // negative = 0: returns at once
  StoppableSinkCtx stopped;
  stopped.stop.request_stop();
  // INT64_MAX ms would overflow steady_clock's now() + timeout; bounded, a
  // stop already requested answers 1 at once.
  CHECK(h.sink_task_wait_stopped(reinterpret_cast<const kc_sink_task_context*>(
                                     static_cast<const cx::SinkTaskContext*>(&stopped)),
                                 INT64_MAX) == 1);
  StoppableSourceCtx idle;
  CHECK(h.source_task_wait_stopped(
            reinterpret_cast<const kc_source_task_context*>(static_cast<const cx::SourceTaskContext*>(&idle)),
            -1) == 0);
}

TEST_CASE("plugin ABI 1.3: against a 1.2 worker plugin.hpp's wait_stopped is a plain sleep answering 0") {
  StoppableSourceCtx ctx;
  ctx.stop.request_stop();
  auto task = nap_source(ctx, "20");
  kc_host_api old = *kd::detail::g_host;
  old.struct_size = offsetof(kc_host_api, source_task_wait_stopped);  // a 1.2 host table
  old.source_task_wait_stopped = nullptr;
  old.sink_task_wait_stopped = nullptr;
  const kc_host_api* saved = std::exchange(kd::detail::g_host, &old);
  task->poll();
  kd::detail::g_host = saved;
  CHECK(nap_result == 0);  // slept the 20 ms: a 1.2 worker has no stop to see
  task->poll();
  CHECK(nap_result == 1);
}

namespace {

std::atomic<int> abi12_puts{0};

/// A sink class table as a 1.2 plugin builds it: struct_size ends before
/// initialize, so whatever follows must be ignored (a 1.3 worker must not
/// call it).
kc_status abi12_sink_table(const kc_host_api* h, kc_registrar* r) {
  static const kc_sink_task_class task = [] {
    kc_sink_task_class t{};
    t.struct_size = offsetof(kc_sink_task_class, initialize);
    t.create = [](void*, void** self) { return *self = nullptr, KC_OK; };
    t.start = [](void*, const kc_config*) { return KC_OK; };
    t.put = [](void*, const kc_sink_records*) { return ++abi12_puts, KC_OK; };
    t.stop = [](void*) { return KC_OK; };
    // Past struct_size: not the plugin's. Called, it would fail the task.
    t.initialize = [](void*, const kc_sink_task_context*) { return KC_ERROR; };
    return t;
  }();
  kc_connector_class c{};
  c.struct_size = sizeof c;
  c.class_name = "t.Abi12Sink";
  c.type = KC_SINK;
  c.create = [](void*, const kc_connector_context*, void** self) { return *self = nullptr, KC_OK; };
  c.start = [](void*, const kc_config*) { return KC_OK; };
  c.task_configs = [](void*, int32_t, kc_task_configs*) { return KC_OK; };
  c.stop = [](void*) { return KC_OK; };
  c.sink_task = &task;
  return h->register_connector(r, &c);
}

}  // namespace

TEST_CASE("plugin ABI 1.3: a 1.2 plugin's sink table runs on this worker without initialize") {
  cx::PluginRegistry reg;
  REQUIRE(cx::register_plugin(&abi12_sink_table, "abi12.so", reg));
  auto c = reg.create("t.Abi12Sink");
  REQUIRE(c);
  auto task = (*c)->create_sink_task();
  StoppableSinkCtx ctx;
  task->initialize(ctx);
  REQUIRE_NOTHROW(task->start({}));  // the garbage initialize past struct_size was not called
  abi12_puts = 0;
  task->put(std::vector<cx::SinkRecord>(1));
  CHECK(abi12_puts == 1);
  task->stop();
}

#ifdef KC_TEST_ABI12_PLUGIN
TEST_CASE("plugin ABI 1.3: a .so built for ABI 1.2 loads, and its sink task runs") {
  cx::PluginRegistry reg;
  auto res = cx::load_plugin_file(KC_TEST_ABI12_PLUGIN, reg);
  INFO(res.error);
  REQUIRE(res.error.empty());
  REQUIRE(res.classes == std::vector<std::string>{"test.Abi12SinkConnector"});
  auto c = reg.create("test.Abi12SinkConnector");
  REQUIRE(c);
  (*c)->start({});
  auto task = (*c)->create_sink_task();
  StoppableSinkCtx ctx;
  task->initialize(ctx);
  REQUIRE_NOTHROW(task->start({}));
  std::vector<cx::SinkRecord> batch(2);
  REQUIRE_NOTHROW(task->put(batch));
  CHECK_THROWS_WITH(task->flush({}), "abi12 sink flushed 2 records");  // its put ran, over the 1.2 table
  task->stop();
}
#endif
