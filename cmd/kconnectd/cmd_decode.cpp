// Placeholder until the owning issue lands; replaced by the real subcommand.
#include <iostream>

#include "cmd/kconnectd/commands.h"

namespace kc::cmd {

void register_decode(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("decode", "(not built yet)");
  sub->allow_extras();
  sub->callback([&exit_code] {
    std::cerr << "kconnectd decode: not available in this build\n";
    exit_code = 2;
  });
}

}  // namespace kc::cmd
