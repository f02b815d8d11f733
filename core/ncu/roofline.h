// A DRAM roofline point per launch, computed the way ncu's SpeedOfLight_RooflineChart does:
// FLOPs = FADD + FMUL + 2*FFMA (fp32; + fp64 D* ops; + tensor-pipe ops where collected),
// bytes = dram__bytes.sum, peaks = per-cycle peak x clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/ncu/report.h"

namespace kl::ncu {

struct RooflinePoint {
  bool ok = false;                          // flopsPerSec and bytesPerSec are known
  double flopsPerSec = 0;                   // achieved FLOP/s (CUDA cores + tensor where present)
  double bytesPerSec = 0;                   // achieved DRAM bytes/s
  double intensity = 0;                     // FLOP per DRAM byte
  std::optional<double> tensorFlopsPerSec;  // the tensor-pipe part, when a counter was collected
  std::optional<double> peakFlopsPerSec;    // fp32 FFMA peak (2 x FFMA/cycle x SM clock)
  std::optional<double> peakBytesPerSec;    // DRAM peak (bytes/cycle x DRAM clock)
  std::optional<double> ridge;              // peakFlops / peakBytes
  /// "roofline chart" (details page, SpeedOfLight_RooflineChart section) or "counters"
  /// (raw page / --metrics sums over gpu__time_duration).
  std::string source;
  /// When !ok (or a peak is absent): the metrics that were missing, by name.
  std::vector<std::string> missing;
  std::string missingText() const;
};

RooflinePoint rooflinePoint(const NcuLaunch& launch);

}  // namespace kl::ncu
