// FileOffsetBackingStore: the offset file's format, parser and atomic writer.
#include "worker/storage/file_offset_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/json_bounds.h"
#include "worker/storage/records.h"

namespace kc::storage {

namespace {

constexpr const char* kMagic = "kconnectd-offsets";
constexpr int kVersion = 1;
constexpr const char* kField = "offset.storage.file.filename";

std::string errno_text(int e) { return std::strerror(e); }

/// The directory holding `path` ("." for a bare file name).
std::string directory_of(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

/// Writes all of `data` to `fd`. Returns errno on failure, 0 on success.
int write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return 0;
}

/// fsync of a directory, so a rename in it survives a power loss.
int fsync_dir(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return errno;
  const int rc = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return rc;
}

}  // namespace

uint32_t crc32_ieee(std::string_view data) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char ch : data) crc = table[(crc ^ ch) & 0xFFu] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

std::string format_offset_file(const std::vector<OffsetFileEntry>& entries) {
  nlohmann::json arr = nlohmann::json::array();
  for (const auto& [k, v] : entries) arr.push_back({{"key", k}, {"value", v}});
  const std::string doc = nlohmann::json{{"offsets", std::move(arr)}}.dump();
  char crc[16];
  std::snprintf(crc, sizeof crc, "%08x", crc32_ieee(doc));
  return std::string(kMagic) + " " + std::to_string(kVersion) + " " + std::to_string(doc.size()) + " " + crc + "\n" +
         doc;
}

Result<std::vector<OffsetFileEntry>> parse_offset_file(std::string_view text) {
  auto fail = [](std::string why) { return Error{"", std::move(why)}; };
  std::vector<OffsetFileEntry> out;
  if (text.empty()) return out;
  if (text.size() > kMaxOffsetFileBytes)
    return fail("is larger than " + std::to_string(kMaxOffsetFileBytes) + " bytes");
  const auto nl = text.find('\n');
  // The header is short; anything else is not ours (or lost its first line).
  if (nl == std::string_view::npos || nl > 128) return fail("is not a kconnectd offset file (bad header)");
  const std::string header(text.substr(0, nl));
  char magic[32] = {0};
  int version = 0;
  unsigned long long bytes = 0;
  char crc_text[16] = {0};
  int consumed = 0;
  if (std::sscanf(header.c_str(), "%31s %d %llu %15s%n", magic, &version, &bytes, crc_text, &consumed) != 4 ||
      static_cast<size_t>(consumed) != header.size() || std::string_view(magic) != kMagic ||
      std::strlen(crc_text) != 8)
    return fail("is not a kconnectd offset file (bad header)");
  if (version != kVersion) return fail("has an unsupported version " + std::to_string(version));
  const std::string_view doc = text.substr(nl + 1);
  if (doc.size() < bytes)
    return fail("is truncated: the header announces " + std::to_string(bytes) + " bytes, " +
                std::to_string(doc.size()) + " follow");
  if (doc.size() > bytes)
    return fail("is corrupt: " + std::to_string(doc.size() - bytes) + " bytes follow the announced " +
                std::to_string(bytes));
  char want[16];
  std::snprintf(want, sizeof want, "%08x", crc32_ieee(doc));
  if (std::string_view(want) != crc_text) return fail("is corrupt: checksum mismatch");
  auto parsed = parse_json_bounded<nlohmann::json>(doc);
  if (!parsed) return fail("is corrupt: " + parsed.error->message);
  const auto& root = parsed.value;
  if (!root.is_object() || !root.contains("offsets") || !root["offsets"].is_array())
    return fail("is corrupt: no \"offsets\" array");
  size_t i = 0;
  for (const auto& e : root["offsets"]) {
    const std::string where = "is corrupt: entry " + std::to_string(i++) + ": ";
    if (!e.is_object() || !e.contains("key") || !e["key"].is_string() || !e.contains("value") ||
        !e["value"].is_string())
      return fail(where + "not an object with string \"key\" and \"value\"");
    auto key = e["key"].get<std::string>();
    auto value = e["value"].get<std::string>();
    if (key.size() > kMaxOffsetKeyBytes) return fail(where + "key longer than " + std::to_string(kMaxOffsetKeyBytes));
    if (value.size() > kMaxOffsetValueBytes)
      return fail(where + "value longer than " + std::to_string(kMaxOffsetValueBytes));
    if (auto k = decode_offset_key(key); !k) return fail(where + "key: " + k.error().message);
    if (auto v = decode_offset_value(value); !v) return fail(where + "value: " + v.error().message);
    out.emplace_back(std::move(key), std::move(value));
  }
  return out;
}

