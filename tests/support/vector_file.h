#pragma once
// The loop shared by the golden-vector runners (JsonConverter vectors, SMT
// vectors): read a vector file (a JSON array of cases, each with a "name"),
// run every selected case, count agreements and print what differs. Test code.
#include <nlohmann/json.hpp>

#include <exception>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace kc::test {

/// What one vector file gave: cases selected, agreeing, skipped, and one
/// "name: what differs" line per disagreeing case.
struct VectorOutcome {
  int total = 0, passed = 0, skipped = 0;
  std::vector<std::string> failures;
};

/// Runs the cases of the vector file at `path` whose names start with
/// `prefix` (every case when empty). `skip(case)` true counts a case as
/// skipped; `run_case(case)` returns "" on agreement, else what differs (an
/// exception it throws counts as a difference). Prints a summary line and one
/// DIFF line per failure to stdout. Throws std::runtime_error when the file
/// can't be opened, nlohmann::json::parse_error when it is not JSON.
inline VectorOutcome run_vector_file(const std::string& path,
                                     const std::function<std::string(const nlohmann::ordered_json&)>& run_case,
                                     const std::function<bool(const nlohmann::ordered_json&)>& skip = {},
                                     const std::string& prefix = "") {
  std::ifstream in(path);
  if (!in.good()) throw std::runtime_error("cannot open vector file " + path);
  const auto cases = nlohmann::ordered_json::parse(in);
  VectorOutcome o;
  for (const auto& c : cases) {
    const std::string name = c.value("name", std::string("?"));
    if (name.rfind(prefix, 0) != 0) continue;
    ++o.total;
    if (skip && skip(c)) {
      ++o.skipped;
      continue;
    }
    std::string why;
    try {
      why = run_case(c);
    } catch (const std::exception& e) {
      why = std::string("exception: ") + e.what();
    }
    if (why.empty())
      ++o.passed;
    else
      o.failures.push_back(name + ": " + why);
  }
  std::cout << path << ": " << o.passed << " of " << o.total << " agree, " << o.skipped << " skipped, "
            << o.failures.size() << " differ\n";
  for (const auto& f : o.failures) std::cout << "  DIFF " << f << "\n";
  return o;
}

/// The vector files named in environment variable `var`, separated by ','
/// or ':' (empty entries dropped); empty when the variable is unset.
inline std::vector<std::string> vector_files_from_env(const char* var) {
  std::vector<std::string> paths;
  const char* env = std::getenv(var);
  if (!env) return paths;
  const std::string list = env;
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = list.find_first_of(",:", start);
    if (end == std::string::npos) end = list.size();
    if (end > start) paths.push_back(list.substr(start, end - start));
    start = end + 1;
  }
  return paths;
}

}  // namespace kc::test
