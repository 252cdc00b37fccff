// Importance of the worker options (option_importance.h).
#include "config/option_importance.h"

#include <string_view>

namespace kc::config {
namespace {

// Importance by name; every other option is Low. Kafka's where Connect has
// the option, ours (marked) otherwise.
constexpr std::string_view kHighImportance[] = {
    "bootstrap.servers",    "group.id",          "session.timeout.ms",   "heartbeat.interval.ms",
    "rebalance.timeout.ms", "config.storage.topic", "offset.storage.topic", "status.storage.topic",
    "key.converter",        "value.converter",   "exactly.once.source.support",
};
constexpr std::string_view kMediumImportance[] = {
    "worker.sync.timeout.ms", "worker.unsync.backoff.ms", "security.protocol", "sasl.mechanism",
    "sasl.jaas.config", "request.timeout.ms", "connections.max.idle.ms", "send.buffer.bytes",
    "receive.buffer.bytes", "socket.connection.setup.timeout.ms", "socket.connection.setup.timeout.max.ms",
    "connector.client.config.override.policy",
    // ours
    "group.instance.id", "sasl.username", "sasl.password", "rest.basic.auth.credentials.file", "log.level",
};

}  // namespace

const char* to_string(OptionImportance i) {
  switch (i) {
    case OptionImportance::High: return "high";
    case OptionImportance::Medium: return "medium";
    case OptionImportance::Low: return "low";
  }
  return "low";
}

OptionImportance option_importance(const OptionDef& def) {
  const std::string_view name = def.name;
  for (auto n : kHighImportance)
    if (n == name) return OptionImportance::High;
  for (auto n : kMediumImportance)
    if (n == name) return OptionImportance::Medium;
  return OptionImportance::Low;
}

}  // namespace kc::config
