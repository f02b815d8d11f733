#include "core/planner/round_stats.h"

#include <algorithm>
#include <set>

namespace kl::planner {

Result<RoundStats> computeRoundStats(const profile::ProfileModel& model, const CancellationToken& cancel) {
  attribution::Options opts;
  opts.namePrefix = "kl:";
  opts.userAnnotation = true;
  opts.cancel = cancel;
  auto attr = attribution::attribute(model, opts);
  if (!attr) return attr.error();

  RoundStats out;
  out.emulated = model.meta.emulated;
  const size_t nr = model.ranges.size();
  std::vector<std::map<std::string, int64_t>> exclusivePerInv(nr);  // invocation -> kernel -> ops
  std::map<std::pair<std::string, std::string>, UnmappedOps> unmapped;
  std::map<std::string, std::map<std::string, KernelCount>> exclusiveByName;

  for (uint32_t i = 0; i < model.gpuOps.size(); ++i) {
    const auto& op = model.gpuOps[i];
    std::string name(model.str(op.name));
    ++out.totalOps;
    out.totalGpuNs += op.duration();
    uint32_t r = attr->innermost(i);
    if (r == profile::kNone) {
      std::string reason = attr->op(i).reason == attribution::Unattributed::NoLaunchCall ? "no_launch_call"
                                                                                          : "outside_kl_ranges";
      auto& u = unmapped[{name, reason}];
      u.name = name;
      u.reason = reason;
      ++u.launches;
      u.gpuNs += op.duration();
      continue;
    }
    ++out.attributedOps;
    exclusivePerInv[r][name] += 1;
    auto& kc = exclusiveByName[std::string(model.str(model.ranges[r].text))][name];
    kc.name = name;
    ++kc.launches;
    kc.gpuNs += op.duration();
  }

  std::map<std::string, std::map<std::vector<std::string>, uint32_t>> sets;
  std::map<std::string, std::set<std::string>> inclusive;
  for (uint32_t r = 0; r < nr; ++r) {
    const auto& rs = attr->ranges()[r];
    if (!rs.counted) continue;
    const auto& range = model.ranges[r];
    std::string name(model.str(range.text));
    auto& s = out.ranges[name];
    ++out.pushes;
    ++s.invocations;
    s.launches += rs.ops;
    s.gpuNs += rs.inclusiveGpuNs;
    s.exclusiveGpuNs += rs.exclusiveGpuNs;
    uint32_t excl = 0;
    std::vector<std::string> set;
    for (const auto& [k, n] : exclusivePerInv[r]) {
      excl += static_cast<uint32_t>(n);
      set.push_back(k);
    }
    s.exclusiveLaunches += excl;
    s.maxExclusivePerInvocation = std::max(s.maxExclusivePerInvocation, excl);
    s.maxDistinctPerInvocation = std::max(s.maxDistinctPerInvocation, static_cast<uint32_t>(set.size()));
    if (!set.empty()) ++sets[name][set];
    for (profile::StrId k : attr->kernelSet(r)) inclusive[name].insert(std::string(model.str(k)));
  }
  for (auto& [name, s] : out.ranges) {
    for (auto& [k, kc] : exclusiveByName[name]) s.exclusiveKernels.push_back(kc);
    std::sort(s.exclusiveKernels.begin(), s.exclusiveKernels.end(), [](const auto& a, const auto& b) {
      return a.gpuNs != b.gpuNs ? a.gpuNs > b.gpuNs : a.name < b.name;
    });
    for (auto& [set, n] : sets[name]) s.variants.push_back(KernelSetVariant{set, n});
    std::sort(s.variants.begin(), s.variants.end(),
              [](const auto& a, const auto& b) { return a.invocations > b.invocations; });
    s.inclusiveKernels.assign(inclusive[name].begin(), inclusive[name].end());
  }
  for (auto& [k, u] : unmapped) out.unmapped.push_back(u);
  std::sort(out.unmapped.begin(), out.unmapped.end(), [](const auto& a, const auto& b) {
    return a.gpuNs != b.gpuNs ? a.gpuNs > b.gpuNs : a.name < b.name;
  });
  return out;
}

}  // namespace kl::planner
