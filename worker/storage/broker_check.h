#pragma once
// The startup connectivity check (issue 27 item 1, "fail fast, and name the
// cause"): before anything else of the worker uses the broker, one
// short-lived librdkafka client made from the worker's own client
// properties (security.protocol, ssl.*, sasl.*) asks for the metadata of
// the internal topics, and what librdkafka reports on the way (its error
// callback, its log lines, the X.509 verification result) is classified
// into one cause with one line for the operator.
//
// Layers:
//   - classify_broker_check() and ClientErrorObserver live in
//     common/broker_classify (a library of their own, which the mirror
//     connector links too); this header re-exports them into kc::storage.
//     The classifier is a pure function from what was observed (librdkafka
//     error codes and texts, per-topic errors, the X.509 error, the
//     configured files) to a BrokerCheckVerdict. Table-tested.
//   - check_brokers() runs one attempt against the cluster (blocking, at
//     most BrokerCheckOptions::attempt_timeout_ms plus the client's
//     teardown); wait_for_brokers() repeats transient failures, one
//     on_attempt call (a log line) per attempt, up to
//     BrokerCheckOptions::retry_bound_ms.
//   - ClientErrorObserver: the same classifier for every running client
//     the worker makes (internal topics, task producers and consumers,
//     DLQ producers), fed by the one error callback route_client_logs()
//     installs (client_logging.h).
//
// Threading: check_brokers() and wait_for_brokers() block the calling
// thread; the classifier runs anywhere.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <librdkafka/rdkafka.h>

#include "common/broker_classify/broker_classify.h"
#include "worker/storage/kafka_client.h"

namespace kc::storage {
/// The classifier (common/broker_classify), under the names this room
/// has always used.
using broker::BrokerCheckCause;
using broker::broker_check_cause_name;
using broker::BrokerEvent;
using broker::BrokerObservation;
using broker::BrokerCheckVerdict;
using broker::classify_broker_check;
using broker::fails_running_client;
using broker::ClientErrorObserver;

/// Bounds of the check.
struct BrokerCheckOptions {
  /// One attempt's bound for the metadata answer (a fatal cause ends it
  /// as soon as librdkafka reports it; all brokers down ends it too).
  int attempt_timeout_ms = 8000;
  /// Transient causes are retried until this much time has passed since
  /// the first attempt began (then the last one is returned, fatal).
  int retry_bound_ms = 60000;
  /// Pause between attempts.
  int retry_backoff_ms = 1000;
};

/// One attempt: a consumer-type librdkafka client (allow.auto.create.topics
/// false) from `props` (bootstrap.servers and the worker's security
/// settings) asks for the metadata of all topics (naming a topic would make
/// librdkafka's mock cluster create it), observed through its error and log
/// callbacks and (with TLS) its X.509 verify callback; each of `topics`
/// (the internal topics) found in the answer contributes its error; then
/// classified. Once metadata came back and `group_id` is set, the group's
/// FindCoordinator is asked with broker_apis() (group_admin.h: kconnectd's
/// own client, same security settings) for GROUP_AUTHORIZATION_FAILED.
/// Blocking, up to `opts.attempt_timeout_ms` plus the client's
/// teardown (under a second); an attempt where nothing connects ends after
/// 1.5 s once librdkafka reports all brokers down. The client's log lines
/// are not printed: they go into the observation, and at debug level to
/// spdlog. Limit: Kafka leaves topics the principal may not Describe out of
/// an all-topics answer, so a missing Describe ACL on an existing topic is
/// not seen here (it surfaces when the stores open the topic).
BrokerCheckVerdict check_brokers(const ClientProps& props, const std::vector<std::string>& topics,
                                 const std::string& group_id, const BrokerCheckOptions& opts = {});

/// Runs check_brokers() until it is Ok, fatal, or the transient causes
/// have lasted `opts.retry_bound_ms`; calls `on_attempt(attempt number
/// from 1, verdict, attempt_ms)` after each attempt that is neither Ok nor
/// the last, where attempt_ms is how long that attempt ran (client made,
/// waited, torn down). The next attempt then starts
/// `opts.retry_backoff_ms` later, so attempts start attempt_ms +
/// retry_backoff_ms apart (e.g. 1.75 s + 1 s when nothing connects).
/// Returns the last verdict; one that ran out of retries is marked fatal
/// and says "(gave up after N attempts in M s)". Blocking.
BrokerCheckVerdict wait_for_brokers(const ClientProps& props, const std::vector<std::string>& topics,
                                    const std::string& group_id, const BrokerCheckOptions& opts,
                                    const std::function<void(int, const BrokerCheckVerdict&, int)>& on_attempt);

}  // namespace kc::storage
