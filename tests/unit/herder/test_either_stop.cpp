// EitherStop (worker/herder/either_stop.h): a wait on its token ends on
// either input's stop, which is how a task's await_fencing ends on the
// task's stop or on the herder's shutdown (herder_stop).
#include <catch2/catch.hpp>

#include <chrono>
#include <future>
#include <stop_token>

#include "common/stop_wait.h"
#include "worker/herder/either_stop.h"

using kc::herder::EitherStop;
using namespace std::chrono_literals;

namespace {

/// Starts a wait of up to 60 s on `token` on another thread; its result is
/// true when a stop ended it (a broken join would only return after 60 s,
/// with false).
std::future<bool> wait_async(std::stop_token token) {
  return std::async(std::launch::async, [token] { return kc::wait_for_stop(token, 60s); });
}

}  // namespace

TEST_CASE("reconcile plan: a wait on either stop ends on the task's stop", "[herder]") {
  std::stop_source task, herder;
  EitherStop either(task.get_token(), herder.get_token());
  auto waited = wait_async(either.token());
  task.request_stop();
  CHECK(waited.get());
  CHECK_FALSE(herder.stop_requested());
}

TEST_CASE("reconcile plan: a wait on either stop ends on the herder's stop", "[herder]") {
  std::stop_source task, herder;
  EitherStop either(task.get_token(), herder.get_token());
  auto waited = wait_async(either.token());
  herder.request_stop();
  CHECK(waited.get());
  CHECK_FALSE(task.stop_requested());
}

TEST_CASE("reconcile plan: either stop is stopped at once when an input already is", "[herder]") {
  std::stop_source task, herder;
  herder.request_stop();
  EitherStop either(task.get_token(), herder.get_token());
  CHECK(either.token().stop_requested());
  CHECK(kc::wait_for_stop(either.token(), 60s));
}

TEST_CASE("reconcile plan: either stop of two tokens without a source never stops", "[herder]") {
  EitherStop either(std::stop_token{}, std::stop_token{});
  CHECK_FALSE(either.token().stop_requested());
  CHECK_FALSE(kc::wait_for_stop(either.token(), 5ms));  // the full (short) wait
}
