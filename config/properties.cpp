// java.util.Properties.load semantics (see properties.h). Written from the
// documented behaviour of Properties.load(Reader), not from its source.
#include "config/properties.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace kc::config {
namespace {

bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\f'; }

struct LogicalLine {
  std::string text;
  int line = 0;  ///< 1-based number of the first natural line
};

std::vector<std::string> natural_lines(std::string_view text) {
  std::vector<std::string> out;
  std::string cur;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\r' || c == '\n') {
      out.push_back(std::move(cur));
      cur.clear();
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::string_view skip_leading_blanks(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && is_blank(s[i])) ++i;
  return s.substr(i);
}

/// True when `s` ends in an odd number of backslashes (a continuation).
bool continues(std::string_view s) {
  std::size_t n = 0;
  while (n < s.size() && s[s.size() - 1 - n] == '\\') ++n;
  return n % 2 == 1;
}

std::vector<LogicalLine> logical_lines(std::string_view text) {
  const auto lines = natural_lines(text);
  std::vector<LogicalLine> out;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    std::string_view piece = skip_leading_blanks(lines[i]);
    if (piece.empty() || piece[0] == '#' || piece[0] == '!') continue;
    LogicalLine ll{std::string(piece), static_cast<int>(i + 1)};
    while (continues(piece)) {
      ll.text.pop_back();  // the continuation backslash
      if (i + 1 >= lines.size()) break;
      piece = skip_leading_blanks(lines[++i]);
      if (piece.empty()) break;
      ll.text.append(piece);
    }
    out.push_back(std::move(ll));
  }
  return out;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

/// Reads the 4 hex digits after "\u" at s[pos]; throws on malformed input.
uint32_t read_u4(std::string_view s, std::size_t pos, int line) {
  if (pos + 4 > s.size()) {
    throw ConfigError("line " + std::to_string(line) + ": malformed \\uXXXX escape (fewer than 4 hex digits)");
  }
  uint32_t v = 0;
  for (std::size_t k = 0; k < 4; ++k) {
    char c = s[pos + k];
    uint32_t d;
    if (c >= '0' && c <= '9') {
      d = static_cast<uint32_t>(c - '0');
    } else if (c >= 'a' && c <= 'f') {
      d = static_cast<uint32_t>(c - 'a' + 10);
    } else if (c >= 'A' && c <= 'F') {
      d = static_cast<uint32_t>(c - 'A' + 10);
    } else {
      throw ConfigError("line " + std::to_string(line) + ": malformed \\uXXXX escape '\\u" +
                        std::string(s.substr(pos, 4)) + "'");
    }
    v = v * 16 + d;
  }
  return v;
}

std::string unescape(std::string_view s, int line) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c != '\\') {
      out.push_back(c);
      continue;
    }
    if (++i >= s.size()) break;  // a lone trailing backslash is dropped
    c = s[i];
    switch (c) {
      case 't': out.push_back('\t'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 'f': out.push_back('\f'); break;
      case 'u': {
        uint32_t cp = read_u4(s, i + 1, line);
        i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF && i + 6 < s.size() && s[i + 1] == '\\' && s[i + 2] == 'u') {
          uint32_t lo = read_u4(s, i + 3, line);
          if (lo >= 0xDC00 && lo <= 0xDFFF) {
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            i += 6;
          }
        }
        if (cp >= 0xD800 && cp <= 0xDFFF) cp = 0xFFFD;  // lone surrogate
        append_utf8(out, cp);
        break;
      }
      default: out.push_back(c); break;
    }
  }
  return out;
}

}  // namespace

Properties parse_properties(std::string_view text) {
  Properties props;
  for (const auto& ll : logical_lines(text)) {
    std::string_view s = ll.text;
    std::size_t key_end = 0;
    bool escaped = false;
    bool has_sep = false;
    for (; key_end < s.size(); ++key_end) {
      char c = s[key_end];
      if (escaped) {
        escaped = false;
        continue;
      }
      if (c == '\\') {
        escaped = true;
      } else if (c == '=' || c == ':') {
        has_sep = true;
        break;
      } else if (is_blank(c)) {
        break;
      }
    }
    std::size_t v = key_end + (has_sep ? 1 : 0);
    while (v < s.size() && is_blank(s[v])) ++v;
    if (!has_sep && v < s.size() && (s[v] == '=' || s[v] == ':')) {
      ++v;
      while (v < s.size() && is_blank(s[v])) ++v;
    }
    props[unescape(s.substr(0, key_end), ll.line)] = unescape(s.substr(v), ll.line);
  }
  return props;
}

Properties load_properties_file(const std::string& path) {
  // A directory opens as a stream on Linux and reads as empty, which would
  // surface as a "missing required option" far from the cause.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    throw ConfigError(path + ": cannot open the properties file: " +
                      (ec ? ec.message() : std::string("No such file or directory")));
  if (std::filesystem::is_directory(st))
    throw ConfigError(path + ": is a directory, not a properties file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path + ": cannot open the properties file: " + std::strerror(errno));
  std::ostringstream buf;
  buf << in.rdbuf();
  if (in.bad()) throw ConfigError(path + ": cannot read the properties file");
  try {
    return parse_properties(buf.str());
  } catch (const ConfigError& e) {
    throw ConfigError(path + ": " + e.what());
  }
}

}  // namespace kc::config
