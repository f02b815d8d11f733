#include "core/analysis/diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "core/analysis/intervals.h"
#include "core/analysis/iters.h"
#include "core/support/json_schema.h"
#include "core/support/saturating.h"

namespace kl::analysis {
namespace {

struct Side {
  std::map<std::string, std::pair<uint64_t, int64_t>> kernels, ranges;
  int64_t total = 0;
};

Side collect(const View& v) {
  const auto& m = v.m;
  Side s;
  std::vector<StrId> seen;
  for (uint32_t i : v.ops) {
    const auto& op = m.gpuOps[i];
    int64_t d = op.duration();
    addTo(s.total, d);
    auto& k = s.kernels[std::string(m.str(op.name))];
    ++k.first;
    addTo(k.second, d);
    if (!v.attr) continue;
    seen.clear();
    for (uint32_t ri : v.attr->stack(i)) {
      StrId t = m.ranges[ri].text;
      if (std::find(seen.begin(), seen.end(), t) != seen.end()) continue;
      seen.push_back(t);
      auto& r = s.ranges[std::string(m.str(t))];
      ++r.first;
      addTo(r.second, d);
    }
  }
  return s;
}

int64_t busy(const View& v) {
  std::map<DeviceKey, std::vector<Interval>> iv;
  for (uint32_t i : v.ops) iv[deviceOf(v.m.gpuOps[i])].push_back({v.m.gpuOps[i].start, v.m.gpuOps[i].end});
  int64_t t = 0;
  for (auto& [d, x] : iv) addTo(t, totalLength(clip(unionOf(std::move(x)), v.winStart, v.winEnd)));
  return t;
}

std::vector<DiffRow> rows(const std::map<std::string, std::pair<uint64_t, int64_t>>& a,
                          const std::map<std::string, std::pair<uint64_t, int64_t>>& b) {
  std::map<std::string, DiffRow> out;
  for (const auto& [n, x] : a) {
    auto& r = out[n];
    r.name = n;
    r.countA = x.first;
    r.nsA = x.second;
  }
  for (const auto& [n, x] : b) {
    auto& r = out[n];
    r.name = n;
    r.countB = x.first;
    r.nsB = x.second;
  }
  std::vector<DiffRow> v;
  for (auto& [n, r] : out) v.push_back(r);
  std::sort(v.begin(), v.end(), [](const DiffRow& x, const DiffRow& y) {
    auto ax = std::llabs(x.delta()), ay = std::llabs(y.delta());
    return ax != ay ? ax > ay : x.name < y.name;
  });
  return v;
}

}  // namespace

const char* diffMetricName(DiffMetric m) {
  switch (m) {
    case DiffMetric::Total: return "total";
    case DiffMetric::Busy: return "busy";
    case DiffMetric::Iter: return "iter";
  }
  return "total";
}

std::optional<DiffMetric> diffMetricFromName(std::string_view name) {
  for (DiffMetric m : {DiffMetric::Total, DiffMetric::Busy, DiffMetric::Iter})
    if (name == diffMetricName(m)) return m;
  return std::nullopt;
}

const char* diffVerdictName(DiffVerdict v) {
  switch (v) {
    case DiffVerdict::Unchanged: return "unchanged";
    case DiffVerdict::Regression: return "regression";
    case DiffVerdict::Improvement: return "improvement";
  }
  return "unchanged";
}

Result<DiffResult> computeDiff(const View& a, const View& b, const DiffOptions& o) {
  DiffResult r;
  r.opts = o;
  Side sa = collect(a), sb = collect(b);
  if (o.metric == DiffMetric::Total) {
    r.valueA = static_cast<double>(sa.total);
    r.valueB = static_cast<double>(sb.total);
    r.metricDetail = "sum of GPU op durations (ns)";
  } else if (o.metric == DiffMetric::Busy) {
    r.valueA = static_cast<double>(busy(a));
    r.valueB = static_cast<double>(busy(b));
    r.metricDetail = "GPU busy time, interval union per device, summed (ns)";
  } else {
    ItersResult ia = computeIters(a), ib = computeIters(b);
    if (ia.iterations.empty() || ib.iterations.empty())
      return Error::invalid("metric 'iter': no iterations detected in " +
                            std::string(ia.iterations.empty() ? "A" : "B"));
    r.valueA = static_cast<double>(ia.durations.p50);
    r.valueB = static_cast<double>(ib.durations.p50);
    r.metricDetail = "median iteration duration (ns); A: " + std::string(iterMethodName(ia.method)) +
                     ", B: " + iterMethodName(ib.method);
  }
  r.deltaPct = r.valueA > 0 ? (r.valueB - r.valueA) / r.valueA * 100.0 : (r.valueB > 0 ? 100.0 : 0.0);
  r.verdict = r.deltaPct > o.thresholdPct    ? DiffVerdict::Regression
              : r.deltaPct < -o.thresholdPct ? DiffVerdict::Improvement
                                             : DiffVerdict::Unchanged;
  r.kernels = rows(sa.kernels, sb.kernels);
  r.ranges = rows(sa.ranges, sb.ranges);
  for (const auto& k : r.kernels) {
    if (k.countA == 0) ++r.newKernels;
    if (k.countB == 0) ++r.vanishedKernels;
  }
  return r;
}

void writeJson(json::Writer& w, const DiffResult& r, size_t top) {
  w.beginObject()
      .field("schema", json_schema::kDiff)
      .field("metric", diffMetricName(r.opts.metric))
      .field("metric_detail", r.metricDetail)
      .field("threshold_pct", r.opts.thresholdPct)
      .field("a", r.valueA)
      .field("b", r.valueB)
      .field("delta_pct", r.deltaPct)
      .field("verdict", diffVerdictName(r.verdict))
      .field("new_kernels", r.newKernels)
      .field("vanished_kernels", r.vanishedKernels);
  auto table = [&](const char* key, const std::vector<DiffRow>& rs) {
    w.key(key).beginArray();
    size_t n = top ? std::min(top, rs.size()) : rs.size();
    for (size_t i = 0; i < n; ++i) {
      const auto& x = rs[i];
      w.beginObject()
          .field("name", x.name)
          .field("status", x.status())
          .field("count_a", x.countA)
          .field("count_b", x.countB)
          .field("ns_a", x.nsA)
          .field("ns_b", x.nsB)
          .field("delta_ns", x.delta())
          .field("delta_pct", x.nsA ? static_cast<double>(x.delta()) / static_cast<double>(x.nsA) * 100.0 : 0.0)
          .endObject();
    }
    w.endArray();
  };
  table("kernels", r.kernels);
  table("ranges", r.ranges);
  w.endObject();
}

}  // namespace kl::analysis
