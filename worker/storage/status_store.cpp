#include "worker/storage/status_store.h"

#include <spdlog/spdlog.h>

#include <algorithm>

namespace kc::storage {

StatusBackingStore::StatusBackingStore(Options options) : options_(std::move(options)) {}
StatusBackingStore::~StatusBackingStore() {
  // ~Producer serves the reports of the records still queued (flush, then
  // purge), and they use mu_, table_ and sequences_: it must run before
  // those members are destroyed (they are declared after producer_). After
  // closing_ no report starts a retry, and the wait lets one that already
  // decided to retry finish its send before producer_ goes away.
  {
    std::unique_lock lk(mu_);
    closing_ = true;
    retries_done_.wait(lk, [this] { return retries_in_send_ == 0; });
  }
  producer_.reset();
}

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

void StatusBackingStore::send(const std::string& key, const std::optional<std::string>& value) {
  uint64_t sequence = 0;
  {
    std::lock_guard lk(mu_);
    sequence = ++sequences_[key];
  }
  produce(key, value, kStatusAttempts, false, sequence);
}

void StatusBackingStore::produce(const std::string& key, const std::optional<std::string>& value, int attempts_left,
                                 bool track, uint64_t sequence) {
  auto delivered = [this, key, value, attempts_left, track, sequence](std::optional<Error> e) {
    if (!e) return;
    bool superseded = false;
    bool closing = false;
    uint64_t retry_sequence = 0;
    {
      std::lock_guard lk(mu_);
      auto& latest = sequences_[key];
      superseded = latest != sequence;
      closing = closing_;
      const bool retry = !superseded && !closing && attempts_left > 1;
      if (track && !retry) table_.write_failed(key, value);
      if (retry) {
        retry_sequence = ++latest;
        ++retries_in_send_;  // the destructor waits for this send
      }
    }
    // Like Connect's KafkaStatusBackingStore: a failed write is retried only
    // while it is still the latest for its key, so a retry never lands after
    // a newer status (RESTARTING after RUNNING).
    if (superseded) {
      spdlog::warn("status topic: write of {} failed ({}); a newer status was written since, not retrying", key,
                   e->to_string());
    } else if (closing) {
      spdlog::warn("status topic: write of {} failed ({}); the store is closing, not retrying", key, e->to_string());
    } else if (attempts_left > 1) {
      spdlog::warn("status topic: write of {} failed ({}), retrying", key, e->to_string());
      produce(key, value, attempts_left - 1, track, retry_sequence);
      std::lock_guard lk(mu_);
      if (--retries_in_send_ == 0) retries_done_.notify_all();
    } else {
      spdlog::error("status topic: write of {} failed: {}", key, e->to_string());
    }
  };
  auto st = producer_->send(options_.topic, key, value, delivered);
  if (!st) {
    spdlog::error("status topic: could not queue {}: {}", key, st.error().to_string());
    std::lock_guard lk(mu_);
    if (track) table_.write_failed(key, value);
  }
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

bool StatusBackingStore::put_status(const std::string& key, const StatusSubject& subject, const StatusValue& status,
                                    bool safe) {
  auto rec = storable_record(key, status);
  if (!rec) return false;
  uint64_t sequence = 0;
  {
    // The putSafe check, the cache update and the sequence number under one
    // lock: a record read between the check and the write cannot slip in.
    std::lock_guard lk(mu_);
    if (safe) {
      auto shown = subject.connector ? table_.connector(*subject.connector) : table_.task(*subject.task);
      if (!safe_to_write(shown, rec->first)) return false;
    }
    std::optional<StatusValue> cached;
    if (status.state != StatusState::Destroyed) cached = rec->first;
    table_.wrote(key, subject, rec->second, cached);
    sequence = ++sequences_[key];
  }
  produce(key, rec->second, kStatusAttempts, true, sequence);
  return true;
}

void StatusBackingStore::put_connector(const std::string& connector, const StatusValue& status) {
  (void)put_status(connector_status_key(connector), StatusSubject{connector, std::nullopt}, status, false);
}

void StatusBackingStore::put_task(const connect::ConnectorTaskId& id, const StatusValue& status) {
  (void)put_status(task_status_key(id), StatusSubject{std::nullopt, id}, status, false);
}

bool StatusBackingStore::put_task_safe(const connect::ConnectorTaskId& id, const StatusValue& status) {
  return put_status(task_status_key(id), StatusSubject{std::nullopt, id}, status, true);
}

bool StatusBackingStore::put_connector_safe(const std::string& connector, const StatusValue& status) {
  return put_status(connector_status_key(connector), StatusSubject{connector, std::nullopt}, status, true);
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
  send(key, value);
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
  for (const auto& [topic, _] : known) send(topic_status_key(topic, connector), std::nullopt);
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
  std::lock_guard lk(mu_);
  table_.read(key, value, rec);
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
  return table_.connector(connector);
}

std::optional<StatusValue> StatusBackingStore::get_task(const connect::ConnectorTaskId& id) const {
  std::lock_guard lk(mu_);
  return table_.task(id);
}

std::map<int32_t, StatusValue> StatusBackingStore::get_tasks(const std::string& connector) const {
  std::lock_guard lk(mu_);
  return table_.tasks_of(connector);
}

std::map<std::string, StatusValue> StatusBackingStore::all_connectors() const {
  std::lock_guard lk(mu_);
  return table_.connectors();
}

std::map<connect::ConnectorTaskId, StatusValue> StatusBackingStore::all_tasks() const {
  std::lock_guard lk(mu_);
  return table_.tasks();
}

}  // namespace kc::storage
