// Per-round statistics of the managed (`kl:`) ranges, in the shape the planner decides on:
// for every range NAME, over all its invocations, the inclusive numbers and — the decisive ones —
// the EXCLUSIVE launches per invocation (ops whose innermost kl: range is this invocation), and
// the distinct exclusive kernel sets (dynamic-dispatch variants). Plain data so decisions can be
// unit-tested on hand-built values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/attribution/attribution.h"
#include "core/profile/model.h"
#include "core/support/result.h"

namespace kl::planner {

struct KernelCount {
  std::string name;
  int64_t launches = 0;
  int64_t gpuNs = 0;
};

/// One distinct set of kernels an invocation launched (exclusive), with how many invocations did.
struct KernelSetVariant {
  std::vector<std::string> kernels;  // sorted, distinct
  uint32_t invocations = 0;
};

struct RangeRoundStats {
  uint32_t invocations = 0;
  int64_t launches = 0;                // inclusive GPU ops (kernels, memcpys, memsets)
  int64_t gpuNs = 0;                   // inclusive
  int64_t exclusiveLaunches = 0;
  int64_t exclusiveGpuNs = 0;
  uint32_t maxExclusivePerInvocation = 0;  // the most exclusive ops one invocation launched
  uint32_t maxDistinctPerInvocation = 0;   // ... distinct exclusive kernel names
  std::vector<KernelCount> exclusiveKernels;  // by GPU time, descending
  std::vector<KernelSetVariant> variants;     // distinct exclusive sets of invocations that launched
  std::vector<std::string> inclusiveKernels;  // distinct names launched inside (for --kernel)
};

struct UnmappedOps {
  std::string name;
  std::string reason;  // "outside_kl_ranges" | "no_launch_call"
  int64_t launches = 0;
  int64_t gpuNs = 0;
};

struct RoundStats {
  std::map<std::string, RangeRoundStats> ranges;  // by kl: range name
  std::vector<UnmappedOps> unmapped;              // by GPU time, descending
  int64_t totalOps = 0, totalGpuNs = 0, attributedOps = 0;
  int64_t pushes = 0;                             // kl: range invocations in the profile
  bool emulated = false;
};

/// Attributes `model` (kl: ranges only, DESIGN.md §5) and aggregates by range name.
Result<RoundStats> computeRoundStats(const profile::ProfileModel& model, const CancellationToken& cancel = {});

}  // namespace kl::planner
