#include "worker/transforms/java_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <vector>

namespace kc::transforms {

struct JavaRegex::Code {
  pcre2_code* code = nullptr;
  ~Code() { pcre2_code_free(code); }
};

Result<JavaRegex> JavaRegex::compile(std::string_view pattern) {
  int err = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &offset, nullptr);
  if (!code) {
    // Java words the common failures its own way; fall back to PCRE2's text.
    std::string desc;
    size_t index = offset;
    if (err == PCRE2_ERROR_MISSING_CLOSING_PARENTHESIS) {
      desc = "Unclosed group";
    } else if (err == PCRE2_ERROR_MISSING_SQUARE_BRACKET) {
      desc = "Unclosed character class";
      index = pattern.empty() ? 0 : pattern.size() - 1;
    } else if (err == PCRE2_ERROR_QUANTIFIER_INVALID) {
      desc.assign("Dangling meta character '").append(1, offset > 0 ? pattern[offset - 1] : '?').append("'");
      index = offset > 0 ? offset - 1 : 0;
    } else {
      PCRE2_UCHAR buf[256];
      pcre2_get_error_message(err, buf, sizeof buf);
      desc = reinterpret_cast<const char*>(buf);
    }
    std::string msg = desc + " near index " + std::to_string(index) + "\n" + std::string(pattern);
    // append(), not "\n" + std::string: GCC 12 at -O3 raises a false -Wrestrict on
    // operator+(const char*, std::string&&).
    if (index < pattern.size()) msg.append("\n").append(index, ' ').append("^");
    return Error{"", msg};
  }
  JavaRegex r;
  r.code_ = std::make_shared<Code>();
  r.code_->code = code;
  r.pattern_ = std::string(pattern);
  return r;
}

namespace {
struct MatchData {
  pcre2_match_data* md;
  explicit MatchData(const pcre2_code* c) : md(pcre2_match_data_create_from_pattern(c, nullptr)) {}
  ~MatchData() { pcre2_match_data_free(md); }
  MatchData(const MatchData&) = delete;
  MatchData& operator=(const MatchData&) = delete;
};
}  // namespace

bool JavaRegex::matches(std::string_view input) const {
  if (!code_) return false;
  MatchData m(code_->code);
  int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(input.data()), input.size(), 0,
                       PCRE2_ANCHORED | PCRE2_ENDANCHORED, m.md, nullptr);
  return rc >= 0;
}

Result<std::string> JavaRegex::replace_first(std::string_view input, std::string_view repl) const {
  if (!code_) return std::string(input);
  MatchData m(code_->code);
  int rc = pcre2_match(code_->code, reinterpret_cast<PCRE2_SPTR>(input.data()), input.size(), 0, 0, m.md, nullptr);
  if (rc < 0) return std::string(input);
  const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(m.md);
  uint32_t groups = 0;
  pcre2_pattern_info(code_->code, PCRE2_INFO_CAPTURECOUNT, &groups);
  auto group_text = [&](uint32_t g) -> std::string {
    if (ov[2 * g] == PCRE2_UNSET) return "";
    return std::string(input.substr(ov[2 * g], ov[2 * g + 1] - ov[2 * g]));
  };
  std::string out(input.substr(0, ov[0]));
  // Java's Matcher.appendReplacement rules.
  for (size_t i = 0; i < repl.size();) {
    char c = repl[i];
    if (c == '\\') {
      if (i + 1 >= repl.size()) return Error{"", "character to be escaped is missing"};
      out.push_back(repl[i + 1]);
      i += 2;
    } else if (c == '$') {
      if (i + 1 >= repl.size()) return Error{"", "Illegal group reference: group index is missing"};
      if (repl[i + 1] == '{') {
        size_t close = repl.find('}', i + 2);
        if (close == std::string_view::npos) return Error{"", "named capturing group is missing trailing '}'"};
        std::string name(repl.substr(i + 2, close - i - 2));
        int n = pcre2_substring_number_from_name(code_->code, reinterpret_cast<PCRE2_SPTR>(name.c_str()));
        if (n < 0) return Error{"", "No group with name {" + name + "}"};
        out += group_text(static_cast<uint32_t>(n));
        i = close + 1;
      } else {
        char d = repl[i + 1];
        if (d < '0' || d > '9') return Error{"", "Illegal group reference"};
        uint32_t g = static_cast<uint32_t>(d - '0');
        i += 2;
        // Java takes further digits while the number stays a valid group.
        while (i < repl.size() && repl[i] >= '0' && repl[i] <= '9') {
          uint32_t ng = g * 10 + static_cast<uint32_t>(repl[i] - '0');
          if (ng > groups) break;
          g = ng;
          ++i;
        }
        if (g > groups) return Error{"", "No group " + std::to_string(g)};
        out += group_text(g);
      }
    } else {
      out.push_back(c);
      ++i;
    }
  }
  out += input.substr(ov[1]);
  return out;
}

}  // namespace kc::transforms
