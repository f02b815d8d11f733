// Saturating integer arithmetic for totals of numbers that come from a profile (durations, bytes,
// element counts): a sum or product that would overflow int64 pins at the limit instead of
// wrapping to a negative or tiny number (undefined behaviour in C++). Readers already refuse
// single values beyond plausible bounds (core/profile/validate.h); these keep any number of them
// summed, or multiplied by a shape, meaningful. A saturated value prints as the limit
// (9223372036854775807 ns ≈ 292 years), never as nonsense.
#pragma once

#include <cstdint>

namespace kl {

/// a + b, saturated at INT64_MAX / INT64_MIN.
inline int64_t addSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/// a * b, saturated at INT64_MAX / INT64_MIN.
inline int64_t mulSat(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
  return r;
}

/// acc += v, saturated: every running total of durations or bytes goes through this.
inline void addTo(int64_t& acc, int64_t v) { acc = addSat(acc, v); }

}  // namespace kl
