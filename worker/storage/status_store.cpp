#include "worker/storage/status_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kc::storage {

StatusBackingStore::StatusBackingStore(Options options) : options_(std::move(options)) {}
StatusBackingStore::~StatusBackingStore() = default;

Result<std::unique_ptr<StatusBackingStore>> StatusBackingStore::open(Options options) {
  TopicSpec spec;
  spec.name = options.topic;
  spec.partitions = options.partitions;
  spec.replication_factor = options.replication_factor;
  std::unique_ptr<StatusBackingStore> store(new StatusBackingStore(std::move(options)));
  const auto& o = store->options_;
  // Like Connect: no producer retries, the store retries by itself.
  auto topic = open_internal_topic(o.client, spec, o.client_id,
                                   {{"acks", "all"}, {"enable.idempotence", "false"}, {"retries", "0"}}, {},
                                   o.timeout_ms);
  if (!topic) return topic.error();
  store->producer_ = std::move(topic->producer);
  store->reader_ = std::move(topic->reader);
  auto st = store->read_to_end(store->options_.timeout_ms);
  if (!st) return st.error();
  return store;
}

void StatusBackingStore::send(const std::string& key, const std::optional<std::string>& value, int attempts_left,
                              bool track) {
  uint64_t sequence = 0;
  {
    std::lock_guard lk(mu_);
    auto& w = writes_[key];
    sequence = ++w.sequence;
    if (track && attempts_left == kStatusAttempts) w.unread.push_back(value);
  }
  auto delivered = [this, key, value, attempts_left, track, sequence](std::optional<Error> e) {
    if (!e) return;
    bool superseded = false;
    {
      std::lock_guard lk(mu_);
      auto& w = writes_[key];
      superseded = w.sequence != sequence;
      if (track && (superseded || attempts_left <= 1)) forget_unread(w, value);
    }
    // Like Connect's KafkaStatusBackingStore: a failed write is retried only
    // while it is still the latest for its key, so a retry never lands after
    // a newer status (RESTARTING after RUNNING).
    if (superseded) {
      spdlog::warn("status topic: write of {} failed ({}); a newer status was written since, not retrying", key,
                   e->to_string());
    } else if (attempts_left > 1) {
      spdlog::warn("status topic: write of {} failed ({}), retrying", key, e->to_string());
      send(key, value, attempts_left - 1, track);
    } else {
      spdlog::error("status topic: write of {} failed: {}", key, e->to_string());
    }
  };
  auto st = producer_->send(options_.topic, key, value, delivered);
  if (!st) {
    spdlog::error("status topic: could not queue {}: {}", key, st.error().to_string());
    std::lock_guard lk(mu_);
    if (track) forget_unread(writes_[key], value);
  }
}

void StatusBackingStore::forget_unread(KeyWrites& w, const std::optional<std::string>& value) {
  auto it = std::find(w.unread.begin(), w.unread.end(), value);
  if (it != w.unread.end()) w.unread.erase(it);
}

bool StatusBackingStore::own_write_pending(const std::string& key, const StatusValue* cached,
                                           const std::optional<std::string>& raw,
                                           const std::optional<StatusValue>& read) {
  auto it = writes_.find(key);
  if (it == writes_.end() || it->second.unread.empty()) return false;
  auto& unread = it->second.unread;
  if (auto own = std::find(unread.begin(), unread.end(), raw); own != unread.end()) {
    // One of this store's writes read back: apply it only when it is the
    // latest (the cache already shows it, the topic now agrees).
    unread.erase(unread.begin(), own + 1);
    return !unread.empty();
  }
  // Not one of the unread writes: a tombstone or a record of the same worker
  // is older than them (topic order) and would bring back a stale state.
  return !read || !cached || cached->worker_id == read->worker_id;
}

