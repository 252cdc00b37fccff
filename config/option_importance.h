#pragma once
// The importance of each worker option (Kafka's ConfigDef.Importance), kept
// apart from the declaration table's struct so that adding it did not
// touch every OptionDef. docs/reference/worker-properties.md shows it.

#include "config/worker_config.h"

namespace kc::config {

/// ConfigDef.Importance: how likely an operator needs to set an option.
enum class OptionImportance { High, Medium, Low };

/// "high" | "medium" | "low".
const char* to_string(OptionImportance i);

/// The importance of a declared option: Kafka's (DistributedConfig,
/// WorkerConfig, CommonClientConfigs, SaslConfigs) for Connect's options,
/// ours for kconnectd's own; Low unless listed in option_importance.cpp.
OptionImportance option_importance(const OptionDef& def);

}  // namespace kc::config
