#include "worker/storage/status_table.h"

#include <algorithm>
#include <climits>

namespace kc::storage {

bool stale_stop_report(const StatusValue& current, const StatusValue& next) {
  if (next.state != StatusState::Unassigned || current.worker_id == next.worker_id) return false;
  if (current.state == StatusState::Running && current.generation >= next.generation) return true;
  return current.generation > next.generation;
}

bool safe_to_write(const std::optional<StatusValue>& shown, const StatusValue& next) {
  return !shown || shown->worker_id == next.worker_id || shown->generation <= next.generation;
}

namespace {
/// Folds `next` (nullopt: tombstone) into `folded[id]`.
template <typename Id>
void fold(std::map<Id, StatusValue>& folded, const Id& id, const std::optional<StatusValue>& next) {
  if (!next) {
    folded.erase(id);
    return;
  }
  auto it = folded.find(id);
  if (it == folded.end()) folded.emplace(id, *next);
  else if (!stale_stop_report(it->second, *next)) it->second = *next;
}

/// Sets `shown[id]` to `value` (nullopt: no status).
template <typename Id>
void set_shown(std::map<Id, StatusValue>& shown, const Id& id, const std::optional<StatusValue>& value) {
  if (value) shown[id] = *value;
  else shown.erase(id);
}

template <typename Id>
std::optional<StatusValue> find(const std::map<Id, StatusValue>& m, const Id& id) {
  auto it = m.find(id);
  if (it == m.end()) return std::nullopt;
  return it->second;
}
}  // namespace

void StatusTable::read(const std::string& key, const std::optional<std::string>& raw, const StatusRecord& rec) {
  if (!rec.connector && !rec.task) return;
  const StatusSubject subject{rec.connector, rec.task};
  if (rec.connector) fold(folded_connectors_, *rec.connector, rec.status);
  else fold(folded_tasks_, *rec.task, rec.status);
  if (auto it = own_.find(key); it != own_.end()) {
    auto& unread = it->second.unread;
    auto own = std::find_if(unread.begin(), unread.end(), [&](const Pending& p) { return p.raw == raw; });
    // One of our writes read back: the ones sent before it are in the topic
    // before it or lost; either way they are no longer ahead of the reader.
    if (own != unread.end()) unread.erase(unread.begin(), own + 1);
    if (unread.empty()) own_.erase(it);
  }
  show(key, subject);
}

void StatusTable::wrote(const std::string& key, const StatusSubject& subject, const std::optional<std::string>& raw,
                        const std::optional<StatusValue>& status) {
  auto& w = own_[key];
  w.subject = subject;
  w.unread.push_back(Pending{raw, status});
  show(key, subject);
}

void StatusTable::write_failed(const std::string& key, const std::optional<std::string>& raw) {
  auto it = own_.find(key);
  if (it == own_.end()) return;
  const StatusSubject subject = it->second.subject;
  auto& unread = it->second.unread;
  auto own = std::find_if(unread.begin(), unread.end(), [&](const Pending& p) { return p.raw == raw; });
  if (own != unread.end()) unread.erase(own);
  if (unread.empty()) own_.erase(it);
  show(key, subject);
}

void StatusTable::show(const std::string& key, const StatusSubject& subject) {
  auto it = own_.find(key);
  const Pending* newest = it == own_.end() ? nullptr : &it->second.unread.back();
  if (subject.connector) {
    set_shown(connectors_, *subject.connector,
              newest ? newest->status : find(folded_connectors_, *subject.connector));
  } else if (subject.task) {
    set_shown(tasks_, *subject.task, newest ? newest->status : find(folded_tasks_, *subject.task));
  }
}

std::optional<StatusValue> StatusTable::connector(const std::string& connector) const {
  return find(connectors_, connector);
}

std::optional<StatusValue> StatusTable::task(const connect::ConnectorTaskId& id) const { return find(tasks_, id); }

std::map<int32_t, StatusValue> StatusTable::tasks_of(const std::string& connector) const {
  std::map<int32_t, StatusValue> out;
  for (auto it = tasks_.lower_bound({connector, INT32_MIN}); it != tasks_.end() && it->first.connector == connector;
       ++it)
    out[it->first.task] = it->second;
  return out;
}

size_t StatusTable::pending(const std::string& key) const {
  auto it = own_.find(key);
  return it == own_.end() ? 0 : it->second.unread.size();
}

}  // namespace kc::storage
