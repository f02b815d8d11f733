// The per-range table on a hand-built profile: exclusive launches per invocation, variants, unmapped.
#include <algorithm>

#include "core/attribution/range_table.h"
#include "doctest/doctest.h"
#include "tests/support/profile_builder.h"

using namespace kl;
using namespace kl::attribution;


TEST_CASE("exclusive launches per invocation, nested ranges, variants and unmapped ops") {
  kl::test::ProfileBuilder b;
  // Two invocations of an outer range; the inner range owns one kernel each time; the outer one
  // keeps an add kernel of its own. A third range dispatches different kernels per invocation.
  for (int i = 0; i < 2; ++i) {
    int64_t t = 1000 * i;
    b.range("kl:m.py:1-3:outer", t, t + 500);
    b.range("kl:m.py:2-2:inner", t + 10, t + 100);
    b.kernel("gemm", t + 20);
    b.kernel("add", t + 200, 5);
  }
  b.range("kl:m.py:5-5:softmax", 3000, 3100);
  b.kernel("softmax_warp_forward", 3010);
  b.range("kl:m.py:5-5:softmax", 4000, 4100);
  b.kernel("cunn_SoftMaxForward", 4010);
  b.range("user range", 5000, 5100);  // not kl: -> ignored
  b.kernel("outside", 5010);
  b.finish();
  uint64_t runsBefore = attributionRuns();
  auto s = tabulateRanges(b.m);
  CHECK(attributionRuns() == runsBefore + 1);
  REQUIRE(s.ok());
  CHECK(s->totalOps == 7);
  CHECK(s->invocations == 6);
  const auto& outer = *s->find("kl:m.py:1-3:outer");
  CHECK(outer.invocations == 2);
  CHECK(outer.launches == 4);  // inclusive
  CHECK(outer.exclusiveLaunches == 2);
  CHECK(outer.maxExclusivePerInvocation == 1);
  REQUIRE(outer.kernels.size() == 1);
  CHECK(outer.kernels[0].name == "add");
  CHECK(outer.kernels[0].gpuNs == 10);
  const auto& inner = *s->find("kl:m.py:2-2:inner");
  CHECK(inner.exclusiveLaunches == 2);
  CHECK(inner.variants.size() == 1);
  const auto& sm = *s->find("kl:m.py:5-5:softmax");
  CHECK(sm.maxExclusivePerInvocation == 1);
  REQUIRE(sm.variants.size() == 2);  // dynamic dispatch
  CHECK(sm.variants[0].invocations == 1);
  REQUIRE(s->unmapped.size() == 1);
  CHECK(s->unmapped[0].name == "outside");
  CHECK(unmappedReasonName(s->unmapped[0].reason) == "outside_kl_ranges");
}
