#include "worker/api/url.h"

#include <cctype>
#include <charconv>

namespace kc::rest {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<HttpUrl> parse_http_url(std::string_view url) {
  HttpUrl out;
  auto sep = url.find("://");
  if (url.empty() || sep == std::string_view::npos || sep == 0) {
    return Error{"url", "expected scheme://host:port, got '" + std::string(url) + "'"};
  }
  out.scheme = std::string(url.substr(0, sep));
  for (auto& c : out.scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string_view rest = url.substr(sep + 3);
  auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    out.base_path = std::string(path);
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {  // [v6]:port
    auto close = authority.find(']');
    if (close == std::string_view::npos) return Error{"url", "unterminated IPv6 address in '" + std::string(url) + "'"};
    out.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Error{"url", "junk after IPv6 address in '" + std::string(url) + "'"};
      port_text = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    if (colon != std::string_view::npos) {
      out.host = std::string(authority.substr(0, colon));
      port_text = authority.substr(colon + 1);
    } else {
      out.host = std::string(authority);
    }
  }
  if (port_text.empty()) {
    out.port = out.scheme == "https" ? 443 : 80;
  } else {
    unsigned value = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), value);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || value > 65535) {
      return Error{"url", "bad port '" + std::string(port_text) + "' in '" + std::string(url) + "'"};
    }
    out.port = static_cast<uint16_t>(value);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  return out;
}

std::optional<std::string> percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size()) return std::nullopt;
      int hi = hex_value(s[i + 1]);
      int lo = hex_value(s[i + 2]);
      if (hi < 0 || lo < 0) return std::nullopt;
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string percent_encode_segment(std::string_view s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~') {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 0xF]);
    }
  }
  return out;
}

std::optional<std::vector<std::string>> split_path(std::string_view raw_path) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos <= raw_path.size()) {
    size_t next = raw_path.find('/', pos);
    if (next == std::string_view::npos) next = raw_path.size();
    std::string_view seg = raw_path.substr(pos, next - pos);
    if (!seg.empty()) {
      auto decoded = percent_decode(seg, false);
      if (!decoded) return std::nullopt;
      out.push_back(std::move(*decoded));
    }
    pos = next + 1;
  }
  return out;
}

std::optional<std::vector<std::pair<std::string, std::string>>> parse_query(std::string_view raw_query) {
  std::vector<std::pair<std::string, std::string>> out;
  size_t pos = 0;
  while (pos < raw_query.size()) {
    size_t next = raw_query.find('&', pos);
    if (next == std::string_view::npos) next = raw_query.size();
    std::string_view item = raw_query.substr(pos, next - pos);
    if (!item.empty()) {
      auto eq = item.find('=');
      auto key = percent_decode(item.substr(0, eq), true);
      auto value = eq == std::string_view::npos ? std::optional<std::string>("")
                                                : percent_decode(item.substr(eq + 1), true);
      if (!key || !value) return std::nullopt;
      out.emplace_back(std::move(*key), std::move(*value));
    }
    pos = next + 1;
  }
  return out;
}

std::string strip_query_param(std::string_view raw_query, std::string_view name) {
  std::string out;
  size_t pos = 0;
  while (pos < raw_query.size()) {
    size_t next = raw_query.find('&', pos);
    if (next == std::string_view::npos) next = raw_query.size();
    std::string_view item = raw_query.substr(pos, next - pos);
    std::string_view key = item.substr(0, item.find('='));
    auto decoded = percent_decode(key, true);
    if (!item.empty() && !(decoded && *decoded == name)) {
      if (!out.empty()) out.push_back('&');
      out.append(item);
    }
    pos = next + 1;
  }
  return out;
}

}  // namespace kc::rest
