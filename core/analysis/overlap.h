// `overlap`: per GPU, how compute kernels, NCCL kernels and memory ops (memcpy + memset)
// overlap in time. Every number is a length of an interval union (never a sum of
// durations), clipped to the analysed window; so concurrent kernels on several streams
// count once.
#pragma once

#include <cstdint>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct OverlapRow {
  DeviceKey dev;
  int64_t activeSpanNs = 0;   // first op start .. last op end on the device (clipped)
  int64_t busyNs = 0;         // |C ∪ N ∪ M|
  int64_t computeNs = 0;      // |C|
  int64_t ncclNs = 0;         // |N|
  int64_t memNs = 0;          // |M|
  int64_t computeNcclNs = 0;  // |C ∩ N|
  int64_t computeMemNs = 0;   // |C ∩ M|
  int64_t ncclMemNs = 0;      // |N ∩ M|
  int64_t ncclExposedNs = 0;  // |N − C|: communication not hidden behind compute
  int64_t memExposedNs = 0;   // |M − C|
  int64_t computeOnlyNs = 0;  // |C − N − M|
  int64_t idleNs = 0;         // activeSpan − busy
};

struct OverlapResult {
  std::vector<OverlapRow> devices;  // by (rank, device)
};

OverlapResult computeOverlap(const View& v);
void writeJson(json::Writer& w, const OverlapResult& r);

}  // namespace kl::analysis
