// `kconnectd convert CONVERTER_CLASS from-connect|to-connect [--config k=v
// ...] [--key]`: a dry run of one converter (issue 11 item 7). Lines on
// stdin are {"topic", "schema", "value"} (from-connect; schema and value in
// the notation of ../shared/testdata/PIPELINE-VECTORS.md) or {"topic",
// "bytes_hex"} (to-connect); each non-blank line gives exactly one stdout
// line with the other side, or {"error": {"stage", "message"}}. The
// per-line logic is kc::converters::ConvertDryRun.
#include <iostream>
#include <string>
#include <vector>

#include "cmd/kconnectd/commands.h"
#include "cmd/kconnectd/dry_run_io.h"
#include "worker/converters/dry_run.h"

namespace kc::cmd {

namespace {

/// Parses the `--config k=v` options into a converter config (later
/// duplicates win). Error: an option without '=' or with an empty key.
Result<converters::ConverterConfig> parse_converter_config(const std::vector<std::string>& pairs) {
  converters::ConverterConfig config;
  for (const auto& p : pairs) {
    auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) return Error{"--config", "expected KEY=VALUE, got '" + p + "'"};
    config[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return config;
}

/// The whole subcommand: 0 after stdin is exhausted (per-line failures are
/// output lines), 1 on a bad --config, an unknown class or a configure()
/// error, each explained on `err`.
int run_convert(const std::string& cls, const std::string& direction, const std::vector<std::string>& pairs,
                bool is_key, std::istream& in, std::ostream& out, std::ostream& err) {
  auto config = parse_converter_config(pairs);
  if (!config) {
    err << "kconnectd convert: " << config.error().to_string() << "\n";
    return 1;
  }
  auto dir = direction == "from-connect" ? converters::ConvertDryRun::Direction::kFromConnect
                                         : converters::ConvertDryRun::Direction::kToConnect;
  auto dry = converters::ConvertDryRun::create(cls, dir, *config, is_key);
  if (!dry) {
    err << "kconnectd convert: cannot create converter " << cls << ": " << dry.error().to_string() << "\n";
    return 1;
  }
  for_each_json_line(in, out, [&](const converters::Json& line) { return dry->process(line); });
  return 0;
}

}  // namespace

void register_convert(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "convert", "Dry-run a converter (e.g. JsonConverter) on JSON lines from stdin, either direction");
  static std::string cls;
  static std::string direction;
  static std::vector<std::string> pairs;
  static bool is_key = false;
  sub->add_option("class", cls, "Converter class name or alias (org.apache.kafka.connect.json.JsonConverter, Json, ...)")
      ->required();
  sub->add_option("direction", direction, "from-connect ({topic,schema,value} -> bytes) or to-connect (the reverse)")
      ->required()
      ->check(CLI::IsMember({"from-connect", "to-connect"}));
  sub->add_option("--config", pairs, "A converter config key, e.g. --config schemas.enable=false (repeatable)")
      ->take_all()
      ->allow_extra_args(false);
  sub->add_flag("--key", is_key, "Configure the converter as a key converter (isKey=true)");
  sub->footer(
      "from-connect reads {\"topic\",\"schema\",\"value\"} lines and prints {\"topic\",\"bytes_hex\"};\n"
      "to-connect reads {\"topic\",\"bytes_hex\"} lines and prints {\"topic\",\"schema\",\"value\"}.\n"
      "A line that cannot be converted prints {\"error\":{\"stage\",\"message\"}}. Exit 1 on a bad converter or config.");
  sub->callback([&exit_code] { exit_code = run_convert(cls, direction, pairs, is_key, std::cin, std::cout, std::cerr); });
}

}  // namespace kc::cmd
