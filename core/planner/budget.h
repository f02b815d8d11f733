// Overhead budget: what the instrumentation costs and which ranges to stop wrapping.
//  - NVTX pushes per launch: kl: range invocations / GPU ops of the round (global), and per range
//    (decide.h rule 2).
//  - Wall time: the round's wall time against one uninstrumented run of the same entry (the
//    baseline). The cost of one push is estimated as (wall - baseline) / pushes; when the overhead
//    is over Policy::maxWallOverhead AND the round pushed more ranges than it launched kernels
//    (otherwise the difference is noise, not instrumentation), the most-invoked non-root ranges are
//    refused until the estimated overhead fits.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace kl::planner {

struct Overhead {
  int64_t baselineWallMs = -1;  // -1: not measured
  int64_t wallMs = 0;           // the round
  int64_t pushes = 0;
  int64_t launches = 0;
  double pushesPerLaunch() const {
    return launches ? static_cast<double>(pushes) / static_cast<double>(launches) : 0.0;
  }
  /// wall / baseline - 1; 0 when no baseline.
  double wallOverhead() const {
    return baselineWallMs > 0 ? static_cast<double>(wallMs) / static_cast<double>(baselineWallMs) - 1.0 : 0.0;
  }
};

struct RangeCost {
  int id = -1;
  uint32_t invocations = 0;
  bool root = false;
};

struct WallRefusal {
  int id = -1;
  std::string reason;
};

/// The ranges to refuse for the next round under the wall-time budget (empty when within it).
std::vector<WallRefusal> wallRefusals(const Overhead& o, std::vector<RangeCost> ranges, double maxWallOverhead);

}  // namespace kl::planner
