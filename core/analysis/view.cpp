#include "core/analysis/view.h"

#include <algorithm>

namespace kl::analysis {

View::View(const ProfileModel& model, const Scope& s, const attribution::Attribution* a)
    : m(model), attr(a), scope(s), origin(model.meta.spanStart) {
  winStart = origin + (s.trimStart ? *s.trimStart : 0);
  winEnd = s.trimEnd ? origin + *s.trimEnd : std::max(model.meta.spanEnd, origin) + 1;
  const size_t n = model.gpuOps.size();
  auto in = [&](uint32_t i) {
    return deviceOk(model.gpuOps.get<&GpuOp::deviceId>(i)) && inWindow(model.gpuOps.get<&GpuOp::start>(i));
  };
  size_t kept = 0;
  for (uint32_t i = 0; i < n; ++i) kept += in(i);
  if (kept == n) {
    ops = OpList::all(n);
    return;
  }
  std::vector<uint32_t> sel;
  sel.reserve(kept);
  for (uint32_t i = 0; i < n; ++i)
    if (in(i)) sel.push_back(i);
  ops = OpList::of(std::move(sel));
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
