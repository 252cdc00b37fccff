#include "worker/storage/status_store.h"

#include <spdlog/spdlog.h>

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

void StatusBackingStore::send(const std::string& key, const std::optional<std::string>& value, int attempts_left) {
  auto st = producer_->send(options_.topic, key, value, [this, key, value, attempts_left](std::optional<Error> e) {
    if (!e) return;
    if (attempts_left > 1) {
      spdlog::warn("status topic: write of {} failed ({}), retrying", key, e->to_string());
      send(key, value, attempts_left - 1);
    } else {
      spdlog::error("status topic: write of {} failed: {}", key, e->to_string());
    }
  });
  if (!st) spdlog::error("status topic: could not queue {}: {}", key, st.error().to_string());
}

void StatusBackingStore::put_connector(const std::string& connector, const StatusValue& status) {
  auto key = connector_status_key(connector);
  {
    std::lock_guard lk(mu_);
    if (status.state == StatusState::Destroyed) connectors_.erase(connector);
    else connectors_[connector] = status;
  }
  send(key, status.state == StatusState::Destroyed ? std::nullopt : std::optional(encode_status(status)), 3);
}

void StatusBackingStore::put_task(const connect::ConnectorTaskId& id, const StatusValue& status) {
  auto key = task_status_key(id);
  {
    std::lock_guard lk(mu_);
    if (status.state == StatusState::Destroyed) tasks_.erase(id);
    else tasks_[id] = status;
  }
  send(key, status.state == StatusState::Destroyed ? std::nullopt : std::optional(encode_status(status)), 3);
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
  {
    std::lock_guard lk(mu_);
    auto& known = topics_[status.connector];
    if (known.count(status.topic)) return;
    known[status.topic] = status;
  }
  send(topic_status_key(status.topic, status.connector), encode_topic_status(status), 3);
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
  for (const auto& [topic, _] : known) send(topic_status_key(topic, connector), std::nullopt, 3);
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
                                     const std::optional<std::string>& value) {
  if (!value) {
    std::lock_guard lk(mu_);
    auto it = topics_.find(connector);
    if (it != topics_.end()) {
      it->second.erase(topic);
      if (it->second.empty()) topics_.erase(it);
    }
    return;
  }
  auto d = decode_topic_status(*value);
  if (!d) {
    spdlog::warn("status topic: ignoring bad topic status for {} of {}: {}", topic, connector, d.error().to_string());
    return;
  }
  std::lock_guard lk(mu_);
  topics_[connector][topic] = std::move(d).value();
}

void StatusBackingStore::apply(const std::string& key, const std::optional<std::string>& value) {
  if (auto t = parse_topic_status_key(key)) return apply_topic(t->first, t->second, value);
  auto k = parse_status_key(key);
  if (!k) return;  // unknown keys
  std::optional<StatusValue> v;
  if (value) {
    auto d = decode_status(*value);
    if (!d) {
      spdlog::warn("status topic: ignoring bad value for {}: {}", key, d.error().to_string());
      return;
    }
    v = std::move(d).value();
  }
  std::lock_guard lk(mu_);
  if (k->connector) {
    if (!v) connectors_.erase(*k->connector);
    else if (auto it = connectors_.find(*k->connector); it == connectors_.end() || !stale_stop_report(it->second, *v))
      connectors_[*k->connector] = *v;
  } else if (k->task) {
    if (!v) tasks_.erase(*k->task);
    else if (auto it = tasks_.find(*k->task); it == tasks_.end() || !stale_stop_report(it->second, *v))
      tasks_[*k->task] = *v;
  }
}

Status StatusBackingStore::read_to_end(int timeout_ms) {
  return shared_read_.run(timeout_ms, [this, timeout_ms] {
    return reader_->read_to_end(timeout_ms, [this](const TopicReader::Record& r) {
      if (r.key) apply(*r.key, r.value);
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
