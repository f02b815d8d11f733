// Plausibility of the numbers a profile reader takes from a file. A row whose times are not
// integers, lie beyond +-2^61 ns, end before they start (a negative duration), or last longer
// than any capture could is skipped and counted (Metadata::skippedRows), never clamped into a
// plausible-looking value; front ends print one warning line with the count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/support/saturating.h"  // addSat/addTo for sums of the values read

namespace kl::profile {

/// Longer than this, one GPU op or API call is corrupt (a day: no capture is that long).
constexpr int64_t kMaxIntervalNs = int64_t{86400} * 1000 * 1000 * 1000;
/// Beyond +-this, a timestamp is corrupt (2^61 ns = 73 years from the clock's origin; keeps
/// differences, rank offsets and sums of plausible intervals far from int64 overflow).
constexpr int64_t kMaxTimestampNs = int64_t{1} << 61;

/// Why [start, end] is not a usable interval; nullptr when it is.
/// `maxLen`: kMaxIntervalNs for GPU ops and API calls; NVTX ranges may span a whole run.
inline const char* badInterval(int64_t start, int64_t end, int64_t maxLen = kMaxIntervalNs) {
  if (start < -kMaxTimestampNs || start > kMaxTimestampNs || end < -kMaxTimestampNs || end > kMaxTimestampNs)
    return "a time beyond 2^61 ns";
  if (end < start) return "an end before its start";
  if (end - start > maxLen)
    return maxLen == kMaxIntervalNs ? "a duration longer than a day" : "a duration beyond 2^61 ns";
  return nullptr;
}

/// Rows skipped by a reader: the count and the first reason ("CUPTI_ACTIVITY_KIND_KERNEL: a
/// start that is not an integer").
struct SkippedRows {
  uint64_t count = 0;
  std::string first;
  void add(std::string_view where, std::string_view why) {
    if (count++ == 0) first = std::string(where) + ": " + std::string(why);
  }
  void merge(const SkippedRows& o) {
    if (!count) first = o.first;
    count += o.count;
  }
  /// "3 rows with corrupt numbers skipped (first: ...)"; "" when none.
  std::string warning() const {
    if (!count) return "";
    return std::to_string(count) + (count == 1 ? " row" : " rows") + " with corrupt numbers skipped (first: " + first +
           ")";
  }
};

}  // namespace kl::profile
