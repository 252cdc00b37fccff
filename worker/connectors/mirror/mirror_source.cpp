#include "worker/connectors/mirror/mirror_source.h"

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "common/broker_classify/broker_classify.h"
#include "common/secrets.h"
#include "worker/connectors/mirror/mirror_policy.h"

namespace kc::connectors::mirror {
namespace {

namespace kp = kconnectd;
using ConfigMap = kp::Config;
using ConnectError = kp::Error;
using OrderedJson = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int kAdminTimeoutMs = 10000;

void log_info(const std::string& m) { kp::log(kp::LogLevel::Info, m); }
void log_warn(const std::string& m) { kp::log(kp::LogLevel::Warn, m); }

/// Deleter of the connector's own librdkafka clients.
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};
using RdKafkaPtr = std::unique_ptr<rd_kafka_t, RdKafkaDeleter>;

/// Topic -> partition count of every topic the cluster reports (one
/// all-topics metadata request, so nothing is auto-created). Throws
/// ConnectError naming `cluster` on failure. `errors` (the client's
/// observer, may be null): the request is made in 250 ms slices, serving
/// the client's error reports between them, and a cause no retry fixes
/// (credentials, TLS, ACLs) ends the wait at once with its classified
/// line instead of a timeout. Blocking, up to 10 s.
std::map<std::string, int> list_topics(rd_kafka_t* rk, const std::string& cluster,
                                       const broker::ClientErrorObserver* errors = nullptr) {
  const rd_kafka_metadata_t* md = nullptr;
  const auto deadline = Clock::now() + std::chrono::milliseconds(kMetadataTimeoutMs);
  rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    err = rd_kafka_metadata(rk, 1, nullptr, &md,
                            static_cast<int>(std::clamp<int64_t>(errors ? std::min<int64_t>(left, 250) : left, 1,
                                                                 kMetadataTimeoutMs)));
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT || !errors) break;
    rd_kafka_poll(rk, 0);  // serves the error callback
    if (auto v = errors->fatal())
      throw ConnectError("listing the topics of cluster " + cluster + " failed: " + v->message);
    if (left <= 250) break;
  }
  if (err && errors) {
    // A transport failure right after a refused authentication: the
    // classified cause, when there is one, says more.
    rd_kafka_poll(rk, 0);
    if (auto v = errors->fatal())
      throw ConnectError("listing the topics of cluster " + cluster + " failed: " + v->message);
  }
  if (err) throw ConnectError("listing the topics of cluster " + cluster + " failed: " + rd_kafka_err2str(err));
  std::map<std::string, int> out;
  for (int i = 0; i < md->topic_cnt; ++i) {
    const auto& t = md->topics[i];
    if (t.err == RD_KAFKA_RESP_ERR_NO_ERROR && t.partition_cnt > 0) out[t.topic] = t.partition_cnt;
  }
  rd_kafka_metadata_destroy(md);
  return out;
}

/// Runs one admin request on its own queue and returns its result event
/// (caller destroys), or nullptr on timeout.
rd_kafka_event_t* await_admin(rd_kafka_t* rk, rd_kafka_queue_t* q) {
  rd_kafka_event_t* ev = rd_kafka_queue_poll(q, kAdminTimeoutMs + 1000);
  (void)rk;
  return ev;
}

/// The mirrored source topic-partitions: every partition of every topic
/// the filter accepts.
std::set<TopicPartition> mirrored_partitions(const std::map<std::string, int>& topics, const TopicFilter& filter) {
  std::set<TopicPartition> out;
  for (const auto& [t, n] : topics)
    if (filter.should_replicate(t))
      for (int p = 0; p < n; ++p) out.emplace(t, p);
  return out;
}

