// StopPool: see stop_pool.h.
#include "worker/herder/stop_pool.h"

#include <algorithm>
#include <utility>

namespace kc::herder {

StopPool::StopPool(size_t expected_jobs, size_t max_threads)
    : limit_(std::max<size_t>(1, std::min(max_threads, expected_jobs))) {}

StopPool::~StopPool() { join_all(); }

void StopPool::submit(std::function<void()> job) {
  {
    std::lock_guard lk(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  if (threads_.size() < limit_) threads_.emplace_back([this] { run(); });
}

void StopPool::run() {
  std::unique_lock lk(mu_);
  for (;;) {
    cv_.wait(lk, [this] { return closed_ || !queue_.empty(); });
    if (queue_.empty()) return;  // closed and drained
    auto job = std::move(queue_.front());
    queue_.pop_front();
    lk.unlock();
    try {
      job();
    } catch (...) {
      lk.lock();
      if (!first_error_) first_error_ = std::current_exception();
      continue;
    }
    lk.lock();
  }
}

void StopPool::join_all() {
  {
    std::lock_guard lk(mu_);
    closed_ = true;
  }
  cv_.notify_all();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void StopPool::wait() {
  join_all();
  std::exception_ptr e;
  {
    std::lock_guard lk(mu_);
    e = std::exchange(first_error_, nullptr);
  }
  if (e) std::rethrow_exception(e);
}

}  // namespace kc::herder
