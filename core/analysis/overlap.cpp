#include "core/analysis/overlap.h"

#include <algorithm>
#include <map>

#include "core/analysis/classify.h"
#include "core/analysis/intervals.h"

namespace kl::analysis {

OverlapResult computeOverlap(const View& v) {
  struct Acc {
    std::vector<Interval> c, n, mem;
    int64_t first = INT64_MAX, last = INT64_MIN;
  };
  std::map<DeviceKey, Acc> acc;
  for (uint32_t i : v.ops) {
    const auto& op = v.m.gpuOps[i];
    auto& a = acc[deviceOf(op)];
    Interval iv{op.start, op.end};
    switch (classify(v.m, op)) {
      case OpClass::Compute: a.c.push_back(iv); break;
      case OpClass::Nccl: a.n.push_back(iv); break;
      case OpClass::Memcpy:
      case OpClass::Memset: a.mem.push_back(iv); break;
    }
    a.first = std::min(a.first, op.start);
    a.last = std::max(a.last, op.end);
  }
  OverlapResult r;
  for (auto& [dev, a] : acc) {
    int64_t lo = v.winStart, hi = v.winEnd;
    IntervalSet c = clip(unionOf(std::move(a.c)), lo, hi);
    IntervalSet n = clip(unionOf(std::move(a.n)), lo, hi);
    IntervalSet mem = clip(unionOf(std::move(a.mem)), lo, hi);
    OverlapRow row;
    row.dev = dev;
    row.activeSpanNs = std::max<int64_t>(0, std::min(a.last, hi) - std::max(a.first, lo));
    std::vector<Interval> all;
    all.insert(all.end(), c.begin(), c.end());
    all.insert(all.end(), n.begin(), n.end());
    all.insert(all.end(), mem.begin(), mem.end());
    row.busyNs = totalLength(unionOf(std::move(all)));
    row.computeNs = totalLength(c);
    row.ncclNs = totalLength(n);
    row.memNs = totalLength(mem);
    row.computeNcclNs = totalLength(intersect(c, n));
    row.computeMemNs = totalLength(intersect(c, mem));
    row.ncclMemNs = totalLength(intersect(n, mem));
    row.ncclExposedNs = totalLength(subtract(n, c));
    row.memExposedNs = totalLength(subtract(mem, c));
    row.computeOnlyNs = totalLength(subtract(subtract(c, n), mem));
    row.idleNs = row.activeSpanNs - row.busyNs;
    r.devices.push_back(row);
  }
  return r;
}

void writeJson(json::Writer& w, const OverlapResult& r) {
  w.beginObject().key("devices").beginArray();
  for (const auto& d : r.devices) {
    auto ratio = [](int64_t a, int64_t b) { return b ? static_cast<double>(a) / static_cast<double>(b) : 0.0; };
    w.beginObject()
        .field("rank", d.dev.rank)
        .field("device", d.dev.device)
        .field("active_span_ns", d.activeSpanNs)
        .field("busy_ns", d.busyNs)
        .field("idle_ns", d.idleNs)
        .field("compute_ns", d.computeNs)
        .field("nccl_ns", d.ncclNs)
        .field("memory_ns", d.memNs)
        .field("compute_nccl_overlap_ns", d.computeNcclNs)
        .field("compute_memory_overlap_ns", d.computeMemNs)
        .field("nccl_memory_overlap_ns", d.ncclMemNs)
        .field("nccl_exposed_ns", d.ncclExposedNs)
        .field("memory_exposed_ns", d.memExposedNs)
        .field("compute_only_ns", d.computeOnlyNs)
        .field("nccl_overlapped_fraction", ratio(d.computeNcclNs, d.ncclNs))
        .field("memory_overlapped_fraction", ratio(d.computeMemNs, d.memNs))
        .field("busy_fraction", ratio(d.busyNs, d.activeSpanNs))
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
