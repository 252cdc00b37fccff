#pragma once
// A stop token that is stopped as soon as either of two others is: a wait
// of a task's thread that must end on the task's stop or on the herder's
// (DistributedHerder::Impl::await_fencing), with one
// std::condition_variable_any / kc::wait_for_stop wait.

#include <stop_token>

namespace kc::herder {

/// Joins two stop tokens: token() is stopped once `a` or `b` is (at
/// construction already, when one of them is). A default token (no stop
/// source) never stops. Neither copyable nor movable (its callbacks point at
/// its own stop_source); the callbacks are removed when it is destroyed.
/// Thread-safe as std::stop_callback is: a stop requested on another thread
/// wakes a wait on token() at once.
class EitherStop {
 public:
  EitherStop(const std::stop_token& a, const std::stop_token& b)
      : on_a_(a, Request{&source_}), on_b_(b, Request{&source_}) {}
  EitherStop(const EitherStop&) = delete;
  EitherStop& operator=(const EitherStop&) = delete;

  /// Stopped once either input is.
  [[nodiscard]] std::stop_token token() const { return source_.get_token(); }

 private:
  struct Request {
    std::stop_source* source;
    void operator()() const noexcept { source->request_stop(); }
  };
  std::stop_source source_;  // declared first: the callbacks may fire while they are constructed
  std::stop_callback<Request> on_a_;
  std::stop_callback<Request> on_b_;
};

}  // namespace kc::herder
