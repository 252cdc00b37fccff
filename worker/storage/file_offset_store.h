#pragma once
// FileOffsetBackingStore: source offsets in a local file
// (`offset.storage.file.filename`), the store of standalone mode (Connect's
// FileOffsetBackingStore). The Worker's source tasks read and commit through
// the OffsetBackingStore interface exactly as they do with the offsets
// topic; only where the bytes go differs.
//
// File format (ours; Connect's file is a Java-serialised HashMap that no
// other tool reads). One header line, then a JSON document:
//
//   kconnectd-offsets 1 <bytes> <crc32>\n
//   {"offsets":[{"key":"[\"c\",{\"filename\":\"/in\"}]","value":"{\"position\":42}"}, ...]}
//
// `<bytes>` is the decimal length of the JSON document, `<crc32>` its CRC-32
// (IEEE, 8 lower-case hex digits). Each entry's key and value are the exact
// bytes the offsets topic would hold (records.h: encode_offset_record), so
// a record moves between the two stores unchanged. A short document is
// "truncated", a checksum mismatch "corrupt".
//
// Durability: every commit() rewrites the whole file: `<file>.tmp` written
// and fsync'ed, the current file hard-linked to `<file>.bak` (the previous
// good copy), `<file>.tmp` renamed over `<file>`, the directory fsync'ed.
// A crash at any point leaves `<file>` either the old or the new copy; a
// file damaged afterwards (disk, an operator) is refused at startup with
// its path, and `<file>.bak` still holds the copy before it. The runtime
// commits each source task's acknowledged offsets every
// offset.flush.interval.ms and at its stop, so a crash loses at most what
// was produced since the last flush (it is produced again: at least once).
//
// Bounds (outside bytes): the file at most kMaxOffsetFileBytes, each key
// kMaxOffsetKeyBytes and value kMaxOffsetValueBytes (records.h), JSON
// depth kc::kMaxJsonDepth. Thread-safe; commit() blocks on the disk
// (task threads, pool threads), get() never does.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"
#include "worker/storage/offset_store.h"

namespace kc::storage {

/// Largest offset file read or written: 64 MiB.
inline constexpr std::size_t kMaxOffsetFileBytes = 64 * 1024 * 1024;

/// CRC-32 (IEEE 802.3, the zlib one) of `data`.
uint32_t crc32_ieee(std::string_view data);

/// One stored offset: the offsets-topic key and value bytes.
using OffsetFileEntry = std::pair<std::string, std::string>;

/// The file's text for `entries` (header line + JSON document), see the
/// file comment. Pure.
std::string format_offset_file(const std::vector<OffsetFileEntry>& entries);

/// Parses an offset file's text. Pure; never throws. Errors (message only,
/// the caller names the file): "is larger than 67108864 bytes", "is not a
/// kconnectd offset file (bad header)", "has an unsupported version N",
/// "is truncated: the header announces N bytes, M follow", "is corrupt:
/// checksum mismatch", "is corrupt: <JSON error>", "is corrupt: entry N:
/// <why>" (a key or value that the offsets topic would refuse). An empty
/// text is an empty store.
Result<std::vector<OffsetFileEntry>> parse_offset_file(std::string_view text);

/// The offset file store. Open with open(); see the file comment.
class FileOffsetBackingStore final : public OffsetBackingStore {
 public:
  /// Reads `path` when it exists and checks that its directory takes new
  /// files (writes and removes `<path>.tmp`). Blocking. Errors (field
  /// "offset.storage.file.filename", message naming the path): the file
  /// cannot be read, or parse_offset_file refused it ("offset file
  /// /var/lib/x.offsets is truncated: ...; it was left as it is, and the
  /// previous copy is /var/lib/x.offsets.bak"), or the directory is missing
  /// or read-only ("cannot write the offset file directory /var/lib: Read-only
  /// file system").
  static Result<std::unique_ptr<FileOffsetBackingStore>> open(std::string path);

  Status read_to_end(int timeout_ms) override;
  std::optional<SourceOffset> get(const std::string& connector, const SourcePartition& partition) const override;
  std::vector<std::pair<SourcePartition, SourceOffset>> get_all(const std::string& connector) const override;
  /// Applies the batch to a copy of the stored offsets and writes the file
  /// (see "Durability"); the cache changes only once the rename succeeded.
  /// Errors: encode_offset_record's, or the write's ("cannot write offset
  /// file <path>: <errno text>"). `timeout_ms` is not enforced (a local
  /// disk write).
  Status commit(const std::string& connector,
                const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                int timeout_ms) override;
  /// Caches them and writes the file at the next commit.
  void remember(const std::vector<std::pair<std::string, std::string>>& records) override;
  /// The file's path.
  const std::string& topic() const override { return path_; }
  /// "the offset file <path>".
  std::string description() const override { return "the offset file " + path_; }

  /// Number of completed file writes since open() (tests, metrics).
  uint64_t writes() const;

 private:
  explicit FileOffsetBackingStore(std::string path) : path_(std::move(path)) {}
  /// Writes `entries` atomically to path_ (see the file comment).
  Status write_file(const std::vector<OffsetFileEntry>& entries);

  std::string path_;
  OffsetCache cache_;
  mutable std::mutex write_mu_;  ///< one commit at a time: read-modify-write of the whole file
  uint64_t writes_ = 0;          ///< guarded by write_mu_
};

}  // namespace kc::storage
