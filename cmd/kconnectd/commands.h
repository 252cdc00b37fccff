#pragma once
// Subcommand registration. Each register_* adds one subcommand to the app;
// when it runs, its callback stores the process exit status in `exit_code`.

#include <string>

#include <CLI/CLI.hpp>

namespace kc::cmd {

/// Exit status of a usage error the argument parser refuses (unknown
/// subcommand or option, missing or malformed argument), whatever CLI11's
/// own code for it is.
inline constexpr int kExitUsage = 2;

/// `kconnectd decode metadata|assignment HEX`: Connect blob -> JSON (issue 2).
void register_decode(CLI::App& app, int& exit_code);
/// `kconnectd assign-sim FILE`: assignor scenario simulator (issue 3).
void register_assign_sim(CLI::App& app, int& exit_code);
/// `kconnectd validate FILE`: check a worker properties file (issue 4).
void register_validate(CLI::App& app, int& exit_code);
/// `kconnectd mock-broker`: host librdkafka's mock cluster (issue 4).
void register_mock_broker(CLI::App& app, int& exit_code);
/// `kconnectd run FILE`: run a worker (issue 4).
void register_run(CLI::App& app, int& exit_code);
/// `kconnectd standalone WORKER [CONNECTOR...]`: one worker without a
/// group, Connect's standalone mode (issue 29).
void register_standalone(CLI::App& app, int& exit_code);
/// `kconnectd transform CONNECTOR.json`: dry-run a connector's transform
/// chain on JSON-line records from stdin (issue 11).
void register_transform(CLI::App& app, int& exit_code);
/// `kconnectd convert CLASS from-connect|to-connect [--config k=v] [--key]`:
/// dry-run a converter on JSON lines from stdin (issue 11).
void register_convert(CLI::App& app, int& exit_code);
/// `kconnectd reference WHAT` (hidden): a docs/reference page as Markdown,
/// generated from the code's tables (scripts/gen-reference).
void register_reference(CLI::App& app, int& exit_code);
/// `kconnectd version` and the `-V` / `--version` flags: version, commit,
/// build type, library versions (the same five lines, exit 0).
void register_version(CLI::App& app, int& exit_code);
/// `kconnectd completion bash`: print bash_completion_script(app).
void register_completion(CLI::App& app, int& exit_code);
/// The bash completion script for `app`: its visible subcommands, and for
/// each one its options (file-name completion after an option that takes a
/// value and for positional arguments). Defines _kconnectd and registers it
/// with `complete -o default -F _kconnectd kconnectd`.
std::string bash_completion_script(const CLI::App& app);

}  // namespace kc::cmd
