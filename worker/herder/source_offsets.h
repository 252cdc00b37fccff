#pragma once
// Source connector offsets for the offsets API (KIP-875) when a connector
// may have its own offsets topic (`offsets.storage.topic`, KIP-618). Follows
// Connect's ConnectorOffsetBackingStore: the connector's topic is the
// primary store, the worker's topic the secondary one that reads fall back
// to. merge_source_offsets / plan_source_offset_write are pure (no I/O);
// read_source_offsets / modify_source_offsets block on the broker: pool
// threads only.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "worker/api/herder_api.h"
#include "worker/storage/offset_store.h"

namespace kc::herder {

/// (partition, offset) pairs of one connector; a nullopt offset is a
/// tombstone (deletes the partition's offset).
using SourceOffsetBatch = std::vector<std::pair<storage::SourcePartition, std::optional<storage::SourceOffset>>>;

/// The offsets topics behind one source connector. `primary`: the
/// connector's own offsets.storage.topic, or the worker's topic when it has
/// none; never null. `secondary`: the worker's topic when `primary` is the
/// connector's, else null. Not owned.
struct SourceOffsetStores {
  storage::OffsetBackingStore* primary = nullptr;
  storage::OffsetBackingStore* secondary = nullptr;
};

/// The offsets a task of `connector` sees, in the API's shape: every
/// partition of either list, with the primary's offset when it has one and
/// the secondary's otherwise (Connect's ConnectorOffsetBackingStore.get and
/// connectorPartitions). Sorted by the offset-topic key bytes.
std::vector<rest::ConnectorOffset> merge_source_offsets(
    const std::string& connector, const std::vector<std::pair<storage::SourcePartition, storage::SourceOffset>>& primary,
    const std::vector<std::pair<storage::SourcePartition, storage::SourceOffset>>& secondary);

/// Where each part of a write goes, in order (Connect's
/// ConnectorOffsetBackingStore.set): 1. `secondary_first`, the batch's
/// tombstones, to the secondary store (a failure fails the write, so a
/// partition reset in the connector's topic cannot show through from the
/// worker's); 2. `primary`, the whole batch; 3. `secondary_after`, the
/// non-null offsets, to the secondary store, best effort (a failure is only
/// logged). Without a secondary store both secondary parts are empty.
struct SourceOffsetWritePlan {
  SourceOffsetBatch secondary_first;
  SourceOffsetBatch primary;
  SourceOffsetBatch secondary_after;
};

/// Splits `batch` as described at SourceOffsetWritePlan.
SourceOffsetWritePlan plan_source_offset_write(const SourceOffsetBatch& batch, bool has_secondary);

/// GET /connectors/{c}/offsets of a source connector (Connect's
/// Worker.sourceConnectorOffsets): reads both stores to the end, then
/// merge_source_offsets. Blocking, up to `timeout_ms` per store. Errors:
/// 500 "Failed to read the offsets topic <topic>: <reason>".
rest::Reply<std::vector<rest::ConnectorOffset>> read_source_offsets(const std::string& connector,
                                                                   const SourceOffsetStores& stores, int timeout_ms);

/// PATCH (`offsets` set) or DELETE (nullopt) /connectors/{c}/offsets of a
/// STOPPED source connector (Connect's Worker.modifySourceConnectorOffsets):
/// a reset writes a tombstone for every partition known in either store
/// after a read to the end; the writes follow plan_source_offset_write.
/// Returns Connect's success message. Blocking, up to `timeout_ms` per
/// read or write. Errors: 500 "Failed to read the offsets topic <topic>:
/// <reason>" or "Failed to write offsets to <topic>: <reason>".
rest::Reply<std::string> modify_source_offsets(const std::string& connector, const SourceOffsetStores& stores,
                                               const std::optional<std::vector<rest::ConnectorOffset>>& offsets,
                                               int timeout_ms);

}  // namespace kc::herder
