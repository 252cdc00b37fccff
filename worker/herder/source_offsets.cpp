#include "worker/herder/source_offsets.h"

#include <map>

#include <spdlog/spdlog.h>

#include "worker/storage/records.h"

namespace kc::herder {

std::vector<rest::ConnectorOffset> merge_source_offsets(
    const std::string& connector, const std::vector<std::pair<storage::SourcePartition, storage::SourceOffset>>& primary,
    const std::vector<std::pair<storage::SourcePartition, storage::SourceOffset>>& secondary) {
  // Keyed by the topic key bytes: the same partition in both topics is one entry.
  std::map<std::string, rest::ConnectorOffset> merged;
  for (const auto& [p, o] : secondary) merged[storage::encode_offset_key(connector, p)] = {p, o};
  for (const auto& [p, o] : primary) merged[storage::encode_offset_key(connector, p)] = {p, o};
  std::vector<rest::ConnectorOffset> out;
  out.reserve(merged.size());
  for (auto& [_, e] : merged) out.push_back(std::move(e));
  return out;
}

SourceOffsetWritePlan plan_source_offset_write(const SourceOffsetBatch& batch, bool has_secondary) {
  SourceOffsetWritePlan plan;
  plan.primary = batch;
  if (!has_secondary) return plan;
  for (const auto& e : batch) (e.second ? plan.secondary_after : plan.secondary_first).push_back(e);
  return plan;
}

namespace {

std::optional<rest::RestError> read_all(const SourceOffsetStores& stores, int timeout_ms) {
  for (auto* store : {stores.primary, stores.secondary}) {
    if (!store) continue;
    if (auto st = store->read_to_end(timeout_ms); !st)
      return rest::RestError::internal("Failed to read " + store->description() + ": " +
                                       st.error().to_string());
  }
  return std::nullopt;
}

std::optional<rest::RestError> write(storage::OffsetBackingStore& store, const std::string& connector,
                                     const SourceOffsetBatch& batch, int timeout_ms) {
  if (batch.empty()) return std::nullopt;
  if (auto st = store.commit(connector, batch, timeout_ms); !st)
    return rest::RestError::internal("Failed to write offsets to " + store.topic() + ": " + st.error().to_string());
  return std::nullopt;
}

/// What both stores hold for `connector` as they stand, merged (the primary wins).
std::vector<rest::ConnectorOffset> merged(const std::string& connector, const SourceOffsetStores& stores) {
  return merge_source_offsets(connector, stores.primary->get_all(connector),
                              stores.secondary ? stores.secondary->get_all(connector)
                                               : std::vector<std::pair<storage::SourcePartition, storage::SourceOffset>>{});
}

}  // namespace

rest::Reply<std::vector<rest::ConnectorOffset>> read_source_offsets(const std::string& connector,
                                                                   const SourceOffsetStores& stores, int timeout_ms) {
  if (auto e = read_all(stores, timeout_ms)) return *e;
  return merged(connector, stores);
}

rest::Reply<std::string> modify_source_offsets(const std::string& connector, const SourceOffsetStores& stores,
                                               const std::optional<std::vector<rest::ConnectorOffset>>& offsets,
                                               int timeout_ms) {
  SourceOffsetBatch batch;
  if (offsets) {
    for (const auto& o : *offsets) batch.emplace_back(o.partition, o.offset);
  } else {  // reset: a tombstone for every partition of either topic, after a full read
    if (auto e = read_all(stores, timeout_ms)) return *e;
    for (auto& o : merged(connector, stores)) batch.emplace_back(std::move(o.partition), std::nullopt);
  }
  const auto plan = plan_source_offset_write(batch, stores.secondary != nullptr);
  if (stores.secondary)
    if (auto e = write(*stores.secondary, connector, plan.secondary_first, timeout_ms)) return *e;
  if (auto e = write(*stores.primary, connector, plan.primary, timeout_ms)) return *e;
  if (stores.secondary)
    if (auto e = write(*stores.secondary, connector, plan.secondary_after, timeout_ms))
      spdlog::warn("offsets of connector {} written to {} but not to the worker's topic: {}", connector,
                   stores.primary->topic(), e->message);
  spdlog::info("leader {} {} offset(s) of connector {} in {}{}", offsets ? "altered" : "reset", batch.size(),
               connector, stores.primary->topic(),
               stores.secondary ? " (and " + stores.secondary->topic() + ")" : std::string());
  // Built-in connectors keep no offsets outside the framework, so the short
  // message (Connect's, for a connector that confirmed) applies.
  return std::string(offsets ? "The offsets for this connector have been altered successfully"
                             : "The offsets for this connector have been reset successfully");
}

}  // namespace kc::herder
