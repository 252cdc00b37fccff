// classify_broker_check() by table: librdkafka 2.0.2's texts and codes for
// each way a worker's security settings can be wrong, to the cause, the
// fatal/transient decision and the words the operator's one line must hold.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "worker/storage/broker_check.h"

using kc::storage::BrokerCheckCause;
using kc::storage::BrokerEvent;
using kc::storage::BrokerObservation;
using kc::storage::classify_broker_check;

namespace {

struct Row {
  std::string name;
  BrokerObservation obs;
  BrokerCheckCause cause;
  bool fatal;
  std::vector<std::string> says;      ///< each must be in the message
  std::vector<std::string> never = {"hunter2"};  ///< none may be
};

BrokerObservation base(std::string protocol, std::vector<BrokerEvent> events = {},
                       rd_kafka_resp_err_t md = RD_KAFKA_RESP_ERR__TIMED_OUT) {
  BrokerObservation o;
  o.security_protocol = std::move(protocol);
  o.bootstrap_servers = "kafka1:9093";
  o.group_id = "connect-cluster";
  o.events = std::move(events);
  o.metadata_error = md;
  o.elapsed_ms = 8000;
  return o;
}

std::vector<Row> rows() {
  std::vector<Row> r;
  {
    auto o = base("PLAINTEXT", {{RD_KAFKA_RESP_ERR__TRANSPORT,
                                 "kafka1:9093/bootstrap: Connect to ipv4#10.0.0.1:9093 failed: Connection refused "
                                 "(after 0ms in state CONNECT)"},
                                {RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "1/1 brokers are down"}});
    r.push_back({"connection refused", o, BrokerCheckCause::Unreachable, false,
                 {"no broker reachable", "broker kafka1:9093", "Connection refused"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR_NO_ERROR,
                           "[thrd:nohost:9093/bootstrap]: nohost:9093/bootstrap: Failed to resolve 'nohost:9093': Name or service not known"}});
    r.push_back({"unknown host, as a log line", o, BrokerCheckCause::Unreachable, false, {"Failed to resolve", "broker nohost:9093: Failed"}, {"hunter2", "[thrd:"}});
  }
  {
    auto o = base("PLAINTEXT");
    r.push_back({"nothing answered", o, BrokerCheckCause::TimedOut, false, {"no metadata answer", "8000 ms"}});
  }
  {
    auto o = base("SSL");
    o.files["ssl.ca.location"] = "/etc/kc/ca.pem";
    o.client_error = std::make_pair(std::string("librdkafka"),
                                    std::string("ssl.ca.location failed: error:05800088:x509 certificate "
                                                "routines::no certificate or CRL found"));
    r.push_back({"unreadable CA file", o, BrokerCheckCause::TlsHandshakeFailed, true,
                 {"TLS setup failed", "no certificate or CRL found", "ssl.ca.location /etc/kc/ca.pem"}});
  }
  {
    auto o = base("PLAINTEXT");
    o.client_error = std::make_pair(std::string("linger.ms"), std::string("Invalid value for configuration property"));
    r.push_back({"a bad non-TLS setting", o, BrokerCheckCause::InvalidClientConfig, true, {"linger.ms"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__SSL,
                           "ssl://kafka1:9093/bootstrap: SSL handshake failed: error:0A000086:SSL "
                           "routines::certificate verify failed: broker certificate could not be verified"}});
    o.files["ssl.ca.location"] = "/etc/kc/other-ca.pem";
    o.x509_error = 20;
    o.x509_text = "unable to get local issuer certificate";
    o.x509_broker = "kafka1:9093";
    o.x509_depth = 0;
    r.push_back({"untrusted CA", o, BrokerCheckCause::CertificateNotTrusted, true,
                 {"broker kafka1:9093", "not trusted", "unable to get local issuer certificate",
                  "ssl.ca.location /etc/kc/other-ca.pem"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__SSL,
                           "ssl://kafka1:9093/bootstrap: SSL handshake failed: error:0A000086:SSL "
                           "routines::certificate verify failed"}});
    r.push_back({"untrusted CA without the verify callback's code, system store", o,
                 BrokerCheckCause::CertificateNotTrusted, true,
                 {"broker kafka1:9093", "certificate verify failed", "the system's CA store"}});
  }
  {
    auto o = base("SASL_SSL");
    o.x509_error = 62;
    o.x509_text = "hostname mismatch";
    o.x509_broker = "kafka1:9093";
    r.push_back({"host name mismatch", o, BrokerCheckCause::HostnameMismatch, true,
                 {"broker kafka1:9093", "does not name the host", "hostname mismatch"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__TRANSPORT,
                           "ssl://kafka1:9092/bootstrap: SSL handshake failed: Disconnected: connecting to a "
                           "PLAINTEXT broker listener? (after 3ms in state SSL_HANDSHAKE)"}});
    r.push_back({"TLS to a plaintext port", o, BrokerCheckCause::TlsToPlaintextPort, true,
                 {"broker kafka1:9092 is a plaintext listener", "security.protocol=SSL speaks TLS",
                  "security.protocol=PLAINTEXT"}});
  }
  {
    auto o = base("PLAINTEXT", {{RD_KAFKA_RESP_ERR__TRANSPORT,
                                 "kafka1:9093/bootstrap: Disconnected while requesting ApiVersion: might be caused by "
                                 "incorrect security.protocol configuration (connecting to a SSL listener?) or broker "
                                 "version is < 0.10 (see api.version.request) (after 2ms in state APIVERSION_QUERY)"}});
    r.push_back({"plaintext to a TLS port, disconnected", o, BrokerCheckCause::PlaintextToTlsPort, true,
                 {"broker kafka1:9093 is a TLS listener", "security.protocol=PLAINTEXT speaks plaintext",
                  "security.protocol=SSL"}});
  }
  {
    auto o = base("SASL_PLAINTEXT", {{RD_KAFKA_RESP_ERR__BAD_MSG,
                                      "sasl_plaintext://kafka1:9093/bootstrap: Receive failed: Invalid response size "
                                      "352518912 (0..100000000): increase receive.message.max.bytes"}});
    r.push_back({"plaintext to a TLS port, answered by a TLS alert", o, BrokerCheckCause::PlaintextToTlsPort, true,
                 {"TLS listener", "security.protocol=SASL_SSL"}});
  }
  {
    // The same absurd size from a TLS client is not a TLS alert to a plaintext one.
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__BAD_MSG,
                           "ssl://kafka1:9093/bootstrap: Receive failed: Invalid response size 352518912 "
                           "(0..100000000): increase receive.message.max.bytes"}});
    r.push_back({"a huge response size over TLS is not plaintext to TLS", o, BrokerCheckCause::TimedOut, false, {}});
  }
  {
    auto o = base("SASL_SSL", {{RD_KAFKA_RESP_ERR__AUTHENTICATION,
                                "sasl_ssl://kafka1:9093/bootstrap: Unsupported SASL mechanism: broker's supported "
                                "mechanisms: PLAIN,SCRAM-SHA-256"}});
    o.sasl_mechanism = "SCRAM-SHA-512";
    r.push_back({"mechanism not enabled", o, BrokerCheckCause::SaslMechanismNotEnabled, true,
                 {"broker kafka1:9093", "does not enable sasl.mechanism SCRAM-SHA-512", "PLAIN,SCRAM-SHA-256"}});
  }
  {
    auto o = base("SASL_SSL", {{RD_KAFKA_RESP_ERR__AUTHENTICATION,
                                "sasl_ssl://kafka1:9093/bootstrap: SASL authentication error: Authentication failed "
                                "during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 "
                                "(after 5ms in state AUTH_REQ)"}});
    o.sasl_mechanism = "SCRAM-SHA-512";
    r.push_back({"wrong password", o, BrokerCheckCause::AuthenticationFailed, true,
                 {"SASL authentication failed at broker kafka1:9093", "with mechanism SCRAM-SHA-512",
                  "invalid credentials"},
                 {"hunter2", "after 5ms"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__SSL,
                           "ssl://kafka1:9093/bootstrap: SSL handshake failed: error:0A00045C:SSL routines::tlsv13 "
                           "alert certificate required"}});
    o.files["ssl.ca.location"] = "/etc/kc/ca.pem";
    r.push_back({"the broker wants a client certificate", o, BrokerCheckCause::TlsHandshakeFailed, true,
                 {"TLS handshake with broker kafka1:9093 failed", "certificate required",
                  "ssl.certificate.location not set", "refused the client certificate"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__SSL,
                           "ssl://kafka1:9093/bootstrap: SSL handshake failed: error:0A000102:SSL "
                           "routines::unsupported protocol"}});
    o.files["ssl.ca.location"] = "/etc/kc/ca.pem";
    r.push_back({"another handshake failure names OpenSSL's reason and the files", o,
                 BrokerCheckCause::TlsHandshakeFailed, true,
                 {"unsupported protocol", "ssl.ca.location /etc/kc/ca.pem"}});
  }
  {
    auto o = base("SASL_SSL", {}, RD_KAFKA_RESP_ERR_NO_ERROR);
    o.topic_errors = {{"connect-configs", RD_KAFKA_RESP_ERR_NO_ERROR},
                      {"connect-offsets", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED}};
    r.push_back({"a topic ACL missing", o, BrokerCheckCause::NotAuthorized, true,
                 {"not authorized", "topic connect-offsets", "Describe, Read and Write on topic connect-offsets",
                  "group connect-cluster"}});
  }
  {
    auto o = base("SASL_SSL", {}, RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED);
    r.push_back({"the group ACL missing", o, BrokerCheckCause::NotAuthorized, true, {"Read on group connect-cluster"}});
  }
  {
    auto o = base("SASL_SSL", {}, RD_KAFKA_RESP_ERR_NO_ERROR);
    o.group_error = RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;
    r.push_back({"the group ACL missing, from FindCoordinator", o, BrokerCheckCause::NotAuthorized, true,
                 {"GROUP_AUTHORIZATION_FAILED", "Read on group connect-cluster"}});
  }
  {
    auto o = base("SASL_SSL", {}, RD_KAFKA_RESP_ERR_NO_ERROR);
    o.group_error = RD_KAFKA_RESP_ERR__TRANSPORT;
    r.push_back({"another FindCoordinator failure is left to the group client", o, BrokerCheckCause::Ok, false, {}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR_NO_ERROR,
                           "[thrd:ssl://kafka1:9093/bootstrap]: ssl://kafka1:9093/bootstrap: Disconnected (after "
                           "10ms in state UP)"},
                          {RD_KAFKA_RESP_ERR_NO_ERROR,
                           "[thrd:ssl://kafka1:9093/bootstrap]: ssl://kafka1:9093/bootstrap: Disconnected (after "
                           "12ms in state UP, 1 identical error(s) suppressed)"}});
    r.push_back({"SSL without SASL against SASL_SSL", o, BrokerCheckCause::SaslRequired, true,
                 {"broker kafka1:9093", "requires SASL", "security.protocol=SASL_SSL"}});
  }
  {
    // Over TLS the cut shows as OpenSSL's unexpected EOF, after the handshake.
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR__TRANSPORT,
                           "ssl://kafka1:9093/bootstrap: Receive failed: error:0A000126:SSL routines::unexpected eof "
                           "while reading (after 0ms in state UP)"},
                          {RD_KAFKA_RESP_ERR__TRANSPORT,
                           "ssl://kafka1:9093/bootstrap: Receive failed: error:0A000126:SSL routines::unexpected eof "
                           "while reading (after 0ms in state UP, 1 identical error(s) suppressed)"}});
    r.push_back({"SSL without SASL against SASL_SSL, cut as a TLS EOF", o, BrokerCheckCause::SaslRequired, true,
                 {"requires SASL"}});
  }
  {
    auto o = base("SSL", {{RD_KAFKA_RESP_ERR_NO_ERROR,
                           "ssl://kafka1:9093/bootstrap: Disconnected (after 10ms in state UP)"}});
    r.push_back({"one cut connection is not yet SASL required", o, BrokerCheckCause::TimedOut, false, {}});
  }
  {
    auto o = base("SASL_SSL", {}, RD_KAFKA_RESP_ERR_NO_ERROR);
    o.topic_errors = {{"connect-configs", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART}};
    r.push_back({"metadata answered, topics still to create", o, BrokerCheckCause::Ok, false, {}});
  }
  return r;
}

}  // namespace

