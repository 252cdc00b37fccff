#pragma once
// Kafka wire primitives: big-endian integers, classic strings/bytes/arrays
// (int16/int32 lengths) and the flexible forms (unsigned varints, compact
// strings/bytes/arrays whose length is sent as N+1 with 0 = null, tagged-field
// sections). See connect-reference.md 9.8 for the encodings.
//
// Writer appends to a byte vector and never fails except on values the
// encoding cannot express (too-long strings). Reader works over a span and
// never reads outside it: every read checks the remaining length first and
// fails with a message instead. Neither type knows any message; the schema
// tables in schemas.cpp drive them.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "protocol/kafka/messages.h"

namespace kc::kafka::wire {

/// Largest string Kafka writes (int16 length, also enforced for compact strings).
inline constexpr size_t kMaxStringLength = 32767;
/// Largest bytes/array length (int32 length).
inline constexpr size_t kMaxBytesLength = 0x7fffffff;

/// Appends primitives to `out`. Methods that can fail return an error message
/// (std::nullopt on success); the output is then partially written and must
/// be discarded by the caller.
class Writer {
 public:
  explicit Writer(Bytes& out) : out_(out) {}

  void i8(int8_t v) { out_.push_back(static_cast<uint8_t>(v)); }
  void i16(int16_t v) { put_be(static_cast<uint16_t>(v), 2); }
  void i32(int32_t v) { put_be(static_cast<uint32_t>(v), 4); }
  void i64(int64_t v) { put_be(static_cast<uint64_t>(v), 8); }
  void boolean(bool v) { out_.push_back(v ? 1 : 0); }
  /// Unsigned LEB128-style varint (7 bits per byte, low bits first), 1-5 bytes.
  void uvarint(uint32_t v);
  /// Raw bytes without a length.
  void raw(BytesView b) { out_.insert(out_.end(), b.begin(), b.end()); }

  /// Non-null string: int16 length (classic) or uvarint length+1 (flexible).
  /// Fails when longer than kMaxStringLength.
  std::optional<std::string> string(std::string_view s, bool flexible);
  /// Nullable string: null is int16 -1 (classic) or uvarint 0 (flexible).
  std::optional<std::string> nullable_string(const std::optional<std::string>& s, bool flexible);
  /// Non-null bytes: int32 length (classic) or uvarint length+1 (flexible).
  std::optional<std::string> bytes(BytesView b, bool flexible);
  /// Non-null array count: int32 (classic) or uvarint count+1 (flexible).
  std::optional<std::string> array_count(size_t n, bool flexible);
  /// An empty tagged-field section (uvarint 0): we never write tagged fields.
  void empty_tagged_fields() { uvarint(0); }

  [[nodiscard]] size_t size() const { return out_.size(); }
  /// Overwrites 4 bytes at `at` with `v` big-endian (for size prefixes).
  void patch_i32(size_t at, int32_t v);

 private:
  void put_be(uint64_t v, int n);
  Bytes& out_;
};

/// Reads primitives from a span. Every method returns false on failure and
/// leaves a message in error(); the position is then unspecified. No method
/// reads or allocates beyond what the remaining input can hold.
class Reader {
 public:
  explicit Reader(BytesView in) : in_(in) {}

  bool i8(int8_t& out);
  bool i16(int16_t& out);
  bool i32(int32_t& out);
  bool i64(int64_t& out);
  /// Any non-zero byte reads as true (as Kafka does).
  bool boolean(bool& out);
  /// At most 5 bytes; a value that does not fit 32 bits is an error.
  bool uvarint(uint32_t& out);

  /// Non-null string; null, negative or oversized lengths are errors.
  bool string(std::string& out, bool flexible);
  /// Nullable string; a null is accepted only when `nullable` is true.
  bool nullable_string(std::optional<std::string>& out, bool flexible, bool nullable);
  /// Non-null bytes.
  bool bytes(Bytes& out, bool flexible);
  /// Non-null array count. Fails when the count exceeds the remaining bytes
  /// (every element of our arrays takes at least one byte), so a caller may
  /// allocate up to `out` elements safely.
  bool array_count(size_t& out, bool flexible);
  /// Reads a tagged-field section and skips every field in it (unknown tags
  /// are allowed; we define no tagged fields of our own).
  bool skip_tagged_fields();
  /// Skips n bytes.
  bool skip(size_t n);

  [[nodiscard]] size_t remaining() const { return in_.size() - pos_; }
  [[nodiscard]] size_t position() const { return pos_; }
  [[nodiscard]] const std::string& error() const { return error_; }

 private:
  bool need(size_t n);
  bool fail(std::string msg);
  /// Reads a classic (int16/int32) or compact length. Sets `is_null` for the
  /// null marker; other negative lengths fail.
  bool length(bool flexible, bool wide, int64_t& out, bool& is_null);
  uint64_t get_be(int n);

  BytesView in_;
  size_t pos_ = 0;
  std::string error_;
};

}  // namespace kc::kafka::wire
