// `kconnectd version`, `kconnectd --version` and `kconnectd -V`: what was built, from which
// commit, against which libraries.
#include <boost/version.hpp>
#include <iostream>
#include <librdkafka/rdkafka.h>
#include <sstream>

#include "cmd/kconnectd/commands.h"

namespace kc::cmd {

namespace {

/// The five lines both forms print (version, commit, build type, librdkafka,
/// boost), without the final newline.
std::string version_text() {
  std::ostringstream out;
  out << "kconnectd " << KC_VERSION << "\n"
      << "commit " << KC_GIT_COMMIT << "\n"
      << "build " << KC_BUILD_TYPE << "\n"
      << "librdkafka " << rd_kafka_version_str() << "\n"
      << "boost " << BOOST_VERSION / 100000 << "." << BOOST_VERSION / 100 % 1000 << "." << BOOST_VERSION % 100;
  return out.str();
}

}  // namespace

void register_version(CLI::App& app, int& exit_code) {
  // `--version` (and `-V`) is what container images and packaging scripts
  // call (the image's version label comes from it); CLI11 prints the text
  // and main() returns 0 for it, before the "one subcommand" rule is checked.
  app.set_version_flag("-V,--version", version_text, "Print the same as `kconnectd version` and exit");
  auto* sub = app.add_subcommand("version", "Print version, git commit, build type and library versions");
  sub->callback([&exit_code] {
    std::cout << version_text() << "\n";
    exit_code = 0;
  });
}

}  // namespace kc::cmd
