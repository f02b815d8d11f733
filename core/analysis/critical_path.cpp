#include "core/analysis/critical_path.h"

#include <algorithm>

#include "core/analysis/intervals.h"
#include "core/analysis/iters.h"
#include "core/support/saturating.h"

namespace kl::analysis {

CriticalPathResult computeCriticalPath(const View& v) {
  const auto& m = v.m;
  CriticalPathResult r;
  auto it = computeIters(v);
  r.method = it.method;
  r.detail = it.detail;
  if (it.iterations.empty()) return r;
  const bool nvtxMethod = it.method == IterMethod::Nvtx;
  std::vector<uint32_t> launch;
  if (v.attr) {
    launch.resize(m.gpuOps.size(), kNone);
    for (uint32_t i = 0; i < m.gpuOps.size(); ++i) launch[i] = v.attr->op(i).launch;
  } else {
    launch = attribution::linkLaunches(m);
  }
  // Ops in scope sorted by the key that selects them: launch-call start (nvtx) or op start.
  struct Keyed {
    int64_t key;
    uint32_t op;
  };
  std::vector<Keyed> keyed;
  for (uint32_t i : v.ops) {
    if (nvtxMethod) {
      if (launch[i] != kNone) keyed.push_back({m.apiCalls[launch[i]].start, i});
    } else {
      keyed.push_back({m.gpuOps[i].start, i});
    }
  }
  std::sort(keyed.begin(), keyed.end(),
            [](const Keyed& a, const Keyed& b) { return a.key != b.key ? a.key < b.key : a.op < b.op; });

  for (const auto& iter : it.iterations) {
    CriticalIteration c;
    c.label = iter.label;
    c.rank = iter.rank;
    c.start = iter.start;
    c.end = iter.end;
    std::vector<uint32_t> ops;
    auto lo =
        std::lower_bound(keyed.begin(), keyed.end(), iter.start, [](const Keyed& k, int64_t t) { return k.key < t; });
    for (auto p = lo; p != keyed.end() && p->key < iter.end; ++p) {
      const auto& op = m.gpuOps[p->op];
      if (op.rank != iter.rank) continue;
      if (!nvtxMethod && op.deviceId != iter.device) continue;
      ops.push_back(p->op);
    }
    c.ops = ops.size();
    if (ops.empty()) {
      c.wallNs = iter.end - iter.start;
      c.cpuLeadNs = nvtxMethod ? c.wallNs : 0;
      c.launchBound = nvtxMethod;
    } else {
      std::sort(ops.begin(), ops.end(), [&](uint32_t a, uint32_t b) {
        return m.gpuOps[a].start != m.gpuOps[b].start ? m.gpuOps[a].start < m.gpuOps[b].start : a < b;
      });
      std::vector<Interval> iv;
      for (uint32_t i : ops) iv.push_back({m.gpuOps[i].start, m.gpuOps[i].end});
      auto u = unionOf(std::move(iv));
      // The op starting at each union member's start (the earliest; ties: any is launched).
      c.gpuBusyNs = totalLength(u);
      size_t k = 0;
      for (size_t h = 1; h < u.size(); ++h) {
        const int64_t g0 = u[h - 1].end, g1 = u[h].start;
        while (k < ops.size() && m.gpuOps[ops[k]].start < g1) ++k;
        // Every op starting exactly at g1: the GPU waited for the CPU if all were issued late.
        bool late = false, known = false;
        for (size_t q = k; q < ops.size() && m.gpuOps[ops[q]].start == g1; ++q) {
          uint32_t call = launch[ops[q]];
          if (call == kNone) continue;
          if (!known) late = true;
          known = true;
          late = late && m.apiCalls[call].end > g0;
        }
        if (known && late) {
          addTo(c.gpuWaitCpuNs, g1 - g0);
          ++c.cpuWaitHoles;
        } else {
          addTo(c.otherIdleNs, g1 - g0);
        }
      }
      const int64_t gs = u.front().start, ge = u.back().end;
      if (nvtxMethod) {
        c.cpuLeadNs = std::max<int64_t>(0, gs - iter.start);
        c.cpuTailNs = std::max<int64_t>(0, iter.end - ge);
      }
      c.wallNs = std::max(nvtxMethod ? iter.end : ge, ge) - std::min(nvtxMethod ? iter.start : gs, gs);
      c.launchBound = c.cpuPathNs() > c.gpuBusyNs;
    }
    r.launchBound += c.launchBound;
    addTo(r.wallNs, c.wallNs);
    addTo(r.gpuBusyNs, c.gpuBusyNs);
    addTo(r.cpuLeadNs, c.cpuLeadNs);
    addTo(r.gpuWaitCpuNs, c.gpuWaitCpuNs);
    addTo(r.otherIdleNs, c.otherIdleNs);
    addTo(r.cpuTailNs, c.cpuTailNs);
    r.iterations.push_back(std::move(c));
  }
  return r;
}

void writeJson(json::Writer& w, const CriticalPathResult& r, const View& v) {
  w.beginObject()
      .field("emulated", v.m.meta.emulated)
      .field("method", iterMethodName(r.method))
      .field("detail", r.detail)
      .field("iterations_count", static_cast<uint64_t>(r.iterations.size()))
      .field("launch_bound_iterations", r.launchBound)
      .field("wall_ns", r.wallNs)
      .field("gpu_busy_ns", r.gpuBusyNs)
      .field("cpu_lead_ns", r.cpuLeadNs)
      .field("gpu_wait_cpu_ns", r.gpuWaitCpuNs)
      .field("other_idle_ns", r.otherIdleNs)
      .field("cpu_tail_ns", r.cpuTailNs);
  w.key("iterations").beginArray();
  for (const auto& c : r.iterations) {
    w.beginObject()
        .field("label", c.label)
        .field("rank", static_cast<int64_t>(c.rank))
        .field("start_ns", v.rel(c.start))
        .field("ops", c.ops)
        .field("wall_ns", c.wallNs)
        .field("gpu_busy_ns", c.gpuBusyNs)
        .field("cpu_lead_ns", c.cpuLeadNs)
        .field("gpu_wait_cpu_ns", c.gpuWaitCpuNs)
        .field("gpu_wait_cpu_holes", c.cpuWaitHoles)
        .field("other_idle_ns", c.otherIdleNs)
        .field("cpu_tail_ns", c.cpuTailNs)
        .field("cpu_path_ns", c.cpuPathNs())
        .field("bound", c.launchBound ? "launch" : "gpu")
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
