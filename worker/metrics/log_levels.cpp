#include "worker/metrics/log_levels.h"

#include <algorithm>
#include <array>
#include <cctype>

#include <spdlog/spdlog.h>

namespace kc::metrics {

namespace {

constexpr std::string_view kRoot = "root";
constexpr std::string_view kLibrdkafka = "librdkafka";
constexpr std::array<KafkaClientKind, 3> kKinds{KafkaClientKind::Producer, KafkaClientKind::Consumer,
                                                KafkaClientKind::Admin};

/// Loggers that exist without being set (Connect: loggers the code made).
bool built_in(std::string_view name) {
  if (name == kRoot || name == kLibrdkafka) return true;
  return std::any_of(kKinds.begin(), kKinds.end(), [&](KafkaClientKind k) { return name == kafka_logger_name(k); });
}

}  // namespace

const char* kafka_logger_name(KafkaClientKind kind) {
  switch (kind) {
    case KafkaClientKind::Producer: return "librdkafka.producer";
    case KafkaClientKind::Consumer: return "librdkafka.consumer";
    case KafkaClientKind::Admin: return "librdkafka.admin";
  }
  return "librdkafka";
}

std::optional<spdlog::level::level_enum> parse_log4j_level(std::string_view name) {
  std::string up;
  for (char c : name) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up == "TRACE" || up == "ALL") return spdlog::level::trace;
  if (up == "DEBUG") return spdlog::level::debug;
  if (up == "INFO") return spdlog::level::info;
  if (up == "WARN") return spdlog::level::warn;
  if (up == "ERROR") return spdlog::level::err;
  if (up == "FATAL") return spdlog::level::critical;
  if (up == "OFF") return spdlog::level::off;
  return std::nullopt;
}

const char* log4j_level_name(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "TRACE";
    case spdlog::level::debug: return "DEBUG";
    case spdlog::level::info: return "INFO";
    case spdlog::level::warn: return "WARN";
    case spdlog::level::err: return "ERROR";
    case spdlog::level::critical: return "FATAL";
    case spdlog::level::off:
    case spdlog::level::n_levels: return "OFF";
  }
  return "OFF";
}

LoggerLevels::LoggerLevels() {
  loggers_.emplace(std::string(kRoot), Entry{spdlog::level::info, std::nullopt});
  loggers_.emplace(std::string(kLibrdkafka), Entry{spdlog::level::info, std::nullopt});
  for (auto& a : rdkafka_) a.store(spdlog::level::info);
}

LoggerLevels& LoggerLevels::instance() {
  static LoggerLevels* levels = [] {
    auto* l = new LoggerLevels();  // never destroyed: librdkafka threads may log during exit
    l->drive_spdlog_ = true;
    return l;
  }();
  return *levels;
}

void LoggerLevels::reset(spdlog::level::level_enum root) {
  std::lock_guard lk(mu_);
  loggers_.clear();
  loggers_.emplace(std::string(kRoot), Entry{root, std::nullopt});
  loggers_.emplace(std::string(kLibrdkafka), Entry{std::max(root, spdlog::level::info), std::nullopt});
  if (drive_spdlog_) spdlog::set_level(root);
  publish_locked();
}

spdlog::level::level_enum LoggerLevels::effective_locked(const std::string& name) const {
  std::string n = name;
  while (true) {
    if (auto it = loggers_.find(n); it != loggers_.end()) return it->second.level;
    auto dot = n.rfind('.');
    if (dot == std::string::npos) break;
    n.resize(dot);
  }
  return loggers_.at(std::string(kRoot)).level;
}

void LoggerLevels::publish_locked() {
  for (auto k : kKinds) rdkafka_[static_cast<int>(k)].store(effective_locked(kafka_logger_name(k)));
}

std::map<std::string, LoggerLevel> LoggerLevels::all() const {
  std::lock_guard lk(mu_);
  std::map<std::string, LoggerLevel> out;
  for (const auto& [name, e] : loggers_) out.emplace(name, LoggerLevel{e.level, e.last_modified_ms});
  return out;
}

std::optional<LoggerLevel> LoggerLevels::get(const std::string& name) const {
  std::lock_guard lk(mu_);
  if (auto it = loggers_.find(name); it != loggers_.end()) return LoggerLevel{it->second.level, it->second.last_modified_ms};
  if (!built_in(name)) return std::nullopt;
  return LoggerLevel{effective_locked(name), std::nullopt};
}

std::vector<std::string> LoggerLevels::set(const std::string& ns, spdlog::level::level_enum level, int64_t now_ms) {
  std::lock_guard lk(mu_);
  std::vector<std::string> names;
  auto consider = [&](const std::string& n) {
    if (ns == kRoot || n.rfind(ns, 0) == 0) names.push_back(n);
  };
  for (const auto& [n, _] : loggers_) consider(n);
  consider(std::string(kLibrdkafka));
  for (auto k : kKinds) consider(kafka_logger_name(k));
  names.push_back(ns);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& n : names) loggers_[n] = Entry{level, now_ms};
  if (ns == kRoot && drive_spdlog_) spdlog::set_level(level);
  publish_locked();
  return names;
}

}  // namespace kc::metrics
