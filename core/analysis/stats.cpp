#include "core/analysis/stats.h"

#include <algorithm>
#include <cmath>

#include "core/support/saturating.h"

namespace kl::analysis {

Dist distribution(std::vector<int64_t>& v) {
  Dist d;
  if (v.empty()) return d;
  std::sort(v.begin(), v.end());
  d.count = v.size();
  for (auto x : v) addTo(d.sum, x);
  d.min = v.front();
  d.max = v.back();
  d.mean = static_cast<double>(d.sum) / static_cast<double>(v.size());
  auto pct = [&](double p) {
    auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
  };
  d.p50 = pct(50);
  d.p90 = pct(90);
  d.p99 = pct(99);
  return d;
}

void writeDist(json::Writer& w, const Dist& d) {
  w.beginObject()
      .field("count", d.count)
      .field("sum_ns", d.sum)
      .field("mean_ns", d.mean)
      .field("min_ns", d.min)
      .field("p50_ns", d.p50)
      .field("p90_ns", d.p90)
      .field("p99_ns", d.p99)
      .field("max_ns", d.max)
      .endObject();
}

}  // namespace kl::analysis
