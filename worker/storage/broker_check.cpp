// The startup connectivity check: classify_broker_check() (pure) and the
// librdkafka client that feeds it (check_brokers, wait_for_brokers).
#include "worker/storage/broker_check.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include <openssl/x509_vfy.h>
#include <spdlog/spdlog.h>

#include "common/secrets.h"
#include "worker/storage/group_admin.h"

namespace kc::storage {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

// ------------------------------------------------------------- the client

namespace {

using Clock = std::chrono::steady_clock;

/// What the callbacks saw; shared with librdkafka's threads.
struct Capture {
  std::mutex mu;
  std::vector<BrokerEvent> events;
  int x509_error = 0;
  std::string x509_text;
  std::string x509_broker;
  int x509_depth = 0;
  std::vector<std::string> hidden;  ///< secret values to scrub out of texts
  bool all_down = false;

  void add(rd_kafka_resp_err_t code, const char* text) {
    std::lock_guard lock(mu);
    std::string t = secrets::scrub(text ? text : "", hidden);
    // Repeats (a retried request's same failure) add nothing; bounded.
    for (size_t i = events.size() > 20 ? events.size() - 20 : 0; i < events.size(); ++i)
      if (events[i].code == code && events[i].text == t) return;
    if (events.size() < 500) events.push_back({code, std::move(t)});
    if (code == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN) all_down = true;
  }
};

void on_error(rd_kafka_t*, int err, const char* reason, void* opaque) {
  static_cast<Capture*>(opaque)->add(static_cast<rd_kafka_resp_err_t>(err), reason);
}

void on_log(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  auto* cap = static_cast<Capture*>(rd_kafka_opaque(rk));
  spdlog::debug("broker check: librdkafka {} {}: {}", level, fac ? fac : "", buf ? buf : "");
  if (cap && level <= 6) cap->add(RD_KAFKA_RESP_ERR_NO_ERROR, buf);  // LOG_INFO and worse
}

int on_verify(rd_kafka_t*, const char* broker_name, int32_t, int* x509_error, int depth, const char*, size_t,
              char* errstr, size_t errstr_size, void* opaque) {
  if (*x509_error == 0) return 1;
  auto* cap = static_cast<Capture*>(opaque);
  const char* text = X509_verify_cert_error_string(*x509_error);
  {
    std::lock_guard lock(cap->mu);
    if (cap->x509_error == 0) {
      cap->x509_error = *x509_error;
      cap->x509_text = text ? text : "";
      cap->x509_broker = broker::broker_in_text(std::string(broker_name ? broker_name : "") + ": ");
      if (cap->x509_broker.empty() && broker_name) cap->x509_broker = broker_name;
      cap->x509_depth = depth;
    }
  }
  std::snprintf(errstr, errstr_size, "%s", text ? text : "certificate verification failed");
  return 0;
}

std::string prop(const ClientProps& props, const std::string& key) {
  auto it = props.find(key);
  return it == props.end() ? "" : it->second;
}

void copy_capture(Capture& cap, BrokerObservation& obs) {
  std::lock_guard lock(cap.mu);
  obs.events = cap.events;
  obs.x509_error = cap.x509_error;
  obs.x509_text = cap.x509_text;
  obs.x509_broker = cap.x509_broker;
  obs.x509_depth = cap.x509_depth;
}

int ms_since(Clock::time_point t) {
  return static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count());
}

}  // namespace

