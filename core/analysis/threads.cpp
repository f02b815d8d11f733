#include "core/analysis/threads.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "core/support/saturating.h"

namespace kl::analysis {

ThreadsResult computeThreads(const View& v) {
  const auto& m = v.m;
  ThreadsResult r;
  std::unordered_map<uint32_t, ThreadRow> rows;
  std::unordered_map<uint32_t, std::unordered_set<uint32_t>> calls;
  std::unordered_map<uint32_t, std::unordered_set<StrId>> kernels;
  for (uint32_t i : v.ops) {
    uint32_t c = v.attr ? v.attr->op(i).launch : kNone;
    if (c == kNone) {
      ++r.unlinkedOps;
      continue;
    }
    const auto& op = m.gpuOps[i];
    uint32_t t = m.apiCalls[c].thread;
    auto& row = rows[t];
    row.thread = t;
    ++row.ops;
    addTo(row.gpuNs, op.duration());
    calls[t].insert(c);
    if (op.kind == GpuOpKind::Kernel) kernels[t].insert(op.name);
  }
  for (const auto& c : m.apiCalls) {
    if (!v.inWindow(c.start) || c.thread == kNone) continue;
    auto& row = rows[c.thread];
    row.thread = c.thread;
    ++row.apiCalls;
    addTo(row.apiNs, c.end - c.start);
    if (c.role == profile::ApiRole::Sync) {
      ++row.syncCalls;
      addTo(row.syncNs, c.end - c.start);
    }
  }
  for (auto& [t, row] : rows) {
    row.launches = calls[t].size();
    row.distinctKernels = kernels[t].size();
    r.threads.push_back(row);
  }
  std::sort(r.threads.begin(), r.threads.end(), [](const ThreadRow& a, const ThreadRow& b) {
    if (a.ops != b.ops) return a.ops > b.ops;
    if (a.apiCalls != b.apiCalls) return a.apiCalls > b.apiCalls;
    return a.thread < b.thread;
  });
  return r;
}

void writeJson(json::Writer& w, const ThreadsResult& r, const ProfileModel& m) {
  w.beginObject().field("ops_without_launch_call", r.unlinkedOps).key("threads").beginArray();
  for (const auto& row : r.threads) {
    const auto& th = m.threads[row.thread];
    const auto& pr = m.processes[th.process];
    w.beginObject()
        .field("pid", pr.pid)
        .field("tid", th.tid)
        .field("rank", pr.rank)
        .field("name", m.str(th.name))
        .field("process", m.str(pr.name))
        .field("launches", row.launches)
        .field("ops", row.ops)
        .field("distinct_kernels", row.distinctKernels)
        .field("gpu_ns", row.gpuNs)
        .field("api_calls", row.apiCalls)
        .field("api_ns", row.apiNs)
        .field("sync_calls", row.syncCalls)
        .field("sync_ns", row.syncNs)
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