/// Creates missing target topics with the source partition count and grows
/// those with fewer partitions (CreateTopics / CreatePartitions). Failures
/// are logged, not thrown: a broker without these APIs (librdkafka's mock)
/// needs the topics made beforehand, and the producer reports what is
/// still missing.
void ensure_target_topics(rd_kafka_t* target, const std::map<std::string, int>& wanted, int replication_factor,
                          const std::string& connector) {
  if (!target || wanted.empty()) return;
  std::map<std::string, int> existing;
  try {
    existing = list_topics(target, "target");
  } catch (const std::exception& e) {
    log_warn("mirror " + connector + ": cannot check target topics: " + e.what());
    return;
  }
  std::vector<rd_kafka_NewTopic_t*> create;
  std::vector<rd_kafka_NewPartitions_t*> grow;
  char errstr[512];
  for (const auto& [name, n] : wanted) {
    auto it = existing.find(name);
    if (it == existing.end()) {
      if (auto* nt = rd_kafka_NewTopic_new(name.c_str(), n, replication_factor, errstr, sizeof errstr)) create.push_back(nt);
      else log_warn("mirror " + connector + ": topic " + name + ": " + errstr);
    } else if (it->second < n) {
      if (auto* np = rd_kafka_NewPartitions_new(name.c_str(), static_cast<size_t>(n), errstr, sizeof errstr)) grow.push_back(np);
      else log_warn("mirror " + connector + ": topic " + name + ": " + errstr);
    }
  }
  auto report = [&](rd_kafka_event_t* ev, const char* what) {
    if (!ev) return log_warn("mirror " + connector + ": " + what + " timed out");
    if (rd_kafka_event_error(ev)) {
      log_warn("mirror " + connector + ": " + what + " failed: " + rd_kafka_event_error_string(ev) +
               " (create the target topics beforehand on brokers without it)");
    } else {
      size_t cnt = 0;
      const rd_kafka_topic_result_t** res = nullptr;
      if (rd_kafka_event_type(ev) == RD_KAFKA_EVENT_CREATETOPICS_RESULT)
        res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
      else
        res = rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev), &cnt);
      for (size_t i = 0; i < cnt; ++i) {
        auto e = rd_kafka_topic_result_error(res[i]);
        if (e == RD_KAFKA_RESP_ERR_NO_ERROR)
          log_info("mirror " + connector + ": " + what + " " + rd_kafka_topic_result_name(res[i]));
        else if (e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
          log_warn("mirror " + connector + ": " + what + " " + rd_kafka_topic_result_name(res[i]) + " failed: " +
                   rd_kafka_topic_result_error_string(res[i]));
      }
    }
    rd_kafka_event_destroy(ev);
  };
  if (!create.empty()) {
    rd_kafka_queue_t* q = rd_kafka_queue_new(target);
    rd_kafka_AdminOptions_t* o = rd_kafka_AdminOptions_new(target, RD_KAFKA_ADMIN_OP_CREATETOPICS);
    rd_kafka_AdminOptions_set_request_timeout(o, kAdminTimeoutMs, errstr, sizeof errstr);
    rd_kafka_CreateTopics(target, create.data(), create.size(), o, q);
    report(await_admin(target, q), "created topic");
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy_array(create.data(), create.size());
  }
  if (!grow.empty()) {
    rd_kafka_queue_t* q = rd_kafka_queue_new(target);
    rd_kafka_AdminOptions_t* o = rd_kafka_AdminOptions_new(target, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS);
    rd_kafka_AdminOptions_set_request_timeout(o, kAdminTimeoutMs, errstr, sizeof errstr);
    rd_kafka_CreatePartitions(target, grow.data(), grow.size(), o, q);
    report(await_admin(target, q), "grew partitions of");
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewPartitions_destroy_array(grow.data(), grow.size());
  }
}

/// librdkafka's log lines of the connector's own clients, through the
/// worker's log (kc_host_api.log, so the same sink and log.format as every
/// line), prefixed "librdkafka <client name>: <facility>: ". Stateless, so
/// it stays valid after a client is destroyed; librdkafka calls it on its
/// own threads.
void on_rdkafka_log(const rd_kafka_t* rk, int level, const char* fac, const char* buf) {
  const auto l = level <= 3 ? kp::LogLevel::Error
                 : level == 4 ? kp::LogLevel::Warn
                 : level <= 6 ? kp::LogLevel::Info
                              : kp::LogLevel::Debug;
  kp::log(l, std::string("librdkafka ") + (rk ? rd_kafka_name(rk) : "") + ": " + (fac ? fac : "") + ": " +
                 (buf ? buf : ""));
}

/// librdkafka's error callback of the same clients (a fatal error at
/// error level, the retried ones at warn); with an observer as the conf
/// opaque (make_or_throw), the report is then recorded there too, so one
/// callback logs and classifies.
void on_rdkafka_error(rd_kafka_t* rk, int err, const char* reason, void* opaque) {
  kp::log(err == RD_KAFKA_RESP_ERR__FATAL ? kp::LogLevel::Error : kp::LogLevel::Warn,
          std::string("librdkafka ") + (rk ? rd_kafka_name(rk) : "") + ": ERROR: " +
              rd_kafka_err2name(static_cast<rd_kafka_resp_err_t>(err)) + ": " + (reason ? reason : ""));
  if (opaque) static_cast<broker::ClientErrorObserver*>(opaque)->record(static_cast<rd_kafka_resp_err_t>(err), reason);
}

