#include "worker/storage/offset_store.h"

#include <spdlog/spdlog.h>

#include "worker/storage/records.h"

namespace kc::storage {

OffsetBackingStore::OffsetBackingStore(Options options) : options_(std::move(options)) {}
OffsetBackingStore::~OffsetBackingStore() = default;

Result<std::unique_ptr<OffsetBackingStore>> OffsetBackingStore::open(Options options) {
  TopicSpec spec;
  spec.name = options.topic;
  spec.partitions = options.partitions;
  spec.replication_factor = options.replication_factor;
  std::unique_ptr<OffsetBackingStore> store(new OffsetBackingStore(std::move(options)));
  const auto& o = store->options_;
  auto topic = open_internal_topic(o.client, spec, o.client_id, {{"acks", "all"}}, {}, o.timeout_ms);
  if (!topic) return topic.error();
  store->producer_ = std::move(topic->producer);
  store->reader_ = std::move(topic->reader);
  auto st = store->read_to_end(store->options_.timeout_ms);
  if (!st) return st.error();
  return store;
}

void OffsetBackingStore::apply(const std::string& key, const std::optional<std::string>& value) {
  std::lock_guard lk(mu_);
  if (!value) {
    cache_.erase(key);
    return;
  }
  auto k = decode_offset_key(key);
  if (!k) {
    spdlog::warn("offsets topic: ignoring record with key {}: {}", key, k.error().to_string());
    return;
  }
  auto v = OrderedJson::parse(*value, nullptr, false);
  if (v.is_discarded()) {
    spdlog::warn("offsets topic: ignoring malformed value for key {}", key);
    return;
  }
  if (v.is_null()) {
    cache_.erase(key);
    return;
  }
  cache_[key] = Entry{k->connector, k->partition, std::move(v)};
}

Status OffsetBackingStore::read_to_end(int timeout_ms) {
  return shared_read_.run(timeout_ms, [this, timeout_ms] {
    return reader_->read_to_end(timeout_ms, [this](const TopicReader::Record& r) {
      if (r.key) apply(*r.key, r.value);
    });
  });
}

std::optional<SourceOffset> OffsetBackingStore::get(const std::string& connector,
                                                    const SourcePartition& partition) const {
  auto key = encode_offset_key(connector, partition);
  std::lock_guard lk(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second.offset;
}

std::vector<std::pair<SourcePartition, SourceOffset>> OffsetBackingStore::get_all(const std::string& connector) const {
  std::vector<std::pair<SourcePartition, SourceOffset>> out;
  std::lock_guard lk(mu_);
  for (const auto& [_, e] : cache_)
    if (e.connector == connector) out.emplace_back(e.partition, e.offset);
  return out;
}

void OffsetBackingStore::remember(const std::vector<std::pair<std::string, std::string>>& records) {
  for (const auto& [k, v] : records) apply(k, v);
}

Status OffsetBackingStore::commit(const std::string& connector,
                                  const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                                  int timeout_ms) {
  if (offsets.empty()) return ok_status();
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  recs.reserve(offsets.size());
  for (const auto& [p, o] : offsets) {
    recs.emplace_back(encode_offset_key(connector, p),
                      o ? std::optional<std::string>(to_compact_json(*o)) : std::nullopt);
  }
  auto st = producer_->send_and_wait(options_.topic, recs, timeout_ms);
  if (!st) return st;
  for (const auto& [k, v] : recs) apply(k, v);
  return ok_status();
}

}  // namespace kc::storage
