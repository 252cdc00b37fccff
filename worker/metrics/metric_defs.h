#pragma once
// The declaration of every metric family the worker exports: name, type,
// labels, meaning and the Kafka Connect metric it maps (reference section
// 8). WorkerMetrics registers families only through this table (their
// `# HELP` text is the table's), and `kconnectd reference metrics` renders
// docs/reference/metrics.md from it, so the page cannot drift from /metrics.
//
// Read-only static data: safe from any thread.

#include <span>
#include <string>
#include <string_view>

#include "worker/metrics/registry.h"

namespace kc::metrics {

/// One metric family, as exported (name without the "kconnectd_" prefix).
struct MetricDef {
  const char* name;     ///< e.g. "coordinator_joins_total"
  MetricType type;      ///< counter or gauge
  const char* labels;   ///< comma-separated label names, "" = none
  const char* help;     ///< the `# HELP` text: what the value means, with its unit
  const char* connect;  ///< the Connect metric and group it maps, or "(ours)"
};

/// The `# HELP` text of a family: its meaning, then the Connect metric it
/// maps in parentheses ("JoinGroup round trips completed. (join-total
/// (connect-coordinator-metrics))"); the meaning alone for ours.
std::string help_text(const MetricDef& def);

/// Every family, in documentation order (coordinator, rebalance, worker, task).
std::span<const MetricDef> metric_defs();

/// The family `name` (without prefix). Throws std::logic_error when it is
/// not declared: registering an undeclared family is a programming error.
const MetricDef& metric_def(std::string_view name);

}  // namespace kc::metrics
