#include "worker/storage/offset_store.h"

#include <spdlog/spdlog.h>

#include "worker/storage/records.h"

namespace kc::storage {

Result<std::vector<std::pair<std::string, std::optional<std::string>>>> encode_offset_batch(
    const std::string& connector, const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets) {
  std::vector<std::pair<std::string, std::optional<std::string>>> recs;
  recs.reserve(offsets.size());
  for (const auto& [p, o] : offsets) {
    auto rec = encode_offset_record(connector, p, o);
    if (!rec) return rec.error();
    recs.emplace_back(std::move(rec->key), std::move(rec->value));
  }
  return recs;
}

// ---------------------------------------------------------------- OffsetCache

std::optional<std::string> OffsetCache::apply(const std::string& key, const std::optional<std::string>& value) {
  // Decoded outside the lock: parsing is the costly part.
  std::optional<Entry> entry;
  if (value) {
    auto k = decode_offset_key(key);
    if (!k) return k.error().to_string();
    auto v = decode_offset_value(*value);
    if (!v) return v.error().to_string();
    if (!v->is_null()) entry = Entry{std::move(k->connector), std::move(k->partition), std::move(*v), *value};
  }
  std::lock_guard lk(mu_);
  if (entry) cache_[key] = std::move(*entry);
  else cache_.erase(key);  // a tombstone or a null offset deletes it
  return std::nullopt;
}

std::optional<SourceOffset> OffsetCache::get(const std::string& connector, const SourcePartition& partition) const {
  auto key = encode_offset_key(connector, partition);
  std::lock_guard lk(mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return std::nullopt;
  return it->second.offset;
}

std::vector<std::pair<SourcePartition, SourceOffset>> OffsetCache::get_all(const std::string& connector) const {
  std::vector<std::pair<SourcePartition, SourceOffset>> out;
  std::lock_guard lk(mu_);
  for (const auto& [_, e] : cache_)
    if (e.connector == connector) out.emplace_back(e.partition, e.offset);
  return out;
}

std::vector<std::pair<std::string, std::string>> OffsetCache::records() const {
  std::vector<std::pair<std::string, std::string>> out;
  std::lock_guard lk(mu_);
  out.reserve(cache_.size());
  for (const auto& [k, e] : cache_) out.emplace_back(k, e.value);
  return out;
}

// ---------------------------------------------------------------- the offsets topic

namespace {

/// The offsets topic (Connect's KafkaOffsetBackingStore).
class KafkaOffsetBackingStore final : public OffsetBackingStore {
 public:
  explicit KafkaOffsetBackingStore(Options options) : options_(std::move(options)) {}

  Status open_topic() {
    TopicSpec spec;
    spec.name = options_.topic;
    spec.partitions = options_.partitions;
    spec.replication_factor = options_.replication_factor;
    auto topic = open_internal_topic(options_.client, spec, options_.client_id, {{"acks", "all"}}, {},
                                     options_.timeout_ms);
    if (!topic) return topic.error();
    producer_ = std::move(topic->producer);
    reader_ = std::move(topic->reader);
    return read_to_end(options_.timeout_ms);
  }

  Status read_to_end(int timeout_ms) override {
    return shared_read_.run(timeout_ms, [this, timeout_ms] {
      return read_internal_topic(*reader_, options_.topic, timeout_ms, [this](const TopicReader::Record& r) {
        if (!r.key) return log_skipped_record(options_.topic, r, "no key");
        if (auto why = cache_.apply(*r.key, r.value)) log_skipped_record(options_.topic, r, *why);
      });
    });
  }

  std::optional<SourceOffset> get(const std::string& connector, const SourcePartition& partition) const override {
    return cache_.get(connector, partition);
  }

  std::vector<std::pair<SourcePartition, SourceOffset>> get_all(const std::string& connector) const override {
    return cache_.get_all(connector);
  }

  void remember(const std::vector<std::pair<std::string, std::string>>& records) override {
    for (const auto& [k, v] : records)
      if (auto why = cache_.apply(k, v))
        spdlog::warn("offsets topic: not caching offset '{}': {}", printable_key(k), *why);
  }

  Status commit(const std::string& connector,
                const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                int timeout_ms) override {
    if (offsets.empty()) return ok_status();
    auto recs = encode_offset_batch(connector, offsets);
    if (!recs) return recs.error();
    auto st = producer_->send_and_wait(options_.topic, *recs, timeout_ms);
    if (!st) return st;
    for (const auto& [k, v] : *recs) (void)cache_.apply(k, v);
    return ok_status();
  }

  const std::string& topic() const override { return options_.topic; }
  std::string description() const override { return "the offsets topic " + options_.topic; }

 private:
  Options options_;
  std::unique_ptr<Producer> producer_;
  SharedReadToEnd shared_read_;  ///< concurrent read_to_end calls share one read
  std::unique_ptr<TopicReader> reader_;
  OffsetCache cache_;
};

}  // namespace

Result<std::unique_ptr<OffsetBackingStore>> OffsetBackingStore::open(Options options) {
  auto store = std::make_unique<KafkaOffsetBackingStore>(std::move(options));
  if (auto st = store->open_topic(); !st) return st.error();
  return std::unique_ptr<OffsetBackingStore>(std::move(store));
}

}  // namespace kc::storage
