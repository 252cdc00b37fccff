// common/worker_defaults.h: the shared defaults and their compile-time text.
#include <catch2/catch.hpp>

#include <cstring>

#include "common/worker_defaults.h"

TEST_CASE("decimal_text writes a constant's digits at compile time", "[common]") {
  static_assert(kc::decimal_text_array<300000>.size() == 7);
  CHECK(std::strcmp(kc::decimal_text<0>, "0") == 0);
  CHECK(std::strcmp(kc::decimal_text<9>, "9") == 0);
  CHECK(std::strcmp(kc::decimal_text<10>, "10") == 0);
  CHECK(std::strcmp(kc::decimal_text<kc::kScheduledRebalanceMaxDelayMsDefault>, "300000") == 0);
  CHECK(std::strcmp(kc::decimal_text<kc::kWorkerUnsyncBackoffMsDefault>, "300000") == 0);
  CHECK(std::strcmp(kc::decimal_text<INT64_MAX>, "9223372036854775807") == 0);
}
