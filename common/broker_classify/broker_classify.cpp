// classify_broker_check() and ClientErrorObserver (broker_classify.h).
#include "common/broker_classify/broker_classify.h"

#include <algorithm>
#include <cctype>
#include <string>

#include <openssl/x509_vfy.h>

#include "common/secrets.h"

namespace kc::broker {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains(std::string_view text, std::string_view needle) { return text.find(needle) != std::string_view::npos; }

/// "host:port" of the broker a librdkafka text is about: its texts start
/// "<proto>://<host:port>/<id or bootstrap>: ..." (or "<host:port>/<id>: ..."
/// without the protocol); "" when the text names none.
std::string broker_of(std::string_view text) {
  if (text.starts_with("[thrd:")) {  // a log line: "[thrd:<name>]: <broker>: ..."
    if (auto p = text.find("]: "); p != std::string_view::npos) text.remove_prefix(p + 3);
  }
  size_t start = 0;
  if (auto p = text.find("://"); p != std::string_view::npos && p < text.find(": ")) start = p + 3;
  const auto slash = text.find('/', start);
  const auto colon_space = text.find(": ", start);
  if (slash == std::string_view::npos || (colon_space != std::string_view::npos && slash > colon_space)) return "";
  std::string_view hp = text.substr(start, slash - start);
  if (hp.empty() || !contains(hp, ":") || contains(hp, " ")) return "";
  return std::string(hp);
}

/// The text after `marker`, without librdkafka's trailing "(after Nms in
/// state X[, N identical error(s) suppressed])"; "" when `marker` is absent.
std::string after(std::string_view text, std::string_view marker) {
  const auto p = text.find(marker);
  if (p == std::string_view::npos) return "";
  std::string rest(text.substr(p + marker.size()));
  if (auto a = rest.rfind(" (after "); a != std::string::npos && !rest.empty() && rest.back() == ')') rest.erase(a);
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\n')) rest.pop_back();
  return rest;
}

/// librdkafka's text without its "[thrd:...]: " and "<broker>: " prefixes.
std::string message_of(std::string_view text) {
  if (text.starts_with("[thrd:")) {
    if (auto p = text.find("]: "); p != std::string_view::npos) text.remove_prefix(p + 3);
  }
  if (!broker_of(text).empty()) {
    if (auto p = text.find(": "); p != std::string_view::npos) text.remove_prefix(p + 2);
  }
  return after(std::string(" ") + std::string(text), " ");
}

/// The first event whose text contains `needle`, or null.
const BrokerEvent* find_event(const BrokerObservation& obs, std::string_view needle) {
  for (const auto& e : obs.events)
    if (contains(e.text, needle)) return &e;
  return nullptr;
}

bool tls_on(const BrokerObservation& obs) {
  const auto p = lower(obs.security_protocol);
  return p == "ssl" || p == "sasl_ssl";
}
bool sasl_on(const BrokerObservation& obs) {
  const auto p = lower(obs.security_protocol);
  return p == "sasl_plaintext" || p == "sasl_ssl";
}
std::string protocol_name(const BrokerObservation& obs) {
  std::string p = obs.security_protocol.empty() ? "PLAINTEXT" : obs.security_protocol;
  std::transform(p.begin(), p.end(), p.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return p;
}
std::string mechanism_name(const BrokerObservation& obs) {
  return obs.sasl_mechanism.empty() ? std::string("GSSAPI") : obs.sasl_mechanism;
}

/// "broker <host:port>" from the event, else the bootstrap list.
std::string broker_label(const BrokerObservation& obs, const BrokerEvent* e) {
  std::string b = e ? broker_of(e->text) : "";
  if (!b.empty()) return "broker " + b;
  return "bootstrap.servers " + obs.bootstrap_servers;
}

/// " (ssl.ca.location /etc/ca.pem)" for the configured file of `key`, or
/// " (ssl.ca.location not set: the system's CA store)" when `or_default`.
std::string file_note(const BrokerObservation& obs, const std::string& key, std::string_view or_default = "") {
  if (auto it = obs.files.find(key); it != obs.files.end() && !it->second.empty())
    return " (" + key + " " + it->second + ")";
  if (!or_default.empty()) return " (" + key + " not set: " + std::string(or_default) + ")";
  return "";
}

/// Every configured TLS file, " (k1 f1, k2 f2)", or "".
std::string all_files(const BrokerObservation& obs) {
  std::string out;
  for (const auto& [k, v] : obs.files)
    if (!v.empty()) out += (out.empty() ? "" : ", ") + k + " " + v;
  return out.empty() ? "" : " (" + out + ")";
}

/// A TLS alert record read as a Kafka response size: 0x15 0x03 0x0N ...
/// (content type alert, TLS 1.x) is 352518144..352519167.
bool tls_alert_as_size(std::string_view text) {
  const auto p = text.find("Invalid response size ");
  if (p == std::string_view::npos) return false;
  const long long n = std::atoll(std::string(text.substr(p + 22, 12)).c_str());
  return n >= 0x15030000LL && n <= 0x150303FFLL;
}

BrokerCheckVerdict fatal(BrokerCheckCause c, std::string msg) { return {c, true, std::move(msg)}; }

/// Disconnects of an established (state UP) or post-ApiVersions
/// connection: what a SASL listener does to a client that skips SASL.
int up_disconnects(const BrokerObservation& obs) {
  int n = 0;
  for (const auto& e : obs.events)
    if ((contains(e.text, "in state UP") &&
         (contains(e.text, "Disconnected") || contains(e.text, "unexpected eof") ||
          contains(e.text, "Connection reset"))) ||
        contains(e.text, "Disconnected while requesting Metadata"))
      ++n;
  return n;
}

}  // namespace

std::string broker_in_text(std::string_view text) { return broker_of(text); }

std::string_view broker_check_cause_name(BrokerCheckCause cause) {
  switch (cause) {
    case BrokerCheckCause::Ok: return "ok";
    case BrokerCheckCause::Unreachable: return "unreachable";
    case BrokerCheckCause::TimedOut: return "timed-out";
    case BrokerCheckCause::InvalidClientConfig: return "invalid-client-config";
    case BrokerCheckCause::TlsHandshakeFailed: return "tls-handshake-failed";
    case BrokerCheckCause::CertificateNotTrusted: return "certificate-not-trusted";
    case BrokerCheckCause::HostnameMismatch: return "hostname-mismatch";
    case BrokerCheckCause::PlaintextToTlsPort: return "plaintext-to-tls-port";
    case BrokerCheckCause::TlsToPlaintextPort: return "tls-to-plaintext-port";
    case BrokerCheckCause::SaslRequired: return "sasl-required";
    case BrokerCheckCause::SaslMechanismNotEnabled: return "sasl-mechanism-not-enabled";
    case BrokerCheckCause::AuthenticationFailed: return "authentication-failed";
    case BrokerCheckCause::NotAuthorized: return "not-authorized";
  }
  return "unknown";
}

BrokerCheckVerdict classify_broker_check(const BrokerObservation& obs) {
  using C = BrokerCheckCause;
  // 1. The client could not be made: librdkafka refused a setting, or
  // OpenSSL could not load a TLS file (rd_kafka_new's "ssl.ca.location
  // failed: ...").
  if (obs.client_error) {
    const auto& [field, text] = *obs.client_error;
    std::string key = field.starts_with("ssl.") ? field : "";
    for (const auto& [k, _] : obs.files)
      if (key.empty() && contains(text, k)) key = k;
    if (!key.empty() || contains(lower(text), "ssl"))
      return fatal(C::TlsHandshakeFailed, "TLS setup failed before connecting: " +
                                              (field == "librdkafka" ? std::string() : field + ": ") + text +
                                              (key.empty() ? all_files(obs) : file_note(obs, key)));
    return fatal(C::InvalidClientConfig, "librdkafka refused the worker's client settings: " + field + ": " + text);
  }
  // 2. The certificate chain or the host name did not verify (from the
  // X.509 verify callback: OpenSSL's own error code).
  if (obs.x509_error != 0) {
    const std::string broker = obs.x509_broker.empty() ? obs.bootstrap_servers : obs.x509_broker;
    if (obs.x509_error == X509_V_ERR_HOSTNAME_MISMATCH || obs.x509_error == X509_V_ERR_IP_ADDRESS_MISMATCH)
      return fatal(C::HostnameMismatch,
                   "TLS: the certificate of broker " + broker + " does not name the host connected to (OpenSSL: " +
                       obs.x509_text + "); connect through a name the certificate lists, or give the broker a "
                       "certificate for this name");
    return fatal(C::CertificateNotTrusted,
                 "TLS: the certificate of broker " + broker + " is not trusted (OpenSSL: " + obs.x509_text +
                     ", certificate depth " + std::to_string(obs.x509_depth) + ")" +
                     file_note(obs, "ssl.ca.location", "the system's CA store") +
                     "; trust the CA that signed the broker's certificate");
  }
  // 3. TLS spoken to a plaintext listener: the broker drops the handshake.
  if (const auto* e = find_event(obs, "connecting to a PLAINTEXT broker listener"))
    return fatal(C::TlsToPlaintextPort,
                 broker_label(obs, e) + " is a plaintext listener, but security.protocol=" + protocol_name(obs) +
                     " speaks TLS to it (the broker dropped the TLS handshake); use the broker's TLS port, or "
                     "security.protocol=" + (sasl_on(obs) ? "SASL_PLAINTEXT" : "PLAINTEXT") +
                     " if this listener is meant to be plaintext");
  // 4. Plaintext spoken to a TLS listener: the first request is answered
  // by a TLS alert (read as an absurd response size) or a disconnect.
  if (!tls_on(obs)) {
    const BrokerEvent* e = find_event(obs, "connecting to a SSL listener?");
    if (!e)
      for (const auto& ev : obs.events)
        if (tls_alert_as_size(ev.text)) e = &ev;
    if (e)
      return fatal(C::PlaintextToTlsPort,
                   broker_label(obs, e) + " is a TLS listener, but security.protocol=" + protocol_name(obs) +
                       " speaks plaintext to it (it answered the first request with a TLS alert or closed it); set "
                       "security.protocol=" + (sasl_on(obs) ? "SASL_SSL" : "SSL") + " and the ssl.* trust settings");
  }
  // 5. SASL: the mechanism is not enabled on the broker (its list given).
  for (const auto& ev : obs.events) {
    const BrokerEvent* e = &ev;
    // (librdkafka also says "allow.auto.create.topics=false not supported
    // by broker" to an old broker: only SASL texts count.)
    if (contains(e->text, "Unsupported SASL mechanism") ||
        (contains(e->text, "SASL") && contains(e->text, "not supported by broker"))) {
      std::string list = after(e->text, "supported mechanisms: ");
      if (list.empty()) list = after(e->text, "enabled mechanisms: ");
      return fatal(C::SaslMechanismNotEnabled,
                   "SASL: " + broker_label(obs, e) + " does not enable sasl.mechanism " + mechanism_name(obs) +
                       "; it enables: " + (list.empty() ? std::string("(not said)") : list));
    }
  }
  // 6. SASL: the broker refused the credentials.
  for (const auto& e : obs.events) {
    if (e.code == RD_KAFKA_RESP_ERR__AUTHENTICATION || e.code == RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED ||
        contains(e.text, "SASL authentication error")) {
      std::string reason = after(e.text, "SASL authentication error: ");
      if (reason.empty()) reason = message_of(e.text);
      return fatal(C::AuthenticationFailed, "SASL authentication failed at " + broker_label(obs, &e) +
                                                " with mechanism " + mechanism_name(obs) + ": " + reason +
                                                " (check sasl.jaas.config or sasl.username and the password)");
    }
  }
  // 7. A SASL listener spoken to without SASL: the TLS or TCP connection
  // holds, ApiVersions is answered, the first other request is cut off.
  if (obs.metadata_error != RD_KAFKA_RESP_ERR_NO_ERROR && !sasl_on(obs) && up_disconnects(obs) >= 2)
    return fatal(C::SaslRequired,
                 broker_label(obs, find_event(obs, "in state UP")) +
                     " closes the connection at the first request after ApiVersions: the listener requires SASL, "
                     "and security.protocol=" + protocol_name(obs) + " has none; set security.protocol=" +
                     (tls_on(obs) ? "SASL_SSL" : "SASL_PLAINTEXT") + ", sasl.mechanism and the credentials");
  // 8. Any other TLS handshake failure: OpenSSL's reason and the files.
  // (With TLS 1.3 the broker's refusal of the client certificate arrives
  // after the handshake, as "Receive failed: ...SSL routines::... alert".)
  const BrokerEvent* tls_failure = find_event(obs, "SSL handshake failed");
  if (!tls_failure && tls_on(obs))
    for (const auto& ev : obs.events)
      if (!tls_failure && contains(ev.text, "SSL routines::") && !contains(ev.text, "in state UP")) tls_failure = &ev;
  if (const auto* e = tls_failure) {
    std::string reason = after(e->text, "SSL handshake failed: ");
    if (reason.empty()) reason = message_of(e->text);
    if (contains(reason, "certificate verify failed"))
      return fatal(C::CertificateNotTrusted, "TLS: the certificate of " + broker_label(obs, e) +
                                                 " is not trusted (" + reason + ")" +
                                                 file_note(obs, "ssl.ca.location", "the system's CA store"));
    const auto lr = lower(reason);
    std::string files = all_files(obs);
    if (contains(lr, "certificate required") || contains(lr, "bad certificate") || contains(lr, "unknown ca") ||
        contains(lr, "certificate unknown"))
      files = file_note(obs, "ssl.certificate.location", "no client certificate") +
              "; the broker refused the client certificate";
    return fatal(C::TlsHandshakeFailed, "TLS handshake with " + broker_label(obs, e) + " failed: " + reason + files);
  }
  if (const auto* e = find_event(obs, "SSL connection closed by peer"); e && tls_on(obs))
    return fatal(C::TlsToPlaintextPort, broker_label(obs, e) + " closed the TLS connection during the handshake ("
                                            + message_of(e->text) + "): probably a plaintext listener spoken to "
                                            "with security.protocol=" + protocol_name(obs));
  // 9. Authenticated, but denied by ACLs.
  for (const auto& [topic, err] : obs.topic_errors) {
    if (err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED)
      return fatal(C::NotAuthorized,
                   "not authorized: the broker denies this worker's principal topic " + topic +
                       " (TOPIC_AUTHORIZATION_FAILED); grant it the ACLs Describe, Read and Write on topic " + topic +
                       " (and Create on the cluster or the topic if the worker is to create it)" +
                       (obs.group_id.empty() ? std::string() : ", and Read on group " + obs.group_id));
  }
  if (obs.metadata_error == RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED)
    return fatal(C::NotAuthorized, "not authorized: the broker denies this worker's principal cluster metadata "
                                   "(CLUSTER_AUTHORIZATION_FAILED); grant it Describe on the cluster");
  if (obs.metadata_error == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED ||
      obs.group_error == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED)
    return fatal(C::NotAuthorized, "not authorized: the broker denies this worker's principal group " + obs.group_id +
                                       " (GROUP_AUTHORIZATION_FAILED); grant it Read on group " + obs.group_id);
  // 10. Metadata came back: the broker is usable.
  if (obs.metadata_error == RD_KAFKA_RESP_ERR_NO_ERROR) return {C::Ok, false, "broker metadata received"};
  // 11. Transient: nothing connected, or nothing answered.
  for (const auto& e : obs.events) {
    if (contains(e.text, "Connect to ") || contains(e.text, "Failed to resolve") ||
        e.code == RD_KAFKA_RESP_ERR__RESOLVE || contains(e.text, "Connection refused"))
      return {C::Unreachable, false,
              "no broker reachable: " + broker_label(obs, &e) + ": " + message_of(e.text) + " (bootstrap.servers " +
                  obs.bootstrap_servers + ")"};
  }
  for (const auto& e : obs.events)
    if (e.code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN || e.code == RD_KAFKA_RESP_ERR__TRANSPORT)
      return {C::Unreachable, false, "no broker reachable: " + e.text + " (bootstrap.servers " +
                                         obs.bootstrap_servers + ")"};
  return {C::TimedOut, false,
          "no metadata answer from bootstrap.servers " + obs.bootstrap_servers + " within " +
              std::to_string(obs.elapsed_ms) + " ms"};
}


namespace {

std::string prop(const std::map<std::string, std::string>& props, const std::string& key) {
  auto it = props.find(key);
  return it == props.end() ? "" : it->second;
}

}  // namespace

// ---------------------------------------------------- a running client

bool fails_running_client(BrokerCheckCause cause) {
  using C = BrokerCheckCause;
  switch (cause) {
    case C::TlsHandshakeFailed:
    case C::CertificateNotTrusted:
    case C::HostnameMismatch:
    case C::PlaintextToTlsPort:
    case C::TlsToPlaintextPort:
    case C::SaslMechanismNotEnabled:
    case C::AuthenticationFailed:
    case C::NotAuthorized: return true;
    default: return false;
  }
}

ClientErrorObserver::ClientErrorObserver(const std::map<std::string, std::string>& props, std::string group_id)
    : hidden_(secrets::secret_values(props)) {
  base_.security_protocol = prop(props, "security.protocol");
  base_.sasl_mechanism = prop(props, "sasl.mechanism");
  if (base_.sasl_mechanism.empty()) base_.sasl_mechanism = prop(props, "sasl.mechanisms");
  base_.bootstrap_servers = prop(props, "bootstrap.servers");
  base_.group_id = std::move(group_id);
  for (const char* key : {"ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.keystore.location",
                          "ssl.crl.location"})
    if (auto v = prop(props, key); !v.empty()) base_.files[key] = v;
}

void ClientErrorObserver::record(rd_kafka_resp_err_t code, const char* text) {
  std::string t = secrets::scrub(text ? text : "", hidden_);
  {
    std::lock_guard lock(mu_);
    for (const auto& e : events_)
      if (e.code == code && e.text == t) return;
    if (events_.size() >= 200) return;
    events_.push_back({code, std::move(t)});
    ++version_;
  }
  notify_if_fatal();
}

void ClientErrorObserver::record_topic_error(const std::string& topic, rd_kafka_resp_err_t err) {
  {
    std::lock_guard lock(mu_);
    for (const auto& [t, e] : topic_errors_)
      if (t == topic && e == err) return;
    if (topic_errors_.size() >= 200) return;
    topic_errors_.emplace_back(topic, err);
    ++version_;
  }
  notify_if_fatal();
}

void ClientErrorObserver::on_fatal(FatalHandler handler) {
  std::lock_guard lock(mu_);
  on_fatal_ = std::move(handler);
}

void ClientErrorObserver::notify_if_fatal() {
  FatalHandler handler;
  {
    std::lock_guard lock(mu_);
    if (!on_fatal_) return;
    handler = on_fatal_;
  }
  auto v = fatal();
  if (!v) return;
  {
    std::lock_guard lock(mu_);
    if (std::find(notified_.begin(), notified_.end(), v->cause) != notified_.end()) return;
    notified_.push_back(v->cause);
  }
  handler(*v);
}

BrokerObservation ClientErrorObserver::observation() const {
  std::lock_guard lock(mu_);
  BrokerObservation obs = base_;
  obs.metadata_error = RD_KAFKA_RESP_ERR__TIMED_OUT;
  obs.events = events_;
  obs.topic_errors = topic_errors_;
  return obs;
}

std::optional<BrokerCheckVerdict> ClientErrorObserver::fatal() const {
  BrokerObservation obs;
  uint64_t version = 0;
  {
    std::lock_guard lock(mu_);
    if (version_ == classified_) return last_;  // the common case: nothing new
    version = version_;
    obs = base_;
    obs.metadata_error = RD_KAFKA_RESP_ERR__TIMED_OUT;
    obs.events = events_;
    obs.topic_errors = topic_errors_;
  }
  auto v = classify_broker_check(obs);
  std::optional<BrokerCheckVerdict> out;
  if (fails_running_client(v.cause)) out = std::move(v);
  std::lock_guard lock(mu_);
  if (version >= classified_) {
    classified_ = version;
    last_ = out;
  }
  return out;
}

}  // namespace kc::broker
