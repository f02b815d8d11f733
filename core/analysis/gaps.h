// `gaps`: idle time on each GPU (all streams together) and on each stream, the largest idle
// gaps, and what the CPU of the owning process(es) was doing during each listed gap.
//
// A gap is an interval between two ops of a lane (device or stream) in which no op of that
// lane runs: ops sorted by start, a gap opens when an op starts after the latest end so far.
// Time before the first and after the last op of a lane is not a gap. Only gaps of at least
// `minGapNs` are counted in gapCount/gapNs and listed; idleNs counts every hole.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct GapsOptions {
  int64_t minGapNs = 10'000;  // 10 µs
  size_t top = 20;            // gaps listed (largest first), with CPU activity
  bool perStream = false;     // list stream gaps instead of device gaps
  /// Only the first `detail` listed gaps get their CPU activity (api/ranges) filled: that scan
  /// costs O(API calls in reach + ranges) per gap. The launch of the next op is always set.
  size_t detail = 20;
};

struct GapLane {
  DeviceKey dev;
  std::optional<uint32_t> stream;  // empty for the device lane
  uint64_t ops = 0;
  int64_t spanNs = 0;     // first op start .. last op end (clipped to the window)
  int64_t busyNs = 0;     // union of ops
  int64_t idleNs = 0;     // spanNs - busyNs
  uint64_t gapCount = 0;  // gaps >= minGapNs
  int64_t gapNs = 0;
};

struct NameTime {
  StrId name = 0;
  uint64_t count = 0;
  int64_t ns = 0;  // time inside the gap (clipped)
};

struct Gap {
  DeviceKey dev;
  std::optional<uint32_t> stream;
  int64_t start = 0, end = 0;              // absolute ns
  uint32_t before = kNone, after = kNone;  // gpuOps indices around the gap
  uint32_t afterLaunch = kNone;            // apiCalls index of the launch of `after` (needs attribution)
  std::vector<NameTime> api;               // API calls of the device's processes overlapping the gap
  std::vector<NameTime> ranges;            // ranges (NVTX / annotations / cpu ops) overlapping the gap
  int64_t length() const { return end - start; }
  /// The op after the gap was launched by a call that ended after the gap began: the GPU
  /// waited for the CPU to issue work.
  bool launchedDuringGap(const ProfileModel& m) const;
};

struct GapsResult {
  GapsOptions opts;
  std::vector<GapLane> devices;
  std::vector<GapLane> streams;
  std::vector<Gap> top;  // largest first
};

GapsResult computeGaps(const View& v, const GapsOptions& o = {});
/// Fills gap.api / gap.ranges (done by computeGaps for the first `detail` gaps).
void fillCpuActivity(const View& v, Gap& gap);
void writeJson(json::Writer& w, const GapsResult& r, const View& v);

}  // namespace kl::analysis
