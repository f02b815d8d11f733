#include "core/attribution/line_result.h"

#include <set>
#include <string_view>

#include "core/attribution/autograd_link.h"

namespace kl::attribution {

KernelStat kernelStat(const KernelEntry& k) {
  KernelStat s;
  s.name = k.shortName.empty() ? k.name : k.shortName;
  s.fullName = k.fullName.empty() ? k.name : k.fullName;
  s.opName = k.name;
  s.kind = k.kind;
  s.launches = static_cast<uint64_t>(k.launches);
  s.totalNs = k.gpuNs;
  s.minNs = k.minNs;
  s.maxNs = k.maxNs;
  s.grid = k.grid;
  s.block = k.block;
  s.shapeVaries = k.shapeVaries;
  s.streams = k.streams;
  s.pass = k.pass;
  s.noForwardOwner = k.noForwardOwner;
  return s;
}

const char* atomicReasonName(AtomicReason r) {
  switch (r) {
    case AtomicReason::None: return "";
    case AtomicReason::Library: return "library";
    case AtomicReason::Unfollowed: return "unfollowed";
    case AtomicReason::Budget: return "budget";
    case AtomicReason::NoSource: return "no_source";
  }
  return "";
}

std::optional<AtomicReason> atomicReasonFromName(std::string_view name) {
  for (AtomicReason r : {AtomicReason::None, AtomicReason::Library, AtomicReason::Unfollowed, AtomicReason::Budget,
                         AtomicReason::NoSource})
    if (name == atomicReasonName(r)) return r;
  return std::nullopt;
}

uint32_t LineResult::distinctKernels() const {
  std::set<std::string_view> names;
  for (const auto& k : kernels) names.insert(k.fullName.empty() ? k.name : k.fullName);
  return static_cast<uint32_t>(names.size());
}

LineResult lineResult(const RangeEntry& e, size_t maxKernelSets) {
  LineResult l;
  l.path = e.path;
  l.line = e.firstLine ? e.firstLine - 1 : 0;
  l.lastLine = e.lastLine ? e.lastLine - 1 : l.line;
  l.label = e.label;
  l.gpuNs = e.exclusiveGpuNs;
  l.backwardNs = e.exclusiveBackwardGpuNs;
  l.ops = static_cast<uint64_t>(e.exclusiveLaunches);
  l.invocations = e.invocations;
  for (const auto& k : e.kernels) l.kernels.push_back(kernelStat(k));
  if (e.variants.size() > 1) l.variants = e.variants;
  RangeInfo& r = l.range;
  r.name = e.name;
  r.firstLine = e.firstLine;
  r.lastLine = e.lastLine;
  r.parent = e.parentRange;
  r.depth = e.depth;
  r.leaf = e.leaf;
  r.launches = e.launches;
  r.gpuNs = e.gpuNs;
  r.distinctKernels = e.distinctKernels();
  r.minKernelsPerInvocation = e.minKernelsPerInvocation;
  r.maxKernelsPerInvocation = e.maxKernelsPerInvocation;
  r.distinctKernelSets = static_cast<uint32_t>(e.kernelSets.size());
  for (const auto& set : e.kernelSets) {
    if (r.kernelSets.size() >= maxKernelSets) break;
    r.kernelSets.push_back(set.kernels);
  }
  return l;
}

std::string LineResult::stepKind() const {
  std::set<std::string> kinds;
  for (const auto& k : kernels)
    if (k.stepPass()) kinds.insert(passName(k.pass));
  std::string out;
  for (const auto& p : kinds) out += (out.empty() ? "" : "+") + p;
  return out;
}

}  // namespace kl::attribution
