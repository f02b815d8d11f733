#include "core/analysis/view.h"

#include <algorithm>

namespace kl::analysis {

View::View(const ProfileModel& model, const Scope& s, const attribution::Attribution* a)
    : m(model), attr(a), scope(s), origin(model.meta.spanStart) {
  winStart = origin + (s.trimStart ? *s.trimStart : 0);
  winEnd = s.trimEnd ? origin + *s.trimEnd : std::max(model.meta.spanEnd, origin) + 1;
  ops.reserve(model.gpuOps.size());
  for (uint32_t i = 0; i < model.gpuOps.size(); ++i) {
    const auto& op = model.gpuOps[i];
    if (deviceOk(op.deviceId) && inWindow(op.start)) ops.push_back(i);
  }
}

const char* opKindName(GpuOpKind k) {
  switch (k) {
    case GpuOpKind::Kernel: return "kernel";
    case GpuOpKind::Memcpy: return "memcpy";
    case GpuOpKind::Memset: return "memset";
    case GpuOpKind::Graph: return "graph";
  }
  return "kernel";
}

}  // namespace kl::analysis
