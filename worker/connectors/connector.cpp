#include "worker/connectors/connector.h"

#include "worker/connectors/config_def.h"

#include <algorithm>
#include <cctype>
#include <thread>

#include <spdlog/spdlog.h>

namespace kc::connectors {

const OrderedJson& SharedJson::empty() {
  static const OrderedJson value = OrderedJson::object();
  return value;
}

SharedJson::SharedJson(OrderedJson value) : value_(std::make_shared<const OrderedJson>(std::move(value))) {}

Data Data::string(std::optional<std::string> s) {
  if (!s) return Data{data::OPTIONAL_STRING_SCHEMA(), data::Value()};
  return Data{data::STRING_SCHEMA(), data::Value(std::move(*s))};
}

Data Data::bytes(std::string b) { return Data{data::BYTES_SCHEMA(), data::Value(data::Bytes{std::move(b)})}; }

bool operator==(const Data& a, const Data& b) {
  const bool same_schema = a.schema == b.schema || (a.schema && b.schema && *a.schema == *b.schema);
  return same_schema && a.value == b.value;
}

namespace {
/// A context's nap with no stop signal behind it.
bool sleep_unstoppable(std::chrono::milliseconds timeout) {
  std::this_thread::sleep_for(timeout);
  return false;
}
}  // namespace

bool SourceTaskContext::wait_stopped(std::chrono::milliseconds timeout) const { return sleep_unstoppable(timeout); }
bool SinkTaskContext::wait_stopped(std::chrono::milliseconds timeout) const { return sleep_unstoppable(timeout); }

const char* connector_type_name(ConnectorType t) {
  switch (t) {
    case ConnectorType::Source: return "source";
    case ConnectorType::Sink: return "sink";
  }
  return "unknown";
}

namespace {
thread_local TaskConfigsCap* t_cap = nullptr;

std::string invalid(const std::string& key, const std::string& value, const std::string& why) {
  return "Invalid value " + value + " for configuration " + key + ": " + why;
}
}  // namespace

Result<TasksMax> parse_tasks_max(const ConfigMap& config, int32_t limit) {
  TasksMax out;
  if (auto it = config.find("tasks.max"); it != config.end()) {
    auto n = tasks_max_value(it->second, limit);  // the rule create-time validation applies
    if (!n) return n.error();
    out.max_tasks = n.value();
  }
  if (auto it = config.find("tasks.max.enforce"); it != config.end()) {
    std::string v = it->second;
    std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return std::tolower(c); });
    if (v != "true" && v != "false")
      return Error{"tasks.max.enforce",
                   invalid("tasks.max.enforce", it->second, "Expected value to be either true or false")};
    out.enforce = v == "true";
  }
  return out;
}

TaskConfigsCap::TaskConfigsCap(size_t max_configs) : max_configs_(max_configs), previous_(t_cap) { t_cap = this; }
TaskConfigsCap::~TaskConfigsCap() { t_cap = previous_; }
TaskConfigsCap* TaskConfigsCap::current() { return t_cap; }

bool TaskConfigsCap::add_config() {
  if (configs_ >= max_configs_) return !(hit_ = true);
  ++configs_;
  return true;
}

bool TaskConfigsCap::add_bytes(size_t bytes) {
  if (bytes > kMaxTaskConfigsBytes - bytes_) return !(hit_ = true);
  bytes_ += bytes;
  return true;
}

std::string too_many_tasks_message(const std::string& connector, size_t generated, int32_t max_tasks) {
  return "The connector " + connector + " has generated " + std::to_string(generated) +
         " tasks, which is greater than " + std::to_string(max_tasks) +
         ", the maximum number of tasks it is configured to create. This behaviour should be considered a bug and "
         "is disallowed. If necessary, it can be permitted by reconfiguring the connector with 'tasks.max.enforce' "
         "set to false; however, this option will be removed in a future release of Kafka Connect.";
}

Result<std::vector<ConfigMap>> generate_task_configs(Connector& connector, const std::string& name,
                                                     const TasksMax& tasks, int32_t limit) {
  std::vector<ConfigMap> configs;
  bool capped = false;
  {
    TaskConfigsCap cap(static_cast<size_t>(std::max(limit, tasks.max_tasks)));
    configs = connector.task_configs(tasks.max_tasks);
    capped = cap.hit();
  }
  if (capped || configs.size() > static_cast<size_t>(std::max(limit, tasks.max_tasks)))
    return Error{"tasks.max", "The connector " + name + " generated more task configs than this worker accepts (" +
                                  std::to_string(limit) + " configs, tasks.max.limit, or " +
                                  std::to_string(kMaxTaskConfigsBytes >> 20) + " MiB in all)"};
  if (configs.size() > static_cast<size_t>(tasks.max_tasks)) {
    if (tasks.enforce) return Error{"tasks.max", too_many_tasks_message(name, configs.size(), tasks.max_tasks)};
    spdlog::warn("The connector {} has generated {} tasks, which is greater than {}, the maximum number of tasks it "
                 "is configured to create. This behavior should be considered a bug and will be disallowed in future "
                 "releases of Kafka Connect; tasks.max.enforce=false keeps them. Please report this to the "
                 "maintainers of the connector.",
                 name, configs.size(), tasks.max_tasks);
  }
  return configs;
}

}  // namespace kc::connectors
