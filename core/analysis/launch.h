// `launch`: launch overhead and queue delay for every GPU op whose launch call is in the
// capture (needs attribution's op -> launch link):
//   launch overhead = call.end - call.start (CPU time in the launch API call; each call once)
//   queue delay     = op.start - call.end (how long the op waited after the call returned;
//                     negative when the GPU started it before the call returned — counted
//                     separately, and taken as 0 in the distribution).
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/stats.h"
#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct LaunchKernelRow {
  StrId name = 0;
  uint64_t count = 0;
  double meanApiNs = 0, meanQueueNs = 0, meanGpuNs = 0;
  int64_t maxQueueNs = 0;
};

struct LaunchApiRow {
  StrId name = 0;
  Dist overhead;
};

struct LaunchResult {
  uint64_t ops = 0, withLaunch = 0, negativeQueue = 0;
  Dist overhead;                         // per distinct launch call
  Dist queue;                            // per op
  std::vector<LaunchApiRow> apis;        // by call count desc
  std::vector<LaunchKernelRow> kernels;  // by mean queue delay desc
  uint64_t launchBoundKernels = 0;       // kernels whose duration < their launch overhead
};

/// Requires v.attr (returns an empty result without it).
LaunchResult computeLaunch(const View& v);
void writeJson(json::Writer& w, const LaunchResult& r, const ProfileModel& m, size_t top);

}  // namespace kl::analysis
