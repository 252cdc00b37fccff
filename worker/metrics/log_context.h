#pragma once
// Structured log lines: every line carries the worker id and the group
// generation of the worker that wrote it, in text or JSON form
// (`log.level`, `log.format` = text|json, see config/worker_config.cpp).
//
// How a line finds its worker: a thread may be bound to a LogContext
// (set_thread_log_context; the herder binds its io thread, which runs the
// coordinator and GroupMember, so every coordinator and herder io line is
// tagged). Other threads (pools, task threads) use the process default
// context (set_default_log_context; the first herder of the process sets
// it). With several herders in one process (tests) lines of unbound threads
// carry the first herder's id.
//
// Patterns (spdlog):
//   text: 2026-11-30 00:10:00.123 info [w1:8083 gen 4] message
//         2026-11-30 00:10:00.123 warning [w1:8083 gen 4] librdkafka.producer <client>: FAIL: ...
//   json: {"ts":"2026-11-30T00:10:00.123+0000","level":"info","worker":"w1:8083",
//          "generation":4,"thread":1234,"logger":"kconnectd","msg":"message"}
//   (librdkafka's lines: "logger":"librdkafka.producer|consumer|admin",
//   see worker/storage/client_logging.h)

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace kc::metrics {

/// The identity printed in log lines. `generation` is updated by the herder
/// on every assignment (thread-safe).
struct LogContext {
  std::string worker_id;                ///< e.g. "w1:8083"; fixed after creation
  std::atomic<int32_t> generation{-1};  ///< current group generation, -1 before the first
};

/// Binds the calling thread to `ctx` (nullptr unbinds it).
void set_thread_log_context(std::shared_ptr<LogContext> ctx);

/// Sets the context of threads that are not bound. With `only_if_unset`,
/// keeps an existing default (the first herder of a process wins).
void set_default_log_context(std::shared_ptr<LogContext> ctx, bool only_if_unset = false);

/// Log line formats.
enum class LogFormat { Text, Json };

/// Installs the pattern of `format` (custom flags %W = worker id,
/// %G = generation, %Q = message as a JSON string, %N = logger name) on every registered
/// spdlog logger and the default one, and sets the level `level`
/// ("trace|debug|info|warn|error|critical|off"). Returns false (and changes
/// nothing) for an unknown level or format.
bool configure_logging(const std::string& level, const std::string& format);

/// The spdlog pattern used for `f` (exposed for tests).
const char* log_pattern(LogFormat f);

/// Escapes `s` as the inside of a JSON string (quotes not included), with
/// common/json_text.h's escapes (control characters as \b \t \n \f \r or
/// \u00XX); bytes of 0x80 and up pass through.
std::string json_escape(const std::string& s);

}  // namespace kc::metrics
