// `kconnectd validate [--resolve] [--strict] FILE`: checks a worker
// properties file exactly as `kconnectd run` would load it (load_worker():
// CONNECT_* environment overrides included) without starting anything.
//
// Output: one "error: ..." line per error and one "warning: ..." line per
// warning on stderr, every one of them (not the first), then on stdout
// "OK" (exit 0) or nothing, with a summary "N error(s), M warning(s) in
// FILE" on stderr (exit 1). Unknown keys are warnings, as Connect only logs
// them; each names its closest declared key ("did you mean ...?"), and
// `--strict` makes every warning an error (exit 1).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "cmd/kconnectd/commands.h"
#include "cmd/kconnectd/worker_setup.h"

extern char** environ;

namespace kc::cmd {

namespace {

int run_validate(const std::string& path, const LoadOptions& opts, bool strict) {
  const char* kafka_opts = std::getenv("KAFKA_OPTS");
  auto loaded = load_worker(path, environ, kafka_opts ? kafka_opts : "", opts);
  for (const auto& key : loaded.from_env) std::cerr << "note: " << key << " set from the environment (CONNECT_*)\n";
  for (const auto& e : loaded.errors) std::cerr << "error: " << e << "\n";
  for (const auto& w : loaded.warnings) std::cerr << "warning: " << w << "\n";
  const bool failed = !loaded.ok() || (strict && !loaded.warnings.empty());
  if (!failed) {
    std::cout << "OK\n";
    return 0;
  }
  std::cerr << loaded.errors.size() << " error(s), " << loaded.warnings.size() << " warning(s) in " << path
            << (strict && loaded.ok() ? " (--strict: warnings are errors)" : "") << "\n";
  return 1;
}

}  // namespace

void register_validate(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "validate", "Check a worker properties file as `run` loads it (CONNECT_* overrides included); lists every "
                  "error and warning, then OK (exit 0) or a summary (exit 1)");
  auto path = std::make_shared<std::string>();
  auto resolve = std::make_shared<bool>(false);
  auto strict = std::make_shared<bool>(false);
  sub->add_option("file", *path, "Worker properties file (Kafka Connect distributed worker format)")->required();
  sub->add_flag("--resolve", *resolve,
                "also resolve every ${provider:path:key} placeholder through config.providers and name each one "
                "that fails");
  sub->add_flag("--strict", *strict, "treat warnings (such as unknown keys) as errors");
  sub->callback([&exit_code, path, resolve, strict] {
    exit_code = run_validate(*path, LoadOptions{*resolve}, *strict);
  });
}

}  // namespace kc::cmd
