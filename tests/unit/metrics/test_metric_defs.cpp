// The metric declaration table (worker/metrics/metric_defs.h) is what
// /metrics serves: every family a live worker renders is declared with its
// type and labels, every declared family is rendered, and the HELP text is
// the table's (docs/reference/metrics.md is generated from the same table).
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "worker/metrics/metric_defs.h"
#include "worker/metrics/worker_metrics.h"

using namespace kc::metrics;

namespace {

struct Rendered {
  std::map<std::string, std::string> type;                // family -> "counter"/"gauge"
  std::map<std::string, std::string> help;                // family -> HELP text
  std::map<std::string, std::set<std::string>> labels;    // family -> label names seen
};

// Reads the exposition text of a registry with prefix "kconnectd_".
Rendered parse(const std::string& text) {
  Rendered out;
  std::istringstream in(text);
  std::string line;
  const std::string prefix = "kconnectd_";
  while (std::getline(in, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      out.type[rest.substr(prefix.size(), sp - prefix.size())] = rest.substr(sp + 1);
    } else if (line.rfind("# HELP ", 0) == 0) {
      auto rest = line.substr(7);
      auto sp = rest.find(' ');
      out.help[rest.substr(prefix.size(), sp - prefix.size())] = rest.substr(sp + 1);
    } else if (!line.empty() && line[0] != '#') {
      auto brace = line.find('{');
      auto sp = line.find(' ');
      std::string family = line.substr(prefix.size(), std::min(brace, sp) - prefix.size());
      auto& names = out.labels[family];
      if (brace != std::string::npos && brace < sp) {
        // {a="x",b="y"}: label names are what precedes each '='.
        size_t pos = brace + 1;
        while (pos < line.size() && line[pos] != '}') {
          auto eq = line.find('=', pos);
          names.insert(line.substr(pos, eq - pos));
          auto close = line.find('"', eq + 2);
          while (line[close - 1] == '\\') close = line.find('"', close + 1);
          pos = close + 1;
          if (line[pos] == ',') ++pos;
        }
      }
    }
  }
  return out;
}

std::set<std::string> split_labels(const char* labels) {
  std::set<std::string> out;
  std::string s(labels);
  size_t start = 0;
  while (!s.empty() && start <= s.size()) {
    auto comma = s.find(',', start);
    out.insert(s.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace

TEST_CASE("every family a live worker renders is declared in metric_defs, with its type, labels and help",
          "[metrics][reference]") {
  WorkerMetrics m([] { return int64_t{0}; });
  m.assignment_received(3, "sessioned", "http://w1:8083/");
  m.task("src", 0, true)->set_state(TaskState::Running);
  m.task("snk", 1, false)->set_state(TaskState::Failed);
  const Rendered r = parse(m.render());

  std::set<std::string> declared;
  for (const auto& d : metric_defs()) {
    declared.insert(d.name);
    INFO("declared family " << d.name);
    REQUIRE(r.type.count(d.name) == 1);
    CHECK(r.type.at(d.name) == to_string(d.type));
    CHECK(r.help.at(d.name) == help_text(d));
    REQUIRE(r.labels.count(d.name) == 1);
    CHECK(r.labels.at(d.name) == split_labels(d.labels));
  }
  for (const auto& [family, type] : r.type) {
    INFO("rendered family " << family << " must be declared in worker/metrics/metric_defs.cpp");
    CHECK(declared.count(family) == 1);
  }
  CHECK(declared.size() == metric_defs().size());  // no family declared twice
}

TEST_CASE("metric_def refuses an undeclared family", "[metrics][reference]") {
  CHECK(std::string(metric_def("coordinator_joins_total").name) == "coordinator_joins_total");
  CHECK_THROWS_AS(metric_def("no_such_family_total"), std::logic_error);
  CHECK(help_text(metric_def("coordinator_joins_total")) ==
        "JoinGroup round trips completed. (join-total (connect-coordinator-metrics))");
  CHECK(help_text(metric_def("coordinator_heartbeat_response_time_avg_seconds")) ==
        "Average Heartbeat round trip, seconds, over the process life.");
}
