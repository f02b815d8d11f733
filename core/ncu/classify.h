// Bound classification: NVIDIA's speed-of-light rule (the SOLBottleneck rule's thresholds), then
// refined with the memory level, hit rates, occupancy, grid size and the dominant stall reason.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "core/ncu/metrics.h"

namespace kl::ncu {

enum class Bound { Compute, Memory, Latency, Balanced, Unknown };
/// "compute", "memory", "latency", "balanced", "unknown".
std::string_view boundName(Bound b);
std::optional<Bound> parseBound(std::string_view s);

/// The busiest memory level of a memory-bound kernel (Unknown: not memory-bound, or not measured).
enum class MemoryLevel { Unknown, Dram, L2, L1 };
/// "" (Unknown), "dram", "l2", "l1" (the catalogue's and the JSON's spelling).
std::string_view memoryLevelName(MemoryLevel l);
std::optional<MemoryLevel> parseMemoryLevel(std::string_view s);

struct Thresholds {
  double latency = 60;   // both SM% and memory% below this -> latency-bound
  double balanced = 10;  // |SM% - memory%| at least this -> compute- or memory-bound
  double nearPeak = 80;  // max(SM%, memory%) at least this -> "near peak"
  double lowOccupancy = 25;
};

struct Classification {
  Bound bound = Bound::Unknown;
  std::optional<double> smPct, memPct;
  /// Memory-bound: the busiest memory level.
  MemoryLevel limiter = MemoryLevel::Unknown;
  /// Latency-bound refinements: "small grid (0.7 waves)", "low occupancy (11%)",
  /// "stall: long_scoreboard (global-memory latency)"; memory-bound: hit-rate notes.
  std::string detail;
  bool nearPeak = false;
  /// Why the class is unknown: the metrics that were missing.
  std::string missing;
  /// One sentence for hovers and reports.
  std::string summary() const;
};

Classification classify(const KernelMetrics& m, const Thresholds& t = {});

/// The bound class of a kernel by name from an ncu report's launches (first match on the
/// normalised name); what editor hovers call. Unknown when the kernel is not in `launches`.
Classification boundForKernel(std::string_view kernelName, const NcuReport& report, const Thresholds& t = {});

}  // namespace kl::ncu
