#pragma once
// StopPool: a bounded set of threads for the blocking stop jobs of one
// revocation or reconcile pass (waiting for revoked tasks, stopping
// connectors), so that a revocation of many tasks does not start one
// thread per task.

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kc::herder {

/// Runs submitted jobs on at most `min(max_threads, expected_jobs)` threads
/// of its own (at least one), started as jobs arrive, and lets the caller
/// wait for all of them. Jobs run in parallel up to that bound, so stop
/// jobs that share one deadline (each computes its time left from a common
/// start) still end together: the graceful timeout does not add up per job.
/// One pool serves one batch: submit, then wait(); it is not reusable.
/// submit() and wait() are called from one thread (the apply strand).
class StopPool {
 public:
  /// The bound on threads when none is given: enough to wait for revoked
  /// tasks side by side, few enough that a revocation of hundreds of tasks
  /// does not start hundreds of threads.
  static constexpr size_t kMaxThreads = 8;

  /// `expected_jobs`: how many jobs the caller will submit (sizes the
  /// pool; more may be submitted, they queue). `max_threads` >= 1.
  explicit StopPool(size_t expected_jobs, size_t max_threads = kMaxThreads);
  StopPool(const StopPool&) = delete;
  StopPool& operator=(const StopPool&) = delete;
  /// Waits for every submitted job (as wait(), without rethrowing).
  ~StopPool();

  /// Queues `job`; it runs on one of the pool's threads, in submission
  /// order among the jobs not yet taken. Starts a thread while fewer than
  /// the bound run. Must not be called after wait().
  void submit(std::function<void()> job);

  /// Blocks until every submitted job has run, then ends the threads.
  /// Rethrows the first exception a job threw (the others ran anyway).
  void wait();

  /// The most threads this pool starts.
  size_t max_threads() const { return limit_; }

 private:
  void run();
  void join_all();

  const size_t limit_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  ///< guarded by mu_
  bool closed_ = false;                      ///< guarded by mu_: no more jobs, threads end when the queue is empty
  std::exception_ptr first_error_;           ///< guarded by mu_
  std::vector<std::thread> threads_;         ///< the caller's thread only
};

}  // namespace kc::herder
