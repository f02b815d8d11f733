// Totals at the int64 limits: a hostile profile whose op durations or copy sizes sum past
// INT64_MAX gives saturated totals (the limit), never a wrapped negative number or a share above
// 100 %. The readers refuse single values beyond their bounds (core/profile/validate.h); these
// models hold values at those bounds, several of them, built directly.
#include <doctest/doctest.h>

#include <climits>

#include "core/analysis/memcpy.h"
#include "core/analysis/search.h"
#include "core/analysis/streams.h"
#include "core/analysis/summary.h"
#include "core/analysis/threads.h"
#include "core/analysis/tree.h"
#include "core/attribution/range_table.h"
#include "core/profile/validate.h"
#include "core/support/saturating.h"
#include "synth.h"

using namespace kl::analysis;

namespace {
constexpr int64_t kBig = kl::profile::kMaxTimestampNs;  // 2^61: the largest time a reader keeps

/// Five kernels of ~2^61 ns each on five streams (5 x 2^61 > 2^63 > INT64_MAX), each launched
/// by a call of ~2^61 ns, inside five nested instances of the range "step" (~2^61 ns each).
kl::test::Synth hostile() {
  kl::test::Synth s;
  for (int k = 0; k < 5; ++k) s.range("step", k, kBig - k);
  for (uint32_t i = 0; i < 5; ++i) s.kernel("gemm", 100, kBig, 0, 7 + i, 10 + i, kBig - 20);
  return s;
}
}  // namespace

TEST_CASE("saturating arithmetic at the limits") {
  using kl::addSat;
  using kl::mulSat;
  CHECK(addSat(INT64_MAX, 1) == INT64_MAX);
  CHECK(addSat(INT64_MAX - 1, 1) == INT64_MAX);
  CHECK(addSat(INT64_MIN, -1) == INT64_MIN);
  CHECK(addSat(INT64_MAX, INT64_MIN) == -1);
  CHECK(addSat(kBig, kBig) == 2 * kBig);
  CHECK(addSat(4 * (kBig - 1), 4 * (kBig - 1)) == INT64_MAX);
  CHECK(mulSat(INT64_MAX, 2) == INT64_MAX);
  CHECK(mulSat(INT64_MIN, 2) == INT64_MIN);
  CHECK(mulSat(-kBig, 8) == INT64_MIN);
  CHECK(mulSat(kBig, -8) == INT64_MIN);
  CHECK(mulSat(-kBig, -8) == INT64_MAX);
  CHECK(mulSat(kBig, 3) == 3 * kBig);
  CHECK(mulSat(0, INT64_MIN) == 0);
  int64_t acc = 0;
  for (int i = 0; i < 5; ++i) kl::addTo(acc, kBig);
  CHECK(acc == INT64_MAX);
  kl::addTo(acc, -kBig);  // once pinned, a sum stays an upper bound, not a wrapped value
  CHECK(acc == INT64_MAX - kBig);
}

TEST_CASE("analyses: totals past INT64_MAX saturate, shares stay within 100 %") {
  auto s = hostile();
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr);
  View v(m, {}, &*attr);

  SUBCASE("summary, threads, streams") {
    auto sum = computeSummary(v);
    CHECK(sum.kernels == 5);
    CHECK(sum.kernelNs == INT64_MAX);
    REQUIRE(sum.kernelsByTime.size() == 1);
    CHECK(sum.kernelsByTime[0].totalNs == INT64_MAX);
    CHECK(sum.kernelsByTime[0].share <= 1.0);
    CHECK(sum.kernelsByTime[0].share > 0.99);
    for (const auto& st : sum.streams) CHECK(st.kernelNs == kBig - 100);

    auto th = computeThreads(v);
    REQUIRE(th.threads.size() == 1);
    CHECK(th.threads[0].gpuNs == INT64_MAX);
    CHECK(th.threads[0].apiNs == INT64_MAX);

    auto sr = computeStreams(v);
    for (const auto& d : sr.devices) {
      CHECK(d.activeSpanNs >= 0);
      CHECK(d.multiNs >= 0);
      CHECK(d.serialisedNs >= 0);
    }
  }

  SUBCASE("tree, search, range table: inclusive times of a range") {
    auto t = computeTree(v);
    CHECK(t.totalNs == INT64_MAX);
    for (const auto& n : t.nodes) {
      CHECK(n.inclusiveNs >= 0);
      CHECK(n.exclusiveNs >= 0);
      CHECK(n.inclusiveNs >= n.exclusiveNs);
      for (const auto& k : n.kernels) CHECK(k.ns >= 0);
    }
    REQUIRE(!t.roots.empty());
    CHECK(t.nodes[t.roots[0]].inclusiveNs == INT64_MAX);

    SearchOptions o;
    o.pattern = "step";
    auto r = computeSearch(v, o);
    REQUIRE(r);
    for (const auto& row : r->ranges) {
      CHECK(row.cpuNs == INT64_MAX);  // five instances of ~2^61 ns each
      CHECK(row.gpuNs >= 0);
    }

    auto table = kl::attribution::tabulateRanges(m, *attr);
    REQUIRE(table);
    CHECK(table->totalGpuNs == INT64_MAX);
    for (const auto& e : table->ranges) {
      CHECK(e.exclusiveGpuNs >= 0);
      for (const auto& k : e.kernels) CHECK(k.gpuNs >= 0);
    }
  }
}

TEST_CASE("memcpy: bytes and times past INT64_MAX saturate, bandwidths stay finite") {
  kl::test::Synth s;
  for (int i = 0; i < 4; ++i) s.memcpy(1, INT64_MAX / 3, 0, kBig);
  auto& m = s.finish();
  View v(m, {});
  auto r = computeMemcpy(v);
  CHECK(r.bytes == INT64_MAX);
  CHECK(r.totalNs == INT64_MAX);
  for (const auto& row : r.rows) {
    CHECK(row.bytes == INT64_MAX);
    CHECK(row.totalNs == INT64_MAX);
  }
}
