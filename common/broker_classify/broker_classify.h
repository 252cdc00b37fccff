#pragma once
// The classifier of librdkafka client failures (issue 27 item 1, "fail
// fast, and name the cause"): what a librdkafka client reported (its error
// callback's codes and texts, per-topic errors, the X.509 verification
// result, the configured TLS files) becomes one cause with one line for the
// operator. A library of its own (target kc_broker_classify: librdkafka's
// and OpenSSL's headers, common's secret scrubbing, nothing of the worker)
// so that every client can use it: the worker's startup check and running
// clients (worker/storage/broker_check.h re-exports these names into
// kc::storage) and a plugin's own clients (the mirror connector, which
// links no worker library).
//
//   - classify_broker_check(): a pure function from what was observed to a
//     BrokerCheckVerdict. Table-tested (tests/unit/storage).
//   - ClientErrorObserver: the same for a running client, fed as it runs.
//
// The texts matched are librdkafka 2.0.2's (rdkafka_ssl.c, rdkafka_sasl*.c,
// rdkafka_broker.c, rdkafka_request.c), e.g. "SSL handshake failed:
// Disconnected: connecting to a PLAINTEXT broker listener?", "Disconnected
// while requesting ApiVersion: might be caused by incorrect
// security.protocol configuration (connecting to a SSL listener?)",
// "Unsupported SASL mechanism: broker's supported mechanisms: PLAIN",
// "SASL authentication error: ...". The ACL names follow Kafka Connect's
// documented needs of a worker principal (Kafka's "Authorization and ACLs":
// Read/Write/Describe on the internal topics, Read on the group).
//
// Threading: the classifier runs anywhere; ClientErrorObserver is
// thread-safe.

#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <librdkafka/rdkafka.h>

namespace kc::broker {

/// Why the worker cannot use its brokers (or Ok).
enum class BrokerCheckCause {
  Ok,                    ///< a broker answered the metadata request; every internal topic is usable
  Unreachable,           ///< no TCP connection (refused, host unknown, timed out): transient
  TimedOut,              ///< connected, but no metadata answer within the attempt: transient
  InvalidClientConfig,   ///< librdkafka refused a non-TLS setting when the client was made: fatal
  TlsHandshakeFailed,    ///< the TLS setup or handshake failed for another reason (OpenSSL's reason, the file): fatal
  CertificateNotTrusted, ///< the broker's certificate chain does not verify against the trusted CAs: fatal
  HostnameMismatch,      ///< the broker's certificate does not name the host connected to: fatal
  PlaintextToTlsPort,    ///< security.protocol without TLS against a TLS listener: fatal
  TlsToPlaintextPort,    ///< security.protocol with TLS against a plaintext listener: fatal
  SaslRequired,          ///< the listener wants SASL, security.protocol has none (connection cut after ApiVersions): fatal
  SaslMechanismNotEnabled,  ///< the broker does not enable sasl.mechanism (its list given): fatal
  AuthenticationFailed,  ///< the broker refused the SASL credentials (never the password in the text): fatal
  NotAuthorized,         ///< authenticated, but ACLs deny a topic / the group / the cluster: fatal
};

/// "host:port" of the broker a librdkafka text is about: its texts start
/// "<proto>://<host:port>/<id or bootstrap>: ..." (or "<host:port>/<id>:
/// ..." without the protocol; a log line's "[thrd:...]: " prefix is
/// skipped); "" when the text names none.
std::string broker_in_text(std::string_view text);

/// The cause's stable name, e.g. "authentication-failed" (for logs and tests).
std::string_view broker_check_cause_name(BrokerCheckCause cause);

/// One thing librdkafka reported during the check: an error callback
/// (`code` its error code) or a log line at warning level or worse (`code`
/// RD_KAFKA_RESP_ERR_NO_ERROR). `text` is librdkafka's, with secret values
/// already scrubbed out, e.g. "sasl_ssl://localhost:9093/bootstrap: SASL
/// authentication error: Authentication failed ...".
struct BrokerEvent {
  rd_kafka_resp_err_t code = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::string text;
};

/// Everything classify_broker_check() decides from.
struct BrokerObservation {
  /// security.protocol as configured (any case; "" = PLAINTEXT).
  std::string security_protocol;
  /// sasl.mechanism(s) as configured ("" = librdkafka's default, GSSAPI).
  std::string sasl_mechanism;
  /// The configured TLS files by librdkafka key (ssl.ca.location,
  /// ssl.certificate.location, ssl.key.location, ...), for the message.
  std::map<std::string, std::string> files;
  /// make_client()'s error (field = key or "librdkafka", message), when
  /// the client could not even be made.
  std::optional<std::pair<std::string, std::string>> client_error;
  /// The first X.509 verification failure (OpenSSL X509_V_ERR_* code and
  /// its X509_verify_cert_error_string text, the broker and the depth of
  /// the certificate in the chain); 0 = none seen.
  int x509_error = 0;
  std::string x509_text;
  std::string x509_broker;
  int x509_depth = 0;
  /// librdkafka's reports, in order.
  std::vector<BrokerEvent> events;
  /// The metadata request's result: NO_ERROR, __TIMED_OUT, __TRANSPORT ...
  rd_kafka_resp_err_t metadata_error = RD_KAFKA_RESP_ERR__TIMED_OUT;
  /// Per internal topic, its error in the metadata answer (NO_ERROR,
  /// UNKNOWN_TOPIC_OR_PART: it will be created, TOPIC_AUTHORIZATION_FAILED ...).
  std::vector<std::pair<std::string, rd_kafka_resp_err_t>> topic_errors;
  /// The answer to FindCoordinator for the worker's group (asked with
  /// kconnectd's own client once metadata came back: librdkafka has no
  /// call for it): NO_ERROR, GROUP_AUTHORIZATION_FAILED, or anything else
  /// (ignored: the group client reports it later).
  rd_kafka_resp_err_t group_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  /// The worker's group.id, for the group ACL named in messages.
  std::string group_id;
  /// The bootstrap.servers, for messages without a broker of their own.
  std::string bootstrap_servers;
  /// How long the attempt ran, for the TimedOut message.
  int elapsed_ms = 0;
};

/// The classification: the cause, whether retrying can help, and the one
/// line for the operator, e.g. "SASL authentication failed at broker
/// localhost:9093 with mechanism SCRAM-SHA-512: Authentication failed
/// during authentication due to invalid credentials with SASL mechanism
/// SCRAM-SHA-512 (check sasl.jaas.config / sasl.username and the password)".
struct BrokerCheckVerdict {
  BrokerCheckCause cause = BrokerCheckCause::Ok;
  bool fatal = false;  ///< true: exit now; false: Ok, or worth another attempt
  std::string message;
  [[nodiscard]] bool ok() const { return cause == BrokerCheckCause::Ok; }
};

/// Classifies one attempt. Pure: no I/O, no clock. Precedence, most
/// specific first: a client that could not be made; an X.509 verification
/// error; TLS against a plaintext port; plaintext against a TLS port; an
/// unsupported SASL mechanism; failed authentication; a SASL listener
/// without SASL (two or more connections cut in state UP, no metadata);
/// another TLS failure before state UP (OpenSSL's reason); a topic / group /
/// cluster authorization error in the metadata; then Ok when metadata came
/// back; else unreachable when connecting failed, else timed out.
BrokerCheckVerdict classify_broker_check(const BrokerObservation& obs);

/// The causes that fail a running client's task (issue 27 item 1: "an auth
/// failure in a task fails that task with the classified message"): TLS
/// setup, handshake, trust and host name, plaintext against TLS and the
/// reverse, an unsupported SASL mechanism, refused credentials, denied
/// ACLs. Not SaslRequired (seen only as repeated disconnects, which a
/// restarting broker also causes) nor the transient causes.
bool fails_running_client(BrokerCheckCause cause);

/// The observer of a running librdkafka client (a task's producer or
/// consumer, a dead letter queue's producer, an internal topic's producer
/// and reader): the reports of the error callback route_client_logs()
/// installs (client_logging.h; pass the observer to make_client,
/// Producer::create or TopicReader::open), and the topic errors its owner
/// or a delivery report saw, classified with classify_broker_check() from
/// the client's own settings (`props`: the merged ClientProps it was made
/// from). Every text is scrubbed of `props`' secret values
/// (secrets::secret_values) when recorded, so no verdict can quote one.
/// Thread-safe: record() runs on librdkafka's threads, fatal() on the
/// owner's. Keeps the first 200 distinct reports. It must outlive the
/// client it observes (the client's conf opaque points at it).
class ClientErrorObserver {
 public:
  /// Called once per fatal cause (fails_running_client), on the thread
  /// that recorded the report that made it fatal (a librdkafka thread or
  /// the owner's), with the verdict. Must not throw or block.
  using FatalHandler = std::function<void(const BrokerCheckVerdict&)>;

