// Connect subprotocol codecs (see codec.h). The reader keeps a sticky error:
// once a field fails, every later read is a no-op and the first error wins,
// so the decoders read like the layout tables in the reference.
#include "protocol/connect/codec.h"

#include <optional>
#include <unordered_map>

namespace kc::connect {
namespace {

/// Which reader semantics to apply (reference 2.6/2.7).
enum class ReaderMode {
  V0,  ///< ConnectProtocol: strict fields, non-nullable arrays, no revoked/delay
  V1,  ///< IncrementalCooperativeConnectProtocol: tolerant trailing fields, nullable arrays
};

/// Big-endian cursor over a byte span with a sticky first error.
class Reader {
 public:
  Reader(std::span<const uint8_t> bytes, std::string root) : bytes_(bytes), root_(std::move(root)) {}

  [[nodiscard]] bool failed() const { return error_.has_value(); }
  [[nodiscard]] std::size_t remaining() const { return bytes_.size() - pos_; }
  /// True when the buffer ends exactly here (a tolerant field takes its default).
  [[nodiscard]] bool at_clean_end() const { return !failed() && remaining() == 0; }
  [[nodiscard]] const Error& error() const { return *error_; }

  void fail(const std::string& field, std::string message) {
    if (!error_) error_ = Error{root_ + "." + field, std::move(message)};
  }

  /// True when at least 4 bytes are left and they are the big-endian `v`
  /// (reads nothing).
  [[nodiscard]] bool next_i32_is(int32_t v) const {
    if (failed() || remaining() < 4) return false;
    uint32_t x = 0;
    for (std::size_t i = 0; i < 4; ++i) x = (x << 8) | bytes_[pos_ + i];
    return static_cast<int32_t>(x) == v;
  }

  int16_t i16(const std::string& field) { return static_cast<int16_t>(fixed(field, 2, "int16")); }
  int32_t i32(const std::string& field) { return static_cast<int32_t>(fixed(field, 4, "int32")); }
  int64_t i64(const std::string& field) { return static_cast<int64_t>(fixed(field, 8, "int64")); }

  /// STRING: int16 byte length (must be >= 0), then the bytes.
  std::string str(const std::string& field) {
    int16_t len = i16(field);
    if (failed()) return {};
    if (len < 0) {
      fail(field, "negative string length " + std::to_string(len));
      return {};
    }
    if (static_cast<std::size_t>(len) > remaining()) {
      fail(field, "truncated string (length " + std::to_string(len) + ", " +
                      std::to_string(remaining()) + " bytes left)");
      return {};
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len);
    return s;
  }

  /// NULLABLE_BYTES: int32 length, negative = null. Returns nullopt for null.
  std::optional<std::span<const uint8_t>> nullable_bytes(const std::string& field) {
    int32_t len = i32(field);
    if (failed() || len < 0) return std::nullopt;
    if (static_cast<std::size_t>(len) > remaining()) {
      fail(field, "truncated bytes (length " + std::to_string(len) + ", " +
                      std::to_string(remaining()) + " bytes left)");
      return std::nullopt;
    }
    auto out = bytes_.subspan(pos_, static_cast<std::size_t>(len));
    pos_ += static_cast<std::size_t>(len);
    return out;
  }

  /// Array count. Negative: nullopt (null) if `nullable`, else an error. The
  /// count is checked against the bytes left, assuming each element needs at
  /// least `min_element_bytes`, before anyone allocates for it.
  std::optional<std::size_t> array_count(const std::string& field, bool nullable,
                                         std::size_t min_element_bytes, const char* what) {
    int32_t n = i32(field);
    if (failed()) return std::nullopt;
    if (n < 0) {
      if (!nullable) fail(field, "negative count " + std::to_string(n) + " for a non-nullable array");
      return std::nullopt;
    }
    auto count = static_cast<std::size_t>(n);
    if (count > remaining() / min_element_bytes) {
      fail(field, std::string("truncated ") + what + " array (count " + std::to_string(n) + " needs at least " +
                      std::to_string(count * min_element_bytes) + " bytes, " + std::to_string(remaining()) +
                      " left)");
      return std::nullopt;
    }
    return count;
  }

 private:
  uint64_t fixed(const std::string& field, std::size_t width, const char* type) {
    if (failed()) return 0;
    if (remaining() < width) {
      fail(field, std::string("truncated ") + type + " (need " + std::to_string(width) + " bytes, " +
                      std::to_string(remaining()) + " left)");
      return 0;
    }
    uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i) v = (v << 8) | bytes_[pos_ + i];
    pos_ += width;
    // Sign-extend from `width` bytes happens through the caller's narrowing cast.
    return v;
  }

