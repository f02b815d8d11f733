#include "core/analysis/launch.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>

namespace kl::analysis {

LaunchResult computeLaunch(const View& v) {
  const auto& m = v.m;
  LaunchResult r;
  r.ops = v.ops.size();
  if (!v.attr) return r;
  std::vector<int64_t> over, queue;
  std::unordered_set<uint32_t> seenCalls;
  std::unordered_map<StrId, std::vector<int64_t>> apiOver;
  struct K {
    uint64_t n = 0;
    double api = 0, q = 0, gpu = 0;
    int64_t maxQ = 0;
  };
  std::unordered_map<StrId, K> ks;
  for (uint32_t i : v.ops) {
    uint32_t c = v.attr->op(i).launch;
    if (c == kNone) continue;
    const auto& op = m.gpuOps[i];
    const auto& call = m.apiCalls[c];
    ++r.withLaunch;
    int64_t ov = call.end - call.start;
    int64_t q = op.start - call.end;
    if (q < 0) ++r.negativeQueue;
    queue.push_back(std::max<int64_t>(q, 0));
    if (seenCalls.insert(c).second) {
      over.push_back(ov);
      apiOver[call.name].push_back(ov);
    }
    if (op.kind == GpuOpKind::Kernel && op.duration() < ov) ++r.launchBoundKernels;
    auto& k = ks[op.name];
    ++k.n;
    k.api += static_cast<double>(ov);
    k.q += static_cast<double>(std::max<int64_t>(q, 0));
    k.gpu += static_cast<double>(op.duration());
    k.maxQ = std::max(k.maxQ, q);
  }
  r.overhead = distribution(over);
  r.queue = distribution(queue);
  for (auto& [name, vals] : apiOver) r.apis.push_back({name, distribution(vals)});
  std::sort(r.apis.begin(), r.apis.end(), [&](const LaunchApiRow& a, const LaunchApiRow& b) {
    return a.overhead.count != b.overhead.count ? a.overhead.count > b.overhead.count : m.str(a.name) < m.str(b.name);
  });
  for (auto& [name, k] : ks) {
    double n = static_cast<double>(k.n);
    r.kernels.push_back({name, k.n, k.api / n, k.q / n, k.gpu / n, k.maxQ});
  }
  std::sort(r.kernels.begin(), r.kernels.end(), [&](const LaunchKernelRow& a, const LaunchKernelRow& b) {
    return a.meanQueueNs != b.meanQueueNs ? a.meanQueueNs > b.meanQueueNs : m.str(a.name) < m.str(b.name);
  });
  return r;
}

void writeJson(json::Writer& w, const LaunchResult& r, const ProfileModel& m, size_t top) {
  w.beginObject()
      .field("ops", r.ops)
      .field("ops_with_launch_call", r.withLaunch)
      .field("negative_queue_delay", r.negativeQueue)
      .field("launch_bound_kernels", r.launchBoundKernels);
  w.key("launch_overhead");
  writeDist(w, r.overhead);
  w.key("queue_delay");
  writeDist(w, r.queue);
  w.key("apis").beginArray();
  for (const auto& a : r.apis) {
    w.beginObject().field("name", m.str(a.name)).key("overhead");
    writeDist(w, a.overhead);
    w.endObject();
  }
  w.endArray();
  w.key("kernels").beginArray();
  size_t n = top ? std::min(top, r.kernels.size()) : r.kernels.size();
  for (size_t i = 0; i < n; ++i) {
    const auto& k = r.kernels[i];
    w.beginObject()
        .field("name", m.str(k.name))
        .field("count", k.count)
        .field("mean_launch_overhead_ns", k.meanApiNs)
        .field("mean_queue_delay_ns", k.meanQueueNs)
        .field("max_queue_delay_ns", k.maxQueueNs)
        .field("mean_gpu_ns", k.meanGpuNs)
        .endObject();
  }
  w.endArray().endObject();
}

}  // namespace kl::analysis
