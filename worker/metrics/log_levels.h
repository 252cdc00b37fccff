#pragma once
// Named logger levels, as Connect's /admin/loggers shows and sets them
// (Connect's Loggers over log4j; KIP-495, and KIP-976's last_modified).
//
// kconnectd has one spdlog logger; these names are what an operator can
// tune at run time:
//   root                 every kconnectd line (the spdlog level; log.level)
//   librdkafka           librdkafka's own log lines, all client types
//   librdkafka.producer  ... of producers (task, DLQ, internal-topic writers)
//   librdkafka.consumer  ... of consumers (sink tasks, internal-topic readers)
//   librdkafka.admin     ... of admin clients (topic checks, group admin)
// Other names are accepted and listed (Connect creates any logger it is
// asked for, and tools such as kcctl set Java class names) but change
// nothing. A name's effective level is its own, else its nearest dotted
// ancestor's, else root's.
//
// DEBUG or TRACE on a librdkafka.<kind> name (own or inherited from
// `librdkafka`) also turns on librdkafka's `debug` contexts for clients of
// that kind CREATED AFTER the change (librdkafka reads `debug` once, when a
// client is made); restart a task to apply it to the task's clients.
//
// Thread-safety: every method may be called from any thread. The
// librdkafka log callback reads only atomics (librdkafka_level), never the
// mutex, so it never waits behind a REST call.

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <spdlog/common.h>

namespace kc::metrics {

/// The kinds of librdkafka client the worker makes, one logger each.
enum class KafkaClientKind { Producer, Consumer, Admin };

/// "librdkafka.producer" / "librdkafka.consumer" / "librdkafka.admin".
const char* kafka_logger_name(KafkaClientKind kind);

/// Parses a log4j level name as Connect accepts it (case-insensitive):
/// OFF, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, ALL (FATAL = critical,
/// ALL = trace). nullopt for anything else.
std::optional<spdlog::level::level_enum> parse_log4j_level(std::string_view name);

/// The log4j name of `level` ("TRACE", "DEBUG", "INFO", "WARN", "ERROR",
/// "FATAL", "OFF"), as GET /admin/loggers shows it.
const char* log4j_level_name(spdlog::level::level_enum level);

/// One logger as GET /admin/loggers shows it (Connect's LoggerLevel).
struct LoggerLevel {
  spdlog::level::level_enum level = spdlog::level::info;  ///< effective level
  std::optional<int64_t> last_modified_ms;  ///< ms since the epoch of the last set; nullopt = never
};

/// The process's logger levels. One per process (instance()); a test
/// may make its own.
class LoggerLevels {
 public:
  LoggerLevels();

  /// The process's registry (what REST, the config-topic reader and the
  /// librdkafka callback use).
  static LoggerLevels& instance();

  /// Startup (cmd run, after log.level is known): forgets every change,
  /// sets root to `root` (and spdlog's level) and `librdkafka` to `root`
  /// but never more verbose than INFO, so log.level=DEBUG alone does not
  /// turn on librdkafka's debug contexts.
  void reset(spdlog::level::level_enum root);

  /// Every logger with a level of its own, plus root, by name (Connect's
  /// allLevels). `last_modified_ms` is nullopt for those never set at run
  /// time.
  std::map<std::string, LoggerLevel> all() const;

  /// `name`'s effective level, or nullopt when no such logger exists
  /// (neither set nor a built-in name); "root" always exists.
  std::optional<LoggerLevel> get(const std::string& name) const;

  /// Sets `level` on `ns` and on every known logger whose name starts with
  /// `ns` ("root": on every logger), creating `ns` when it is new; records
  /// `now_ms` as their last_modified. Returns the names changed, sorted
  /// (Connect's setLevel answer). A root change sets spdlog's level too.
  std::vector<std::string> set(const std::string& ns, spdlog::level::level_enum level, int64_t now_ms);

  /// The effective level of librdkafka clients of `kind`. Lock-free.
  spdlog::level::level_enum librdkafka_level(KafkaClientKind kind) const {
    return static_cast<spdlog::level::level_enum>(rdkafka_[static_cast<int>(kind)].load(std::memory_order_relaxed));
  }

  /// True when clients of `kind` made now should set librdkafka's `debug`
  /// (effective level DEBUG or TRACE). Lock-free.
  bool librdkafka_debug(KafkaClientKind kind) const { return librdkafka_level(kind) <= spdlog::level::debug; }

 private:
  struct Entry {
    spdlog::level::level_enum level;
    std::optional<int64_t> last_modified_ms;
  };
  /// Effective level of `name` (own, nearest dotted ancestor, root). Needs mu_.
  spdlog::level::level_enum effective_locked(const std::string& name) const;
  /// Refreshes rdkafka_ from the map. Needs mu_.
  void publish_locked();

  mutable std::mutex mu_;
  std::map<std::string, Entry> loggers_;  ///< guarded by mu_; always holds "root"
  std::atomic<int> rdkafka_[3];           ///< effective level per KafkaClientKind
  bool drive_spdlog_ = false;             ///< instance() only: root follows spdlog
};

}  // namespace kc::metrics
