#pragma once
// `log.file` for `kconnectd run`: an spdlog sink that appends to a file and
// can reopen it, so logrotate (or an operator) renames the file and sends
// SIGHUP, and the next lines go to a new file of the original name.
// reopen() takes the sink's own mutex, so it may run on the signal thread
// while other threads log.
#include <memory>
#include <mutex>
#include <string>

#include <spdlog/details/file_helper.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

namespace kc::cmd {

class ReopenableFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  /// Opens (creates or appends to) `path`; throws spdlog::spdlog_ex on failure.
  explicit ReopenableFileSink(std::string path) : path_(std::move(path)) { file_.open(path_, false); }

  /// Closes the file and opens `path` again (appending; created if it was
  /// renamed or removed). Throws spdlog::spdlog_ex on failure.
  void reopen() {
    std::lock_guard<std::mutex> lk(mutex_);
    file_.flush();
    file_.close();
    file_.open(path_, false);
  }

  [[nodiscard]] const std::string& path() const { return path_; }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    file_.write(formatted);
    // Lines reach the file at once (a daemon's log is read while it runs).
    file_.flush();
  }
  void flush_() override { file_.flush(); }

 private:
  std::string path_;
  spdlog::details::file_helper file_;
};

/// Makes a logger writing to `path` the default spdlog logger (keeping the
/// previous default's level). Returns the sink, for reopen() on SIGHUP.
/// Throws spdlog::spdlog_ex when the file cannot be opened.
inline std::shared_ptr<ReopenableFileSink> log_to_file(const std::string& path) {
  auto sink = std::make_shared<ReopenableFileSink>(path);
  auto logger = std::make_shared<spdlog::logger>("kconnectd", sink);
  logger->set_level(spdlog::default_logger()->level());
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return sink;
}

}  // namespace kc::cmd
