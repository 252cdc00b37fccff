#include "worker/data/base64.h"

namespace kc::data {

namespace {
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int sextet(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}
}  // namespace

void base64_append(std::string& out, std::string_view bytes) {
  size_t i = 0;
  auto at = [&](size_t k) { return static_cast<unsigned>(static_cast<unsigned char>(bytes[k])); };
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned n = (at(i) << 16) | (at(i + 1) << 8) | at(i + 2);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back(kAlphabet[n & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    unsigned n = at(i) << 16;
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out += "==";
  } else if (rest == 2) {
    unsigned n = (at(i) << 16) | (at(i + 1) << 8);
    out.push_back(kAlphabet[(n >> 18) & 63]);
    out.push_back(kAlphabet[(n >> 12) & 63]);
    out.push_back(kAlphabet[(n >> 6) & 63]);
    out.push_back('=');
  }
}

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  base64_append(out, bytes);
  return out;
}

std::optional<std::string> base64_decode(std::string_view text, char* bad_char) {
  // Strip the padding, which may only appear at the end.
  size_t end = text.size();
  size_t pad = 0;
  while (end > 0 && text[end - 1] == '=' && pad < 2) {
    --end;
    ++pad;
  }
  std::string out;
  out.reserve(end * 3 / 4);
  unsigned acc = 0;
  int bits = 0;
  for (size_t i = 0; i < end; ++i) {
    int v = sextet(text[i]);
    if (v < 0) {
      if (bad_char) *bad_char = text[i];
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<unsigned>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  if (end % 4 == 1) {  // one dangling sextet cannot encode a byte
    if (bad_char) *bad_char = '=';
    return std::nullopt;
  }
  if (pad && (end + pad) % 4 != 0) {
    if (bad_char) *bad_char = '=';
    return std::nullopt;
  }
  return out;
}

}  // namespace kc::data
