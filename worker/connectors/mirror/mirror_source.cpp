#include "worker/connectors/mirror/mirror_source.h"

#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include <spdlog/spdlog.h>

#include "worker/connectors/mirror/mirror_policy.h"
#include "worker/storage/kafka_client.h"

namespace kc::connectors::mirror {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMetadataTimeoutMs = 10000;
constexpr int kAdminTimeoutMs = 10000;

/// Topic -> partition count of every topic the cluster reports (one
/// all-topics metadata request, so nothing is auto-created). Throws
/// ConnectError naming `cluster` on failure.
std::map<std::string, int> list_topics(rd_kafka_t* rk, const std::string& cluster) {
  const rd_kafka_metadata_t* md = nullptr;
  auto err = rd_kafka_metadata(rk, 1, nullptr, &md, kMetadataTimeoutMs);
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
    spdlog::warn("mirror {}: cannot check target topics: {}", connector, e.what());
    return;
  }
  std::vector<rd_kafka_NewTopic_t*> create;
  std::vector<rd_kafka_NewPartitions_t*> grow;
  char errstr[512];
  for (const auto& [name, n] : wanted) {
    auto it = existing.find(name);
    if (it == existing.end()) {
      if (auto* nt = rd_kafka_NewTopic_new(name.c_str(), n, replication_factor, errstr, sizeof errstr)) create.push_back(nt);
      else spdlog::warn("mirror {}: topic {}: {}", connector, name, errstr);
    } else if (it->second < n) {
      if (auto* np = rd_kafka_NewPartitions_new(name.c_str(), static_cast<size_t>(n), errstr, sizeof errstr)) grow.push_back(np);
      else spdlog::warn("mirror {}: topic {}: {}", connector, name, errstr);
    }
  }
  auto report = [&](rd_kafka_event_t* ev, const char* what) {
    if (!ev) return spdlog::warn("mirror {}: {} timed out", connector, what);
    if (rd_kafka_event_error(ev)) {
      spdlog::warn("mirror {}: {} failed: {} (create the target topics beforehand on brokers without it)", connector,
                   what, rd_kafka_event_error_string(ev));
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
          spdlog::info("mirror {}: {} {}", connector, what, rd_kafka_topic_result_name(res[i]));
        else if (e != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
          spdlog::warn("mirror {}: {} {} failed: {}", connector, what, rd_kafka_topic_result_name(res[i]),
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

storage::RdKafkaPtr make_or_throw(rd_kafka_type_t type, const std::map<std::string, std::string>& props,
                                  const std::string& prefix, const storage::ClientProps& overrides = {}) {
  auto rk = storage::make_client(type, props, overrides);
  if (!rk) {
    const auto& e = rk.error();
    throw ConnectError("Invalid " + prefix + " client setting " + (e.field.empty() ? "" : prefix + e.field + ": ") +
                       e.message);
  }
  return std::move(rk).value();
}

// ---------------------------------------------------------------- connector

class MirrorSourceConnector : public Connector {
 public:
  ~MirrorSourceConnector() override { stop_refresher(); }

  void initialize(ConnectorContext& ctx) override { ctx_ = &ctx; }
  ConnectorType type() const override { return ConnectorType::Source; }

  void start(const ConfigMap& config) override {
    config_ = config;
    cfg_ = parse_mirror_config(config);
    filter_ = std::make_unique<TopicFilter>(cfg_);
    source_ = make_or_throw(RD_KAFKA_PRODUCER, cfg_.source_client, "source.cluster.");
    if (!cfg_.target_client.empty()) target_ = make_or_throw(RD_KAFKA_PRODUCER, cfg_.target_client, "target.cluster.");
    name_ = ctx_ ? ctx_->connector_name() : std::string("mirror");
    if (cfg_.refresh_enabled) {
      std::lock_guard lk(mu_);
      stopping_ = false;
      refresher_ = std::thread([this] { refresh_loop(); });
    }
  }

  std::vector<ConfigMap> task_configs(int max_tasks) override {
    auto topics = list_topics(source_.get(), cfg_.source_alias);
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

  std::unique_ptr<SourceTask> create_source_task() override;

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
        auto topics = list_topics(source_.get(), cfg_.source_alias);
        auto now = mirrored_partitions(topics, *filter_);
        if (!known || now != *known) {
          if (known)
            spdlog::info("mirror {}: source partitions changed ({} -> {}), requesting task reconfiguration", name_,
                         known->size(), now.size());
          make_targets(topics);
          known = std::move(now);
          if (ctx_) ctx_->request_task_reconfiguration();
        }
        first = false;
      } catch (const std::exception& e) {
        spdlog::warn("mirror {}: topic refresh failed (will retry): {}", name_, e.what());
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

  ConnectorContext* ctx_ = nullptr;
  ConfigMap config_;
  MirrorConfig cfg_;
  std::string name_;
  std::unique_ptr<TopicFilter> filter_;
  storage::RdKafkaPtr source_, target_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;  ///< guarded by mu_
  std::thread refresher_;
};

// ---------------------------------------------------------------- task

class MirrorSourceTask : public SourceTask {
 public:
  void start(const ConfigMap& config, SourceTaskContext& ctx) override {
    cfg_ = parse_mirror_config(config);
    policy_ = make_replication_policy(cfg_.policy_class, cfg_.separator);
    auto it = config.find(kTaskPartitionsKey);
    auto partitions = decode_partitions(it == config.end() ? "" : it->second);
    if (partitions.empty()) throw ConnectError(std::string("MirrorSourceTask has no ") + kTaskPartitionsKey);
    // Manual assignment: positions come from Connect's offsets. librdkafka
    // wants a group.id for assign(); it never joins or commits to it.
    consumer_ = make_or_throw(RD_KAFKA_CONSUMER, cfg_.source_client, "source.cluster.",
                              {{"group.id", "kconnectd-mirror-" + ctx.connector_name()},
                               {"enable.auto.commit", "false"},
                               {"enable.auto.offset.store", "false"},
                               {"enable.partition.eof", "false"}});
    rd_kafka_poll_set_consumer(consumer_.get());
    rd_kafka_topic_partition_list_t* list = rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size()));
    for (const auto& [t, p] : partitions) {
      auto sp = source_partition(cfg_.source_alias, t, p);
      auto resume = resume_offset(ctx.offset(sp));
      rd_kafka_topic_partition_list_add(list, t.c_str(), p)->offset = resume ? *resume : RD_KAFKA_OFFSET_BEGINNING;
      partitions_[{t, p}] = SharedJson(std::move(sp));
      targets_[t] = policy_->format_remote_topic(cfg_.source_alias, t);
      spdlog::info("mirror task {}-{}: {}-{} -> {} from {}", ctx.connector_name(), ctx.task_number(), t, p, targets_[t],
                   resume ? std::to_string(*resume) : std::string("the beginning"));
    }
    auto err = rd_kafka_assign(consumer_.get(), list);
    rd_kafka_topic_partition_list_destroy(list);
    if (err) throw ConnectError(std::string("assigning the source partitions failed: ") + rd_kafka_err2str(err));
  }

  std::vector<SourceRecord> poll() override {
    std::vector<SourceRecord> out;
    const auto deadline = Clock::now() + std::chrono::milliseconds(500);
    while (static_cast<int>(out.size()) < cfg_.poll_batch) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      // Once records are in hand, take only what is already buffered.
      rd_kafka_message_t* m = rd_kafka_consumer_poll(consumer_.get(), out.empty() ? static_cast<int>(std::max<int64_t>(left, 0)) : 0);
      if (!m) {
        if (!out.empty() || left <= 0) break;
        continue;
      }
      if (m->err) {
        std::string why = rd_kafka_message_errstr(m);
        rd_kafka_message_destroy(m);
        char fatal[256];
        if (rd_kafka_fatal_error(consumer_.get(), fatal, sizeof fatal))
          throw ConnectError("source consumer failed: " + std::string(fatal));
        spdlog::warn("mirror: source consumer: {}", why);
        break;
      }
      out.push_back(to_record(m));
      rd_kafka_message_destroy(m);
    }
    return out;
  }

  void stop() override {
    if (consumer_) {
      rd_kafka_consumer_close(consumer_.get());
      consumer_.reset();
    }
  }

 private:
  static Data bytes_or_null(const void* p, size_t n) {
    if (!p) return Data{data::OPTIONAL_BYTES_SCHEMA(), data::Value()};
    return Data::bytes(std::string(static_cast<const char*>(p), n));
  }

  SourceRecord to_record(const rd_kafka_message_t* m) {
    const std::string topic = rd_kafka_topic_name(m->rkt);
    SourceRecord r;
    auto pit = partitions_.find({topic, m->partition});
    r.source_partition = pit != partitions_.end() ? pit->second : SharedJson(source_partition(cfg_.source_alias, topic, m->partition));
    r.source_offset = OrderedJson{{"offset", m->offset}};
    auto tit = targets_.find(topic);
    r.topic = tit != targets_.end() ? tit->second : policy_->format_remote_topic(cfg_.source_alias, topic);
    r.kafka_partition = m->partition;
    r.key = bytes_or_null(m->key, m->key_len);
    r.value = bytes_or_null(m->payload, m->len);
    rd_kafka_timestamp_type_t tstype;
    const int64_t ts = rd_kafka_message_timestamp(m, &tstype);
    if (tstype != RD_KAFKA_TIMESTAMP_NOT_AVAILABLE && ts >= 0) r.timestamp_ms = ts;
    for (auto& [k, v] : storage::headers_of(m)) {
      if (v) r.headers.add(k, data::BYTES_SCHEMA(), data::Value(data::Bytes{std::move(*v)}));
      else r.headers.add(k, data::OPTIONAL_BYTES_SCHEMA(), data::Value());
    }
    return r;
  }

  MirrorConfig cfg_;
  std::unique_ptr<ReplicationPolicy> policy_;
  storage::RdKafkaPtr consumer_;
  std::map<TopicPartition, SharedJson> partitions_;
  std::map<std::string, std::string> targets_;
};

std::unique_ptr<SourceTask> MirrorSourceConnector::create_source_task() { return std::make_unique<MirrorSourceTask>(); }

ConfigKeyDef def(std::string name, ConfigType type, bool required, std::optional<std::string> dflt,
                 ConfigImportance imp, std::string doc) {
  auto k = config_key(std::move(name), type, required, std::move(dflt), imp, std::move(doc));
  k.group = "Mirror";
  return k;
}

}  // namespace

std::unique_ptr<Connector> make_mirror_source() { return std::make_unique<MirrorSourceConnector>(); }

ConfigDefs mirror_source_config_defs() {
  auto alias = def("source.cluster.alias", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                   "Name of the source cluster; prefixes remote topics and names the source partitions of offsets.");
  alias.check = &non_empty_string;
  auto bs = def("source.cluster.bootstrap.servers", ConfigType::String, true, std::nullopt, ConfigImportance::High,
                "host:port list of the source cluster. Other source.cluster.* keys are librdkafka settings of its "
                "clients.");
  bs.check = &non_empty_string;
  auto refresh = def("refresh.topics.interval.ms", ConfigType::Long, false, std::to_string(kDefaultRefreshMs),
                     ConfigImportance::Low, "How often (ms) new source topics and partitions are looked for.");
  refresh.at_least = 1;
  return {alias,
          bs,
          def("target.cluster.alias", ConfigType::String, false, std::nullopt, ConfigImportance::Medium,
              "Name of the target cluster; topics that came from it are not mirrored back (cycle check)."),
          def("target.cluster.bootstrap.servers", ConfigType::String, false, std::nullopt, ConfigImportance::Medium,
              "host:port list of the target cluster, used to create and grow remote topics; unset = the topics "
              "must exist."),
          def("topics", ConfigType::List, false, kDefaultTopics, ConfigImportance::High,
              "Comma list of regexes of source topics to mirror."),
          def("topics.exclude", ConfigType::List, false, kDefaultTopicsExclude, ConfigImportance::High,
              "Comma list of regexes of source topics never mirrored."),
          def("replication.policy.class", ConfigType::Class, false, kDefaultPolicyClass, ConfigImportance::Low,
              "DefaultReplicationPolicy (<alias><separator><topic>) or IdentityReplicationPolicy (same name)."),
          def("replication.policy.separator", ConfigType::String, false, ".", ConfigImportance::Low,
              "Separator of DefaultReplicationPolicy."),
          def("refresh.topics.enabled", ConfigType::Boolean, false, "true", ConfigImportance::Low,
              "Whether new source topics and partitions are followed."),
          refresh,
          def("replication.factor", ConfigType::Int, false, "-1", ConfigImportance::Low,
              "Replication factor of created remote topics (-1 = the broker's default)."),
          def("mirror.poll.max.records", ConfigType::Int, false, "1000", ConfigImportance::Low,
              "Most records a task returns from one poll.")};
}

void mirror_source_config_rule(const ConfigMap& config, ConfigErrors& errors) {
  try {
    parse_mirror_config(config);
  } catch (const ConnectError& e) {
    // Put the message on the key it names, else on the alias.
    std::string msg = e.what();
    std::string key = "source.cluster.alias";
    for (const char* k : {"topics.exclude", "replication.policy.separator", "replication.policy.class",
                          "refresh.topics.interval.ms", "refresh.topics.enabled", "replication.factor",
                          "mirror.poll.max.records", "source.cluster.bootstrap.servers", "target.cluster.bootstrap.servers"}) {
      if (msg.find(k) != std::string::npos) {
        key = k;
        break;
      }
    }
    if (key == "source.cluster.alias" && msg.find("configuration topics:") != std::string::npos) key = "topics";
    auto& list = errors[key];
    if (std::find(list.begin(), list.end(), msg) == list.end()) list.push_back(msg);
  }
}

}  // namespace kc::connectors::mirror
