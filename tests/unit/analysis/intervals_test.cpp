// Interval arithmetic against a brute-force bitmap over a small integer grid.
#include "core/analysis/intervals.h"

#include <doctest/doctest.h>

#include <random>

using namespace kl::analysis;

namespace {
std::vector<bool> bitmap(const std::vector<Interval>& v, int n) {
  std::vector<bool> b(static_cast<size_t>(n), false);
  for (const auto& i : v)
    for (int64_t t = i.start; t < i.end; ++t) b[static_cast<size_t>(t)] = true;
  return b;
}
int64_t count(const std::vector<bool>& b) {
  int64_t c = 0;
  for (bool x : b) c += x;
  return c;
}
std::vector<Interval> randomIntervals(std::mt19937& rng, int n, int grid) {
  std::uniform_int_distribution<int> pos(0, grid - 1), len(0, 12);
  std::vector<Interval> v;
  for (int i = 0; i < n; ++i) {
    int s = pos(rng);
    v.push_back({s, std::min(grid, s + len(rng))});
  }
  return v;
}
}  // namespace

TEST_CASE("intervals: union/intersect/subtract/clip/covered match a bitmap") {
  std::mt19937 rng(12345);
  const int grid = 200;
  for (int round = 0; round < 300; ++round) {
    auto a = randomIntervals(rng, 1 + round % 15, grid);
    auto b = randomIntervals(rng, 1 + round % 11, grid);
    auto ba = bitmap(a, grid), bb = bitmap(b, grid);
    IntervalSet ua = unionOf(a), ub = unionOf(b);
    for (size_t i = 1; i < ua.size(); ++i) CHECK(ua[i - 1].end < ua[i].start);  // disjoint, merged
    CHECK(totalLength(ua) == count(ba));
    std::vector<bool> andB(grid), minusB(grid);
    for (int t = 0; t < grid; ++t) {
      andB[static_cast<size_t>(t)] = ba[static_cast<size_t>(t)] && bb[static_cast<size_t>(t)];
      minusB[static_cast<size_t>(t)] = ba[static_cast<size_t>(t)] && !bb[static_cast<size_t>(t)];
    }
    CHECK(totalLength(intersect(ua, ub)) == count(andB));
    CHECK(bitmap(subtract(ua, ub), grid) == minusB);
    CHECK(bitmap(intersect(ua, ub), grid) == andB);
    int lo = round % 50, hi = 100 + round % 100;
    int64_t inWin = 0;
    for (int t = lo; t < hi; ++t) inWin += ba[static_cast<size_t>(t)];
    CHECK(totalLength(clip(ua, lo, hi)) == inWin);
    CHECK(coveredLength(ua, lo, hi) == inWin);
    int64_t holes = 0;
    if (!ua.empty())
      for (int64_t t = ua.front().start; t < ua.back().end; ++t) holes += !ba[static_cast<size_t>(t)];
    CHECK(totalLength(kl::analysis::holes(ua)) == holes);
  }
}
