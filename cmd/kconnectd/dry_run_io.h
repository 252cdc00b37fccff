#pragma once
// The stdin/stdout loop shared by `kconnectd transform` and `kconnectd
// convert`: JSON lines in, exactly one JSON line out per non-blank input
// line, flushed at once so that the tools work inside pipes.

#include <istream>
#include <ostream>
#include <string>

#include "common/json_bounds.h"
#include "worker/data/notation.h"

namespace kc::cmd {

/// Reads `in` line by line. Blank lines (only whitespace) are skipped. Each
/// other line is parsed as JSON (member order kept; kc::parse_json_bounded,
/// so a line nested past kc::kMaxJsonDepth is an input error) and passed to
/// `process`, whose result is written compactly on one line of `out` and
/// flushed. A line that is not JSON, or on which `process` throws a JSON
/// exception (e.g. a wrongly typed member), gives
/// {"error": {"stage": "input", "message": ...}} instead; the loop goes on.
template <typename Process>
void for_each_json_line(std::istream& in, std::ostream& out, Process&& process) {
  std::string line;
  while (std::getline(in, line)) {
    if (line.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    data::notation::Json result;
    auto fail = [&result](const std::string& why) {
      result = data::notation::Json::object();
      result["error"] = {{"stage", "input"}, {"message", "invalid input line: " + why}};
    };
    auto parsed = kc::parse_json_bounded<data::notation::Json>(line);
    if (!parsed) {
      fail(parsed.error->message);
    } else {
      try {
        result = process(std::move(parsed.value));
      } catch (const data::notation::Json::exception& e) {
        fail(e.what());
      }
    }
    out << result.dump(-1, ' ', false, data::notation::Json::error_handler_t::replace) << '\n' << std::flush;
  }
}

}  // namespace kc::cmd
