// `kconnectd validate FILE`: loads a worker properties file the way `run`
// does and checks it against the declared options (config/worker_config.h)
// and the REST security files (PEM stores, JAAS and credentials files).
// Prints each warning on stderr, then "OK" on stdout (exit 0), or the first
// error on stderr (exit 1).
#include <cstdlib>
#include <iostream>
#include <string>

#include "cmd/kconnectd/commands.h"
#include "config/worker_config.h"
#include "worker/rest/rest_security.h"

namespace kc::cmd {

void register_validate(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("validate", "Check a worker properties file; prints warnings and OK or the error");
  static std::string path;
  sub->add_option("file", path, "Worker properties file (Kafka Connect distributed worker format)")->required();
  sub->callback([&exit_code] {
    try {
      auto cfg = config::WorkerConfig::from_file(path);
      for (const auto& w : cfg.warnings()) std::cerr << "warning: " << w << "\n";
      const char* kafka_opts = std::getenv("KAFKA_OPTS");
      auto sec = rest::rest_security_from(cfg, kafka_opts ? kafka_opts : "");
      if (!sec) {
        std::cerr << "error: " << sec.error().to_string() << "\n";
        exit_code = 1;
        return;
      }
      for (const auto& w : sec.value().warnings) std::cerr << "warning: " << w << "\n";
      std::cout << "OK\n";
      exit_code = 0;
    } catch (const config::ConfigError& e) {
      std::cerr << "error: " << e.what() << "\n";
      exit_code = 1;
    }
  });
}

}  // namespace kc::cmd
