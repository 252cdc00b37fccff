// `kconnectd transform CONNECTOR.json`: a dry run of a connector's transform
// chain (issue 11 item 7). The connector config (an object of config keys,
// or {"name", "config"} as POST /connectors takes) supplies `transforms=`
// and `predicates=`; records arrive on stdin as JSON lines in the SMT record
// notation of ../shared/testdata/PIPELINE-VECTORS.md (worker/data/notation.h)
// and each non-blank line gives exactly one stdout line: the output record,
// `null` when dropped, or {"error": {...}}. The per-line logic is
// kc::transforms::TransformDryRun, shared with the vector tests.
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "cmd/kconnectd/commands.h"
#include "common/json_bounds.h"
#include "cmd/kconnectd/dry_run_io.h"
#include "worker/transforms/dry_run.h"

namespace kc::cmd {

namespace {

/// Reads and parses CONNECTOR.json into a connector config. On failure
/// prints the reason on `err` (prefixed "kconnectd transform: ") and
/// returns nullopt: unreadable file, malformed JSON, or not an object.
std::optional<transforms::Config> load_connector_config(const std::string& path, std::ostream& err) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    err << "kconnectd transform: cannot read " << path << "\n";
    return std::nullopt;
  }
  std::stringstream text;
  text << in.rdbuf();
  auto doc = kc::parse_json_bounded<transforms::Json>(text.str());
  if (!doc) {
    err << "kconnectd transform: " << path << " is not valid JSON: " << doc.error->message << "\n";
    return std::nullopt;
  }
  auto config = transforms::connector_config_from_json(doc.value);
  if (!config) {
    err << "kconnectd transform: " << path << ": " << config.error().to_string() << "\n";
    return std::nullopt;
  }
  return std::move(*config);
}

/// The whole subcommand: 0 after stdin is exhausted (per-record failures
/// are output lines, not exit codes), 1 on a bad connector config.
int run_transform(const std::string& path, std::istream& in, std::ostream& out, std::ostream& err) {
  auto config = load_connector_config(path, err);
  if (!config) return 1;
  std::vector<transforms::ConfigError> errors;
  auto dry = transforms::TransformDryRun::create(*config, &errors);
  if (!dry) {
    err << "kconnectd transform: invalid transform chain in " << path << ":\n";
    for (const auto& e : errors) err << e.key << ": " << e.message << "\n";
    if (errors.empty()) err << dry.error().to_string() << "\n";
    return 1;
  }
  for_each_json_line(in, out, [&](const transforms::Json& record) { return dry->process(record); });
  return 0;
}

}  // namespace

void register_transform(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "transform", "Dry-run a connector's transforms and predicates on JSON-line records from stdin");
  static std::string path;
  sub->add_option("connector", path,
                  "Connector config JSON (config keys, or {\"name\",\"config\"} as POST /connectors takes)")
      ->required();
  sub->footer(
      "Input: one record per line in the SMT record notation ({\"kind\",\"topic\",\"valueSchema\",\"value\",...}).\n"
      "Output: one line per record: the transformed record, null when dropped, or {\"error\":{...}}.\n"
      "Exit 1 on a bad connector config, with each validation error as KEY: MESSAGE on stderr.");
  sub->callback([&exit_code] { exit_code = run_transform(path, std::cin, std::cout, std::cerr); });
}

}  // namespace kc::cmd
