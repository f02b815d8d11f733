// Joins Nsight Compute launches to the kernels of an nsys/Kineto ProfileModel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ncu/report.h"
#include "core/profile/model.h"

namespace kl::ncu {

struct JoinOptions {
  /// ncu was run with --launch-skip N (per kernel filter): the first ncu launch of a kernel is
  /// its (N+1)-th launch in the profile.
  int64_t launchSkip = 0;
};

struct JoinMatch {
  size_t launch = 0;   // index into NcuReport::launches
  uint32_t gpuOp = 0;  // index into ProfileModel::gpuOps
  std::string how;     // "mangled" (exact mangled name) or "name" (normalised name)
};

struct JoinResult {
  std::vector<JoinMatch> matches;
  std::vector<size_t> unmatched;  // ncu launches with no counterpart
};

/// Key = kernel name (the mangled name when ncu printed mangled names and the profile has them,
/// else normalizedKey() of both sides) + grid + block (ignored where the profile does not know
/// them); within one key, ncu launches in ID order meet profile kernels in launch (start) order,
/// shifted by `launchSkip`. Summary and nsys-summary rows (no launch identity) are not joined.
JoinResult joinToProfile(const NcuReport& report, const profile::ProfileModel& model, const JoinOptions& opt = {});

}  // namespace kl::ncu
