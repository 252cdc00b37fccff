// kconnectd: a Kafka Connect-style worker daemon with incremental cooperative
// rebalancing (KIP-415). This file only wires the subcommands together.
//
// Exit statuses (docs/operator-guide.md, "Exit statuses"): 0 success; 1 the subcommand
// failed (an invalid configuration, a failed broker check, a worker that
// cannot start, a fatal group error, a bad input for a dry run); 2 a usage
// error caught by the argument parser (unknown subcommand or option,
// missing or malformed argument); 128 + signal when `run` is forced down
// by a second signal.
#include "cmd/kconnectd/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"kconnectd: Kafka Connect-style worker with incremental cooperative rebalancing"};
  app.require_subcommand(1);
  int exit_code = 0;
  kc::cmd::register_run(app, exit_code);
  kc::cmd::register_standalone(app, exit_code);
  kc::cmd::register_mock_broker(app, exit_code);
  kc::cmd::register_validate(app, exit_code);
  kc::cmd::register_decode(app, exit_code);
  kc::cmd::register_assign_sim(app, exit_code);
  kc::cmd::register_transform(app, exit_code);
  kc::cmd::register_convert(app, exit_code);
  kc::cmd::register_version(app, exit_code);
  kc::cmd::register_completion(app, exit_code);
  kc::cmd::register_reference(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help) and gives its own codes
    // (100..127); one status for every usage error is easier to script.
    return app.exit(e) == 0 ? 0 : kc::cmd::kExitUsage;
  }
  return exit_code;
}
