#include "worker/herder/connector_config_cache.h"

namespace kc::herder {

ConnectorConfigCache::ConnectorConfigCache(Reader read) : read_(std::move(read)) {}

ConnectorConfigCache::Parsed ConnectorConfigCache::get(const std::string& name, const ConfigMap& raw) {
  std::unique_lock lk(mu_);
  if (auto it = entries_.find(name); it != entries_.end() && it->second->raw == raw) {
    auto parsed = it->second->parsed;
    lk.unlock();
    return parsed.get();  // ready, or being read by another caller: wait for it
  }
  std::promise<Parsed> promise;
  auto mine = std::make_shared<Entry>(Entry{raw, promise.get_future().share()});
  entries_.insert_or_assign(name, mine);
  ++reads_;
  lk.unlock();
  // Outside the lock: providers read files. A reader that throws is a
  // failed read, so that no waiter is left with a broken promise.
  Parsed parsed = Error{"config", "connector " + name + ": config not read"};
  try {
    parsed = read_(name, raw);
  } catch (const std::exception& e) {
    parsed = Error{"config", "connector " + name + ": reading its config failed: " + e.what()};
  }
  promise.set_value(parsed);
  if (!parsed) {
    // Not kept: the next use reads again (unless a newer entry replaced it).
    lk.lock();
    if (auto it = entries_.find(name); it != entries_.end() && it->second == mine) entries_.erase(it);
  }
  return parsed;
}

void ConnectorConfigCache::drop(const std::string& name) {
  std::lock_guard lk(mu_);
  entries_.erase(name);
}

size_t ConnectorConfigCache::size() const {
  std::lock_guard lk(mu_);
  return entries_.size();
}

int64_t ConnectorConfigCache::reads() const {
  std::lock_guard lk(mu_);
  return reads_;
}

}  // namespace kc::herder
