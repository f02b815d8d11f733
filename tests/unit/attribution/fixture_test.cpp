// Attribution on synthetic nsys exports (schema from tests/data/fixtures/nsys-schema.sql) for
// the cases no real file has. Expected values are stated by construction in each test.
#include <doctest/doctest.h>

#include <string>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"
#include "tests/unit/attribution/nsys_fixture.h"

using namespace kl::profile;
using namespace kl::attribution;
using kl::test::gpid;
using kl::test::gtid;
using kl::test::NsysFixture;
using kl::test::opNamed;
using kl::test::readFixture;
using kl::test::TempDir;

namespace {

constexpr int64_t T0 = 100'000'000'000;  // large absolute timestamps, like real exports

std::string innermostText(const ProfileModel& m, const Attribution& a, uint32_t op) {
  uint32_t r = a.innermost(op);
  return r == kNone ? std::string("<none>") : std::string(m.str(m.ranges[r].text));
}

}  // namespace

TEST_CASE("fixture: a range that ended before its kernel ran still owns it; launch time decides") {
  TempDir dir;
  NsysFixture f(dir / "async.sqlite");
  auto t = gtid(4242, 4250);
  f.range(T0, T0 + 1000, t, "step");
  f.runtime(T0 + 100, T0 + 200, t, 1, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 50'000'000, T0 + 50'001'000, gpid(4242), 1, "late_kernel");  // runs 50 ms later
  // A launch that straddles the range end is not contained.
  f.runtime(T0 + 900, T0 + 1100, t, 2, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 2000, T0 + 3000, gpid(4242), 2, "straddling");
  // A range on another thread of the same process does not capture the launch.
  f.range(T0 + 5000, T0 + 9000, gtid(4242, 4251), "other_thread");
  f.runtime(T0 + 6000, T0 + 6100, t, 3, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 7000, T0 + 8000, gpid(4242), 3, "no_range");
  // A kernel whose launch is outside the capture window.
  f.kernel(T0 + 10000, T0 + 11000, gpid(4242), 99, "orphan");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  auto late = opNamed(m, "late_kernel");
  CHECK(innermostText(m, *a, late) == "step");
  CHECK(a->op(late).reason == Unattributed::None);
  CHECK(a->op(opNamed(m, "straddling")).reason == Unattributed::OutsideRanges);
  CHECK(a->op(opNamed(m, "no_range")).reason == Unattributed::OutsideRanges);
  CHECK(a->op(opNamed(m, "orphan")).reason == Unattributed::NoLaunchCall);
  CHECK(a->op(opNamed(m, "orphan")).launch == kNone);
  CHECK(std::string(unattributedName(Unattributed::NoLaunchCall)) == "no_launch_call");
  CHECK(a->attributedCount() == 1);
  CHECK(a->outsideRangesCount() == 2);
  CHECK(a->noLaunchCount() == 1);
}

TEST_CASE("fixture: two processes with the same correlation ids are never cross-linked") {
  TempDir dir;
  NsysFixture f(dir / "twoproc.sqlite");
  // Process A (pid 100) and process B (pid 200, non-zero hardware id) both use correlation 7.
  auto ta = gtid(100, 101), tb = gtid(200, 202, 3);
  f.range(T0, T0 + 1000, ta, "A_range");
  f.range(T0, T0 + 1000, tb, "B_range");
  f.runtime(T0 + 10, T0 + 20, ta, 7, "cudaLaunchKernel_v7000");
  f.runtime(T0 + 30, T0 + 40, tb, 7, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 100, T0 + 200, gpid(100), 7, "kA", 0);
  f.kernel(T0 + 100, T0 + 300, gpid(200, 3), 7, "kB", 1);
  // Process B also has corr 8 only; a process-A kernel with corr 8 has no launch call.
  f.runtime(T0 + 50, T0 + 60, tb, 8, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 400, T0 + 500, gpid(100), 8, "kA_orphan", 0);
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(innermostText(m, *a, opNamed(m, "kA")) == "A_range");
  CHECK(innermostText(m, *a, opNamed(m, "kB")) == "B_range");
  CHECK(a->op(opNamed(m, "kA_orphan")).reason == Unattributed::NoLaunchCall);
  // The hardware id (bits 56..63) survives decoding; pid/tid are the OS ids.
  auto kb = m.gpuOps[opNamed(m, "kB")];
  CHECK(m.processes[kb.process].pid == 200);
  CHECK(GlobalId::hwId(m.processes[kb.process].globalPid) == 3);
  CHECK(m.threads[m.apiCalls[a->op(opNamed(m, "kB")).launch].thread].tid == 202);
}