TEST_CASE("broker check classifier: each observation gets its cause, decision and words", "[storage][broker_check]") {
  for (const auto& row : rows()) {
    SECTION(row.name) {
      const auto v = classify_broker_check(row.obs);
      INFO(v.message);
      CHECK(kc::storage::broker_check_cause_name(v.cause) == kc::storage::broker_check_cause_name(row.cause));
      CHECK(v.fatal == row.fatal);
      for (const auto& s : row.says) CHECK_THAT(v.message, Catch::Contains(s));
      for (const auto& s : row.never) CHECK_THAT(v.message, !Catch::Contains(s));
      CHECK(v.message.find('\n') == std::string::npos);  // one line
    }
  }
}

TEST_CASE("broker check classifier: precedence, the specific cause wins over the generic one",
          "[storage][broker_check]") {
  // A wrong password also leaves a transport error and an all-brokers-down
  // report behind; the cause is the authentication.
  auto o = base("SASL_PLAINTEXT",
                {{RD_KAFKA_RESP_ERR__TRANSPORT, "sasl_plaintext://kafka1:9092/bootstrap: Disconnected"},
                 {RD_KAFKA_RESP_ERR__AUTHENTICATION,
                  "sasl_plaintext://kafka1:9092/bootstrap: SASL authentication error: Authentication failed"},
                 {RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "1/1 brokers are down"}});
  CHECK(classify_broker_check(o).cause == BrokerCheckCause::AuthenticationFailed);
  // An X.509 code beats librdkafka's generic "certificate verify failed".
  auto t = base("SSL", {{RD_KAFKA_RESP_ERR__SSL, "ssl://kafka1:9093/bootstrap: SSL handshake failed: error:0A000086:"
                                                 "SSL routines::certificate verify failed"}});
  t.x509_error = 62;
  t.x509_text = "hostname mismatch";
  CHECK(classify_broker_check(t).cause == BrokerCheckCause::HostnameMismatch);
  // Metadata received but a topic denied: not Ok.
  auto a = base("PLAINTEXT", {}, RD_KAFKA_RESP_ERR_NO_ERROR);
  a.topic_errors = {{"c", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED}};
  CHECK(classify_broker_check(a).cause == BrokerCheckCause::NotAuthorized);
}

