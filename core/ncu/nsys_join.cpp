#include "core/ncu/nsys_join.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "core/profile/kernel_name.h"

namespace kl::ncu {

using profile::normalizedKey;
JoinResult joinToProfile(const NcuReport& report, const profile::ProfileModel& model, const JoinOptions& opt) {
  JoinResult res;
  // Profile kernels grouped by name key, in launch order (gpuOps are sorted by start).
  std::map<std::string, std::vector<uint32_t>> byMangled, byNorm;
  for (uint32_t i = 0; i < model.gpuOps.size(); ++i) {
    const profile::GpuOp& op = model.gpuOps[i];
    const profile::KernelDetail* k = model.kernel(op);
    if (!k) continue;
    if (k->mangledName != profile::kEmptyStr) byMangled[std::string(model.str(k->mangledName))].push_back(i);
    std::string_view name = k->demangledName != profile::kEmptyStr ? model.str(k->demangledName) : model.str(op.name);
    byNorm[normalizedKey(name)].push_back(i);
  }
  const bool joinable = report.format == NcuFormat::Details || report.format == NcuFormat::Raw ||
                        report.format == NcuFormat::LegacyDetails;
  std::vector<size_t> order(report.launches.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return report.launches[a].id < report.launches[b].id; });
  // Per (candidate list, grid/block) how many ncu launches were consumed.
  std::map<std::pair<const std::vector<uint32_t>*, std::string>, int64_t> used;
  for (size_t idx : order) {
    const NcuLaunch& l = report.launches[idx];
    if (!joinable) {
      res.unmatched.push_back(idx);
      continue;
    }
    const std::vector<uint32_t>* cands = nullptr;
    std::string how;
    if (l.kernelName.rfind("_Z", 0) == 0) {
      if (auto it = byMangled.find(l.kernelName); it != byMangled.end()) {
        cands = &it->second;
        how = "mangled";
      }
    }
    if (!cands) {
      if (auto it = byNorm.find(normalizedKey(l.kernelName)); it != byNorm.end()) {
        cands = &it->second;
        how = "name";
      }
    }
    if (!cands) {
      res.unmatched.push_back(idx);
      continue;
    }
    // Candidates with the same grid/block (unknown dims on either side match anything).
    auto fits = [&](uint32_t opIdx) {
      const profile::KernelDetail* k = model.kernel(model.gpuOps[opIdx]);
      for (int i = 0; i < 3; ++i) {
        if (l.grid && k->grid[i] != 0 && k->grid[i] != (*l.grid)[static_cast<size_t>(i)]) return false;
        if (l.block && k->block[i] != 0 && k->block[i] != (*l.block)[static_cast<size_t>(i)]) return false;
      }
      return true;
    };
    std::string shape = l.grid && l.block ? formatDim3(*l.grid) + formatDim3(*l.block) : "";
    int64_t& n = used[{cands, shape}];
    int64_t want = opt.launchSkip + n;
    int64_t seen = 0;
    bool found = false;
    for (uint32_t opIdx : *cands) {
      if (!fits(opIdx)) continue;
      if (seen++ == want) {
        res.matches.push_back({idx, opIdx, how});
        found = true;
        break;
      }
    }
    ++n;
    if (!found) res.unmatched.push_back(idx);
  }
  return res;
}

}  // namespace kl::ncu
