// The per-range table on a hand-built profile: exclusive launches per invocation, variants, unmapped.
#include "core/attribution/range_table.h"

#include <algorithm>

#include "core/attribution/line_result.h"
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

TEST_CASE("backward kernels: a separate entry per pass on the forward line, backward time per range") {
  kl::test::ProfileBuilder b;
  // Forward: line 2 runs a mm that creates autograd node 3 (emit_nvtx texts).
  b.range("kl:m.py:2-2:h = x @ w", 100, 1000);
  b.range("aten::mm, seq = 3", 200, 900);
  b.kernel("gemm", 300, 10);
  // backward() on the same thread (CPU PyTorch): the node of seq 3 launches a gemm of the same
  // name; a node whose forward op is not in the profile stays on the backward() line.
  b.range("kl:m.py:5-5:loss.backward()", 3000, 9000);
  b.range("MmBackward0, seq = 3", 3100, 3500);
  b.kernel("gemm", 3200, 20);
  b.range("FooBackward0, seq = 999", 4000, 4500);
  b.kernel("orphan", 4100, 5);
  b.finish();
  auto s = tabulateRanges(b.m);
  REQUIRE(s.ok());
  const auto& line2 = *s->find("kl:m.py:2-2:h = x @ w");
  CHECK(line2.exclusiveLaunches == 2);
  CHECK(line2.exclusiveGpuNs == 30);
  CHECK(line2.exclusiveBackwardGpuNs == 20);
  REQUIRE(line2.kernels.size() == 2);  // same name, two passes: two entries, most GPU time first
  CHECK(line2.kernels[0].name == "gemm");
  CHECK(line2.kernels[0].pass == Pass::Backward);
  CHECK_FALSE(line2.kernels[0].noForwardOwner);
  CHECK(line2.kernels[0].gpuNs == 20);
  CHECK(line2.kernels[1].pass == Pass::Forward);
  CHECK(line2.kernels[1].gpuNs == 10);
  const auto& bwd = *s->find("kl:m.py:5-5:loss.backward()");
  CHECK(bwd.exclusiveBackwardGpuNs == 5);
  REQUIRE(bwd.kernels.size() == 1);
  CHECK(bwd.kernels[0].name == "orphan");
  CHECK(bwd.kernels[0].backward());
  CHECK(bwd.kernels[0].noForwardOwner);
}

TEST_CASE("a published kernel keeps its pass: backward and recompute are backward, step kinds are not") {
  struct Want {
    Pass pass;
    const char* name;
    bool backward, step;
  };
  for (const Want& w :
       {Want{Pass::Forward, "forward", false, false}, Want{Pass::Backward, "backward", true, false},
        Want{Pass::Recompute, "recompute", true, false}, Want{Pass::Optimizer, "optimizer", false, true},
        Want{Pass::ZeroGrad, "zero_grad", false, true}, Want{Pass::GradClip, "grad-clip", false, true},
        Want{Pass::AmpScaler, "amp-scaler", false, true}}) {
    KernelEntry e;
    e.name = "k";
    e.pass = w.pass;
    KernelStat k = kernelStat(e);
    CAPTURE(w.name);
    CHECK(std::string(passName(k.pass)) == w.name);
    CHECK(k.backward() == w.backward);
    CHECK(k.stepPass() == w.step);
  }
}

TEST_CASE("atomic reasons: the spelling JSON, text output and the store use, read back") {
  const std::pair<AtomicReason, const char*> spelled[] = {{AtomicReason::None, ""},
                                                          {AtomicReason::Library, "library"},
                                                          {AtomicReason::Unfollowed, "unfollowed"},
                                                          {AtomicReason::Budget, "budget"},
                                                          {AtomicReason::NoSource, "no_source"}};
  for (const auto& [r, text] : spelled) {
    CHECK(std::string(atomicReasonName(r)) == text);
    CHECK(atomicReasonFromName(text) == r);
  }
  CHECK_FALSE(atomicReasonFromName("Library").has_value());
  CHECK_FALSE(atomicReasonFromName("no-source").has_value());
  CHECK(LineResult{}.atomicReason == AtomicReason::None);
}
