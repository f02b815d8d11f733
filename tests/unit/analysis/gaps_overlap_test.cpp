// gaps and overlap on random synthetic profiles, checked against a brute-force ns bitmap.
#include <doctest/doctest.h>

#include <random>

#include "core/analysis/gaps.h"
#include "core/analysis/overlap.h"
#include "synth.h"

using namespace kl::analysis;

TEST_CASE("gaps and overlap equal a brute-force bitmap computation") {
  std::mt19937 rng(7);
  for (int round = 0; round < 40; ++round) {
    kl::test::Synth s;
    const int64_t base = 100'000'000'000;  // large absolute times, like real files
    const int grid = 3000;
    std::uniform_int_distribution<int> pos(0, grid - 60), len(1, 50), kind(0, 5), stream(0, 1);
    std::vector<int> c(grid, 0), n(grid, 0), mm(grid, 0);
    int first = grid, last = 0;
    int count = 5 + round;
    for (int i = 0; i < count; ++i) {
      int a = pos(rng), b = a + len(rng), k = kind(rng);
      first = std::min(first, a);
      last = std::max(last, b);
      if (k == 0) {
        s.memcpy(1, 4096, base + a, base + b);
        for (int t = a; t < b; ++t) mm[static_cast<size_t>(t)] = 1;
      } else if (k == 1) {
        s.kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL", base + a, base + b, 0, 20);
        for (int t = a; t < b; ++t) n[static_cast<size_t>(t)] = 1;
      } else {
        s.kernel("gemm_" + std::to_string(k), base + a, base + b, 0, 7 + static_cast<uint32_t>(stream(rng)));
        for (int t = a; t < b; ++t) c[static_cast<size_t>(t)] = 1;
      }
    }
    auto& m = s.finish();
    View v(m, {});
    // Brute force.
    int64_t busy = 0, C = 0, N = 0, M = 0, CN = 0, CM = 0, NM = 0, Nexp = 0, Mexp = 0, Conly = 0;
    int64_t gapCount = 0, gapNs = 0, cur = 0;
    for (int t = first; t < last; ++t) {
      size_t i = static_cast<size_t>(t);
      bool any = c[i] || n[i] || mm[i];
      busy += any;
      C += c[i];
      N += n[i];
      M += mm[i];
      CN += c[i] && n[i];
      CM += c[i] && mm[i];
      NM += n[i] && mm[i];
      Nexp += n[i] && !c[i];
      Mexp += mm[i] && !c[i];
      Conly += c[i] && !n[i] && !mm[i];
      if (!any) ++cur;
      if (any && cur) {
        ++gapCount;
        gapNs += cur;
        cur = 0;
      }
    }
    auto ov = computeOverlap(v);
    REQUIRE(ov.devices.size() == 1);
    const auto& d = ov.devices[0];
    CHECK(d.activeSpanNs == last - first);
    CHECK(d.busyNs == busy);
    CHECK(d.computeNs == C);
    CHECK(d.ncclNs == N);
    CHECK(d.memNs == M);
    CHECK(d.computeNcclNs == CN);
    CHECK(d.computeMemNs == CM);
    CHECK(d.ncclMemNs == NM);
    CHECK(d.ncclExposedNs == Nexp);
    CHECK(d.memExposedNs == Mexp);
    CHECK(d.computeOnlyNs == Conly);
    CHECK(d.idleNs == (last - first) - busy);
    GapsOptions go;
    go.minGapNs = 1;
    go.top = 1000;
    auto g = computeGaps(v, go);
    REQUIRE(g.devices.size() == 1);
    CHECK(g.devices[0].busyNs == busy);
    CHECK(g.devices[0].idleNs == (last - first) - busy);
    CHECK(g.devices[0].gapCount == static_cast<uint64_t>(gapCount));
    CHECK(g.devices[0].gapNs == gapNs);
    CHECK(g.top.size() == static_cast<size_t>(gapCount));
    for (size_t i = 1; i < g.top.size(); ++i) CHECK(g.top[i - 1].length() >= g.top[i].length());
    // Stream lanes add up to the per-stream bitmaps too: their busy never exceeds the device's.
    for (const auto& l : g.streams) CHECK(l.busyNs <= busy);
  }
}

TEST_CASE("gaps: CPU activity during a gap and the late launch of the next kernel") {
  kl::test::Synth s;
  const int64_t b = 1'000'000'000;
  s.kernel("k1", b + 0, b + 10'000, 0, 7, b - 5'000, 2'000);
  s.api("cudaStreamSynchronize", b + 12'000, b + 60'000);
  s.range("step", b + 11'000, b + 200'000);
  s.kernel("k2", b + 100'000, b + 110'000, 0, 7, b + 95'000, 2'000);  // launched during the gap
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  View v(m, {}, &*attr);
  auto g = computeGaps(v);
  REQUIRE(g.top.size() == 1);
  const auto& gap = g.top[0];
  CHECK(gap.length() == 90'000);
  CHECK(m.str(m.gpuOps[gap.after].name) == "k2");
  CHECK(gap.launchedDuringGap(m));
  REQUIRE(!gap.api.empty());
  CHECK(m.str(gap.api[0].name) == "cudaStreamSynchronize");
  CHECK(gap.api[0].ns == 48'000);
  REQUIRE(!gap.ranges.empty());
  CHECK(m.str(gap.ranges[0].name) == "step");
  CHECK(gap.ranges[0].ns == 89'000);
}

TEST_CASE("trim window: ops are kept by start; interval lengths are clipped") {
  kl::test::Synth s;
  const int64_t b = 5'000'000;
  s.kernel("a", b + 0, b + 100);
  s.kernel("b", b + 200, b + 400);
  s.kernel("c", b + 1000, b + 1100);
  auto& m = s.finish();
  Scope sc;
  sc.trimStart = 150;
  sc.trimEnd = 300;
  View v(m, sc);
  REQUIRE(v.ops.size() == 1);
  CHECK(m.str(m.gpuOps[v.ops[0]].name) == "b");
  auto ov = computeOverlap(v);
  REQUIRE(ov.devices.size() == 1);
  CHECK(ov.devices[0].computeNs == 100);  // [200, 300)
  Scope dev1;
  dev1.device = 1;
  CHECK(View(m, dev1).ops.empty());
}
