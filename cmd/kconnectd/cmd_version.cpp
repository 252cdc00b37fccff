// `kconnectd version`: what was built, from which commit, against which libraries.
#include <boost/version.hpp>
#include <iostream>
#include <librdkafka/rdkafka.h>

#include "cmd/kconnectd/commands.h"

namespace kc::cmd {

void register_version(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("version", "Print version, git commit, build type and library versions");
  sub->callback([&exit_code] {
    std::cout << "kconnectd " << KC_VERSION << "\n"
              << "commit " << KC_GIT_COMMIT << "\n"
              << "build " << KC_BUILD_TYPE << "\n"
              << "librdkafka " << rd_kafka_version_str() << "\n"
              << "boost " << BOOST_VERSION / 100000 << "." << BOOST_VERSION / 100 % 1000 << "."
              << BOOST_VERSION % 100 << "\n";
    exit_code = 0;
  });
}

}  // namespace kc::cmd
