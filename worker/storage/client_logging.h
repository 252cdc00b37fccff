#pragma once
// librdkafka's own log lines, through spdlog: the one place every
// librdkafka client the worker makes gets its log and error callbacks
// (make_client calls route_client_logs; so do Producer, TopicReader,
// ensure_topic, group admin, task producers and consumers, DLQ). The
// mirror connector, written against the plugin contract alone, routes its
// clients' lines through the host's log function instead
// (worker/connectors/mirror).
//
// A line goes to the default spdlog logger's sinks, so it has the same
// sink (log.file or stdout), pattern (log.format text|json, worker id,
// generation) as every other line, under the logger name
// librdkafka.<producer|consumer|admin> (the JSON "logger" field), and the
// text "<client name>: <facility>: <message>", where the client name
// carries the client.id (e.g. "connector-producer-my-sink-0#producer-3"),
// so a task's lines name the task. The level filter is the
// librdkafka.<kind> logger's (worker/metrics/log_levels.h), not root's.
//
// librdkafka calls the callbacks on its own threads (log) and on the
// polling thread (error). They keep no per-client state (one function per
// client kind), so they stay valid after the client is destroyed, and they
// never wait for more than a sink's own mutex. No `log.queue` is needed.
//
// A client made with a ClientErrorObserver (broker_check.h) gets the same
// error callback plus one step: after the line is logged, the report is
// recorded in the observer, found through the conf opaque (which is then
// the observer itself; an owner with state of its own for other
// callbacks hangs it on the observer, ClientErrorObserver::set_owner). So
// each error is logged once and classified once, by one callback.
// Lines that arrive while the process exits (after main returns) are
// dropped, since spdlog's registry is going away.

#include <librdkafka/rdkafka.h>

#include <map>
#include <string>

#include <spdlog/common.h>

#include "worker/metrics/log_levels.h"

namespace kc::broker {
class ClientErrorObserver;  // common/broker_classify/broker_classify.h
}  // namespace kc::broker

namespace kc::storage {

using broker::ClientErrorObserver;

/// The spdlog level of a librdkafka (syslog) level: 0-2 (emerg, alert,
/// crit) critical, 3 error, 4 warn, 5-6 (notice, info) info, 7 debug.
spdlog::level::level_enum syslog_to_spdlog(int syslog_level);

/// librdkafka `debug` contexts set on a client of `kind` while its logger is
/// at DEBUG or TRACE.
const char* librdkafka_debug_contexts(metrics::KafkaClientKind kind);

/// Installs the log and error callbacks for a client of `kind` on `conf`,
/// and sets `debug` (librdkafka_debug_contexts) when the kind's logger is at
/// DEBUG/TRACE and `props` sets no `debug` of its own. Call before any
/// customisation that may install its own error callback.
///
/// `observer` (may be null): the error callback also records each report
/// in it (ClientErrorObserver::record), and the conf's opaque is set to it;
/// it must outlive the client (destroy the rd_kafka_t first), and a
/// customisation must not replace the opaque afterwards.
void route_client_logs(rd_kafka_conf_t* conf, metrics::KafkaClientKind kind,
                       const std::map<std::string, std::string>& props, ClientErrorObserver* observer = nullptr);

/// Writes one librdkafka line (exposed for tests): to the default logger's
/// sinks when `level` passes the kind's logger level.
void log_librdkafka_line(metrics::KafkaClientKind kind, spdlog::level::level_enum level, const char* client,
                         const char* facility, const char* message);

}  // namespace kc::storage