TEST_CASE("fixture: CUDA graphs — node kernels and graph-level rows belong to the range around cudaGraphLaunch") {
  TempDir dir;
  NsysFixture f(dir / "graph.sqlite");
  auto t = gtid(300, 301);
  // Capture time: nodes defined inside "capture" (not used for attribution by default).
  f.range(T0, T0 + 100, t, "capture");
  f.range(T0 + 1000, T0 + 2000, t, "replay");
  f.runtime(T0 + 1100, T0 + 1200, t, 55, "cudaGraphLaunch_v10000");
  for (int i = 0; i < 3; ++i)
    f.kernel(T0 + 5000 + i * 100, T0 + 5050 + i * 100, gpid(300), 55, "node" + std::to_string(i), 0, 7, 9, 1000 + i);
  f.range(T0 + 3000, T0 + 4000, t, "replay_graph_mode");
  f.runtime(T0 + 3100, T0 + 3200, t, 56, "cudaGraphLaunch_v10000");
  f.graphTrace(T0 + 9000, T0 + 9900, gpid(300), 56, 9);
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  for (int i = 0; i < 3; ++i) {
    auto op = opNamed(m, "node" + std::to_string(i));
    CHECK(innermostText(m, *a, op) == "replay");
    CHECK(m.gpuOps[op].graphId == 9);
    CHECK(m.kernels[m.gpuOps[op].detail].graphNodeId == 1000 + i);
    CHECK(m.apiCalls[a->op(op).launch].role == ApiRole::GraphLaunch);
  }
  uint32_t g = kNone;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.gpuOps[i].kind == GpuOpKind::Graph) g = i;
  REQUIRE(g != kNone);
  CHECK(m.str(m.gpuOps[g].name) == "[CUDA graph 9]");
  CHECK(innermostText(m, *a, g) == "replay_graph_mode");
  // One launch, three kernels: per-range launches vs ops.
  uint32_t replay = a->innermost(opNamed(m, "node0"));
  CHECK(a->ranges()[replay].launches == 1);
  CHECK(a->ranges()[replay].ops == 3);
  CHECK(a->ranges()[replay].distinctKernels == 3);
}

