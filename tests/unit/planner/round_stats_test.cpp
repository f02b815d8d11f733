// Round statistics on a hand-built profile: exclusive launches per invocation, variants, unmapped.
#include <algorithm>

#include "core/planner/round_stats.h"
#include "doctest/doctest.h"

using namespace kl;
using namespace kl::planner;

namespace {

struct Builder {
  profile::ProfileModel m;
  int64_t corr = 1;
  Builder() {
    m.processes.push_back(profile::Process{profile::GlobalId::make(0, 1, 100, 0), 100, 0, 0});
    m.threads.push_back(profile::Thread{profile::GlobalId::make(0, 1, 100, 100), 100, 0, 0});
  }
  void range(const char* name, int64_t s, int64_t e) {
    profile::Range r;
    r.start = s;
    r.end = e;
    r.text = m.strings.intern(name);
    r.thread = 0;
    m.ranges.push_back(r);
  }
  void launch(const char* kernel, int64_t at, int64_t dur = 10) {
    profile::ApiCall c;
    c.start = at;
    c.end = at + 1;
    c.correlationId = corr;
    c.name = m.strings.intern("cudaLaunchKernel_v7000");
    c.thread = 0;
    c.role = profile::ApiRole::Launch;
    m.apiCalls.push_back(c);
    profile::GpuOp op;
    op.start = at + 1000;
    op.end = at + 1000 + dur;
    op.correlationId = corr++;
    op.name = m.strings.intern(kernel);
    op.process = 0;
    m.gpuOps.push_back(op);
  }
  void sortAll() {
    auto by = [](const auto& a, const auto& b) { return a.start < b.start; };
    std::stable_sort(m.ranges.begin(), m.ranges.end(), by);
    std::stable_sort(m.apiCalls.begin(), m.apiCalls.end(), by);
    std::stable_sort(m.gpuOps.begin(), m.gpuOps.end(), by);
  }
};

}  // namespace

TEST_CASE("exclusive launches per invocation, nested ranges, variants and unmapped ops") {
  Builder b;
  // Two invocations of an outer range; the inner range owns one kernel each time; the outer one
  // keeps an add kernel of its own. A third range dispatches different kernels per invocation.
  for (int i = 0; i < 2; ++i) {
    int64_t t = 1000 * i;
    b.range("kl:m.py:1-3:outer", t, t + 500);
    b.range("kl:m.py:2-2:inner", t + 10, t + 100);
    b.launch("gemm", t + 20);
    b.launch("add", t + 200, 5);
  }
  b.range("kl:m.py:5-5:softmax", 3000, 3100);
  b.launch("softmax_warp_forward", 3010);
  b.range("kl:m.py:5-5:softmax", 4000, 4100);
  b.launch("cunn_SoftMaxForward", 4010);
  b.range("user range", 5000, 5100);  // not kl: -> ignored
  b.launch("outside", 5010);
  b.sortAll();
  auto s = computeRoundStats(b.m);
  REQUIRE(s.ok());
  CHECK(s->totalOps == 7);
  CHECK(s->pushes == 6);
  const auto& outer = s->ranges.at("kl:m.py:1-3:outer");
  CHECK(outer.invocations == 2);
  CHECK(outer.launches == 4);  // inclusive
  CHECK(outer.exclusiveLaunches == 2);
  CHECK(outer.maxExclusivePerInvocation == 1);
  REQUIRE(outer.exclusiveKernels.size() == 1);
  CHECK(outer.exclusiveKernels[0].name == "add");
  CHECK(outer.exclusiveKernels[0].gpuNs == 10);
  const auto& inner = s->ranges.at("kl:m.py:2-2:inner");
  CHECK(inner.exclusiveLaunches == 2);
  CHECK(inner.variants.size() == 1);
  const auto& sm = s->ranges.at("kl:m.py:5-5:softmax");
  CHECK(sm.maxExclusivePerInvocation == 1);
  REQUIRE(sm.variants.size() == 2);  // dynamic dispatch
  CHECK(sm.variants[0].invocations == 1);
  REQUIRE(s->unmapped.size() == 1);
  CHECK(s->unmapped[0].name == "outside");
  CHECK(s->unmapped[0].reason == "outside_kl_ranges");
}