Result<std::unique_ptr<FileOffsetBackingStore>> FileOffsetBackingStore::open(std::string path) {
  if (path.empty()) return Error{kField, "is empty: standalone mode keeps source offsets in this file"};
  std::unique_ptr<FileOffsetBackingStore> store(new FileOffsetBackingStore(path));
  const std::string dir = directory_of(path);
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return Error{kField, "the offset file directory " + dir + " does not exist"};
  // The directory must take new files: every flush renames one into it.
  const std::string probe = path + ".tmp";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Error{kField, "cannot write the offset file directory " + dir + ": " + errno_text(errno)};
  ::close(fd);
  ::unlink(probe.c_str());

  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    spdlog::info("offset file {} does not exist yet; source connectors start without offsets", path);
    return store;
  }
  if (std::filesystem::is_directory(path, ec)) return Error{kField, "the offset file " + path + " is a directory"};
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Error{kField, "cannot read the offset file " + path + ": " + errno_text(errno)};
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(in);
      return Error{kField, "cannot read the offset file " + path + ": " + errno_text(e)};
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxOffsetFileBytes) break;  // parse_offset_file names the bound
  }
  ::close(in);
  auto entries = parse_offset_file(text);
  if (!entries) {
    std::string msg = "the offset file " + path + " " + entries.error().message + "; it was left as it is";
    if (std::filesystem::exists(path + ".bak", ec))
      msg += ", and the previous copy is " + path + ".bak (move it to " + path + " to resume from it)";
    return Error{kField, msg};
  }
  for (const auto& [k, v] : *entries) (void)store->cache_.apply(k, v);  // checked by the parser
  spdlog::info("offset file {}: {} source offset(s) read", path, entries->size());
  return store;
}

Status FileOffsetBackingStore::read_to_end(int /*timeout_ms*/) { return ok_status(); }

std::optional<SourceOffset> FileOffsetBackingStore::get(const std::string& connector,
                                                        const SourcePartition& partition) const {
  return cache_.get(connector, partition);
}

std::vector<std::pair<SourcePartition, SourceOffset>> FileOffsetBackingStore::get_all(
    const std::string& connector) const {
  return cache_.get_all(connector);
}

void FileOffsetBackingStore::remember(const std::vector<std::pair<std::string, std::string>>& records) {
  for (const auto& [k, v] : records)
    if (auto why = cache_.apply(k, v)) spdlog::warn("offset file: not caching offset: {}", *why);
}

uint64_t FileOffsetBackingStore::writes() const {
  std::lock_guard lk(write_mu_);
  return writes_;
}

Status FileOffsetBackingStore::commit(const std::string& connector,
                                      const std::vector<std::pair<SourcePartition, std::optional<SourceOffset>>>& offsets,
                                      int /*timeout_ms*/) {
  if (offsets.empty()) return ok_status();
  auto encoded = encode_offset_batch(connector, offsets);
  if (!encoded) return encoded.error();
  const auto& recs = *encoded;
  std::lock_guard lk(write_mu_);
  std::map<std::string, std::string> next;
  for (auto& [k, v] : cache_.records()) next.emplace(std::move(k), std::move(v));
  for (const auto& [k, v] : recs) {
    if (v && *v != "null") next[k] = *v;
    else next.erase(k);
  }
  std::vector<OffsetFileEntry> entries(next.begin(), next.end());
  if (auto st = write_file(entries); !st) return st;
  ++writes_;
  for (const auto& [k, v] : recs) (void)cache_.apply(k, v);
  return ok_status();
}

Status FileOffsetBackingStore::write_file(const std::vector<OffsetFileEntry>& entries) {
  const std::string text = format_offset_file(entries);
  if (text.size() > kMaxOffsetFileBytes)
    return Error{kField, "cannot write the offset file " + path_ + ": it would be larger than " +
                             std::to_string(kMaxOffsetFileBytes) + " bytes"};
  auto fail = [&](const std::string& what, int e) {
    return Error{kField, "cannot write the offset file " + path_ + " (" + what + "): " + errno_text(e)};
  };
  const std::string tmp = path_ + ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return fail("create " + tmp, errno);
  if (int e = write_all(fd, text); e != 0) {
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail("write " + tmp, e);
  }
  if (::fsync(fd) != 0) {
    const int e = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail("fsync " + tmp, e);
  }
  ::close(fd);
  // The current file becomes <file>.bak (a hard link: <file> itself never
  // disappears), then the new copy replaces it.
  const std::string bak = path_ + ".bak";
  const std::string bak_tmp = bak + ".tmp";
  ::unlink(bak_tmp.c_str());
  if (::link(path_.c_str(), bak_tmp.c_str()) == 0) {
    if (::rename(bak_tmp.c_str(), bak.c_str()) != 0) ::unlink(bak_tmp.c_str());
  }
  if (::rename(tmp.c_str(), path_.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return fail("rename " + tmp, e);
  }
  if (int e = fsync_dir(directory_of(path_)); e != 0) return fail("fsync its directory", e);
  return ok_status();
}

}  // namespace kc::storage
