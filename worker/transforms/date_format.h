#pragma once
// java.text.SimpleDateFormat in the UTC time zone and the en-US locale, as
// Connect's TimestampConverter, TimestampRouter and Cast use it (the JVM
// defaults in the golden vectors). Like Java's default GregorianCalendar it
// switches to the Julian calendar before 1582-10-15, and parsing is lenient
// (2024-02-30 reads as March 1; text after the pattern is ignored).
//
// Pattern letters: G y Y M L d D E u F a H k K h m s S z Z X, and 'quoted'
// text ('' is a quote). w and W (week numbers) follow the US rules (weeks
// start on Sunday, the first week has at least one day).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace kc::transforms {

class SimpleDateFormat {
 public:
  /// new SimpleDateFormat(pattern). Errors as Java's IllegalArgumentException:
  /// "Illegal pattern character 'q'", "Unterminated quote".
  static Result<SimpleDateFormat> compile(std::string_view pattern);
  /// format(new Date(epoch_ms)) in UTC.
  std::string format(int64_t epoch_ms) const;
  /// parse(text) -> epoch ms. Fails (Java's ParseException) when a field
  /// cannot be read; the error message is Java's "Unparseable date: \"...\"".
  Result<int64_t> parse(std::string_view text) const;
  /// toPattern().
  const std::string& pattern() const { return pattern_; }

 private:
  struct Item {
    char letter = 0;  // 0 = literal text
    int count = 0;
    std::string text;
  };
  std::vector<Item> items_;
  std::string pattern_;
};

}  // namespace kc::transforms
