// `nccl`: NCCL collectives grouped by type (AllReduce, AllGather, ReduceScatter, SendRecv,
// ...; read from the kernel name, see classify.h), with time, and how much of each type's
// time was hidden behind compute kernels on the same GPU (interval-union based), plus the
// NCCL ranges by name: ranges in an NVTX domain whose name contains "nccl", or whose text
// starts with "nccl" (case-insensitive; covers NCCL's own ncclGroupEnd/ncclAllReduce ranges
// when the domain-name row is missing, and PyTorch's "nccl:all_reduce" annotations).
//
// Payloads (per NCCL kernel = one collective call on one rank):
//  - size: Kineto kernel args (In/Out msg nelems x dtype size), else the shapes of the innermost
//    "nccl:<op>" annotation around the launch (first input's element count x its dtype size);
//    nsys exports do not carry NCCL payload values (NVTX payloads are not exported), so sizes
//    there are unknown. The collective's S follows nccl-tests (doc/PERFORMANCE.md): AllGather
//    uses the output size, every other collective the input size.
//  - algorithm / protocol: read from the kernel name (..._RING_LL, _TREE_LL128, _NVLS_SIMPLE).
//  - n (ranks in the collective): Kineto "Group size", else the number of ranks loaded.
//  - algbw = S / t, busbw = algbw x factor with t = the kernel's duration and factor
//    2(n-1)/n AllReduce, (n-1)/n AllGather/ReduceScatter/AllToAll, 1 Broadcast/Reduce/SendRecv.
//    The kernel's duration includes waiting for the other ranks: the straggler table shows it.
//  - link peak: the GPU's NVLink bandwidth per direction (gpu_peaks.h); busbw / peak per row.
// Stragglers (several ranks): the k-th NCCL kernel of a collective type (and process group,
// when recorded) on each rank is the same collective call; arrival = the kernel's start on the
// model timeline (ranks aligned, reader.h). Per call: the rank that arrived last and the skew
// (last start - first start); per rank: calls where it was last, and the time its kernels
// waited for later ranks (sum of last start - own start).
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
  int64_t overlappedNs = 0;  // part of each kernel's interval covered by compute (same GPU)
  uint64_t devices = 0;      // distinct (rank, device)
};

struct NcclRangeRow {
  StrId text = 0;
  uint64_t count = 0;
  int64_t totalNs = 0;  // CPU-side range durations
};

struct NcclPayloadRow {
  std::string type, algo, proto, dtype;
  int64_t bytes = -1;  // S (nccl-tests convention); -1 unknown
  int32_t ranks = 0;   // n; 0 unknown
  uint64_t count = 0;
  int64_t totalNs = 0;
  double busBytes = 0;       // sum of S x factor (for the aggregate busbw)
  double peakGBps = 0;       // link peak (0 unknown)
  std::string sizeSource;    // "kernel-args", "annotation", "" (unknown)
  double algbwGBps() const;  // sum S / sum t (GB/s); 0 unknown
  double busbwGBps() const;
};

struct NcclStragglerCall {
  std::string type, processGroup;
  uint64_t index = 0;  // k-th call of that type (and group) on each rank
  uint32_t ranks = 0;
  int32_t lastRank = 0, firstRank = 0;
  int64_t skewNs = 0;  // last start - first start
  int64_t start = 0;   // absolute: first arrival
};

struct NcclStragglerRank {
  int32_t rank = 0;
  uint64_t calls = 0, last = 0;
  int64_t waitedNs = 0;  // sum over calls of (last start - own start)
  int64_t causedNs = 0;  // sum of skews of the calls where it was last
};

struct NcclResult {
  std::vector<NcclPayloadRow> payloads;           // by total time desc
  std::vector<NcclStragglerCall> stragglerCalls;  // by skew desc
  std::vector<NcclStragglerRank> stragglerRanks;  // by rank
  int64_t knownSizeCalls = 0;
  std::vector<NcclRow> types;        // by total desc
  std::vector<NcclRangeRow> ranges;  // NCCL ranges (see above), by count desc
  int64_t ncclNs = 0, kernelNs = 0;  // all NCCL kernel time; all kernel time (for shares)
};

NcclResult computeNccl(const View& v);
void writeJson(json::Writer& w, const NcclResult& r, const ProfileModel& m, size_t top = 50);

/// nccl-tests bus-bandwidth factor for a collective type and n ranks (0 when unknown).
double busBwFactor(std::string_view type, int32_t n);
/// Algorithm and protocol tokens of an NCCL kernel name ("RING", "LL"); "" when absent.
void ncclAlgoProto(std::string_view kernelName, std::string& algo, std::string& proto);
/// Bytes per element of a PyTorch dtype name ("Float" 4, "BFloat16" 2, ...); 0 unknown.
int dtypeBytes(std::string_view dtype);

}  // namespace kl::analysis
