// Planner decisions on hand-built round statistics (decide.h, budget.h).
#include "core/planner/decide.h"

#include "core/planner/budget.h"
#include "doctest/doctest.h"

using namespace kl::planner;

namespace {
kl::attribution::RangeEntry stats(uint32_t inv, int64_t launches, uint32_t maxExcl,
                                  std::vector<std::string> kernels = {}) {
  kl::attribution::RangeEntry s;
  s.invocations = inv;
  s.launches = launches;
  s.exclusiveLaunches = launches;
  s.maxExclusivePerInvocation = maxExcl;
  s.inclusiveKernels = std::move(kernels);
  return s;
}
auto yes = [](int) { return true; };
auto no = [](int) { return false; };
}  // namespace

TEST_CASE("a range that never ran or launched nothing goes idle") {
  Policy p;
  CHECK(decide({1, false, false}, nullptr, p, yes).action == Action::Idle);
  auto s = stats(3, 0, 0);
  auto d = decide({1, false, false}, &s, p, yes);
  CHECK(d.action == Action::Idle);
  CHECK(d.reason == "launched nothing");
}

TEST_CASE("one launch per invocation resolves, even with many invocations") {
  Policy p;
  auto s = stats(10, 10, 1);
  CHECK(decide({1, false, false}, &s, p, yes).action == Action::Resolve);
}

TEST_CASE("several launches per invocation refine when there are children, else atomic") {
  Policy p;
  auto s = stats(2, 8, 4);
  CHECK(decide({1, false, false}, &s, p, yes).action == Action::Refine);
  auto a = decide({1, false, false}, &s, p, no);
  CHECK(a.action == Action::Atomic);
  CHECK(a.reason.find("no statement or workspace function") != std::string::npos);
  // Already refined: what is left is the line's own launches.
  auto b = decide({1, false, true}, &s, p, yes);
  CHECK(b.action == Action::Atomic);
  CHECK(b.reason.find("line itself") != std::string::npos);
}

TEST_CASE("the per-range NVTX budget refuses hot ranges but never the focus root") {
  Policy p;
  p.maxPushesPerLaunch = 4;
  p.budgetMinInvocations = 64;
  auto hot = stats(1000, 10, 1);
  auto d = decide({7, false, false}, &hot, p, yes);
  CHECK(d.action == Action::Refuse);
  CHECK(d.reason.find("1000 pushes for 10 launches") != std::string::npos);
  CHECK(decide({7, true, false}, &hot, p, yes).action == Action::Resolve);
  // Few invocations: cheap, never refused.
  auto cold = stats(50, 1, 1);
  CHECK(decide({7, false, false}, &cold, p, yes).action == Action::Resolve);
}

TEST_CASE("--kernel only refines ranges that launch a matching kernel") {
  Policy p;
  p.kernelPattern = "nvjet_tst_128x320";
  auto other = stats(1, 3, 3, {"vectorized_elementwise_kernel", "reduce_kernel"});
  CHECK(decide({1, false, false}, &other, p, yes).action == Action::OutOfFocus);
  auto match = stats(1, 3, 3, {"nvjet_tst_128x320_64x4_1x2_h_bz_coopA_NNT", "reduce_kernel"});
  CHECK(decide({1, false, false}, &match, p, yes).action == Action::Refine);
  CHECK_FALSE(compileKernelPattern(std::string("(")).ok());
}

TEST_CASE("wall-time budget refuses the most-invoked ranges until the overhead fits") {
  Overhead o{1000, 3000, 5000, 100};  // +200 %, 50 pushes per launch
  std::vector<RangeCost> r{{1, 4000, false}, {2, 900, false}, {3, 100, true}};
  auto out = wallRefusals(o, r, 0.5);
  REQUIRE(out.size() >= 1);
  CHECK(out[0].id == 1);
  for (const auto& w : out) CHECK(w.id != 3);  // roots are never refused
  // Within budget, or no baseline, or fewer pushes than launches (noise): nothing refused.
  CHECK(wallRefusals(Overhead{1000, 1400, 5000, 100}, r, 0.5).empty());
  CHECK(wallRefusals(Overhead{-1, 3000, 5000, 100}, r, 0.5).empty());
  CHECK(wallRefusals(Overhead{1000, 3000, 50, 100}, r, 0.5).empty());
}