/// An observer of a client made from `props` with `overrides` winning (the
/// same settings make_or_throw gives the client).
std::unique_ptr<broker::ClientErrorObserver> observer_for(const std::map<std::string, std::string>& props,
                                                          const std::map<std::string, std::string>& overrides = {}) {
  auto all = props;
  for (const auto& [k, v] : overrides) all[k] = v;
  return std::make_unique<broker::ClientErrorObserver>(all);
}

/// A librdkafka client of `type` from `props`, `overrides` winning. Throws
/// ConnectError "Invalid <prefix> client setting <prefix><key>: <reason>"
/// (the key "librdkafka" when the client itself cannot be made), with the
/// values of secret-looking keys hidden in librdkafka's text. `errors`
/// (may be null; it must outlive the client) records the client's error
/// reports for classification (it becomes the conf opaque).
RdKafkaPtr make_or_throw(rd_kafka_type_t type, const std::map<std::string, std::string>& props,
                         const std::string& prefix, const std::map<std::string, std::string>& overrides = {},
                         broker::ClientErrorObserver* errors = nullptr) {
  std::map<std::string, std::string> all = props;
  for (const auto& [k, v] : overrides) all[k] = v;
  const auto hidden = secrets::secret_values(all);
  auto fail = [&](const std::string& key, const char* why) {
    return ConnectError("Invalid " + prefix + " client setting " + prefix + key + ": " + secrets::scrub(why, hidden));
  };
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char errstr[512];
  for (const auto& [k, v] : all) {
    if (rd_kafka_conf_set(conf, k.c_str(), v.c_str(), errstr, sizeof errstr) != RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw fail(k, errstr);
    }
  }
  rd_kafka_conf_set_log_cb(conf, &on_rdkafka_log);
  rd_kafka_conf_set_error_cb(conf, &on_rdkafka_error);
  if (errors) rd_kafka_conf_set_opaque(conf, errors);
  rd_kafka_t* rk = rd_kafka_new(type, conf, errstr, sizeof errstr);  // takes conf on success
  if (!rk) {
    rd_kafka_conf_destroy(conf);
    throw fail("librdkafka", errstr);
  }
  return RdKafkaPtr(rk);
}

// ---------------------------------------------------------------- connector

class MirrorSourceConnector : public kp::SourceConnector {
 public:
  ~MirrorSourceConnector() override { stop_refresher(); }

  void start(const ConfigMap& config) override {
    config_ = config;
    cfg_ = parse_mirror_config(config);
    filter_ = std::make_unique<TopicFilter>(cfg_);
    source_.reset();  // before its observer
    source_errors_ = observer_for(cfg_.source_client);
    source_ = make_or_throw(RD_KAFKA_PRODUCER, cfg_.source_client, "source.cluster.", {}, source_errors_.get());
    if (!cfg_.target_client.empty()) target_ = make_or_throw(RD_KAFKA_PRODUCER, cfg_.target_client, "target.cluster.");
    name_ = context().connector_name();
    if (name_.empty()) name_ = "mirror";  // a transient instance has no name
    if (cfg_.refresh_enabled) {
      std::lock_guard lk(mu_);
      stopping_ = false;
      refresher_ = std::thread([this] { refresh_loop(); });
    }
  }

  std::vector<ConfigMap> task_configs(int max_tasks) override {
    auto topics = list_topics(source_.get(), cfg_.source_alias, source_errors_.get());
    auto partitions = mirrored_partitions(topics, *filter_);
    make_targets(topics);
    std::vector<ConfigMap> out;
    for (const auto& group : split_partitions({partitions.begin(), partitions.end()}, max_tasks)) {
      ConfigMap c = config_;
      c[kTaskPartitionsKey] = encode_partitions(group);
      out.push_back(std::move(c));
    }
    return out;
  }

  void stop() override { stop_refresher(); }