TEST_CASE("fixture: start/end ranges that end on another thread, marks, open ranges, categories, domains") {
  TempDir dir;
  NsysFixture f(dir / "nvtx.sqlite");
  auto main = gtid(500, 500), worker = gtid(500, 511);
  NsysFixture::Nvtx dom{75, T0, std::nullopt, main, std::string("NCCL"), std::nullopt, 5};
  f.nvtx(dom);
  NsysFixture::Nvtx cat{33, T0, std::nullopt, main, std::string("io"), std::nullopt, 5};
  cat.category = 3;
  f.nvtx(cat);
  // Start/end range started on main, ended on worker.
  NsysFixture::Nvtx se{60, T0 + 100, T0 + 5000, main, std::string("cross"), std::nullopt, 0, worker};
  f.nvtx(se);
  // A registered-string range in domain 5 with category 3, on main.
  NsysFixture::Nvtx reg{59, T0 + 200, T0 + 300, main, std::nullopt, std::string("ncclAllReduce"), 5};
  reg.category = 3;
  f.nvtx(reg);
  // A mark inside, and an open range (no end) on worker.
  NsysFixture::Nvtx mark{34, T0 + 250, std::nullopt, main, std::string("here")};
  f.nvtx(mark);
  NsysFixture::Nvtx open{59, T0 + 400, std::nullopt, worker, std::string("never_closed")};
  f.nvtx(open);
  f.runtime(T0 + 210, T0 + 220, main, 1, "cuLaunchKernelEx", 1);
  f.kernel(T0 + 600, T0 + 700, gpid(500), 1, "nccl_k");
  f.runtime(T0 + 1000, T0 + 1010, worker, 2, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 1100, T0 + 1200, gpid(500), 2, "worker_k");
  f.runtime(T0 + 4000, T0 + 4010, main, 3, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 6000, T0 + 6100, gpid(500), 3, "main_k");
  f.dropTable("CUPTI_ACTIVITY_KIND_MEMSET");  // lazy tables: absent = empty
  f.dropTable("TARGET_INFO_GPU");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  // nccl_k: stack = cross (start/end, started on main) > ncclAllReduce (domain NCCL, category io).
  auto k = opNamed(m, "nccl_k");
  CHECK(a->path(m, k) == "cross > ncclAllReduce");
  auto inner = m.ranges[a->innermost(k)];
  CHECK(m.str(inner.domain) == "NCCL");
  CHECK(m.str(inner.category) == "io");
  CHECK(m.apiCalls[a->op(k).launch].level == ApiLevel::Driver);
  // worker_k: launched on the worker thread inside the open range (which extends to the span
  // end); the cross-thread range belongs to its START thread (main), so it does not count here.
  CHECK(a->path(m, opNamed(m, "worker_k")) == "never_closed");
  // main_k: inside "cross" on main.
  CHECK(a->path(m, opNamed(m, "main_k")) == "cross");
  // Option: drop start/end ranges ended on another thread (nsys' own report rule).
  Options strict;
  strict.crossThreadStartEnd = false;
  auto b = attribute(m, strict);
  REQUIRE(b.ok());
  CHECK(b->op(opNamed(m, "main_k")).reason == Unattributed::OutsideRanges);
  CHECK(b->path(m, k) == "ncclAllReduce");
  // Marks are kept in the model (end == start) but never contain launches.
  bool sawMark = false;
  for (const auto& r : m.ranges)
    if (r.kind == RangeKind::NvtxMark) {
      sawMark = true;
      CHECK(r.end == r.start);
      CHECK(m.str(r.text) == "here");
    }
  CHECK(sawMark);
  for (const auto& r : m.ranges)
    if (m.str(r.text) == "never_closed") {
      CHECK(r.open);
      CHECK(r.end == m.meta.spanEnd);
    }
  // Domain filter and name-prefix filter.
  Options onlyNccl;
  onlyNccl.domain = "NCCL";
  auto c = attribute(m, onlyNccl);
  REQUIRE(c.ok());
  CHECK(c->path(m, k) == "ncclAllReduce");
  CHECK(c->op(opNamed(m, "main_k")).reason == Unattributed::OutsideRanges);
  CHECK(m.gpus.size() == 1);  // derived from the ops' device ids
}

TEST_CASE("fixture: deep nesting — full stack outermost to innermost, inclusive/exclusive times") {
  TempDir dir;
  NsysFixture f(dir / "deep.sqlite");
  auto t = gtid(700, 701);
  const int depth = 300;
  for (int d = 0; d < depth; ++d) f.range(T0 + d, T0 + 1'000'000 - d, t, "level" + std::to_string(d));
  // One launch at each of a few depths: inside level d only (after level d+1 ended).
  f.runtime(T0 + depth + 10, T0 + depth + 20, t, 1, "cudaLaunchKernel_v7000");  // innermost = deepest
  f.kernel(T0 + 2'000'000, T0 + 2'000'100, gpid(700), 1, "deep_k");
  f.runtime(T0 + 1'000'000, T0 + 1'000'000, t, 2, "cudaLaunchKernel_v7000");  // only level0 contains it
  f.kernel(T0 + 2'000'200, T0 + 2'000'500, gpid(700), 2, "shallow_k");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  auto deep = opNamed(m, "deep_k");
  auto st = a->stack(deep);
  REQUIRE(st.size() == depth);
  for (int d = 0; d < depth; ++d) CHECK(m.str(m.ranges[st[d]].text) == "level" + std::to_string(d));
  auto sh = opNamed(m, "shallow_k");
  CHECK(a->path(m, sh) == "level0");
  const auto& l0 = a->ranges()[st[0]];
  CHECK(l0.ops == 2);
  CHECK(l0.inclusiveGpuNs == 400);
  CHECK(l0.exclusiveGpuNs == 300);
  CHECK(l0.depth == 0);
  const auto& last = a->ranges()[st[depth - 1]];
  CHECK(last.depth == depth - 1);
  CHECK(last.parent == st[depth - 2]);
  CHECK(last.exclusiveGpuNs == 100);
  CHECK(a->kernelSet(st[0]).size() == 2);
}

