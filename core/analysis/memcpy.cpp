#include "core/analysis/memcpy.h"

#include <algorithm>
#include <map>

#include "core/support/saturating.h"

namespace kl::analysis {

std::string memKindName(uint8_t k) {
  switch (k) {
    case 0: return "pageable";
    case 1: return "pinned";
    case 2: return "device";
    case 3: return "array";
    case 4: return "managed";
    case 5: return "device static";
    case 6: return "managed static";
    default: return "";
  }
}

MemcpyResult computeMemcpy(const View& v) {
  const auto& m = v.m;
  MemcpyResult r;
  std::map<std::pair<std::string, std::string>, MemcpyRow> rows;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    std::string kind, mem;
    int64_t bytes = 0;
    if (op.kind == GpuOpKind::Memcpy && op.detail < m.memcpys.size()) {
      const auto& d = m.memcpys[op.detail];
      kind = std::string(profile::copyKindName(d.copyKind));
      bytes = d.bytes;
      // The host side decides pageable vs pinned: source for HtoD, destination for DtoH.
      uint8_t host = d.copyKind == 1 ? d.srcKind : d.copyKind == 2 ? d.dstKind : 255;
      mem = memKindName(host);
    } else if (op.kind == GpuOpKind::Memset && op.detail < m.memsets.size()) {
      kind = "memset";
      bytes = m.memsets[op.detail].bytes;
      mem = memKindName(m.memsets[op.detail].memKind);
    } else if (op.kind == GpuOpKind::Memcpy || op.kind == GpuOpKind::Memset) {
      kind = op.kind == GpuOpKind::Memcpy ? "unknown" : "memset";
    } else {
      continue;
    }
    auto& row = rows[{kind, mem}];
    row.kind = kind;
    row.memory = mem;
    ++row.count;
    addTo(row.bytes, bytes);
    addTo(row.totalNs, op.duration());
    if (op.duration() > 0) {
      double bw = static_cast<double>(bytes) / static_cast<double>(op.duration());
      if (row.maxGBps == 0 && row.minGBps == 0) row.minGBps = row.maxGBps = bw;
      row.minGBps = std::min(row.minGBps, bw);
      row.maxGBps = std::max(row.maxGBps, bw);
    }
    ++r.count;
    addTo(r.bytes, bytes);
    addTo(r.totalNs, op.duration());
  }
  for (auto& [k, row] : rows) r.rows.push_back(row);
  std::sort(r.rows.begin(), r.rows.end(), [](const MemcpyRow& a, const MemcpyRow& b) {
    return a.totalNs != b.totalNs ? a.totalNs > b.totalNs : a.kind < b.kind;
  });
  return r;
}

void writeJson(json::Writer& w, const MemcpyResult& r) {
  w.beginObject().field("count", r.count).field("bytes", r.bytes).field("total_ns", r.totalNs);
  w.key("kinds").beginArray();
  for (const auto& row : r.rows) {
    w.beginObject()
        .field("kind", row.kind)
        .field("memory", row.memory)
        .field("count", row.count)
        .field("bytes", row.bytes)
        .field("total_ns", row.totalNs)
        .field("avg_gbps", row.avgGBps())
        .field("min_gbps", row.minGBps)
        .field("max_gbps", row.maxGBps)
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