BrokerCheckVerdict check_brokers(const ClientProps& props, const std::vector<std::string>& topics,
                                 const std::string& group_id, const BrokerCheckOptions& opts) {
  const auto start = Clock::now();
  BrokerObservation obs;
  obs.security_protocol = prop(props, "security.protocol");
  obs.sasl_mechanism = prop(props, "sasl.mechanism");
  if (obs.sasl_mechanism.empty()) obs.sasl_mechanism = prop(props, "sasl.mechanisms");
  obs.bootstrap_servers = prop(props, "bootstrap.servers");
  obs.group_id = group_id;
  for (const char* key : {"ssl.ca.location", "ssl.certificate.location", "ssl.key.location", "ssl.keystore.location",
                          "ssl.crl.location"})
    if (auto v = prop(props, key); !v.empty()) obs.files[key] = v;

  Capture cap;
  cap.hidden = secrets::secret_values(props);
  const bool tls = [&] {
    const auto p = lower(obs.security_protocol);
    return p == "ssl" || p == "sasl_ssl";
  }();
  ClientProps overrides{{"allow.auto.create.topics", "false"}};
  if (!props.count("client.id")) overrides["client.id"] = "kconnectd-broker-check";
  auto rk = make_client(RD_KAFKA_CONSUMER, props, overrides, [&](rd_kafka_conf_t* conf) {
    rd_kafka_conf_set_opaque(conf, &cap);
    rd_kafka_conf_set_error_cb(conf, &on_error);
    rd_kafka_conf_set_log_cb(conf, &on_log);
    if (tls && !props.count("ssl.certificate.verify_cb")) (void)rd_kafka_conf_set_ssl_cert_verify_cb(conf, &on_verify);
  });
  if (!rk) {
    obs.client_error = std::make_pair(rk.error().field, rk.error().message);
    copy_capture(cap, obs);
    return classify_broker_check(obs);
  }
  const auto deadline = start + std::chrono::milliseconds(std::max(opts.attempt_timeout_ms, 1));
  auto left = [&] {
    return static_cast<int>(
        std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count()));
  };
  // All topics: a request naming a topic would make librdkafka's mock
  // cluster (Metadata <= v2, no AllowAutoTopicCreation) create it with its
  // default partition count. The internal topics that exist are looked up
  // in the answer; the missing ones are ensure_topic's business.
  BrokerCheckVerdict verdict;
  obs.metadata_error = RD_KAFKA_RESP_ERR__TIMED_OUT;
  while (true) {
    const rd_kafka_metadata_t* md = nullptr;
    const auto err = rd_kafka_metadata(rk.value().get(), 1, nullptr, &md, std::max(1, std::min(250, left())));
    rd_kafka_poll(rk.value().get(), 0);  // serves the error callback
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR && md) {
      for (const auto& t : topics)
        for (int i = 0; i < md->topic_cnt; ++i)
          if (md->topics[i].topic && t == md->topics[i].topic) obs.topic_errors.emplace_back(t, md->topics[i].err);
    }
    if (md) rd_kafka_metadata_destroy(md);
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT) {
      obs.metadata_error = err;
      // An immediate local refusal: do not spin.
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    copy_capture(cap, obs);
    obs.elapsed_ms = ms_since(start);
    verdict = classify_broker_check(obs);
    if (verdict.fatal || err == RD_KAFKA_RESP_ERR_NO_ERROR) break;
    bool all_down = false;
    {
      std::lock_guard lock(cap.mu);
      all_down = cap.all_down;
    }
    // Nothing connects: end the attempt early, but not before a cut
    // connection had time to repeat (SaslRequired needs two).
    if ((all_down && verdict.cause == BrokerCheckCause::Unreachable && ms_since(start) >= 1500) || left() <= 0) break;
  }
  rk.value().reset();  // joins librdkafka's threads; cap outlives them
  if (verdict.ok() && !group_id.empty()) {
    BrokerApis apis;
    const auto st = broker_apis(props, group_id, std::max(left(), 1000), apis);
    if (st.code == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
      obs.group_error = st.code;
      verdict = classify_broker_check(obs);
    } else if (!st.ok()) {
      spdlog::debug("broker check: FindCoordinator for group {} not answered ({}); the group client will say",
                    group_id, st.message);
    }
  }
  return verdict;
}

BrokerCheckVerdict wait_for_brokers(const ClientProps& props, const std::vector<std::string>& topics,
                                    const std::string& group_id, const BrokerCheckOptions& opts,
                                    const std::function<void(int, const BrokerCheckVerdict&, int)>& on_attempt) {
  const auto start = Clock::now();
  for (int attempt = 1;; ++attempt) {
    const auto attempt_start = Clock::now();
    auto v = check_brokers(props, topics, group_id, opts);
    const int attempt_ms = ms_since(attempt_start);
    if (v.ok() || v.fatal) return v;
    if (ms_since(start) + opts.retry_backoff_ms >= opts.retry_bound_ms) {
      v.fatal = true;
      v.message += " (gave up after " + std::to_string(attempt) + " attempt" + (attempt == 1 ? "" : "s") + " in " +
                   std::to_string(ms_since(start) / 1000) + " s)";
      return v;
    }
    if (on_attempt) on_attempt(attempt, v, attempt_ms);
    std::this_thread::sleep_for(std::chrono::milliseconds(opts.retry_backoff_ms));
  }
}

}  // namespace kc::storage
