// `nccl`: NCCL collectives grouped by type (AllReduce, AllGather, ReduceScatter, SendRecv,
// ...; read from the kernel name, see classify.h), with time, and how much of each type's
// time was hidden behind compute kernels on the same GPU (interval-union based), plus the
// NCCL ranges by name: ranges in an NVTX domain whose name contains "nccl", or whose text
// starts with "nccl" (case-insensitive; covers NCCL's own ncclGroupEnd/ncclAllReduce ranges
// when the domain-name row is missing, and PyTorch's "nccl:all_reduce" annotations).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct NcclRow {
  std::string type;
  uint64_t count = 0;
  int64_t totalNs = 0, minNs = 0, maxNs = 0;
  int64_t overlappedNs = 0;     // part of each kernel's interval covered by compute (same GPU)
  uint64_t devices = 0;         // distinct (rank, device)
};

struct NcclRangeRow {
  StrId text = 0;
  uint64_t count = 0;
  int64_t totalNs = 0;          // CPU-side range durations
};

struct NcclResult {
  std::vector<NcclRow> types;         // by total desc
  std::vector<NcclRangeRow> ranges;   // NCCL ranges (see above), by count desc
  int64_t ncclNs = 0, kernelNs = 0;   // all NCCL kernel time; all kernel time (for shares)
};

NcclResult computeNccl(const View& v);
void writeJson(json::Writer& w, const NcclResult& r, const ProfileModel& m);

}  // namespace kl::analysis
