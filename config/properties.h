#pragma once
// A reader for Java `.properties` text with the semantics of
// java.util.Properties.load: the format Kafka Connect reads worker.properties
// in. Pure functions; callable from any thread.

#include <map>
#include <stdexcept>
#include <string>
#include <string_view>

namespace kc::config {

/// Key -> value, as loaded. A key given twice keeps its last value (as Java does).
using Properties = std::map<std::string, std::string>;

/// A configuration problem found at startup (bad syntax, bad value, missing
/// required option). what() is a complete sentence for the operator and names
/// the line or the key. Configuration errors are exceptions by design: they
/// happen only at the edge (startup, `kconnectd validate`).
class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Parses properties text like java.util.Properties.load:
/// - lines end at \n, \r or \r\n; leading whitespace (space, tab, form feed)
///   is skipped; blank lines and lines whose first non-blank character is
///   `#` or `!` are comments (a comment never continues);
/// - a line ending in an odd number of backslashes continues on the next
///   line, whose leading whitespace is skipped; an empty next line ends it;
/// - the key ends at the first unescaped `=`, `:` or whitespace; then
///   whitespace, at most one `=`/`:`, and whitespace again are skipped; the
///   rest of the logical line is the value (trailing whitespace is kept);
/// - escapes in keys and values: \t \n \r \f, \uXXXX (written out as UTF-8;
///   surrogate pairs combined), and backslash + any other character is that
///   character.
/// Bytes outside ASCII pass through unchanged (treated as UTF-8; Java would
/// read them as ISO-8859-1).
/// Throws ConfigError("line N: malformed \\uXXXX escape ...") where N is the
/// 1-based line of the logical line's start.
Properties parse_properties(std::string_view text);

/// Reads and parses a properties file. Throws ConfigError naming the path:
/// "PATH: cannot open the properties file: <reason>" (missing, unreadable),
/// "PATH: is a directory, not a properties file", and "PATH: line N: ..."
/// for syntax errors.
Properties load_properties_file(const std::string& path);

}  // namespace kc::config
