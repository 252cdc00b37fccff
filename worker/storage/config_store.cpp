#include "worker/storage/config_store.h"

#include <chrono>
#include <optional>
#include <type_traits>

#include <spdlog/spdlog.h>

#include "common/names.h"
#include "worker/metrics/log_levels.h"

namespace kc::storage {

std::vector<std::string> ClusterConfigState::connectors() const {
  std::vector<std::string> out;
  for (const auto& [name, _] : connector_configs) out.push_back(name);
  return out;
}

std::vector<connect::ConnectorTaskId> ClusterConfigState::tasks(const std::string& connector) const {
  std::vector<connect::ConnectorTaskId> out;
  if (inconsistent.count(connector)) return out;
  auto it = task_counts.find(connector);
  if (it == task_counts.end()) return out;
  for (int32_t i = 0; i < it->second; ++i) out.push_back({connector, i});
  return out;
}

std::optional<ConfigMap> ClusterConfigState::task_config(const connect::ConnectorTaskId& id) const {
  auto it = task_configs.find(id);
  if (it == task_configs.end()) return std::nullopt;
  return it->second;
}

TargetState ClusterConfigState::target_state(const std::string& connector) const {
  auto it = target_states.find(connector);
  return it == target_states.end() ? TargetState::Started : it->second;
}

ConfigBackingStore::ConfigBackingStore(Options options, UpdateListener listener)
    : options_(std::move(options)), listener_(std::move(listener)) {}

ConfigBackingStore::~ConfigBackingStore() = default;

Result<std::unique_ptr<ConfigBackingStore>> ConfigBackingStore::open(Options options, UpdateListener listener) {
  TopicSpec spec;
  spec.name = options.topic;
  spec.partitions = 1;
  spec.replication_factor = options.replication_factor;
  std::unique_ptr<ConfigBackingStore> store(new ConfigBackingStore(std::move(options), std::move(listener)));
  const auto& o = store->options_;
  auto one_partition = [&o](int count) -> Status {
    if (count == 1) return ok_status();
    return Error{"config.storage.topic",
                 "config topic " + o.topic + " has " + std::to_string(count) + " partitions; it must have exactly 1"};
  };
  // Connect's config topic consumer: read_committed with exactly-once
  // source support enabled, else the Java consumer's read_uncommitted
  // (librdkafka's default would be read_committed).
  ClientProps reader_overrides;
  if (o.read_committed) reader_overrides["isolation.level"] = "read_committed";
  else if (!o.client.count("isolation.level")) reader_overrides["isolation.level"] = "read_uncommitted";
  auto topic = open_internal_topic(o.client, spec, o.client_id, {{"enable.idempotence", "false"}, {"acks", "all"}},
                                   reader_overrides, o.timeout_ms, one_partition);
  if (!topic) return topic.error();
  store->producer_ = std::move(topic->producer);
  store->reader_ = std::move(topic->reader);
  auto first = store->read_to_end(store->options_.timeout_ms);
  if (!first) return first.error();
  return store;
}

void ConfigBackingStore::apply(const TopicReader::Record& r) {
  state_.offset = r.offset + 1;
  // Each skipped record gets one log line naming the topic, partition and
  // offset (never the value), and changes no state.
  auto skip = [&](std::string_view why) { log_skipped_record(options_.topic, r, why); };
  if (!r.key) return skip("no key");
  auto key = parse_config_key(*r.key);
  switch (key.kind) {
    case ConfigKeyKind::Connector:
    case ConfigKeyKind::Task:
    case ConfigKeyKind::Commit:
    case ConfigKeyKind::TargetState:
    case ConfigKeyKind::RestartConnector:
    case ConfigKeyKind::TasksFencing:
      // Skipped here, before any state changes, so the snapshot, the update
      // listener (herder), the assignor and GET /connectors all agree that
      // such a connector does not exist.
      if (auto why = stored_connector_name_error(key.name)) return skip(*why);
      break;
    case ConfigKeyKind::SessionKey:
    case ConfigKeyKind::LoggerCluster:
    case ConfigKeyKind::Unknown:
      break;
  }
  // Delivered by read_to_end once the snapshot that holds the change is
  // published, so a listener that reads snapshot() sees it.
  auto notify = [&](ConfigUpdate::Kind kind) {
    if (listener_) unpublished_updates_.push_back(ConfigUpdate{kind, key.name});
  };
  // A value that does not decode is logged and its record skipped (nullopt).
  auto decoded = [&skip](auto result) -> std::optional<std::decay_t<decltype(result.value())>> {
    if (!result) {
      skip(result.error().to_string());
      return std::nullopt;
    }
    return std::move(result).value();
  };
  auto drop_task_configs = [&] {
    std::erase_if(state_.task_configs, [&](const auto& kv) { return kv.first.connector == key.name; });
  };
  switch (key.kind) {
    case ConfigKeyKind::Connector: {
      if (!r.value) {
        bool known = state_.connector_configs.erase(key.name) != 0;
        state_.task_counts.erase(key.name);
        state_.target_states.erase(key.name);
        state_.inconsistent.erase(key.name);
        state_.pending_fencing.erase(key.name);  // its task count record stays: a re-created one fences them
        pending_tasks_.erase(key.name);
        drop_task_configs();
        if (known) notify(ConfigUpdate::Kind::ConnectorRemoved);
        return;
      }
      auto props = decoded(decode_properties(*r.value));
      if (!props) return;
      state_.connector_configs[key.name] = std::move(*props);
      notify(ConfigUpdate::Kind::ConnectorConfig);
      return;
    }
    case ConfigKeyKind::Task: {
      if (!r.value) return;  // Connect ignores task-config tombstones
      auto props = decoded(decode_properties(*r.value));
      if (!props) return;
      pending_tasks_[key.name][key.task] = std::move(*props);
      return;
    }
    case ConfigKeyKind::Commit: {
      if (!r.value) return;
      auto n = decoded(decode_commit(*r.value));
      if (!n) return;
      if (!state_.connector_configs.count(key.name)) {
        pending_tasks_.erase(key.name);
        return;  // a commit for a connector with no config is ignored
      }
      auto& pending = pending_tasks_[key.name];
      // Complete when task ids 0..n-1 are all pending. The walk is bounded
      // by what was read, never by the count: a commit of 2^31 tasks costs
      // no more than one of 1.
      int32_t present = 0;
      for (auto it = pending.lower_bound(0); present < *n && it != pending.end() && it->first == present; ++it)
        ++present;
      const bool complete = present == *n;
      if (!complete) {
        spdlog::warn("config topic: commit of {} tasks for {} lacks some task configs; marking it inconsistent "
                     "until its next good commit",
                     *n, printable_key(key.name));
        state_.inconsistent.insert(key.name);
      } else {
        drop_task_configs();
        for (int32_t i = 0; i < *n; ++i) state_.task_configs[{key.name, i}] = pending[i];
        state_.task_counts[key.name] = *n;
        state_.inconsistent.erase(key.name);
        ++state_.task_config_generations[key.name];
        state_.pending_fencing.insert(key.name);
      }
      pending_tasks_.erase(key.name);
      notify(ConfigUpdate::Kind::TasksCommitted);
      return;
    }
    case ConfigKeyKind::TargetState: {
      if (!r.value) {
        if (state_.connector_configs.count(key.name)) {
          state_.target_states[key.name] = TargetState::Started;
          notify(ConfigUpdate::Kind::TargetState);
        } else {
          state_.target_states.erase(key.name);
        }
        return;
      }
      auto s = decoded(decode_target_state(*r.value));
      if (!s) return;
      state_.target_states[key.name] = *s;
      notify(ConfigUpdate::Kind::TargetState);
      return;
    }
    case ConfigKeyKind::RestartConnector: {
      if (!r.value || !state_.connector_configs.count(key.name)) return;
      auto f = decoded(decode_restart(*r.value));
      if (!f) return;
      if (listener_) unpublished_updates_.push_back(ConfigUpdate{ConfigUpdate::Kind::RestartRequested, key.name, *f});
      return;
    }
    case ConfigKeyKind::SessionKey: {
      // As Connect: a bad or null record is logged and ignored; the key
      // in force stays.
      if (!r.value) return skip("the session key is unexpectedly null");
      auto k = decoded(decode_session_key(*r.value));
      if (!k) return;
      state_.session_key = std::move(*k);
      if (listener_) unpublished_updates_.push_back(ConfigUpdate{ConfigUpdate::Kind::SessionKey, ""});
      return;
    }
    case ConfigKeyKind::TasksFencing: {
      if (!r.value) return;
      auto n = decoded(decode_task_count(*r.value));
      if (!n) return;
      state_.task_count_records[key.name] = *n;
      state_.pending_fencing.erase(key.name);
      return;
    }
    case ConfigKeyKind::LoggerCluster: {
      // KIP-976: every running worker applies the level when it reads the
      // record. As Connect, a worker ignores the records it reads before
      // its first read to the end (the ones written before it started): a
      // cluster-wide level lasts until the worker restarts, so a restart
      // resets a forgotten DEBUG (deploy/README.md "Log levels").
      if (key.name.empty()) return skip("empty logger namespace");
      if (!r.value) return skip("logger level is unexpectedly null");
      auto level = decoded(decode_logger_level(*r.value));
      if (!level) return;
      if (!caught_up_once_) {
        spdlog::debug("{} offset {}: cluster-wide log level {} for logger {} predates this worker's start; ignored",
                      options_.topic, r.offset, *level, printable_key(key.name));
        return;
      }
      const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count();
      metrics::LoggerLevels::instance().set(key.name, *metrics::parse_log4j_level(*level), now_ms);
      spdlog::info("{} offset {}: cluster-wide log level {} for logger {}", options_.topic, r.offset, *level,
                   printable_key(key.name));
      return;
    }
    case ConfigKeyKind::Unknown:
      return skip("unknown key");
  }
}

Result<ClusterConfigState> ConfigBackingStore::read_to_end(int timeout_ms) {
  std::lock_guard lk(read_mu_);
  auto st = read_internal_topic(*reader_, options_.topic, timeout_ms, [this](const TopicReader::Record& r) { apply(r); });
  ClusterConfigState snap = state_;
  // Target states are reported only for connectors that exist.
  for (auto it = snap.target_states.begin(); it != snap.target_states.end();) {
    if (!snap.connector_configs.count(it->first)) it = snap.target_states.erase(it);
    else ++it;
  }
  for (const auto& [name, _] : snap.connector_configs) snap.target_states.emplace(name, TargetState::Started);
  {
    std::lock_guard slk(snap_mu_);
    snapshot_ = snap;
  }
  auto updates = std::move(unpublished_updates_);
  unpublished_updates_.clear();
  for (const auto& u : updates) listener_(u);
  if (!st) return st.error();
  caught_up_once_ = true;
  return snap;
}

Status ConfigBackingStore::put_logger_level(const std::string& logger_namespace, const std::string& level,
                                            int timeout_ms) {
  return write_and_read({{logger_cluster_key(logger_namespace), encode_logger_level(level)}}, timeout_ms, false);
}

ClusterConfigState ConfigBackingStore::snapshot() const {
  std::lock_guard lk(snap_mu_);
  return snapshot_;
}

Status ConfigBackingStore::write(const Records& records, int timeout_ms) {
  return producer_->send_and_wait(options_.topic, records, timeout_ms);
}

Status ConfigBackingStore::write_and_read(const Records& records, int timeout_ms, bool privileged) {
  // Every worker must be able to read back what is written: each record is
  // checked with the reader's own rules before anything is sent.
  for (const auto& [key, value] : records)
    if (auto why = config_record_error(key, value))
      return Error{kUnreadableRecordField, "not written to the config topic (no worker could read it back): " + *why};
  auto st = privileged ? write_privileged(records, timeout_ms) : write(records, timeout_ms);
  if (!st) return st;
  auto r = read_to_end(timeout_ms);
  if (!r) return r.error();
  return ok_status();
}

std::string config_topic_transactional_id(const std::string& group_id) { return "connect-cluster-" + group_id; }

Status ConfigBackingStore::claim_write_privileges(int timeout_ms) {
  if (options_.transactional_id.empty()) return ok_status();
  std::lock_guard lk(txn_mu_);
  if (txn_) return ok_status();
  ClientProps overrides{{"client.id", (options_.client_id.empty() ? std::string("connect") : options_.client_id) + "-leader"},
                        {"max.in.flight.requests.per.connection", "5"}};
  auto p = TransactionalProducer::create(options_.client, overrides, options_.transactional_id);
  if (!p)
    return Error{"", "Failed to create and initialize fencable producer for config topic: " + p.error().to_string()};
  if (auto e = p.value()->init(timeout_ms))
    return Error{"", "Failed to create and initialize fencable producer for config topic: transactional id " +
                         options_.transactional_id + ": " + e->to_string("init_transactions")};
  txn_ = std::move(p).value();
  update_stats([](WriterStats& s) {
    ++s.claims;
    s.write_privileges = true;
  });
  spdlog::info("claimed write privileges for config topic {} (transactional id {})", options_.topic,
               options_.transactional_id);
  return ok_status();
}

namespace {
/// Drops a fencable producer without waiting for what it still holds
/// (Connect closes it with a zero timeout).
void close_now(std::unique_ptr<TransactionalProducer> p) {
  if (!p) return;
  rd_kafka_purge(p->producer().handle(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT);
  p->producer().serve_deliveries();
}
}  // namespace

void ConfigBackingStore::release_write_privileges() {
  std::lock_guard lk(txn_mu_);
  if (txn_) spdlog::info("released write privileges for config topic {}", options_.topic);
  close_now(std::move(txn_));
  update_stats([](WriterStats& s) { s.write_privileges = false; });
}

ConfigBackingStore::WriterStats ConfigBackingStore::writer_stats() const {
  std::lock_guard lk(stats_mu_);
  WriterStats out = stats_;
  out.transactional = !options_.transactional_id.empty();
  return out;
}

Status ConfigBackingStore::write_privileged(const Records& records, int timeout_ms) {
  if (options_.transactional_id.empty()) return write(records, timeout_ms);
  std::lock_guard lk(txn_mu_);
  if (!txn_) return Error{kPrivilegedWriteField, "Cannot produce to config topic without claiming write privileges first"};
  std::string failure;
  if (auto e = txn_->begin()) {
    failure = e->to_string("begin_transaction");
  } else {
    for (const auto& [key, value] : records) {
      auto st = txn_->producer().send(options_.topic, key, value, [](const std::optional<Error>&) {});
      if (!st) {
        failure = "produce to " + options_.topic + ": " + st.error().to_string();
        break;
      }
    }
    if (failure.empty()) {
      if (auto e = txn_->commit(timeout_ms)) {
        failure = e->to_string("commit_transaction");
        if (e->fenced())
          failure = "transactional id " + options_.transactional_id +
                    " was fenced out, most likely by a newer leader (" + failure + ")";
      }
    }
  }
  txn_->producer().serve_deliveries();
  if (failure.empty()) {
    update_stats([](WriterStats& s) { ++s.transactions; });
    return ok_status();
  }
  update_stats([](WriterStats& s) {
    ++s.failed_writes;
    s.write_privileges = false;
  });
  spdlog::warn("Failed to perform fencable send to config topic {}: {}; write privileges released", options_.topic,
               failure);
  close_now(std::move(txn_));
  return Error{kPrivilegedWriteField, "Failed to perform fencable send to config topic: " + failure};
}

Status ConfigBackingStore::put_connector_config(const std::string& connector, const ConfigMap& config,
                                                std::optional<TargetState> initial_state, int timeout_ms) {
  // A new connector's name must follow the one name rule; an existing one
  // (written before the rule) may still be updated.
  if (!snapshot().contains(connector))
    if (auto why = kc::connector_name_error(connector)) return Error{kUnreadableRecordField, *why};
  if (auto why = config_map_error(config)) return Error{kUnreadableRecordField, "connector config not written: " + *why};
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  if (initial_state) recs.emplace_back(target_state_key(connector), encode_target_state(*initial_state));
  recs.emplace_back(connector_config_key(connector), encode_properties(config));
  return write_and_read(recs, timeout_ms);
}

Status ConfigBackingStore::remove_connector(const std::string& connector, int timeout_ms) {
  return write_and_read({{connector_config_key(connector), std::nullopt}, {target_state_key(connector), std::nullopt}},
                        timeout_ms);
}

Status ConfigBackingStore::put_task_configs(const std::string& connector, const std::vector<ConfigMap>& configs,
                                            int timeout_ms) {
  if (configs.size() > static_cast<size_t>(INT32_MAX))
    return Error{kUnreadableRecordField, "task configs not written: more than 2147483647 of them"};
  for (const auto& c : configs)
    if (auto why = config_map_error(c)) return Error{kUnreadableRecordField, "task configs not written: " + *why};
  auto r = read_to_end(timeout_ms);
  if (!r) return r.error();
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  for (size_t i = 0; i < configs.size(); ++i)
    recs.emplace_back(task_config_key({connector, static_cast<int32_t>(i)}), encode_properties(configs[i]));
  if (!recs.empty()) {
    auto st = write_and_read(recs, timeout_ms);
    if (!st) return st;
  }
  return write_and_read({{commit_key(connector), encode_commit(static_cast<int32_t>(configs.size()))}}, timeout_ms);
}

Status ConfigBackingStore::put_task_count_record(const std::string& connector, int32_t task_count, int timeout_ms) {
  return write_and_read({{task_count_key(connector), encode_task_count(task_count)}}, timeout_ms);
}

Status ConfigBackingStore::put_restart_request(const std::string& connector, const RestartFlags& flags,
                                               int timeout_ms) {
  return write_and_read({{restart_key(connector), encode_restart(flags)}}, timeout_ms);
}

Status ConfigBackingStore::put_session_key(const SessionKeyRecord& key, int timeout_ms) {
  return write_and_read({{std::string(kSessionKeyKey), encode_session_key(key)}}, timeout_ms);
}

Status ConfigBackingStore::put_target_state(const std::string& connector, TargetState state, int timeout_ms) {
  // Not privileged in Connect either: any worker may write a target state.
  return write_and_read({{target_state_key(connector), encode_target_state(state)}}, timeout_ms,
                        /*privileged=*/false);
}

std::string ConfigBackingStore::kafka_cluster_id(int timeout_ms) const {
  return cluster_id(producer_->handle(), timeout_ms);
}

}  // namespace kc::storage