// ClientErrorObserver: a running client's reports (task producers and
// consumers, the DLQ producer) classified the same way.
TEST_CASE("client error observer: a refused password fails the client, scrubbed", "[storage][broker_check]") {
  const std::string jaas =
      "org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"hunter2-pw\";";
  kc::storage::ClientErrorObserver obs({{"bootstrap.servers", "kafka1:9093"},
                                        {"security.protocol", "SASL_SSL"},
                                        {"sasl.mechanism", "SCRAM-SHA-512"},
                                        {"sasl.jaas.config", jaas}},
                                       "connect-sink");
  CHECK_FALSE(obs.fatal());
  obs.record(RD_KAFKA_RESP_ERR__AUTHENTICATION,
             ("sasl_ssl://kafka1:9093/bootstrap: SASL authentication error: Authentication failed during "
              "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (jaas " + jaas + ")")
                 .c_str());
  auto v = obs.fatal();
  REQUIRE(v);
  CHECK(v->cause == BrokerCheckCause::AuthenticationFailed);
  CHECK_THAT(v->message, Catch::Contains("broker kafka1:9093") && Catch::Contains("SCRAM-SHA-512"));
  CHECK_THAT(v->message, !Catch::Contains("hunter2"));
  CHECK(obs.fatal()->message == v->message);  // asked again: the same verdict
}

