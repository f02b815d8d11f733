// The handful of values classification and the roofline need, found in a launch under any of
// the names ncu versions use for them: metric names (raw page, --metrics), current details-page
// labels, and the pre-2020.1 labels (`SOL FB`, `SM [%]`, `Memory [%]`, ...).
#pragma once

#include <optional>
#include <string>

#include "core/ncu/report.h"

namespace kl::ncu {

struct KernelMetrics {
  std::optional<double> durationNs;
  std::optional<double> smPct;   // Compute (SM) Throughput
  std::optional<double> memPct;  // Memory Throughput (SOL, %)
  std::optional<double> dramPct, l2Pct, l1Pct;
  std::optional<double> l1HitPct, l2HitPct;
  std::optional<double> achievedOccPct, theoreticalOccPct;
  std::optional<double> wavesPerSm;
  std::optional<double> smFreqHz;   // SOL section's SM frequency
  std::optional<double> dramBytes;  // dram__bytes.sum, else read + write
  /// Dominant warp stall reason (argmax of the per-reason stall metrics, excluding `selected`
  /// and `not_selected`), e.g. "long_scoreboard"; empty when no stall metrics were collected.
  std::string dominantStall;
  std::optional<double> dominantStallValue;
};

/// Extracts the values above from any supported layout. When `memPct` is absent it falls back to
/// max(dram, l2, l1) — the same quantity ncu's Memory Throughput summarises.
KernelMetrics extractMetrics(const NcuLaunch& launch);

/// A metric by any of several names; metric names match anywhere, labels only within a section
/// starting with `sectionPrefix` when one is given.
std::optional<double> metricValue(const NcuLaunch& launch, std::initializer_list<const char*> names,
                                  std::string_view sectionPrefix = {});

}  // namespace kl::ncu
