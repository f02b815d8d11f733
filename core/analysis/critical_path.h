// `critical-path`: per iteration (step), how the step's time splits between the CPU issuing work
// and the GPU executing it, seen from the GPU's side.
//
// Iterations come from `iters` (NVTX/annotation step ranges, else a repeating kernel sequence).
// The iteration's ops:
//   nvtx method: GPU ops of the iteration's rank whose launch call STARTS inside the step range
//                (any thread of that rank: autograd/backward threads included);
//   sequence method: ops of the lane device that start inside the iteration.
// U = union of those ops' intervals (all streams together). Pieces of the step, in ns:
//   gpu_busy        |U|
//   cpu_lead        first op start - step start (nvtx only; the CPU ran before any GPU work)
//   gpu_wait_cpu    every hole [g0, g1) of U whose next op (the op starting at g1) was launched
//                   by a call that ENDED after g0: the GPU ran out of issued work and waited for
//                   the CPU to issue more (the whole hole counts)
//   other_idle      every other hole: work was issued but did not run (event/stream waits,
//                   host-side copies, launch latency); holes whose next op has no launch call
//                   in the capture count here too
//   cpu_tail        step end - last op end when the step range ends later (nvtx only)
// wall = cpu_lead + gpu_busy + gpu_wait_cpu + other_idle + cpu_tail (= max(step end, last op
// end) - min(step start, first op start)). CPU on the critical path = cpu_lead + gpu_wait_cpu +
// cpu_tail. An iteration is LAUNCH-BOUND when that exceeds gpu_busy, else GPU-BOUND.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/iters.h"
#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct CriticalIteration {
  std::string label;
  int32_t rank = 0;
  int64_t start = 0, end = 0;  // absolute: step range (nvtx) / kernel span (sequence)
  uint64_t ops = 0;
  int64_t wallNs = 0, gpuBusyNs = 0, cpuLeadNs = 0, gpuWaitCpuNs = 0, otherIdleNs = 0, cpuTailNs = 0;
  uint64_t cpuWaitHoles = 0;
  bool launchBound = false;
  int64_t cpuPathNs() const { return cpuLeadNs + gpuWaitCpuNs + cpuTailNs; }
};

struct CriticalPathResult {
  IterMethod method = IterMethod::None;  // from iters
  std::string detail;                    // from iters
  std::vector<CriticalIteration> iterations;
  uint64_t launchBound = 0;
  int64_t wallNs = 0, gpuBusyNs = 0, cpuLeadNs = 0, gpuWaitCpuNs = 0, otherIdleNs = 0, cpuTailNs = 0;
};

/// Requires v.attr for the nvtx method (op -> launch call).
CriticalPathResult computeCriticalPath(const View& v);
void writeJson(json::Writer& w, const CriticalPathResult& r, const View& v);

}  // namespace kl::analysis
