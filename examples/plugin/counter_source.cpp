// CounterSource: an example kconnectd plugin written with plugin.hpp.
//
// com.example.CounterSourceConnector (alias CounterSource), a source whose
// task n emits the string values "<prefix>-0", "<prefix>-1", ... with key
// "task-n" to `topic`, `batch.size` records per poll, at most `max.records`
// records in all (then nothing more). Source partition {"task": n}, offset
// {"count": next}: a restarted task resumes after the last committed record.

#include <chrono>
#include <string>

#include <kconnectd/plugin.hpp>

namespace {

using namespace kconnectd;

int64_t to_int(const Config& c, const std::string& key, int64_t def) {
  auto it = c.find(key);
  return it == c.end() || it->second.empty() ? def : std::stoll(it->second);
}

class CounterTask : public SourceTask {
 public:
  void start(const Config& config, const SourceTaskContext& ctx) override {
    topic_ = config.at("topic");
    prefix_ = config.count("prefix") ? config.at("prefix") : "count";
    batch_ = to_int(config, "batch.size", 100);
    max_ = to_int(config, "max.records", -1);
    partition_.set("task", static_cast<int64_t>(ctx.task_number()));
    key_ = "task-" + std::to_string(ctx.task_number());
    if (auto off = ctx.offset(partition_))
      if (auto n = off->get_int64("count")) next_ = *n;
  }

  void poll(SourceRecords& out) override {
    int64_t n = 0;
    for (; n < batch_ && (max_ < 0 || next_ < max_); ++n, ++next_) {
      auto r = out.add();
      r.topic(topic_)
          .key(Schema::string(), Value::of(key_))
          .value(Schema::string(), Value::of(prefix_ + "-" + std::to_string(next_)))
          .source_partition(partition_);
      r.source_offset().set("count", next_ + 1);
    }
    // Nothing more to emit: nap, but end at once when the worker stops the task.
    if (n == 0) context().wait_stopped(std::chrono::milliseconds(100));
  }

  void stop() override {}

 private:
  std::string topic_, prefix_, key_;
  int64_t batch_ = 100, max_ = -1, next_ = 0;
  Json partition_;
};

class CounterConnector : public SourceConnector {
 public:
  void start(const Config& config) override { config_ = config; }
  std::vector<Config> task_configs(int max_tasks) override { return std::vector<Config>(max_tasks, config_); }
  void stop() override {}

 private:
  Config config_;
};

ConfigDef config_def() {
  return ConfigDef()
      .define("topic", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH, "The topic to write to.")
      .non_empty()
      .define("prefix", KC_CONFIG_STRING, "count", KC_IMPORTANCE_LOW, "Text before each number.")
      .define("batch.size", KC_CONFIG_INT, "100", KC_IMPORTANCE_LOW, "Records per poll.")
      .at_least(1)
      .define("max.records", KC_CONFIG_LONG, "-1", KC_IMPORTANCE_LOW,
              "Records per task in all; -1 = no limit.")
      .at_least(-1);
}

}  // namespace

KCONNECTD_PLUGIN(reg) {
  reg.source<CounterConnector, CounterTask>("com.example.CounterSourceConnector", "1.2.3", config_def(),
                                            {"CounterSource"});
}