  /// Connector.validate: the full parse, its message on the key it names
  /// (else on source.cluster.alias), once.
  std::map<std::string, std::vector<std::string>> validate(const ConfigMap& config) override {
    try {
      parse_mirror_config(config);
    } catch (const ConnectError& e) {
      std::string msg = e.what();
      std::string key = "source.cluster.alias";
      for (const char* k : {"topics.exclude", "replication.policy.separator", "replication.policy.class",
                            "refresh.topics.interval.ms", "refresh.topics.enabled", "replication.factor",
                            "mirror.poll.max.records", "source.cluster.bootstrap.servers",
                            "target.cluster.bootstrap.servers"}) {
        if (msg.find(k) != std::string::npos) {
          key = k;
          break;
        }
      }
      if (key == "source.cluster.alias" && msg.find("configuration topics:") != std::string::npos) key = "topics";
      return {{key, {msg}}};
    }
    return {};
  }

 private:
  void make_targets(const std::map<std::string, int>& topics) {
    if (!target_) return;
    std::map<std::string, int> wanted;
    for (const auto& [t, n] : topics)
      if (filter_->should_replicate(t)) wanted[filter_->policy().format_remote_topic(cfg_.source_alias, t)] = n;
    ensure_target_topics(target_.get(), wanted, cfg_.replication_factor, name_);
  }

  // Re-lists the source topics every refresh.topics.interval.ms and asks for
  // new task configs when the mirrored partitions changed (MM2's
  // refreshTopicPartitions). The first listing always asks: the leader's
  // configs came from an earlier listing, and it writes only on change. It
  // comes after at most 1 s, so the leader's transient instances (stopped
  // at once) never list.
  void refresh_loop() {
    std::optional<std::set<TopicPartition>> known;
    bool first = true;
    std::unique_lock lk(mu_);
    while (!stopping_) {
      const auto wait = first ? std::min<int64_t>(cfg_.refresh_ms, 1000) : cfg_.refresh_ms;
      if (cv_.wait_for(lk, std::chrono::milliseconds(wait), [this] { return stopping_; })) break;
      lk.unlock();
      try {
        auto topics = list_topics(source_.get(), cfg_.source_alias, source_errors_.get());
        auto now = mirrored_partitions(topics, *filter_);
        if (!known || now != *known) {
          if (known)
            log_info("mirror " + name_ + ": source partitions changed (" + std::to_string(known->size()) + " -> " +
                     std::to_string(now.size()) + "), requesting task reconfiguration");
          make_targets(topics);
          known = std::move(now);
          context().request_task_reconfiguration();
        }
        first = false;
      } catch (const std::exception& e) {
        log_warn("mirror " + name_ + ": topic refresh failed (will retry): " + e.what());
        first = false;
      }
      lk.lock();
    }
  }

