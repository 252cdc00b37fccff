#pragma once
// A small thread-safe metrics registry with a Prometheus text-format
// renderer (exposition format 0.0.4: `# HELP`, `# TYPE`, one sample per line).
//
// Threads: registration, removal and render() take one mutex; updating a
// Counter or Gauge is a lock-free atomic operation, so task threads, the
// herder's io thread and the pool may update metrics at any time. Callback
// gauges run their function under the registry mutex during render(); the
// function must be quick and must not touch the registry.
//
// Names: the registry adds its prefix ("kconnectd_") to every family name.
// Counter families must be registered with a name ending in "_total" (the
// Prometheus convention; promtool warns otherwise). Invalid metric or label
// names are programming errors and throw std::invalid_argument at
// registration.

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kc::metrics {

/// Label pairs of one series, e.g. {{"connector","c1"},{"task","0"}}.
/// The order given is the order rendered.
using Labels = std::vector<std::pair<std::string, std::string>>;

/// Prometheus metric types this registry renders.
enum class MetricType {
  Counter,  ///< monotonically increasing; resets only when the process restarts
  Gauge,    ///< a value that goes up and down
};

/// "counter" / "gauge", as written after `# TYPE`.
const char* to_string(MetricType t);

/// A monotonically increasing value. Thread-safe, lock-free.
class Counter {
 public:
  /// Adds `v` (must be >= 0; negative values are ignored).
  void inc(double v = 1.0);
  /// Current value.
  [[nodiscard]] double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0.0};
};

/// A value that may go up and down. Thread-safe, lock-free.
class Gauge {
 public:
  /// Sets the value.
  void set(double v) { v_.store(v, std::memory_order_relaxed); }
  /// Adds `d` (may be negative).
  void add(double d);
  /// Current value.
  [[nodiscard]] double value() const { return v_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> v_{0.0};
};

/// True if `name` is a valid Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*).
bool valid_metric_name(std::string_view name);
/// True if `name` is a valid label name ([a-zA-Z_][a-zA-Z0-9_]*, not starting with "__").
bool valid_label_name(std::string_view name);
/// Escapes a label value for the text format: backslash, double quote and
/// line feed become \\, \" and \n.
std::string escape_label_value(std::string_view v);
/// Escapes `# HELP` text: backslash and line feed become \\ and \n.
std::string escape_help(std::string_view v);
/// Formats a sample value: integers without a decimal point, otherwise the
/// shortest round-tripping form; NaN, +Inf and -Inf as Prometheus spells them.
std::string format_value(double v);

/// The registry. Families are keyed by name; series of a family by their
/// labels. Handles (shared_ptr) stay valid after removal (updates to a
/// removed series are simply not rendered any more).
class Registry {
 public:
  /// `prefix` is prepended to every family name ("kconnectd_" by default).
  explicit Registry(std::string prefix = "kconnectd_");
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  /// The counter series `name{labels}`, created on first use. `name` is
  /// without the prefix and must end in "_total". `help` is used when the
  /// family is created. Throws std::invalid_argument for a bad name or
  /// label, std::logic_error if `name` is already a gauge family.
  std::shared_ptr<Counter> counter(const std::string& name, const std::string& help, const Labels& labels = {});

  /// The gauge series `name{labels}`, created on first use (see counter()).
  std::shared_ptr<Gauge> gauge(const std::string& name, const std::string& help, const Labels& labels = {});

  /// A gauge series whose value is computed by `fn` at render time (e.g.
  /// "seconds since the last heartbeat"). Replaces an existing series with
  /// the same labels. `fn` runs under the registry mutex: keep it quick.
  void gauge_fn(const std::string& name, const std::string& help, const Labels& labels, std::function<double()> fn);

  /// Removes the series `name{labels}` (no-op if absent). An emptied family
  /// is kept (its HELP/TYPE are still rendered, with no samples).
  void remove(const std::string& name, const Labels& labels);

  /// Removes every series, of any family, that carries every pair in
  /// `match` (e.g. {{"connector","c1"},{"task","0"}} when a task goes away).
  /// Returns how many series were removed.
  size_t remove_matching(const Labels& match);

  /// Number of series currently registered under `name` (without prefix).
  [[nodiscard]] size_t series_count(const std::string& name) const;

  /// Renders every family, sorted by name, in the Prometheus text
  /// exposition format (Content-Type "text/plain; version=0.0.4").
  [[nodiscard]] std::string render() const;

  /// The Content-Type of render()'s output.
  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  struct Series {
    Labels labels;
    std::shared_ptr<Counter> counter;
    std::shared_ptr<Gauge> gauge;
    std::function<double()> fn;
  };
  struct Family {
    MetricType type = MetricType::Gauge;
    std::string help;
    std::map<std::string, Series> series;  // key: canonical label string
  };
  Family& family_locked(const std::string& name, const std::string& help, MetricType type);

  std::string prefix_;
  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
};

}  // namespace kc::metrics
