#include "worker/metrics/log_context.h"

#include <spdlog/pattern_formatter.h>
#include <spdlog/spdlog.h>

#include "common/json_text.h"

#include <mutex>

namespace kc::metrics {

namespace {

thread_local std::shared_ptr<LogContext> t_ctx;
std::mutex g_mu;
std::shared_ptr<LogContext> g_ctx;

std::shared_ptr<LogContext> current() {
  if (t_ctx) return t_ctx;
  std::lock_guard lk(g_mu);
  return g_ctx;
}

void append(const std::string& s, spdlog::memory_buf_t& dest) { dest.append(s.data(), s.data() + s.size()); }

/// %W: the worker id ("-" when no context is known).
class WorkerFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit WorkerFlag(bool json) : json_(json) {}
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto c = current();
    const std::string id = c ? c->worker_id : "-";
    append(json_ ? json_escape(id) : id, dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<WorkerFlag>(json_); }

 private:
  bool json_;
};

/// %G: the generation (-1 when unknown).
class GenerationFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg&, const std::tm&, spdlog::memory_buf_t& dest) override {
    auto c = current();
    append(std::to_string(c ? c->generation.load() : -1), dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<GenerationFlag>(); }
};

/// %Q: the message payload, JSON-escaped and quoted.
class JsonMessageFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    // Built with append(), not "\"" + std::string: GCC 12 at -O3 raises a false
    // -Wrestrict on operator+(const char*, std::string&&).
    std::string quoted = "\"";
    quoted.append(json_escape(std::string(msg.payload.data(), msg.payload.size()))).append("\"");
    append(quoted, dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<JsonMessageFlag>(); }
};

/// %N: where a line comes from. JSON: the logger name ("kconnectd" for
/// the worker's own lines, "librdkafka.<kind>" for librdkafka's). Text:
/// "librdkafka.<kind> " for librdkafka's lines, nothing for the worker's
/// own (keeps the text form of existing lines unchanged).
class LoggerFlag final : public spdlog::custom_flag_formatter {
 public:
  explicit LoggerFlag(bool json) : json_(json) {}
  void format(const spdlog::details::log_msg& msg, const std::tm&, spdlog::memory_buf_t& dest) override {
    std::string name(msg.logger_name.data(), msg.logger_name.size());
    if (json_) return append(name.empty() ? std::string("kconnectd") : json_escape(name), dest);
    if (name.rfind("librdkafka", 0) == 0) append(name + " ", dest);
  }
  std::unique_ptr<custom_flag_formatter> clone() const override { return std::make_unique<LoggerFlag>(json_); }

 private:
  bool json_;
};

}  // namespace

void set_thread_log_context(std::shared_ptr<LogContext> ctx) { t_ctx = std::move(ctx); }

void set_default_log_context(std::shared_ptr<LogContext> ctx, bool only_if_unset) {
  std::lock_guard lk(g_mu);
  if (only_if_unset && g_ctx) return;
  g_ctx = std::move(ctx);
}

const char* log_pattern(LogFormat f) {
  switch (f) {
    case LogFormat::Text:
      return "%Y-%m-%d %H:%M:%S.%e %l [%W gen %G] %N%v";
    case LogFormat::Json:
      return R"({"ts":"%Y-%m-%dT%H:%M:%S.%e%z","level":"%l","worker":"%W","generation":%G,"thread":%t,"logger":"%N","msg":%Q})";
  }
  return "%v";
}

std::string json_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    if (!kc::append_json_escape(out, static_cast<unsigned char>(ch))) out.push_back(ch);
  }
  return out;
}

bool configure_logging(const std::string& level, const std::string& format) {
  LogFormat f;
  if (format == "text")
    f = LogFormat::Text;
  else if (format == "json")
    f = LogFormat::Json;
  else
    return false;
  auto lvl = spdlog::level::from_str(level);
  if (lvl == spdlog::level::off && level != "off") return false;
  auto make = [f] {
    auto pf = std::make_unique<spdlog::pattern_formatter>();
    pf->add_flag<WorkerFlag>('W', f == LogFormat::Json);
    pf->add_flag<GenerationFlag>('G');
    pf->add_flag<JsonMessageFlag>('Q');
    pf->add_flag<LoggerFlag>('N', f == LogFormat::Json);
    pf->set_pattern(log_pattern(f));
    return pf;
  };
  spdlog::set_formatter(make());
  spdlog::set_level(lvl);
  return true;
}

}  // namespace kc::metrics
