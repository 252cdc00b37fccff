// `kconnectd assign-sim FILE`: runs an assignor scenario file (format:
// ../shared/reference/assignor-scenarios.md). The simulator itself lives in
// assignor/simulator.{h,cpp} so tests can drive it without this binary.
#include <iostream>
#include <memory>
#include <string>

#include "assignor/simulator.h"
#include "cmd/kconnectd/commands.h"

namespace kc::cmd {

void register_assign_sim(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand(
      "assign-sim", "Run an assignor scenario file: prints every round and a final summary; exit 1 if an expect fails");
  auto path = std::make_shared<std::string>();
  sub->add_option("FILE", *path, "scenario file")->required();
  sub->callback([&exit_code, path] { exit_code = kc::assignor::sim::assign_sim_main(*path, std::cout, std::cerr); });
}

}  // namespace kc::cmd
