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
  // As Jackson's default variant reads it: characters up to ' ' are
  // skipped, the alphabet is the standard one, and the last quad must be
  // complete (padded with '=').
  std::string out;
  out.reserve(text.size() * 3 / 4);
  unsigned acc = 0;
  int count = 0;  // sextets in the current quad
  int pad = 0;
  for (char ch : text) {
    if (static_cast<unsigned char>(ch) <= 0x20 && count == 0 && pad == 0) continue;
    if (ch == '=') {
      if (count < 2 || count + pad >= 4) {
        if (bad_char) *bad_char = ch;
        return std::nullopt;
      }
      ++pad;
      if (count + pad == 4) {
        if (count == 2) out.push_back(static_cast<char>((acc >> 4) & 0xff));
        if (count == 3) {
          out.push_back(static_cast<char>((acc >> 10) & 0xff));
          out.push_back(static_cast<char>((acc >> 2) & 0xff));
        }
        acc = 0;
        count = 0;
        pad = -1;  // nothing may follow the padding
      }
      continue;
    }
    int v = sextet(ch);
    if (v < 0 || pad != 0) {
      if (bad_char) *bad_char = ch;
      return std::nullopt;
    }
    acc = (acc << 6) | static_cast<unsigned>(v);
    if (++count == 4) {
      out.push_back(static_cast<char>((acc >> 16) & 0xff));
      out.push_back(static_cast<char>((acc >> 8) & 0xff));
      out.push_back(static_cast<char>(acc & 0xff));
      acc = 0;
      count = 0;
    }
  }
  if (count != 0 || pad > 0) {  // an unpadded or cut-off final quad
    if (bad_char) *bad_char = '=';
    return std::nullopt;
  }
  return out;
}

}  // namespace kc::data
