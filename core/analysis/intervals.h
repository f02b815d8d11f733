// Interval arithmetic over half-open [start, end) ns intervals: union, intersection,
// difference, clipping. Every function taking "a union" expects sorted, disjoint, non-empty
// intervals (the output of unionOf); all are linear (merge-style) or O(log n) per query.
#pragma once

#include <cstdint>
#include <vector>

namespace kl::analysis {

struct Interval {
  int64_t start = 0, end = 0;
  int64_t length() const { return end - start; }
};
using IntervalSet = std::vector<Interval>;  // sorted, disjoint, non-empty

/// Sorts and merges (touching intervals merge; empty ones are dropped).
IntervalSet unionOf(std::vector<Interval> v);
int64_t totalLength(const IntervalSet& u);
IntervalSet intersect(const IntervalSet& a, const IntervalSet& b);
/// a minus b.
IntervalSet subtract(const IntervalSet& a, const IntervalSet& b);
IntervalSet clip(const IntervalSet& u, int64_t lo, int64_t hi);
/// Length of [s, e) covered by u (binary search + scan of the overlapping part).
int64_t coveredLength(const IntervalSet& u, int64_t s, int64_t e);
/// The idle intervals between the members of u (not before the first / after the last).
IntervalSet holes(const IntervalSet& u);

}  // namespace kl::analysis