  std::span<const uint8_t> bytes_;
  std::size_t pos_ = 0;
  std::string root_;
  std::optional<Error> error_;
};

/// Reads the int16 header and rejects negative versions (reference 2.7).
int16_t read_version(Reader& r) {
  int16_t v = r.i16("version");
  if (!r.failed() && v < 0) r.fail("version", "negative version " + std::to_string(v));
  return v;
}

/// Reads ARRAY(ConnectorAssignment). V1: nullable (null -> empty).
std::vector<WireGroup> read_groups(Reader& r, const std::string& field, bool nullable) {
  std::vector<WireGroup> out;
  // Smallest ConnectorAssignment: empty name (2 bytes) + empty task array (4).
  auto count = r.array_count(field, nullable, 6, "ConnectorAssignment");
  if (!count) return out;
  out.reserve(*count);
  for (std::size_t i = 0; i < *count && !r.failed(); ++i) {
    std::string base = field + "[" + std::to_string(i) + "]";
    WireGroup g;
    g.connector = r.str(base + ".connector");
    auto n = r.array_count(base + ".tasks", false, 4, "int32");
    if (!n) break;
    g.tasks.reserve(*n);
    for (std::size_t k = 0; k < *n; ++k) g.tasks.push_back(r.i32(base + ".tasks"));
    out.push_back(std::move(g));
  }
  return out;
}

/// Reads a field of the tolerant V1 schema that has no default: missing at
/// the clean end of the buffer is still an error, with its own message.
bool require_present(Reader& r, ReaderMode mode, const char* field) {
  if (mode == ReaderMode::V1 && r.at_clean_end()) {
    r.fail(field, "missing (buffer ends here and the field has no default)");
    return false;
  }
  return !r.failed();
}

WireAssignment read_assignment(Reader& r, ReaderMode mode) {
  WireAssignment w;
  w.version = read_version(r);
  if (require_present(r, mode, "error")) w.error = r.i16("error");
  if (require_present(r, mode, "leader")) w.leader = r.str("leader");
  if (require_present(r, mode, "leader_url")) w.leader_url = r.str("leader_url");
  if (require_present(r, mode, "config_offset")) w.config_offset = r.i64("config_offset");
  if (r.failed()) return w;
  if (mode == ReaderMode::V0) {
    w.assignment = read_groups(r, "assignment", false);
    return w;
  }
  // Tolerant tail: each field takes its default when the buffer ends cleanly before it.
  if (r.at_clean_end()) return w;
  w.assignment = read_groups(r, "assignment", true);
  if (r.failed() || r.at_clean_end()) return w;
  w.revoked = read_groups(r, "revoked", true);
  if (r.failed() || r.at_clean_end()) return w;
  w.delay_ms = r.i32("delay");
  return w;
}

/// Expands wire groups with the -1 sentinel rule (no de-duplication).
void flatten(const std::vector<WireGroup>& groups, std::vector<std::string>& connectors,
             std::vector<ConnectorTaskId>& tasks) {
  for (const auto& g : groups) {
    for (int32_t t : g.tasks) {
      if (t == kConnectorTaskSentinel) {
        connectors.push_back(g.connector);
      } else {
        tasks.push_back(ConnectorTaskId{g.connector, t});
      }
    }
  }
}

Assignment to_assignment(const WireAssignment& w) {
  Assignment a;
  a.version = w.version;
  a.error = w.error;
  a.leader = w.leader;
  a.leader_url = w.leader_url;
  a.config_offset = w.config_offset;
  flatten(w.assignment, a.connectors, a.tasks);
  flatten(w.revoked, a.revoked_connectors, a.revoked_tasks);
  a.delay_ms = w.delay_ms;
  return a;
}

Result<WireAssignment> decode_assignment_wire_at(std::span<const uint8_t> bytes, const std::string& root,
                                                 ReaderMode mode) {
  Reader r(bytes, root);
  WireAssignment w = read_assignment(r, mode);
  if (r.failed()) return r.error();
  return w;
}

/// Big-endian writer; the first error (an over-long string) is sticky.
class Writer {
 public:
  explicit Writer(std::string root) : root_(std::move(root)) {}
  void i16(int16_t v) { put(static_cast<uint16_t>(v), 2); }
  void i32(int32_t v) { put(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put(static_cast<uint64_t>(v), 8); }
  void str(const std::string& field, const std::string& s) {
    if (s.size() > kMaxStringBytes) {
      fail(field, "string length " + std::to_string(s.size()) + " exceeds the maximum of " +
                      std::to_string(kMaxStringBytes) + " bytes");
      return;
    }
    i16(static_cast<int16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  void bytes(std::span<const uint8_t> b) {
    i32(static_cast<int32_t>(b.size()));
    out_.insert(out_.end(), b.begin(), b.end());
  }
  void fail(const std::string& field, std::string message) {
    if (!error_) error_ = Error{root_ + "." + field, std::move(message)};
  }
  [[nodiscard]] bool failed() const { return error_.has_value(); }
  [[nodiscard]] const Error& error() const { return *error_; }
  std::vector<uint8_t>& out() { return out_; }

 private:
  void put(uint64_t v, int width) {
    for (int i = width - 1; i >= 0; --i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  std::string root_;
  std::vector<uint8_t> out_;
  std::optional<Error> error_;
};

/// Groups connectors and tasks the way the reference writer does (2.4).
std::vector<WireGroup> group(const std::vector<std::string>& connectors, const std::vector<ConnectorTaskId>& tasks) {
  std::vector<WireGroup> out;
  std::unordered_map<std::string, std::size_t> index;
  for (const auto& c : connectors) {
    if (index.emplace(c, out.size()).second) out.push_back(WireGroup{c, {kConnectorTaskSentinel}});
  }
  for (const auto& t : tasks) {
    auto [it, inserted] = index.emplace(t.connector, out.size());
    if (inserted) out.push_back(WireGroup{t.connector, {}});
    out[it->second].tasks.push_back(t.task);
  }
  return out;
}

void write_groups(Writer& w, const std::string& field, const std::vector<WireGroup>& groups) {
  w.i32(static_cast<int32_t>(groups.size()));
  for (std::size_t i = 0; i < groups.size(); ++i) {
    w.str(field + "[" + std::to_string(i) + "].connector", groups[i].connector);
    w.i32(static_cast<int32_t>(groups[i].tasks.size()));
    for (int32_t t : groups[i].tasks) w.i32(t);
  }
}

/// Writes `a` with header `version`: V0 layout for 0, V1 layout otherwise.
void write_assignment(Writer& w, const Assignment& a, int16_t version) {
  if (version < 0) {
    w.fail("version", "negative version " + std::to_string(version));
    return;
  }
  if (version == 0 && (!a.revoked_connectors.empty() || !a.revoked_tasks.empty() || a.delay_ms != 0)) {
    w.fail("revoked", "the V0 layout cannot carry revoked connectors/tasks or a delay");
    return;
  }
  w.i16(version);
  w.i16(a.error);
  w.str("leader", a.leader);
  w.str("leader_url", a.leader_url);
  w.i64(a.config_offset);
  write_groups(w, "assignment", group(a.connectors, a.tasks));
  if (version == 0) return;
  write_groups(w, "revoked", group(a.revoked_connectors, a.revoked_tasks));
  w.i32(a.delay_ms);
}

nlohmann::json tasks_json(const std::vector<ConnectorTaskId>& tasks) {
  auto arr = nlohmann::json::array();
  for (const auto& t : tasks) arr.push_back(t.to_string());
  return arr;
}

/// The labels trailer (kconnectd, issue 29): magic, count, (key, value) in
/// key order. Only after a V1/V2 allocation.
void write_labels_trailer(Writer& w, const WorkerMetadata& md) {
  if (md.version == 0) {
    w.fail("labels", "the V0 layout cannot carry labels (a V1 reader would take them for the allocation)");
    return;
  }
  if (md.labels.size() > kMaxLabels) {
    w.fail("labels", std::to_string(md.labels.size()) + " labels, more than " + std::to_string(kMaxLabels));
    return;
  }
  w.i32(kLabelsTrailerMagic);
  w.i32(static_cast<int32_t>(md.labels.size()));
  for (const auto& [k, v] : md.labels) {
    if (auto p = label_problem(k, v); !p.empty()) {
      w.fail("labels", p);
      return;
    }
    w.str("labels.key", k);
    w.str("labels.value", v);
  }
}

/// Reads the labels trailer when the magic is next; leaves `labels` empty
/// (and reads nothing) otherwise.
void read_labels_trailer(Reader& r, Labels& labels) {
  if (!r.next_i32_is(kLabelsTrailerMagic)) return;
  (void)r.i32("labels.magic");
  // Smallest label: two 1-byte strings (2 + 1 each).
  auto count = r.array_count("labels", false, 6, "label");
  if (!count) return;
  if (*count > kMaxLabels) {
    r.fail("labels", "count " + std::to_string(*count) + " is above the maximum of " + std::to_string(kMaxLabels));
    return;
  }
  for (std::size_t i = 0; i < *count && !r.failed(); ++i) {
    const std::string base = "labels[" + std::to_string(i) + "]";
    std::string k = r.str(base + ".key");
    std::string v = r.str(base + ".value");
    if (r.failed()) return;
    if (auto p = label_problem(k, v); !p.empty()) {
      r.fail(base, p);
      return;
    }
    if (!labels.emplace(std::move(k), std::move(v)).second) {
      r.fail(base + ".key", "repeated label key");
      return;
    }
  }
}

}  // namespace

Result<std::vector<uint8_t>> encode_assignment(const Assignment& a) {
  Writer w("assignment");
  write_assignment(w, a, a.version);
  if (w.failed()) return w.error();
  return std::move(w.out());
}

Result<std::vector<uint8_t>> encode_metadata(const WorkerMetadata& md) {
  Writer w("metadata");
  if (md.version < 0) {
    w.fail("version", "negative version " + std::to_string(md.version));
    return w.error();
  }
  w.i16(md.version);
  w.str("url", md.url);
  w.i64(md.config_offset);
  if (md.version != 0) {
    if (!md.allocation) {
      w.i32(-1);
    } else {
      Writer inner("metadata.allocation");
      write_assignment(inner, *md.allocation, md.version);
      if (inner.failed()) return inner.error();
      w.bytes(inner.out());
    }
  }
  if (!md.labels.empty()) write_labels_trailer(w, md);
  if (w.failed()) return w.error();
  return std::move(w.out());
}

Result<WireAssignment> decode_assignment_wire(std::span<const uint8_t> bytes) {
  return decode_assignment_wire_at(bytes, "assignment", ReaderMode::V1);
}

Result<Assignment> decode_assignment(std::span<const uint8_t> bytes) {
  auto w = decode_assignment_wire_at(bytes, "assignment", ReaderMode::V1);
  if (!w) return w.error();
  return to_assignment(*w);
}

Result<Assignment> decode_assignment_v0(std::span<const uint8_t> bytes) {
  auto w = decode_assignment_wire_at(bytes, "assignment", ReaderMode::V0);
  if (!w) return w.error();
  return to_assignment(*w);
}

Result<WorkerMetadata> decode_metadata(std::span<const uint8_t> bytes) {
  Reader r(bytes, "metadata");
  WorkerMetadata md;
  md.version = read_version(r);
  md.url = r.str("url");
  md.config_offset = r.i64("config_offset");
  if (r.failed()) return r.error();
  if (r.at_clean_end()) return md;  // tolerant: allocation defaults to null
  auto alloc = r.nullable_bytes("allocation");
  if (r.failed()) return r.error();
  if (alloc) {
    auto w = decode_assignment_wire_at(*alloc, "metadata.allocation", ReaderMode::V1);
    if (!w) return w.error();
    md.allocation = to_assignment(*w);
  }
  read_labels_trailer(r, md.labels);
  if (r.failed()) return r.error();
  return md;
}

Result<WorkerMetadata> decode_metadata_v0(std::span<const uint8_t> bytes) {
  Reader r(bytes, "metadata");
  WorkerMetadata md;
  md.version = read_version(r);
  md.url = r.str("url");
  md.config_offset = r.i64("config_offset");
  if (r.failed()) return r.error();
  return md;
}

nlohmann::json to_json(const Assignment& a) {
  return nlohmann::json{{"version", a.version},
                        {"error", a.error},
                        {"leader", a.leader},
                        {"leader_url", a.leader_url},
                        {"config_offset", a.config_offset},
                        {"connectors", a.connectors},
                        {"tasks", tasks_json(a.tasks)},
                        {"revoked_connectors", a.revoked_connectors},
                        {"revoked_tasks", tasks_json(a.revoked_tasks)},
                        {"delay_ms", a.delay_ms}};
}

nlohmann::json to_json(const WorkerMetadata& md) {
  nlohmann::json j{{"version", md.version},
                        {"url", md.url},
                        {"config_offset", md.config_offset},
                        {"allocation", md.allocation ? to_json(*md.allocation) : nlohmann::json(nullptr)}};
  if (!md.labels.empty()) j["labels"] = md.labels;
  return j;
}

Result<std::vector<uint8_t>> parse_hex(std::string_view hex) {
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) hex.remove_prefix(2);
  std::vector<uint8_t> out;
  int pending = -1;
  for (std::size_t i = 0; i < hex.size(); ++i) {
    char c = hex[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    int v;
    if (c >= '0' && c <= '9') {
      v = c - '0';
    } else if (c >= 'a' && c <= 'f') {
      v = c - 'a' + 10;
    } else if (c >= 'A' && c <= 'F') {
      v = c - 'A' + 10;
    } else {
      return Error{"hex", "invalid hex character '" + std::string(1, c) + "' at position " + std::to_string(i)};
    }
    if (pending < 0) {
      pending = v;
    } else {
      out.push_back(static_cast<uint8_t>(pending * 16 + v));
      pending = -1;
    }
  }
  if (pending >= 0) return Error{"hex", "odd number of hex digits"};
  return out;
}

std::string to_hex(std::span<const uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string s;
  s.reserve(bytes.size() * 2);
  for (uint8_t b : bytes) {
    s.push_back(kDigits[b >> 4]);
    s.push_back(kDigits[b & 0xf]);
  }
  return s;
}

}  // namespace kc::connect
