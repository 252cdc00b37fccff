#pragma once
// A small expected-style result for the core (C++20 has no std::expected).
// Errors inside the core travel as values; exceptions stay at the edges
// (configuration, startup, CLI).

#include <string>
#include <utility>
#include <variant>

namespace kc {

/// A failure with a human-readable message. `field` names the wire or config
/// field that was being read when the failure happened (may be empty).
struct Error {
  std::string field;
  std::string message;

  /// "field: message", or just the message when no field is known.
  [[nodiscard]] std::string to_string() const {
    return field.empty() ? message : field + ": " + message;
  }
};

/// Either a value of type T or an Error. Check with `ok()` / `operator bool`
/// before calling `value()`; `error()` is valid only when `!ok()`.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}          // NOLINT: implicit by design
  Result(Error error) : v_(std::move(error)) {}      // NOLINT: implicit by design

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  [[nodiscard]] T& value() & { return std::get<0>(v_); }
  [[nodiscard]] const T& value() const& { return std::get<0>(v_); }
  [[nodiscard]] T&& value() && { return std::get<0>(std::move(v_)); }
  [[nodiscard]] const Error& error() const { return std::get<1>(v_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }

 private:
  std::variant<T, Error> v_;
};

/// Result of an operation that yields nothing on success.
struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() { return Unit{}; }

}  // namespace kc
