#include "core/analysis/summary.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "core/analysis/intervals.h"
#include "core/support/json_schema.h"
#include "core/support/saturating.h"

namespace kl::analysis {

SummaryResult computeSummary(const View& v, bool shortNames) {
  const auto& m = v.m;
  SummaryResult r;
  r.shortNames = shortNames;
  r.windowNs = v.windowLength();
  std::unordered_map<StrId, KernelRow> byName;
  struct StreamAcc {
    StreamRow row;
    std::vector<Interval> iv;
    std::unordered_map<StrId, int64_t> kernelNs;
  };
  std::map<StreamKey, StreamAcc> streams;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    int64_t d = op.duration();
    auto& s = streams[streamOf(op)];
    s.row.key = streamOf(op);
    s.iv.push_back({op.start, op.end});
    switch (op.kind) {
      case GpuOpKind::Kernel:
      case GpuOpKind::Graph: {  // a whole-graph row counts as one kernel-like op
        ++r.kernels;
        addTo(r.kernelNs, d);
        ++s.row.kernels;
        addTo(s.row.kernelNs, d);
        StrId name = op.name;
        if (shortNames) {
          if (const auto* k = m.kernel(op); k && k->shortName != profile::kEmptyStr) name = k->shortName;
        }
        addTo(s.kernelNs[name], d);
        auto& row = byName[name];
        if (row.count == 0) {
          row.name = name;
          row.minNs = row.maxNs = d;
        }
        ++row.count;
        addTo(row.totalNs, d);
        row.minNs = std::min(row.minNs, d);
        row.maxNs = std::max(row.maxNs, d);
        break;
      }
      case GpuOpKind::Memcpy:
        ++r.memcpys;
        addTo(r.memcpyNs, d);
        ++s.row.memcpys;
        addTo(s.row.memcpyNs, d);
        break;
      case GpuOpKind::Memset:
        ++r.memsets;
        addTo(r.memsetNs, d);
        ++s.row.memsets;
        addTo(s.row.memsetNs, d);
        break;
    }
  }
  for (auto& [name, row] : byName) {
    row.meanNs = static_cast<double>(row.totalNs) / static_cast<double>(row.count);
    row.share = r.kernelNs ? static_cast<double>(row.totalNs) / static_cast<double>(r.kernelNs) : 0;
    r.kernelsByTime.push_back(row);
  }
  std::sort(r.kernelsByTime.begin(), r.kernelsByTime.end(), [&](const KernelRow& a, const KernelRow& b) {
    if (a.totalNs != b.totalNs) return a.totalNs > b.totalNs;
    return m.str(a.name) < m.str(b.name);
  });
  for (auto& [key, s] : streams) {
    s.row.busyNs = totalLength(clip(unionOf(std::move(s.iv)), v.winStart, v.winEnd));
    for (const auto& [name, ns] : s.kernelNs) {
      if (ns > s.row.topKernelNs || (ns == s.row.topKernelNs && m.str(name) < m.str(s.row.topKernel))) {
        s.row.topKernel = name;
        s.row.topKernelNs = ns;
      }
    }
    r.streams.push_back(s.row);
  }
  return r;
}

void writeJson(json::Writer& w, const SummaryResult& r, const ProfileModel& m, size_t top) {
  w.beginObject()
      .field("schema", json_schema::kSummary)
      .field("window_ns", r.windowNs)
      .field("name_kind", r.shortNames ? "short" : "full");
  w.key("totals")
      .beginObject()
      .field("kernels", r.kernels)
      .field("kernel_ns", r.kernelNs)
      .field("memcpys", r.memcpys)
      .field("memcpy_ns", r.memcpyNs)
      .field("memsets", r.memsets)
      .field("memset_ns", r.memsetNs)
      .field("distinct_kernel_names", r.kernelsByTime.size())
      .endObject();
  w.key("top_kernels").beginArray();
  size_t n = top ? std::min(top, r.kernelsByTime.size()) : r.kernelsByTime.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& k = r.kernelsByTime[i];
    w.beginObject()
        .field("name", m.str(k.name))
        .field("count", k.count)
        .field("total_ns", k.totalNs)
        .field("mean_ns", k.meanNs)
        .field("min_ns", k.minNs)
        .field("max_ns", k.maxNs)
        .field("share", k.share)
        .endObject();
  }
  w.endArray();
  w.key("streams").beginArray();
  for (const auto& s : r.streams) {
    w.beginObject()
        .field("rank", s.key.rank)
        .field("device", s.key.device)
        .field("stream", s.key.stream)
        .field("kernels", s.kernels)
        .field("kernel_ns", s.kernelNs)
        .field("memcpys", s.memcpys)
        .field("memcpy_ns", s.memcpyNs)
        .field("memsets", s.memsets)
        .field("memset_ns", s.memsetNs)
        .field("busy_ns", s.busyNs)
        .field("top_kernel", m.str(s.topKernel))
        .field("top_kernel_ns", s.topKernelNs)
        .endObject();
  }
  w.endArray();
  w.endObject();
}

}  // namespace kl::analysis