TEST_CASE("client error observer: transient and ambiguous reports do not fail the client", "[storage][broker_check]") {
  kc::storage::ClientErrorObserver obs(kc::storage::ClientProps{{"bootstrap.servers", "kafka1:9092"}});
  obs.record(RD_KAFKA_RESP_ERR__TRANSPORT,
             "kafka1:9092/1: Connect to ipv4#10.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)");
  obs.record(RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN, "1/1 brokers are down");
  CHECK_FALSE(obs.fatal());
  // A restarting broker cuts established connections: not "SASL required".
  obs.record(RD_KAFKA_RESP_ERR__TRANSPORT, "kafka1:9092/1: Disconnected (after 5000ms in state UP)");
  obs.record(RD_KAFKA_RESP_ERR__TRANSPORT, "kafka1:9092/1: Disconnected (after 9000ms in state UP)");
  CHECK(classify_broker_check(obs.observation()).cause == BrokerCheckCause::SaslRequired);
  CHECK_FALSE(obs.fatal());
  CHECK_FALSE(kc::storage::fails_running_client(BrokerCheckCause::SaslRequired));
}

TEST_CASE("client error observer: a denied topic fails the client naming the ACLs", "[storage][broker_check]") {
  kc::storage::ClientErrorObserver obs(kc::storage::ClientProps{{"bootstrap.servers", "kafka1:9092"}}, "connect-sink");
  obs.record_topic_error("orders", RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
  CHECK_FALSE(obs.fatal());
  obs.record_topic_error("orders", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto v = obs.fatal();
  REQUIRE(v);
  CHECK(v->cause == BrokerCheckCause::NotAuthorized);
  CHECK_THAT(v->message, Catch::Contains("topic orders") && Catch::Contains("Read on group connect-sink"));
}

TEST_CASE("client error observer: a denied topic of a group-less client names no group",
          "[storage][broker_check]") {
  // A producer's observer has no group: the message used to end in
  // "and Read on group " with nothing after it.
  kc::storage::ClientErrorObserver obs(kc::storage::ClientProps{{"bootstrap.servers", "kafka1:9092"}});
  obs.record_topic_error("numbers", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED);
  auto v = obs.fatal();
  REQUIRE(v);
  CHECK(v->message ==
        "not authorized: the broker denies this worker's principal topic numbers (TOPIC_AUTHORIZATION_FAILED); "
        "grant it the ACLs Describe, Read and Write on topic numbers (and Create on the cluster or the topic if "
        "the worker is to create it)");
}

TEST_CASE("client error observer: on_fatal hears each fatal cause once, transient reports never",
          "[storage][broker_check]") {
  kc::storage::ClientErrorObserver obs(
      kc::storage::ClientProps{{"bootstrap.servers", "kafka1:9093"}, {"security.protocol", "SASL_SSL"},
                               {"sasl.mechanism", "SCRAM-SHA-512"}, {"sasl.password", "hunter2"}});
  std::vector<kc::storage::BrokerCheckVerdict> heard;
  obs.on_fatal([&](const kc::storage::BrokerCheckVerdict& v) { heard.push_back(v); });
  obs.record(RD_KAFKA_RESP_ERR__TRANSPORT, "kafka1:9093/1: Connect to ipv4#10.0.0.1:9093 failed: Connection refused");
  CHECK(heard.empty());
  const char* auth = "sasl_ssl://kafka1:9093/bootstrap: SASL authentication error: Authentication failed during "
                     "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512 (hunter2)";
  obs.record(RD_KAFKA_RESP_ERR__AUTHENTICATION, auth);
  obs.record(RD_KAFKA_RESP_ERR__AUTHENTICATION, auth);  // the same report again: recorded once
  obs.record(RD_KAFKA_RESP_ERR__AUTHENTICATION,
             "sasl_ssl://kafka1:9093/1: SASL authentication error: Authentication failed (reauthentication)");
  REQUIRE(heard.size() == 1);
  CHECK(heard[0].cause == BrokerCheckCause::AuthenticationFailed);
  CHECK_THAT(heard[0].message, Catch::Contains("kafka1:9093") && !Catch::Contains("hunter2"));
  CHECK(obs.fatal()->message == heard[0].message);
}

TEST_CASE("client error observer: owner() keeps what set_owner() stored", "[storage][broker_check]") {
  kc::storage::ClientErrorObserver obs(kc::storage::ClientProps{});
  CHECK(obs.owner() == nullptr);
  int state = 0;
  obs.set_owner(&state);
  CHECK(obs.owner() == &state);
}
