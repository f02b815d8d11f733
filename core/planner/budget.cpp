#include "core/planner/budget.h"

#include <algorithm>
#include <cstdio>

#include "core/support/format.h"

namespace kl::planner {

std::vector<WallRefusal> wallRefusals(const Overhead& o, std::vector<RangeCost> ranges, double maxWallOverhead) {
  std::vector<WallRefusal> out;
  if (o.baselineWallMs <= 0 || o.pushes <= 0) return out;
  double over = o.wallOverhead();
  if (over <= maxWallOverhead || o.pushes <= o.launches) return out;
  double perPushMs = static_cast<double>(o.wallMs - o.baselineWallMs) / static_cast<double>(o.pushes);
  double excessMs = (over - maxWallOverhead) * static_cast<double>(o.baselineWallMs);
  std::sort(ranges.begin(), ranges.end(), [](const RangeCost& a, const RangeCost& b) {
    return a.invocations != b.invocations ? a.invocations > b.invocations : a.id < b.id;
  });
  double saved = 0;
  for (const auto& r : ranges) {
    if (saved >= excessMs) break;
    if (r.root || r.invocations == 0) continue;
    double cost = perPushMs * r.invocations;
    saved += cost;
    out.push_back(WallRefusal{r.id, "over the wall-time budget: the round took " + formatChange(over) +
                                        " vs the uninstrumented run (budget " + formatChange(maxWallOverhead) +
                                        "); this range's " + std::to_string(r.invocations) + " pushes cost about " +
                                        formatDuration(cost * 1e6)});
  }
  return out;
}

}  // namespace kl::planner
