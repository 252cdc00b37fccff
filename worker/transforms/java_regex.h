#pragma once
// java.util.regex-like matching on PCRE2 (whose syntax is much closer to
// Java's than std::regex): Matcher.matches(), Matcher.find() and
// Matcher.replaceFirst() with Java's replacement syntax ($n, ${name}, \x).

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace kc::transforms {

/// A compiled pattern, immutable after compile() and safe to share
/// between threads (each call uses its own match data).
class JavaRegex {
 public:
  /// Pattern.compile. The error reads like Java's PatternSyntaxException
  /// message ("Unclosed group near index 1\n(") so that RegexValidator's
  /// "Invalid regex: ..." text matches Connect's.
  static Result<JavaRegex> compile(std::string_view pattern);
  /// Matcher.matches(): the whole input matches.
  bool matches(std::string_view input) const;
  /// Matcher.replaceFirst(replacement): the first match (find()) replaced
  /// by the expanded replacement; the input unchanged when nothing matches.
  /// Errors as Java: "No group 2" (IndexOutOfBoundsException), "Illegal
  /// group reference", "character to be escaped is missing", "No group
  /// with name {x}".
  Result<std::string> replace_first(std::string_view input, std::string_view replacement) const;
  const std::string& pattern() const { return pattern_; }

 private:
  struct Code;
  std::shared_ptr<Code> code_;
  std::string pattern_;
};

}  // namespace kc::transforms