namespace {
/// The status record of `status` for `key`, made storable (storable_status),
/// or nullopt when even that cannot be read back (a connector name no
/// worker reads; it never reaches here from the config snapshot): then it
/// is logged and not written. `value` is nullopt for a tombstone.
std::optional<std::pair<StatusValue, std::optional<std::string>>> storable_record(const std::string& key,
                                                                                  const StatusValue& status) {
  StatusValue safe = storable_status(status);
  std::optional<std::string> value;
  if (safe.state != StatusState::Destroyed) value = encode_status(safe);
  if (auto read = decode_status_record(key, value); !read) {
    spdlog::error("status topic: not writing the status of key '{}' (no worker could read it back): {}",
                  printable_key(key), read.error().to_string());
    return std::nullopt;
  }
  return std::pair{std::move(safe), std::move(value)};
}
}  // namespace

void StatusBackingStore::put_connector(const std::string& connector, const StatusValue& status) {
  auto key = connector_status_key(connector);
  auto rec = storable_record(key, status);
  if (!rec) return;
  {
    std::lock_guard lk(mu_);
    if (status.state == StatusState::Destroyed) connectors_.erase(connector);
    else connectors_[connector] = rec->first;
  }
  send(key, rec->second, kStatusAttempts, true);
}

void StatusBackingStore::put_task(const connect::ConnectorTaskId& id, const StatusValue& status) {
  auto key = task_status_key(id);
  auto rec = storable_record(key, status);
  if (!rec) return;
  {
    std::lock_guard lk(mu_);
    if (status.state == StatusState::Destroyed) tasks_.erase(id);
    else tasks_[id] = rec->first;
  }
  send(key, rec->second, kStatusAttempts, true);
}

namespace {
/// Read rule for an UNASSIGNED (stop) report from one worker while another
/// worker's status is cached: it is the previous owner's late report, and is
/// dropped, when the cached status is RUNNING of a generation >= its own
/// (Connect's rule) or of any state from a strictly later generation (a
/// worker that was frozen reports after the new owner took over).
bool stale_stop_report(const StatusValue& cached, const StatusValue& next) {
  if (next.state != StatusState::Unassigned || cached.worker_id == next.worker_id) return false;
  if (cached.state == StatusState::Running && cached.generation >= next.generation) return true;
  return cached.generation > next.generation;
}

template <typename Map>
const StatusValue* get_cached(const Map& m, const typename Map::key_type& k) {
  auto it = m.find(k);
  return it == m.end() ? nullptr : &it->second;
}

bool safe_to_write(const std::optional<StatusValue>& cached, const StatusValue& next) {
  return !cached || cached->worker_id == next.worker_id || cached->generation <= next.generation;
}
}  // namespace

bool StatusBackingStore::put_task_safe(const connect::ConnectorTaskId& id, const StatusValue& status) {
  if (!safe_to_write(get_task(id), status)) return false;
  put_task(id, status);
  return true;
}

bool StatusBackingStore::put_connector_safe(const std::string& connector, const StatusValue& status) {
  if (!safe_to_write(get_connector(connector), status)) return false;
  put_connector(connector, status);
  return true;
}

Status StatusBackingStore::flush(int timeout_ms) { return producer_->flush(timeout_ms); }

void StatusBackingStore::put_topic(const TopicStatus& status) {
  const auto key = topic_status_key(status.topic, status.connector);
  const auto value = encode_topic_status(status);
  if (status.topic.empty() || status.topic.find(':') != std::string::npos ||
      !decode_status_record(key, value) || parse_topic_status_key(key) != std::pair{status.topic, status.connector}) {
    spdlog::error("status topic: not writing topic status '{}' (no worker could read it back)", printable_key(key));
    return;
  }
  {
    std::lock_guard lk(mu_);
    auto& known = topics_[status.connector];
    if (known.count(status.topic)) return;
    known[status.topic] = status;
  }
  send(key, value, kStatusAttempts, false);
}