  /// `group_id`: the client's group (sink consumers), for the ACL message.
  explicit ClientErrorObserver(const std::map<std::string, std::string>& props, std::string group_id = "");

  /// One librdkafka error report (rd_kafka_conf_set_error_cb's code and
  /// reason); `text` may be null.
  void record(rd_kafka_resp_err_t code, const char* text);
  /// A topic's error seen by the owner (a consumed message's or a
  /// delivery report's err), e.g. TOPIC_AUTHORIZATION_FAILED.
  void record_topic_error(const std::string& topic, rd_kafka_resp_err_t err);

  /// What has been recorded so far, as an observation (metadata_error
  /// __TIMED_OUT: a running client has no one answer).
  BrokerObservation observation() const;
  /// The classified verdict when it is a cause that fails the task
  /// (fails_running_client), else nullopt. Classifies only when something
  /// new was recorded since the last call, so a data-plane loop may ask
  /// on every batch.
  std::optional<BrokerCheckVerdict> fatal() const;

  /// Installs the handler told of each new fatal cause as soon as it is
  /// recorded (the internal topics' clients log it; tasks ask fatal()
  /// instead). Set it before the client is made.
  void on_fatal(FatalHandler handler);

  /// The owner's own state for the client's other callbacks (a sink
  /// consumer's rebalance callback): the conf opaque of a client made with
  /// an observer is the observer, so such a callback reaches its state
  /// through owner(). Set it before the client is made; nullptr by default.
  void set_owner(void* owner) { owner_ = owner; }
  /// What set_owner() stored.
  void* owner() const { return owner_; }

 private:
  /// Classifies after a new report and calls the FatalHandler for a fatal
  /// cause not reported before.
  void notify_if_fatal();

  BrokerObservation base_;  ///< the settings part, fixed at construction
  std::vector<std::string> hidden_;
  void* owner_ = nullptr;
  mutable std::mutex mu_;
  std::vector<BrokerEvent> events_;  ///< guarded by mu_
  std::vector<std::pair<std::string, rd_kafka_resp_err_t>> topic_errors_;  ///< guarded by mu_
  uint64_t version_ = 0;                    ///< guarded by mu_: bumped by each new report
  mutable uint64_t classified_ = 0;         ///< guarded by mu_: the version last_ is of
  mutable std::optional<BrokerCheckVerdict> last_;  ///< guarded by mu_
  FatalHandler on_fatal_;                   ///< guarded by mu_
  std::vector<BrokerCheckCause> notified_;  ///< guarded by mu_: causes on_fatal_ was told of
};

}  // namespace kc::broker
