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

std::optional<std::string> OffsetBackingStore::apply(const std::string& key, const std::optional<std::string>& value) {
  // Decoded outside the lock: parsing is the costly part.
  std::optional<Entry> entry;
  if (value) {
    auto k = decode_offset_key(key);
    if (!k) return k.error().to_string();
    auto v = decode_offset_value(*value);
    if (!v) return v.error().to_string();
    if (!v->is_null()) entry = Entry{std::move(k->connector), std::move(k->partition), std::move(*v)};
  }
  std::lock_guard lk(mu_);
  if (entry) cache_[key] = std::move(*entry);
  else cache_.erase(key);  // a tombstone or a null offset deletes it
  return std::nullopt;
}

Status OffsetBackingStore::read_to_end(int timeout_ms) {
  return shared_read_.run(timeout_ms, [this, timeout_ms] {
    return read_internal_topic(*reader_, options_.topic, timeout_ms, [this](const TopicReader::Record& r) {
      if (!r.key) return log_skipped_record(options_.topic, r, "no key");
      if (auto why = apply(*r.key, r.value)) log_skipped_record(options_.topic, r, *why);
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
  for (const auto& [k, v] : records)
    if (auto why = apply(k, v)) spdlog::warn("offsets topic: not caching offset '{}': {}", printable_key(k), *why);
}

Status OffsetBackingStore::commit(const std::string& connector,
                                  const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                                  int timeout_ms) {
  if (offsets.empty()) return ok_status();
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  recs.reserve(offsets.size());
  // The whole batch is refused when one offset could not be read back, as
  // Connect fails a flush whose offsets do not serialise.
  for (const auto& [p, o] : offsets) {
    auto rec = encode_offset_record(connector, p, o);
    if (!rec) return rec.error();
    recs.emplace_back(std::move(rec->key), std::move(rec->value));
  }
  auto st = producer_->send_and_wait(options_.topic, recs, timeout_ms);
  if (!st) return st;
  for (const auto& [k, v] : recs) (void)apply(k, v);
  return ok_status();
}

}  // namespace kc::storage