TEST_CASE("fixture: per-name statistics — invocations, kernel sets, recursion counted once") {
  TempDir dir;
  NsysFixture f(dir / "names.sqlite");
  auto t = gtid(800, 801);
  int64_t corr = 1;
  // "kl:a.py:1-2" invoked 3 times: kernels {x, y}, {x, y}, {x}. A nested range of the same name
  // in invocation 1 must not double-count its op.
  for (int i = 0; i < 3; ++i) {
    int64_t s = T0 + i * 10'000;
    f.range(s, s + 5000, t, "kl:a.py:1-2");
    if (i == 0) f.range(s + 10, s + 900, t, "kl:a.py:1-2");
    f.runtime(s + 100, s + 110, t, corr, "cudaLaunchKernel_v7000");
    f.kernel(s + 1000, s + 1100, gpid(800), corr++, "x");
    if (i < 2) {
      f.runtime(s + 2000, s + 2010, t, corr, "cudaLaunchKernel_v7000");
      f.kernel(s + 3000, s + 3200, gpid(800), corr++, "y");
    }
  }
  f.range(T0 + 100'000, T0 + 200'000, t, "other");
  f.runtime(T0 + 100'100, T0 + 100'110, t, corr, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 100'200, T0 + 100'300, gpid(800), corr++, "z");
  auto m = readFixture(f);
  Options o;
  o.namePrefix = "kl:";
  auto a = attribute(m, o);
  REQUIRE(a.ok());
  REQUIRE(a->names().size() == 1);
  const auto& ns = a->names()[0];
  CHECK(m.str(ns.name) == "kl:a.py:1-2");
  CHECK(ns.invocations == 4);  // 3 outer + 1 nested
  CHECK(ns.ops == 5);          // each op once
  CHECK(ns.launches == 5);
  CHECK(ns.inclusiveGpuNs == 3 * 100 + 2 * 200);
  CHECK(ns.exclusiveGpuNs == 3 * 100 + 2 * 200);
  CHECK(ns.distinctKernels == 2);
  CHECK(ns.maxKernelsPerInvocation == 2);
  CHECK(ns.minKernelsPerInvocation == 1);
  CHECK(ns.distinctKernelSets == 2);                                    // {x,y} and {x}
  CHECK(a->op(opNamed(m, "z")).reason == Unattributed::OutsideRanges);  // "other" filtered out
}

TEST_CASE("fixture: huge strings, EXPORT_META_DATA variant and emulated product version") {
  TempDir dir;
  NsysFixture f(dir / "huge.sqlite", "2026.2.1 (kernlens emulated)", /*legacyMeta=*/true);
  auto t = gtid(900, 901);
  std::string hugeRange(1 << 20, 'r');
  std::string hugeKernel = "void k<" + std::string(200000, 'T') + ">";
  f.range(T0, T0 + 1000, t, hugeRange);
  f.runtime(T0 + 10, T0 + 20, t, 1, "cudaLaunchKernel_v7000");
  f.kernel(T0 + 100, T0 + 200, gpid(900), 1, hugeKernel);
  f.memcpy(T0 + 300, T0 + 400, gpid(900), 2, 1 << 20, 1);
  f.runtime(T0 + 30, T0 + 40, t, 2, "cudaMemcpyAsync_v3020");
  auto m = readFixture(f);
  CHECK(m.meta.emulated);
  CHECK(m.meta.toolVersion == "2026.2.1 (kernlens emulated)");
  auto a = attribute(m);
  REQUIRE(a.ok());
  auto k = opNamed(m, hugeKernel);
  CHECK(a->path(m, k) == hugeRange);
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.gpuOps[i].kind == GpuOpKind::Memcpy) {
      CHECK(m.str(m.gpuOps[i].name) == "[CUDA memcpy HtoD]");
      CHECK(m.memcpys[m.gpuOps[i].detail].bytes == (1 << 20));
      CHECK(m.apiCalls[a->op(i).launch].role == ApiRole::Memcpy);
      CHECK(a->path(m, i) == hugeRange);
    }
}
