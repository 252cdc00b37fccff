// A cluster without placement labels behaves exactly as before labels
// existed (issue 29): every scenario and 4 x 2500 random sequences give
// byte-identical rounds to main's assignor (golden_no_labels.h explains the
// hashes; scripts/golden-no-labels makes them from any commit).
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "golden_no_labels.h"

TEST_CASE("golden: without labels every round is byte-identical to main's", "[assignor][golden][labels]") {
  std::ifstream in(std::string(KC_SOURCE_DIR) + "/tests/unit/assignor/golden_no_labels.txt");
  REQUIRE(in);
  std::string line;
  int scenarios = 0, random_blocks = 0;
  while (std::getline(in, line)) {
    std::istringstream w(line);
    std::string kind;
    w >> kind;
    if (kind == "scenario") {
      std::string file, hash;
      w >> file >> hash;
      INFO("scenario " << file);
      CHECK(kc_golden::fnv1a_hex(kc_golden::scenario_text(std::string(KC_SOURCE_DIR) + "/tests/scenarios/" + file)) ==
            hash);
      ++scenarios;
    } else if (kind == "random") {
      std::string name, hash;
      uint64_t base = 0, runs = 0;
      w >> name >> base >> runs >> hash;
      for (const auto& f : kc_golden::golden_flavours()) {
        if (f.name != name) continue;
        INFO("random " << name << " base " << base << " runs " << runs);
        REQUIRE(f.base_seed == base);
        CHECK(kc_golden::fnv1a_hex(kc_golden::random_text(f, runs)) == hash);
        ++random_blocks;
      }
    }
  }
  CHECK(scenarios >= 54);
  CHECK(random_blocks == 4);
}
