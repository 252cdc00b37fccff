// StopPool (worker/herder/stop_pool.h): runs every job, never more at once
// than its bound, runs them side by side up to it, and wait() waits.
#include <catch2/catch.hpp>

#include "worker/herder/stop_pool.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

using kc::herder::StopPool;

namespace {

/// Counts jobs running at once and the most seen.
struct Concurrency {
  std::mutex mu;
  int now = 0;
  int most = 0;
  void enter() {
    std::lock_guard lk(mu);
    most = std::max(most, ++now);
  }
  void leave() {
    std::lock_guard lk(mu);
    --now;
  }
};

/// A gate that opens once `n` jobs arrived; false when it did not open
/// within a generous bound (a failure, not a speed measure).
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  bool arrive_and_wait(int n) {
    std::unique_lock lk(mu);
    ++arrived;
    cv.notify_all();
    return cv.wait_for(lk, std::chrono::seconds(20), [&] { return arrived >= n; });
  }
};

}  // namespace

TEST_CASE("StopPool: threads are min(bound, expected jobs), at least one") {
  CHECK(StopPool(100).max_threads() == StopPool::kMaxThreads);
  CHECK(StopPool(3).max_threads() == 3);
  CHECK(StopPool(0).max_threads() == 1);
  CHECK(StopPool(10, 2).max_threads() == 2);
}

TEST_CASE("StopPool: every job runs once and wait() returns after the last") {
  std::vector<std::atomic<int>> runs(50);
  StopPool pool(runs.size());
  for (auto& r : runs)
    pool.submit([&r] {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ++r;
    });
  pool.wait();
  for (auto& r : runs) CHECK(r.load() == 1);
}

TEST_CASE("StopPool: never more jobs at once than the bound") {
  Concurrency c;
  std::atomic<int> done{0};
  StopPool pool(40, 4);
  for (int i = 0; i < 40; ++i)
    pool.submit([&] {
      c.enter();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      c.leave();
      ++done;
    });
  pool.wait();
  CHECK(done.load() == 40);
  CHECK(c.most <= 4);
  CHECK(c.most >= 1);
}

TEST_CASE("StopPool: up to the bound, jobs run side by side (one shared deadline does not add up)") {
  // Each job waits until all 8 arrived: only possible when 8 run at once.
  Gate gate;
  std::atomic<int> opened{0};
  StopPool pool(8);
  for (int i = 0; i < 8; ++i)
    pool.submit([&] {
      if (gate.arrive_and_wait(8)) ++opened;
    });
  pool.wait();
  CHECK(opened.load() == 8);
}

TEST_CASE("StopPool: a job's exception reaches wait(), and the other jobs still run") {
  std::atomic<int> ran{0};
  StopPool pool(3);
  pool.submit([] { throw std::runtime_error("stop failed"); });
  pool.submit([&] { ++ran; });
  pool.submit([&] { ++ran; });
  CHECK_THROWS_WITH(pool.wait(), "stop failed");
  CHECK(ran.load() == 2);
}

TEST_CASE("StopPool: the destructor waits for queued jobs") {
  std::atomic<int> ran{0};
  {
    StopPool pool(10, 2);
    for (int i = 0; i < 10; ++i) pool.submit([&] { ++ran; });
  }
  CHECK(ran.load() == 10);
}
