// `memcpy`: memory transfers and memsets grouped by copy kind (HtoD, DtoH, DtoD, PtoP, ...;
// memsets as "memset") and host memory kind, with bytes, time and bandwidth
// (bytes / duration, decimal GB/s). Pageable host memory is flagged: such copies are
// staged and synchronous with respect to the host.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/analysis/view.h"
#include "core/support/json_writer.h"

namespace kl::analysis {

struct MemcpyRow {
  std::string kind;    // "HtoD", ..., "memset"
  std::string memory;  // "pageable", "pinned", "device", "managed", "" (unknown/mixed)
  uint64_t count = 0;
  int64_t bytes = 0, totalNs = 0;
  double minGBps = 0, maxGBps = 0;  // per-op bandwidth extremes (ops with duration > 0)
  double avgGBps() const { return totalNs ? static_cast<double>(bytes) / static_cast<double>(totalNs) : 0; }
};

struct MemcpyResult {
  std::vector<MemcpyRow> rows;  // by total time desc
  uint64_t count = 0;
  int64_t bytes = 0, totalNs = 0;
};

/// Name of ENUM_CUDA_MEM_KIND values we show ("pageable", "pinned", "device", "array",
/// "managed", "device static", "managed static"; "" for unknown).
std::string memKindName(uint8_t k);

MemcpyResult computeMemcpy(const View& v);
void writeJson(json::Writer& w, const MemcpyResult& r);

}  // namespace kl::analysis
