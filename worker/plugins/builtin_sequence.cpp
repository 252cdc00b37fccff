// SequenceSource written against the plugin ABI (include/kconnectd/plugin.hpp),
// as a plugin author would: compiled into the daemon and registered through
// the same entry point type a .so exports (builtin_plugins_register,
// registered in builtin.cpp), not dlopen. Behaviour, class name, config
// defs and docs: builtin.h.
#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <string>

#include <kconnectd/plugin.hpp>

#include "worker/plugins/builtin.h"
#include "worker/plugins/registry.h"

namespace kc::connectors {
namespace {

namespace kp = kconnectd;
using Clock = std::chrono::steady_clock;

class SequenceTask : public kp::SourceTask {
 public:
  void start(const kp::Config& config, const kp::SourceTaskContext& ctx) override {
    topic_ = kp::require_setting(config, "topic", "SequenceSource");
    throughput_ = kp::double_setting(config, "throughput", 10.0);
    max_records_ = kp::int_setting(config, "max.records", -1);
    const std::string connector = ctx.connector_name();
    prefix_ = connector + "-" + std::to_string(ctx.task_number());
    partition_.set("connector", connector).set("task", static_cast<int64_t>(ctx.task_number()));
    if (auto off = ctx.offset(partition_))
      if (auto seq = off->get_int64("seq")) next_ = *seq + 1;
    // The value schema: kconnectd.Sequence {task: STRING, seq: INT64}, so
    // transforms and JsonConverter have fields ("Struct{task=c-0,seq=5}"
    // through StringConverter).
    schema_ = kp::SchemaBuilder::struct_()
                  .name("kconnectd.Sequence")
                  .field("task", kp::Schema::string())
                  .field("seq", kp::Schema::int64())
                  .build();
    started_ = Clock::now();
  }

  void poll(kp::SourceRecords& out) override {
    constexpr int64_t kMaxBatch = 1000;
    if (max_records_ >= 0 && next_ >= max_records_) {  // all emitted: idle, quietly
      context().wait_stopped(std::chrono::milliseconds(100));  // a stop ends it (README "Waits")
      return;
    }
    int64_t n = kMaxBatch;
    if (throughput_ > 0) {
      double secs = std::chrono::duration<double>(Clock::now() - started_).count();
      auto due = static_cast<int64_t>(secs * throughput_) + 1;
      n = std::min(kMaxBatch, due - emitted_);
      if (n <= 0) {
        // Until the next record is due, at most 100 ms (at least 1: no spin); a stop ends it.
        using std::chrono::milliseconds;
        const auto due_in = std::chrono::ceil<milliseconds>(std::chrono::duration<double>(1.0 / throughput_));
        context().wait_stopped(std::min(due_in, milliseconds(100)));
        return;
      }
    }
    if (max_records_ >= 0) n = std::min(n, max_records_ - next_);
    // Each record carries its creation time, so that timestamp-based
    // transforms (TimestampRouter, InsertField timestamp.field) have one.
    const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::system_clock::now().time_since_epoch())
                               .count();
    for (int64_t i = 0; i < n; ++i, ++next_, ++emitted_) {
      auto value = kp::Value::struct_of(schema_);
      value.put("task", kp::Value::of(prefix_)).put("seq", kp::Value::of(next_));
      auto r = out.add();
      r.topic(topic_)
          .key(kp::Schema::string(), kp::Value::of(prefix_))
          .value(schema_, std::move(value))
          .timestamp(now_ms)
          .source_partition(partition_);
      r.source_offset().set("seq", next_);
    }
  }

  void stop() override {}

 private:
  std::string topic_;
  double throughput_ = 10.0;
  int64_t max_records_ = -1;  ///< seqs 0 .. max.records-1 in all; -1 = no end
  std::string prefix_;
  kp::Json partition_;  ///< {"connector": C, "task": n}, shared by the records
  kp::Schema schema_;
  int64_t next_ = 0;
  int64_t emitted_ = 0;
  Clock::time_point started_;
};

class SequenceConnector : public kp::SourceConnector {
 public:
  void start(const kp::Config& config) override {
    kp::require_setting(config, "topic", "SequenceSource");
    kp::double_setting(config, "throughput", 10.0);
    kp::int_setting(config, "max.records", -1);
    config_ = config;
  }
  std::vector<kp::Config> task_configs(int max_tasks) override {
    std::vector<kp::Config> out;
    for (int i = 0; i < std::max(1, max_tasks); ++i) {
      kp::Config c = config_;
      c["task.id"] = std::to_string(i);
      out.push_back(std::move(c));
    }
    return out;
  }
  void stop() override {}
  /// Every record's seq follows from the committed offset {"seq": n}, so a
  /// task restarted there re-emits exactly what an aborted transaction lost.
  kp::ExactlyOnceSupport exactly_once_support(const kp::Config&) override { return kp::ExactlyOnceSupport::Supported; }

 private:
  kp::Config config_;
};

kp::ConfigDef sequence_defs() {
  return kp::ConfigDef()
      .define("topic", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "Topic to write the sequence to.")
      .non_empty()
      .display("Topic")
      .define("throughput", KC_CONFIG_DOUBLE, "10", KC_IMPORTANCE_MEDIUM,
              "Records per second per task; 0 or less = as fast as possible.")
      .display("Throughput")
      .define("max.records", KC_CONFIG_LONG, "-1", KC_IMPORTANCE_LOW,
              "Records per task in all (seq 0 to max.records - 1, counted across restarts); after them the task "
              "emits nothing more. -1 = no limit.")
      .at_least(-1)
      .display("Max records");
}

}  // namespace

KCONNECTD_BUILTIN_PLUGIN(builtin_plugins_register, reg) {
  reg.source<SequenceConnector, SequenceTask>(kSequenceSourceClass, kBuiltinPluginVersion, sequence_defs());
}

}  // namespace kc::connectors