void StatusBackingStore::delete_topics(const std::string& connector) {
  std::map<std::string, TopicStatus> known;
  {
    std::lock_guard lk(mu_);
    auto it = topics_.find(connector);
    if (it == topics_.end()) return;
    known = std::move(it->second);
    topics_.erase(it);
  }
  for (const auto& [topic, _] : known) send(topic_status_key(topic, connector), std::nullopt, kStatusAttempts, false);
}

std::vector<std::string> StatusBackingStore::get_topics(const std::string& connector) const {
  std::vector<std::string> out;
  std::lock_guard lk(mu_);
  auto it = topics_.find(connector);
  if (it != topics_.end())
    for (const auto& [topic, _] : it->second) out.push_back(topic);
  return out;
}

void StatusBackingStore::apply_topic(const std::string& topic, const std::string& connector,
                                     std::optional<TopicStatus> value) {
  std::lock_guard lk(mu_);
  if (value) {
    topics_[connector][topic] = std::move(*value);
    return;
  }
  auto it = topics_.find(connector);
  if (it != topics_.end()) {
    it->second.erase(topic);
    if (it->second.empty()) topics_.erase(it);
  }
}

void StatusBackingStore::apply(const std::string& key, const std::optional<std::string>& value, StatusRecord rec) {
  if (rec.topic) return apply_topic(rec.topic->first, rec.topic->second, std::move(rec.topic_status));
  const std::optional<StatusValue>& v = rec.status;
  std::lock_guard lk(mu_);
  const StatusValue* cached = rec.connector ? get_cached(connectors_, *rec.connector)
                              : rec.task    ? get_cached(tasks_, *rec.task)
                                            : nullptr;
  if (own_write_pending(key, cached, value, v)) return;
  if (rec.connector) {
    if (!v) connectors_.erase(*rec.connector);
    else if (auto it = connectors_.find(*rec.connector); it == connectors_.end() || !stale_stop_report(it->second, *v))
      connectors_[*rec.connector] = *v;
  } else if (rec.task) {
    if (!v) tasks_.erase(*rec.task);
    else if (auto it = tasks_.find(*rec.task); it == tasks_.end() || !stale_stop_report(it->second, *v))
      tasks_[*rec.task] = *v;
  }
}

Status StatusBackingStore::read_to_end(int timeout_ms) {
  return shared_read_.run(timeout_ms, [this, timeout_ms] {
    return read_internal_topic(*reader_, options_.topic, timeout_ms, [this](const TopicReader::Record& r) {
      if (!r.key) return log_skipped_record(options_.topic, r, "no key");
      auto rec = decode_status_record(*r.key, r.value);
      if (!rec) return log_skipped_record(options_.topic, r, rec.error().to_string());
      apply(*r.key, r.value, std::move(rec).value());
    });
  });
}

std::optional<StatusValue> StatusBackingStore::get_connector(const std::string& connector) const {
  std::lock_guard lk(mu_);
  auto it = connectors_.find(connector);
  if (it == connectors_.end()) return std::nullopt;
  return it->second;
}

std::optional<StatusValue> StatusBackingStore::get_task(const connect::ConnectorTaskId& id) const {
  std::lock_guard lk(mu_);
  auto it = tasks_.find(id);
  if (it == tasks_.end()) return std::nullopt;
  return it->second;
}

std::map<int32_t, StatusValue> StatusBackingStore::get_tasks(const std::string& connector) const {
  std::map<int32_t, StatusValue> out;
  std::lock_guard lk(mu_);
  for (auto it = tasks_.lower_bound({connector, INT32_MIN}); it != tasks_.end() && it->first.connector == connector; ++it)
    out[it->first.task] = it->second;
  return out;
}

std::map<std::string, StatusValue> StatusBackingStore::all_connectors() const {
  std::lock_guard lk(mu_);
  return connectors_;
}

std::map<connect::ConnectorTaskId, StatusValue> StatusBackingStore::all_tasks() const {
  std::lock_guard lk(mu_);
  return tasks_;
}

}  // namespace kc::storage
