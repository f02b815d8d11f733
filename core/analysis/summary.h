// `summary`: GPU time by op kind, the top kernels (by total duration) and per-stream totals.
// Kernel totals are plain sums of (end - start) per name; busy time is an interval union.
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct KernelRow {
  StrId name = 0;  // display name (or short name with shortNames)
  uint64_t count = 0;
  int64_t totalNs = 0, minNs = 0, maxNs = 0;
  double meanNs = 0;
  double share = 0;  // of all kernel time in scope
};

struct StreamRow {
  StreamKey key;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  int64_t kernelNs = 0, memcpyNs = 0, memsetNs = 0;
  int64_t busyNs = 0;  // union of op intervals on the stream, clipped to the window
  StrId topKernel = 0;
  int64_t topKernelNs = 0;
};

struct SummaryResult {
  int64_t windowNs = 0;
  uint64_t kernels = 0, memcpys = 0, memsets = 0;
  int64_t kernelNs = 0, memcpyNs = 0, memsetNs = 0;
  bool shortNames = false;
  std::vector<KernelRow> kernelsByTime;  // all names, by total desc, then name
  std::vector<StreamRow> streams;        // by (rank, device, stream)
};

/// Groups kernels by display name (shortNames: by kernel short name).
SummaryResult computeSummary(const View& v, bool shortNames = false);
/// Writes at most `top` kernel rows (0 = all).
void writeJson(json::Writer& w, const SummaryResult& r, const ProfileModel& m, size_t top);

}  // namespace kl::analysis