  void stop_refresher() {
    {
      std::lock_guard lk(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (refresher_.joinable()) refresher_.join();
  }

  ConfigMap config_;
  MirrorConfig cfg_;
  std::string name_;
  std::unique_ptr<TopicFilter> filter_;
  /// The source client's error reports, classified; before source_, so it
  /// outlives the client.
  std::unique_ptr<broker::ClientErrorObserver> source_errors_;
  RdKafkaPtr source_, target_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  ///< guarded by mu_
  std::thread refresher_;
};

// ---------------------------------------------------------------- task

/// `j` (an object of strings and integers: an MM2 source partition) as a
/// plugin-contract Json.
kp::Json to_plugin_json(const OrderedJson& j) {
  kp::Json out;
  for (const auto& [k, v] : j.items()) {
    if (v.is_string()) out.set(k, v.get<std::string>());
    else out.set(k, v.get<int64_t>());
  }
  return out;
}

class MirrorSourceTask : public kp::SourceTask {
 public:
  void start(const ConfigMap& config, const kp::SourceTaskContext& ctx) override {
    cfg_ = parse_mirror_config(config);
    policy_ = make_replication_policy(cfg_.policy_class, cfg_.separator);
    auto it = config.find(kTaskPartitionsKey);
    auto partitions = decode_partitions(it == config.end() ? "" : it->second);
    if (partitions.empty()) throw ConnectError(std::string("MirrorSourceTask has no ") + kTaskPartitionsKey);
    const std::string connector = ctx.connector_name();
    // Manual assignment: positions come from Connect's offsets. librdkafka
    // wants a group.id for assign(); it never joins or commits to it.
    const std::map<std::string, std::string> overrides{{"group.id", "kconnectd-mirror-" + connector},
                                                       {"enable.auto.commit", "false"},
                                                       {"enable.auto.offset.store", "false"},
                                                       {"enable.partition.eof", "false"}};
    consumer_.reset();  // before its observer
    // Classified as the worker's own clients (issue 27 item 1): a cause no
    // retry fixes fails the task with its line (see poll()).
    errors_ = observer_for(cfg_.source_client, overrides);
    consumer_ = make_or_throw(RD_KAFKA_CONSUMER, cfg_.source_client, "source.cluster.", overrides, errors_.get());
    rd_kafka_poll_set_consumer(consumer_.get());
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
    for (const auto& [t, p] : partitions) {
      auto sp = to_plugin_json(source_partition(cfg_.source_alias, t, p));
      std::optional<OrderedJson> committed;
      if (auto off = ctx.offset(sp))
        if (auto o = off->get_int64("offset")) committed = OrderedJson{{"offset", *o}};
      auto resume = resume_offset(committed);
      rd_kafka_topic_partition_list_add(list, t.c_str(), p)->offset = resume ? *resume : RD_KAFKA_OFFSET_BEGINNING;
      targets_[t] = policy_->format_remote_topic(cfg_.source_alias, t);
      log_info("mirror task " + connector + "-" + std::to_string(ctx.task_number()) + ": " + t + "-" +
               std::to_string(p) + " -> " + targets_[t] + " from " +
               (resume ? std::to_string(*resume) : std::string("the beginning")));
      partitions_.emplace(TopicPartition{t, p}, std::move(sp));
    }
    auto err = rd_kafka_assign(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    if (err) throw ConnectError(std::string("assigning the source partitions failed: ") + rd_kafka_err2str(err));
  }

  void poll(kp::SourceRecords& out) override {
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    int n = 0;
    while (n < cfg_.poll_batch) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      // Once records are in hand, take only what is already buffered.
      rd_kafka_message_t* m =
          rd_kafka_consumer_poll(consumer_.get(), n == 0 ? static_cast<int>(std::max<int64_t>(left, 0)) : 0);
      if (!m) {
        if (n > 0 || left <= 0) break;
        continue;
      }
      if (m->err) {
        std::string why = rd_kafka_message_errstr(m);
        // A broker's answer about the topic (e.g. TOPIC_AUTHORIZATION_FAILED).
        if (errors_ && m->err > 0 && m->rkt) errors_->record_topic_error(rd_kafka_topic_name(m->rkt), m->err);
        rd_kafka_message_destroy(m);
        char fatal[256];
        if (rd_kafka_fatal_error(consumer_.get(), fatal, sizeof fatal))
          throw ConnectError("source consumer failed: " + std::string(fatal));
        throw_if_classified_fatal();
        log_warn("mirror: source consumer: " + why);
        break;
      }
      add_record(out, m);
      rd_kafka_message_destroy(m);
      ++n;
    }
    throw_if_classified_fatal();
  }

  void stop() override {
    if (consumer_) {
      rd_kafka_consumer_close(consumer_.get());
      consumer_.reset();
    }
  }

 private:
  /// Throws ConnectError "source consumer: <classified line>" once the
  /// consumer's observer has classified a cause no retry fixes
  /// (credentials, SASL mechanism, TLS, ACLs), rather than polling on.
  void throw_if_classified_fatal() const {
    if (!errors_) return;
    if (auto v = errors_->fatal()) throw ConnectError("source consumer: " + v->message);
  }

  /// BYTES_SCHEMA and the bytes, or OPTIONAL_BYTES_SCHEMA and null.
  static std::pair<kp::Schema, kp::Value> bytes_or_null(const void* p, size_t n) {
    if (!p) return {kp::Schema::of(KC_BYTES, true), kp::Value()};
    return {kp::Schema::bytes(), kp::Value::bytes(std::string(static_cast<const char*>(p), n))};
  }

  /// Appends `m` as a source record: same partition, key, value, timestamp
  /// and headers, on the remote topic; offset {"offset": m's offset}.
  void add_record(kp::SourceRecords& out, const rd_kafka_message_t* m) {
    const std::string topic = rd_kafka_topic_name(m->rkt);
    auto pit = partitions_.find({topic, m->partition});
    if (pit == partitions_.end())
      pit = partitions_.emplace(TopicPartition{topic, m->partition},
                                to_plugin_json(source_partition(cfg_.source_alias, topic, m->partition)))
                .first;
    auto tit = targets_.find(topic);
    if (tit == targets_.end()) tit = targets_.emplace(topic, policy_->format_remote_topic(cfg_.source_alias, topic)).first;
    auto r = out.add();
    auto [ks, kv] = bytes_or_null(m->key, m->key_len);
    auto [vs, vv] = bytes_or_null(m->payload, m->len);
    r.source_partition(pit->second).topic(tit->second).kafka_partition(m->partition).key(ks, std::move(kv)).value(
        vs, std::move(vv));
    r.source_offset().set("offset", static_cast<int64_t>(m->offset));
    rd_kafka_timestamp_type_t tstype;
    const int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    if (tstype != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE && ts >= 0) r.timestamp(ts);
    rd_kafka_headers_t* h = nullptr;
    if (rd_kafka_message_headers(m, &h) != RD_KAFKA_RESP_ERR_NO_ERROR || !h) return;
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    for (size_t i = 0; rd_kafka_header_get_all(h, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR; ++i) {
      auto [hs, hv] = bytes_or_null(value, size);
      r.header(name, hs, std::move(hv));
    }
  }

  MirrorConfig cfg_;
  std::unique_ptr<ReplicationPolicy> policy_;
  /// The consumer's error reports, classified; before consumer_, so it
  /// outlives the client.
  std::unique_ptr<broker::ClientErrorObserver> errors_;
  RdKafkaPtr consumer_;
  std::map<TopicPartition, kp::Json> partitions_;  ///< shared by the partition's records
  std::map<std::string, std::string> targets_;
};

kp::ConfigDef mirror_defs() {
  kp::ConfigDef d;
  d.begin_group("Mirror")
      .define("source.cluster.alias", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH,
              "Name of the source cluster; prefixes remote topics and names the source partitions of offsets.")
      .non_empty()
      .define("source.cluster.bootstrap.servers", KC_CONFIG_STRING, KC_IMPORTANCE_HIGH,
              "host:port list of the source cluster. Other source.cluster.* keys are librdkafka settings of its "
              "clients.")
      .non_empty()
      .define("target.cluster.alias", KC_CONFIG_STRING, KC_IMPORTANCE_MEDIUM,
              "Name of the target cluster; topics that came from it are not mirrored back (cycle check).")
      .optional()
      .define("target.cluster.bootstrap.servers", KC_CONFIG_STRING, KC_IMPORTANCE_MEDIUM,
              "host:port list of the target cluster, used to create and grow remote topics; unset = the topics "
              "must exist.")
      .optional()
      .define("topics", KC_CONFIG_LIST, kDefaultTopics, KC_IMPORTANCE_HIGH,
              "Comma list of regexes of source topics to mirror.")
      .define("topics.exclude", KC_CONFIG_LIST, kDefaultTopicsExclude, KC_IMPORTANCE_HIGH,
              "Comma list of regexes of source topics never mirrored.")
      .define("replication.policy.class", KC_CONFIG_CLASS, kDefaultPolicyClass, KC_IMPORTANCE_LOW,
              "DefaultReplicationPolicy (<alias><separator><topic>) or IdentityReplicationPolicy (same name).")
      .define("replication.policy.separator", KC_CONFIG_STRING, ".", KC_IMPORTANCE_LOW,
              "Separator of DefaultReplicationPolicy.")
      .define("refresh.topics.enabled", KC_CONFIG_BOOLEAN, "true", KC_IMPORTANCE_LOW,
              "Whether new source topics and partitions are followed.")
      .define("refresh.topics.interval.ms", KC_CONFIG_LONG, std::to_string(kDefaultRefreshMs), KC_IMPORTANCE_LOW,
              "How often (ms) new source topics and partitions are looked for.")
      .at_least(1)
      .define("replication.factor", KC_CONFIG_INT, "-1", KC_IMPORTANCE_LOW,
              "Replication factor of created remote topics (-1 = the broker's default).")
      .define("mirror.poll.max.records", KC_CONFIG_INT, "1000", KC_IMPORTANCE_LOW,
              "Most records a task returns from one poll.");
  return d;
}

}  // namespace

void declare_mirror_source(kp::Registrar& reg, const std::string& version) {
  reg.source<MirrorSourceConnector, MirrorSourceTask>(kMirrorSourceClass, version, mirror_defs());
}

}  // namespace kc::connectors::mirror
