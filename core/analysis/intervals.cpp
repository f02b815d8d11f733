#include "core/analysis/intervals.h"

#include <algorithm>

#include "core/support/saturating.h"

namespace kl::analysis {

IntervalSet unionOf(std::vector<Interval> v) {
  std::erase_if(v, [](const Interval& i) { return i.end <= i.start; });
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) {
    return a.start != b.start ? a.start < b.start : a.end > b.end;
  });
  IntervalSet out;
  for (const auto& i : v) {
    if (!out.empty() && i.start <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

int64_t totalLength(const IntervalSet& u) {
  int64_t t = 0;
  for (const auto& i : u) addTo(t, i.length());
  return t;
}

IntervalSet intersect(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    int64_t s = std::max(a[i].start, b[j].start);
    int64_t e = std::min(a[i].end, b[j].end);
    if (s < e) out.push_back({s, e});
    if (a[i].end < b[j].end)
      ++i;
    else
      ++j;
  }
  return out;
}

IntervalSet subtract(const IntervalSet& a, const IntervalSet& b) {
  IntervalSet out;
  size_t j = 0;
  for (const auto& x : a) {
    int64_t cur = x.start;
    while (j < b.size() && b[j].end <= cur) ++j;
    size_t k = j;
    while (k < b.size() && b[k].start < x.end) {
      if (b[k].start > cur) out.push_back({cur, b[k].start});
      cur = std::max(cur, b[k].end);
      if (b[k].end >= x.end) break;
      ++k;
    }
    if (cur < x.end) out.push_back({cur, x.end});
  }
  return out;
}

IntervalSet clip(const IntervalSet& u, int64_t lo, int64_t hi) {
  IntervalSet out;
  for (const auto& i : u) {
    int64_t s = std::max(i.start, lo), e = std::min(i.end, hi);
    if (s < e) out.push_back({s, e});
  }
  return out;
}

int64_t coveredLength(const IntervalSet& u, int64_t s, int64_t e) {
  if (s >= e || u.empty()) return 0;
  // First interval whose end is after s.
  auto it = std::upper_bound(u.begin(), u.end(), s, [](int64_t t, const Interval& i) { return t < i.end; });
  int64_t t = 0;
  for (; it != u.end() && it->start < e; ++it) t += std::min(e, it->end) - std::max(s, it->start);
  return t;
}

IntervalSet holes(const IntervalSet& u) {
  IntervalSet out;
  for (size_t i = 1; i < u.size(); ++i)
    if (u[i - 1].end < u[i].start) out.push_back({u[i - 1].end, u[i].start});
  return out;
}

}  // namespace kl::analysis
