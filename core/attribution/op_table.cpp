#include "core/attribution/op_table.h"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/support/saturating.h"

namespace kl::attribution {

Options opTableOptions(const CancellationToken& cancel) {
  Options o;
  o.nvtxPushPop = false;
  o.nvtxStartEnd = false;
  o.userAnnotation = false;
  o.cpuOp = true;
  o.pythonFrames = false;
  o.linkBackward = true;
  o.cancel = cancel;
  return o;
}

Result<OpTable> tabulateOps(const profile::ProfileModel& m, const CancellationToken& cancel) {
  auto attr = attribute(m, opTableOptions(cancel));
  if (!attr) return attr.error();
  const Attribution& a = *attr;
  OpTable t;
  t.emulated = m.meta.emulated;
  struct Acc {
    OpEntry out;
    std::map<std::tuple<StrId, Pass, bool>, KernelEntry> kernels;
  };
  std::map<std::pair<StrId, bool>, Acc> acc;  // (owner text, no forward owner)
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    if ((i & 0xFFFF) == 0 && cancel.isCancelled()) return Error::cancelled();
    const auto& op = m.gpuOps[i];
    const int64_t d = op.duration();
    t.totalOps += 1;
    addTo(t.totalGpuNs, d);
    auto [pass, unowned] = opPass(a, i);
    StrId owner = profile::kEmptyStr;
    if (unowned && a.op(i).backwardNode != kNone)
      owner = m.ranges.get<&profile::Range::text>(a.op(i).backwardNode);
    else if (auto st = a.stack(i); !st.empty())
      owner = m.ranges.get<&profile::Range::text>(st.front());
    if (owner == profile::kEmptyStr) {
      t.unmappedOps += 1;
      addTo(t.unmappedGpuNs, d);
      continue;
    }
    Acc& e = acc[{owner, unowned}];
    e.out.launches += 1;
    addTo(e.out.gpuNs, d);
    if (isBackwardPass(pass)) {
      e.out.backwardLaunches += 1;
      addTo(e.out.backwardGpuNs, d);
    }
    addLaunch(e.kernels[{op.name, pass, unowned}], m, i, &a);
  }
  for (auto& [key, e] : acc) {
    e.out.name = std::string(m.str(key.first));
    e.out.noForwardOwner = key.second;
    for (auto& [k, v] : e.kernels) e.out.kernels.push_back(std::move(v));
    std::sort(e.out.kernels.begin(), e.out.kernels.end(), [](const KernelEntry& x, const KernelEntry& y) {
      return x.gpuNs != y.gpuNs ? x.gpuNs > y.gpuNs : std::tie(x.name, x.pass) < std::tie(y.name, y.pass);
    });
    t.ops.push_back(std::move(e.out));
  }
  std::sort(t.ops.begin(), t.ops.end(), [](const OpEntry& x, const OpEntry& y) {
    return x.gpuNs != y.gpuNs ? x.gpuNs > y.gpuNs
                              : std::tie(x.name, x.noForwardOwner) < std::tie(y.name, y.noForwardOwner);
  });
  return t;
}

}  // namespace kl::attribution
