// iters (both methods), diff verdicts, diagnose rules on synthetic profiles.
#include <doctest/doctest.h>

#include "core/analysis/diagnose.h"
#include "core/analysis/diff.h"
#include "core/analysis/iters.h"
#include "core/analysis/launch.h"
#include "synth.h"

using namespace kl::analysis;

TEST_CASE("iters: kernel-sequence heuristic finds the period of a repeated step") {
  kl::test::Synth s;
  int64_t t = 1'000'000;
  const char* step[] = {"embed", "gemm", "relu", "gemm", "softmax", "gemm", "adam"};
  for (int it = 0; it < 6; ++it)
    for (const char* k : step) {
      s.kernel(k, t, t + 900);
      t += 1000;
    }
  s.kernel("tail", t, t + 10);
  auto& m = s.finish();
  View v(m, {});
  auto r = computeIters(v);
  CHECK(std::string(iterMethodName(r.method)) == "kernel-sequence");
  // Cut at an anchor that occurs once per step: 5 full segments between 6 occurrences.
  CHECK(r.iterations.size() == 5);
  for (const auto& i : r.iterations) CHECK(i.ops == 7);
  CHECK(r.durations.p50 == 6 * 1000 + 900);
  CHECK(r.detail.find("heuristic") != std::string::npos);
}

TEST_CASE("iters: ProfilerStep ranges win and carry their attributed ops") {
  kl::test::Synth s;
  int64_t t = 1'000'000;
  for (int it = 0; it < 3; ++it) {
    s.range("ProfilerStep#" + std::to_string(10 + it), t, t + 50'000);
    s.range("iteration_" + std::to_string(it), t + 10, t + 40'000);  // generic name, lower priority
    for (int k = 0; k < 4; ++k)
      s.kernel("k" + std::to_string(k), t + 100'000, t + 100'500, 0, 7, t + 100 + k * 1000, 500);
    t += 60'000;
  }
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  View v(m, {}, &*attr);
  auto r = computeIters(v);
  CHECK(std::string(iterMethodName(r.method)) == "nvtx");
  REQUIRE(r.iterations.size() == 3);
  CHECK(r.iterations[0].label == "ProfilerStep#10");
  CHECK(r.iterations[0].ops == 4);
  CHECK(r.iterations[0].end - r.iterations[0].start == 50'000);
}

TEST_CASE("iters: nothing to find") {
  kl::test::Synth s;
  s.kernel("a", 1000, 2000);
  s.kernel("b", 3000, 4000);
  auto& m = s.finish();
  auto r = computeIters(View(m, {}));
  CHECK(std::string(iterMethodName(r.method)) == "none");
  CHECK(r.iterations.empty());
}

TEST_CASE("diff: verdict against the threshold, new and vanished kernels") {
  kl::test::Synth a, b;
  a.kernel("gemm", 1000, 2000);
  a.kernel("old", 3000, 3100);
  b.kernel("gemm", 1000, 2050);
  b.kernel("new", 3000, 3100);
  auto& ma = a.finish();
  auto& mb = b.finish();
  View va(ma, {}), vb(mb, {});
  DiffOptions o;
  o.thresholdPct = 5;
  auto r = computeDiff(va, vb, o);
  REQUIRE(r.ok());
  CHECK(r->valueA == 1100);
  CHECK(r->valueB == 1150);
  CHECK(std::string(diffVerdictName(r->verdict)) == "unchanged");  // +4.5%
  CHECK(r->newKernels == 1);
  CHECK(r->vanishedKernels == 1);
  o.thresholdPct = 4;
  CHECK(std::string(diffVerdictName(computeDiff(va, vb, o)->verdict)) == "regression");
  CHECK(std::string(diffVerdictName(computeDiff(vb, va, o)->verdict)) == "improvement");
  o.metric = DiffMetric::Iter;
  CHECK(!computeDiff(va, vb, o).ok());
  CHECK(diffMetricFromName("busy") == DiffMetric::Busy);
  CHECK(std::string(diffMetricName(DiffMetric::Iter)) == "iter");
  CHECK_FALSE(diffMetricFromName("nope").has_value());
}

TEST_CASE("diagnose: CPU-bound launching and launch-bound tiny kernels fire with evidence") {
  kl::test::Synth s;
  int64_t t = 10'000'000;
  // 30 tiny kernels, each launched 50 us after the previous one finished: the GPU waits.
  for (int i = 0; i < 30; ++i) {
    s.kernel("tiny_add", t + 5'000, t + 6'000, 0, 7, t, 5'000);
    t += 56'000;
  }
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  View v(m, {}, &*attr);
  auto r = computeDiagnose(v);
  auto find = [&](const std::string& id) -> const Finding* {
    for (const auto& f : r.findings)
      if (f.id == id) return &f;
    return nullptr;
  };
  const Finding* cpu = find("cpu_bound_launch");
  REQUIRE(cpu);
  CHECK(!cpu->facts.empty());
  CHECK(!cpu->hypothesis.empty());
  REQUIRE(!cpu->evidence.empty());
  CHECK(cpu->evidence[0].name == "tiny_add");
  CHECK(cpu->evidence[0].durationNs == 55'000);
  const Finding* tiny = find("launch_bound_tiny");
  REQUIRE(tiny);
  CHECK(tiny->evidence[0].name == "tiny_add");
  // 89% of the active span idle: high; launch-bound is always medium; the most severe first.
  CHECK(std::string(severityName(cpu->severity)) == "high");
  CHECK(std::string(severityName(tiny->severity)) == "medium");
  CHECK(cpu < tiny);
  CHECK(std::string(severityName(Severity::Low)) == "low");
  CHECK(find("nccl_exposed") == nullptr);
  CHECK(r.checked.size() == 5);
  auto l = computeLaunch(v);
  CHECK(l.withLaunch == 30);
  CHECK(l.queue.p50 == 0);  // kernels start when the call returns
  CHECK(l.overhead.p50 == 5'000);
  CHECK(l.launchBoundKernels == 30);
}

TEST_CASE("diagnose: quiet profile fires nothing") {
  kl::test::Synth s;
  int64_t t = 10'000'000;
  for (int i = 0; i < 30; ++i) {
    s.kernel("big_gemm", t + 100'000 * i, t + 100'000 * (i + 1), 0, 7, t + 1000 * i, 900);
  }
  auto& m = s.finish();
  auto attr = kl::attribution::attribute(m);
  REQUIRE(attr.ok());
  auto r = computeDiagnose(View(m, {}, &*attr));
  CHECK(r.findings.empty());
  for (const auto& c : r.checked) CHECK_FALSE(c.fired);
}
