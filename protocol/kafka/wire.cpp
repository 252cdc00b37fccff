#include "protocol/kafka/wire.h"

#include <utility>

namespace kc::kafka::wire {

// ------------------------------------------------------------------ Writer
void Writer::put_be(uint64_t v, int n) {
  for (int i = n - 1; i >= 0; --i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

void Writer::uvarint(uint32_t v) {
  while (v >= 0x80) {
    out_.push_back(static_cast<uint8_t>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out_.push_back(static_cast<uint8_t>(v));
}

void Writer::patch_i32(size_t at, int32_t v) {
  const auto u = static_cast<uint32_t>(v);
  for (int i = 0; i < 4; ++i) out_[at + static_cast<size_t>(i)] = static_cast<uint8_t>(u >> (8 * (3 - i)));
}

std::optional<std::string> Writer::string(std::string_view s, bool flexible) {
  if (s.size() > kMaxStringLength) {
    return "length " + std::to_string(s.size()) + " exceeds the string maximum " +
           std::to_string(kMaxStringLength);
  }
  if (flexible) {
    uvarint(static_cast<uint32_t>(s.size() + 1));
  } else {
    i16(static_cast<int16_t>(s.size()));
  }
  out_.insert(out_.end(), s.begin(), s.end());
  return std::nullopt;
}

std::optional<std::string> Writer::nullable_string(const std::optional<std::string>& s,
                                                   bool flexible) {
  if (s) return string(*s, flexible);
  if (flexible) {
    uvarint(0);
  } else {
    i16(-1);
  }
  return std::nullopt;
}

std::optional<std::string> Writer::bytes(BytesView b, bool flexible) {
  if (b.size() >= kMaxBytesLength) {
    return "length " + std::to_string(b.size()) + " exceeds the bytes maximum";
  }
  if (flexible) {
    uvarint(static_cast<uint32_t>(b.size() + 1));
  } else {
    i32(static_cast<int32_t>(b.size()));
  }
  raw(b);
  return std::nullopt;
}

std::optional<std::string> Writer::array_count(size_t n, bool flexible) {
  if (n >= kMaxBytesLength) return "count " + std::to_string(n) + " exceeds the array maximum";
  if (flexible) {
    uvarint(static_cast<uint32_t>(n + 1));
  } else {
    i32(static_cast<int32_t>(n));
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ Reader
bool Reader::fail(std::string msg) {
  error_ = std::move(msg);
  return false;
}

bool Reader::need(size_t n) {
  if (n <= remaining()) return true;
  return fail("need " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
              " remaining");
}

uint64_t Reader::get_be(int n) {
  uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | in_[pos_++];
  return v;
}

bool Reader::i8(int8_t& out) {
  if (!need(1)) return false;
  out = static_cast<int8_t>(get_be(1));
  return true;
}
bool Reader::i16(int16_t& out) {
  if (!need(2)) return false;
  out = static_cast<int16_t>(static_cast<uint16_t>(get_be(2)));
  return true;
}
bool Reader::i32(int32_t& out) {
  if (!need(4)) return false;
  out = static_cast<int32_t>(static_cast<uint32_t>(get_be(4)));
  return true;
}
bool Reader::i64(int64_t& out) {
  if (!need(8)) return false;
  out = static_cast<int64_t>(get_be(8));
  return true;
}
bool Reader::boolean(bool& out) {
  if (!need(1)) return false;
  out = in_[pos_++] != 0;
  return true;
}

bool Reader::uvarint(uint32_t& out) {
  uint32_t v = 0;
  for (int i = 0; i < 5; ++i) {
    if (!need(1)) return false;
    const uint8_t b = in_[pos_++];
    if (i == 4 && (b & 0xf0) != 0) return fail("varint does not fit 32 bits");
    v |= static_cast<uint32_t>(b & 0x7f) << (7 * i);
    if ((b & 0x80) == 0) {
      out = v;
      return true;
    }
  }
  return fail("varint does not fit 32 bits");
}

bool Reader::length(bool flexible, bool wide, int64_t& out, bool& is_null) {
  is_null = false;
  if (flexible) {
    uint32_t n = 0;
    if (!uvarint(n)) return false;
    if (n == 0) {
      is_null = true;
      out = -1;
      return true;
    }
    out = static_cast<int64_t>(n) - 1;
    return true;
  }
  int64_t n = 0;
  if (wide) {
    int32_t v = 0;
    if (!i32(v)) return false;
    n = v;
  } else {
    int16_t v = 0;
    if (!i16(v)) return false;
    n = v;
  }
  if (n == -1) {
    is_null = true;
    out = -1;
    return true;
  }
  if (n < 0) return fail("negative length " + std::to_string(n));
  out = n;
  return true;
}

bool Reader::nullable_string(std::optional<std::string>& out, bool flexible, bool nullable) {
  int64_t n = 0;
  bool is_null = false;
  if (!length(flexible, false, n, is_null)) return false;
  if (is_null) {
    if (!nullable) return fail("null for a non-nullable string");
    out.reset();
    return true;
  }
  if (static_cast<uint64_t>(n) > kMaxStringLength) {
    return fail("length " + std::to_string(n) + " exceeds the string maximum " +
                std::to_string(kMaxStringLength));
  }
  if (static_cast<uint64_t>(n) > remaining()) {
    return fail("length " + std::to_string(n) + " exceeds remaining " +
                std::to_string(remaining()) + " bytes");
  }
  const auto len = static_cast<size_t>(n);
  out.emplace(reinterpret_cast<const char*>(in_.data() + pos_), len);
  pos_ += len;
  return true;
}

bool Reader::string(std::string& out, bool flexible) {
  std::optional<std::string> s;
  if (!nullable_string(s, flexible, false)) return false;
  out = std::move(*s);
  return true;
}

bool Reader::bytes(Bytes& out, bool flexible) {
  int64_t n = 0;
  bool is_null = false;
  if (!length(flexible, true, n, is_null)) return false;
  if (is_null) return fail("null for non-nullable bytes");
  if (static_cast<uint64_t>(n) > remaining()) {
    return fail("length " + std::to_string(n) + " exceeds remaining " +
                std::to_string(remaining()) + " bytes");
  }
  const auto len = static_cast<size_t>(n);
  out.assign(in_.begin() + static_cast<std::ptrdiff_t>(pos_),
             in_.begin() + static_cast<std::ptrdiff_t>(pos_ + len));
  pos_ += len;
  return true;
}

bool Reader::array_count(size_t& out, bool flexible) {
  int64_t n = 0;
  bool is_null = false;
  if (!length(flexible, true, n, is_null)) return false;
  if (is_null) return fail("null for a non-nullable array");
  if (static_cast<uint64_t>(n) > remaining()) {
    return fail("count " + std::to_string(n) + " exceeds remaining " +
                std::to_string(remaining()) + " bytes");
  }
  out = static_cast<size_t>(n);
  return true;
}

bool Reader::skip(size_t n) {
  if (n > remaining()) {
    return fail("length " + std::to_string(n) + " exceeds remaining " +
                std::to_string(remaining()) + " bytes");
  }
  pos_ += n;
  return true;
}

bool Reader::skip_tagged_fields() {
  uint32_t count = 0;
  if (!uvarint(count)) return false;
  // Each tagged field takes at least two bytes (tag, size).
  if (count > remaining()) {
    return fail("tagged field count " + std::to_string(count) + " exceeds remaining " +
                std::to_string(remaining()) + " bytes");
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t tag = 0;
    uint32_t size = 0;
    if (!uvarint(tag) || !uvarint(size)) return false;
    if (!skip(size)) return fail("tagged field " + std::to_string(tag) + ": " + error_);
  }
  return true;
}

}  // namespace kc::kafka::wire
