#include "worker/storage/client_logging.h"

#include <atomic>
#include <cstdlib>

#include <spdlog/sinks/sink.h>
#include <spdlog/spdlog.h>

#include "worker/storage/broker_check.h"

namespace kc::storage {

namespace {

using metrics::KafkaClientKind;

/// Set at exit, before spdlog's registry is destroyed (the atexit handler
/// is registered after spdlog's first use): a client whose owner was
/// abandoned (a stuck plugin call) may still log from librdkafka's threads
/// while the process ends; those lines are dropped.
std::atomic<bool> g_exiting{false};
void mark_exiting() { g_exiting.store(true); }

template <KafkaClientKind K>
void on_log(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  log_librdkafka_line(K, syslog_to_spdlog(level), rk ? rd_kafka_name(rk) : "", fac, buf);
}

template <KafkaClientKind K>
void on_error(rd_kafka_t* rk, int err, const char* reason, void*) {
  // A fatal error ends the client (idempotent/transactional producer);
  // anything else (a broker down, a transport failure) librdkafka retries.
  const auto level = err == RD_KAFKA_RESP_ERR__FATAL ? spdlog::level::err : spdlog::level::warn;
  const std::string text = std::string(rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err))) + ": " +
                           (reason ? reason : "");
  log_librdkafka_line(K, level, rk ? rd_kafka_name(rk) : "", "ERROR", text.c_str());
}

/// on_error, then the report recorded in the client's observer (the conf
/// opaque route_client_logs set).
template <KafkaClientKind K>
void on_error_observed(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  on_error<K>(rk, err, reason, opaque);
  if (opaque) static_cast<ClientErrorObserver*>(opaque)->record(static_cast<rd_kafka_resp_err_t>(err), reason);
}

template <KafkaClientKind K>
void install(rd_kafka_conf_t* conf, ClientErrorObserver* observer) {
  rd_kafka_conf_set_log_cb(conf, &on_log<K>);
  if (observer) {
    rd_kafka_conf_set_opaque(conf, observer);
    rd_kafka_conf_set_error_cb(conf, &on_error_observed<K>);
  } else {
    rd_kafka_conf_set_error_cb(conf, &on_error<K>);
  }
}

}  // namespace

spdlog::level::level_enum syslog_to_spdlog(int syslog_level) {
  if (syslog_level <= 2) return spdlog::level::critical;
  switch (syslog_level) {
    case 3: return spdlog::level::err;
    case 4: return spdlog::level::warn;
    case 5:
    case 6: return spdlog::level::info;
    default: return spdlog::level::debug;
  }
}

const char* librdkafka_debug_contexts(KafkaClientKind kind) {
  switch (kind) {
    case KafkaClientKind::Producer: return "generic,broker,topic,metadata,msg,eos,security";
    case KafkaClientKind::Consumer: return "generic,broker,topic,metadata,consumer,cgrp,fetch,security";
    case KafkaClientKind::Admin: return "generic,broker,topic,metadata,admin,security";
  }
  return "generic";
}

void route_client_logs(rd_kafka_conf_t* conf, KafkaClientKind kind, const std::map<std::string, std::string>& props,
                       ClientErrorObserver* observer) {
  static const bool registered = [] {
    (void)spdlog::default_logger_raw();  // spdlog's registry exists before the handler is registered
    return std::atexit(&mark_exiting) == 0;
  }();
  (void)registered;
  switch (kind) {
    case KafkaClientKind::Producer: install<KafkaClientKind::Producer>(conf, observer); break;
    case KafkaClientKind::Consumer: install<KafkaClientKind::Consumer>(conf, observer); break;
    case KafkaClientKind::Admin: install<KafkaClientKind::Admin>(conf, observer); break;
  }
  if (!props.count("debug") && metrics::LoggerLevels::instance().librdkafka_debug(kind)) {
    char errstr[256];
    if (rd_kafka_conf_set(conf, "debug", librdkafka_debug_contexts(kind), errstr, sizeof errstr) != RD_KAFKA_CONF_OK)
      spdlog::warn("{}: cannot turn on librdkafka debug: {}", metrics::kafka_logger_name(kind), errstr);
  }
}

void log_librdkafka_line(KafkaClientKind kind, spdlog::level::level_enum level, const char* client,
                         const char* facility, const char* message) {
  if (g_exiting.load() || level < metrics::LoggerLevels::instance().librdkafka_level(kind)) return;
  std::string text = std::string(client ? client : "") + ": " + (facility ? facility : "") + ": " +
                     (message ? message : "");
  // The default logger's sinks, not the logger itself: its level is root's,
  // and librdkafka.<kind> may be more verbose than root.
  auto logger = spdlog::default_logger();
  if (!logger) return;
  spdlog::details::log_msg msg(metrics::kafka_logger_name(kind), level, text);
  for (const auto& sink : logger->sinks()) {
    if (!sink->should_log(level)) continue;
    try {
      sink->log(msg);
    } catch (...) {
      // A failing sink must not throw into librdkafka's thread.
    }
  }
}

}  // namespace kc::storage
