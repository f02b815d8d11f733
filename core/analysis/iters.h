// `iters`: iteration (training/inference step) detection. Two methods, tried in order; the
// result always says which one was used:
//  1. "nvtx": ranges named like steps — "ProfilerStep#N" first, else texts matching
//     (iter|iteration|step|batch|epoch)[ _#:=-]*N (case-insensitive). Texts are grouped by
//     their digit-free form; the largest group (>= 2 ranges, lowest rank) wins. An iteration
//     is the range's CPU interval; its kernels are the ops attributed to it (attribution).
//  2. "kernel-sequence": on the (rank, device) with most kernels, the kernel-name sequence
//     (start order) is cut at every occurrence of an anchor kernel; the anchor whose segments
//     repeat identically over the most kernels (count x length, length >= 2) wins. Found with
//     prefix hashes: O(N) over all anchors. Iterations start at each anchor occurrence
//     (not necessarily at the true step boundary) and span their segment's kernels.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/stats.h"
#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct Iteration {
  std::string label;                 // range text or "#k"
  int64_t start = 0, end = 0;        // absolute: CPU range (nvtx) or kernel span (sequence)
  uint64_t ops = 0;                  // ops attributed (nvtx) / kernels in the segment (sequence)
  int64_t gpuNs = 0;                 // sum of their durations
  int64_t gpuStart = 0, gpuEnd = 0;  // envelope of those ops (0,0 when none)
  int32_t rank = 0;                  // the range's rank (nvtx) / the lane's rank (sequence)
  int32_t device = -1;               // kernel-sequence: the lane's device; nvtx: -1
};

/// How iterations were found: step-like NVTX ranges, a repeating kernel sequence, or not at all.
enum class IterMethod : uint8_t { None, Nvtx, KernelSequence };
/// "none", "nvtx", "kernel-sequence" (the JSON and text spelling).
const char* iterMethodName(IterMethod m);

struct ItersResult {
  IterMethod method = IterMethod::None;
  std::string detail;  // what matched (pattern, anchor kernel, period, coverage)
  std::vector<Iteration> iterations;
  Dist durations;       // of end - start
  double coverage = 0;  // kernel-sequence: fraction of the lane's kernels covered
};

ItersResult computeIters(const View& v);
void writeJson(json::Writer& w, const ItersResult& r, const View& v);

}  // namespace kl::analysis
