// kconnectd: a Kafka Connect-style worker daemon with incremental cooperative
// rebalancing (KIP-415). This file only wires the subcommands together.
#include "cmd/kconnectd/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kconnectd: Kafka Connect-style worker with incremental cooperative rebalancing"};
  app.require_subcommand(1);
  int exit_code = 0;
  kc::cmd::register_run(app, exit_code);
  kc::cmd::register_mock_broker(app, exit_code);
  kc::cmd::register_validate(app, exit_code);
  kc::cmd::register_decode(app, exit_code);
  kc::cmd::register_assign_sim(app, exit_code);
  kc::cmd::register_transform(app, exit_code);
  kc::cmd::register_convert(app, exit_code);
  kc::cmd::register_version(app, exit_code);
  CLI11_PARSE(app, argc, argv);
  return exit_code;
}
