// kc::wait_for_stop (common/stop_wait.h): a wait that a stop request ends
// at once, instead of a sleep the stop has to wait out.
#include <catch2/catch.hpp>

#include <chrono>
#include <stop_token>
#include <thread>

#include "common/stop_wait.h"

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

TEST_CASE("wait_for_stop: a stop requested during a 30 s wait ends it, without waiting it out", "[common][stop]") {
  std::stop_source stop;
  std::thread requester([&] {
    std::this_thread::sleep_for(50ms);
    stop.request_stop();
  });
  const auto t0 = Clock::now();
  const bool stopped = kc::wait_for_stop(stop.get_token(), 30s);
  const auto waited = Clock::now() - t0;
  requester.join();
  CHECK(stopped);
  CHECK(waited < 30s);  // bounded by the stop, not the duration
}

TEST_CASE("wait_for_stop: a stop requested before returns at once, without a stop the full time passes",
          "[common][stop]") {
  std::stop_source stop;
  stop.request_stop();
  CHECK(kc::wait_for_stop(stop.get_token(), 30s));

  std::stop_source idle;
  const auto t0 = Clock::now();
  CHECK_FALSE(kc::wait_for_stop(idle.get_token(), 20ms));
  CHECK(Clock::now() - t0 >= 20ms);
  CHECK_FALSE(kc::wait_for_stop(std::stop_token{}, 1ms));  // no stop source: never stops
}
