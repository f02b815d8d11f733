// Result<T>: a value or an Error, for expected failures across the core API.
// Core functions never throw across their API; programmer errors assert.
#pragma once

#include <cassert>
#include <string>
#include <utility>
#include <variant>

namespace kl {

/// What went wrong, in one line a user can act on ("profile.sqlite: not an nsys export (no
/// table StringIds)"). `code` distinguishes kinds where a caller must branch on them.
struct Error {
  enum class Code { Invalid, NotFound, Io, Cancelled, Unsupported, Internal };
  Code code = Code::Invalid;
  std::string message;

  static Error invalid(std::string m) { return {Code::Invalid, std::move(m)}; }
  static Error notFound(std::string m) { return {Code::NotFound, std::move(m)}; }
  static Error io(std::string m) { return {Code::Io, std::move(m)}; }
  static Error cancelled() { return {Code::Cancelled, "cancelled"}; }
  static Error unsupported(std::string m) { return {Code::Unsupported, std::move(m)}; }
  static Error internal(std::string m) { return {Code::Internal, std::move(m)}; }
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    assert(ok());
    return std::get<0>(v_);
  }
  const T& value() const& {
    assert(ok());
    return std::get<0>(v_);
  }
  T&& value() && {
    assert(ok());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    assert(!ok());
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

/// Result of an operation with no value.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : err_(std::move(error)), ok_(false) {}
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    assert(!ok_);
    return err_;
  }

 private:
  Error err_;
  bool ok_ = true;
};

}  // namespace kl

/// Inside a function returning Result<...>: evaluates a Result-returning expression and returns
/// its error, if any.
#define KL_TRY(expr)                 \
  do {                               \
    auto _r = (expr);                \
    if (!_r.ok()) return _r.error(); \
  } while (0)
