// Attribution on real nsys exports, checked op by op against an independent SQL formulation
// of DESIGN §5 (reference/nsys-schema.md §11) run on a decompressed copy of the same file.
#include <doctest/doctest.h>

#include <map>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"
#include "tests/unit/profile/profile_test_util.h"

using namespace kl::profile;
using namespace kl::attribution;
using kl::test::TempDir;

namespace {

struct Loaded {
  TempDir dir;
  kl::sql::Database db;
  ProfileModel model;
};

std::unique_ptr<Loaded> load(const std::string& rel) {
  auto l = std::make_unique<Loaded>();
  l->db = kl::test::openScratch(kl::test::plainCopy(rel, l->dir));
  // TEMP indexes on the scratch copy only (the export has none).
  REQUIRE(l->db.exec("CREATE INDEX IF NOT EXISTS t_nv ON NVTX_EVENTS(globalTid, start)").ok());
  REQUIRE(l->db.exec("CREATE INDEX IF NOT EXISTS t_rt ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId)").ok());
  auto m = readProfile(kl::test::dataPath("real/" + rel));
  REQUIRE(m.ok());
  l->model = std::move(*m);
  return l;
}

/// For every op with a launch call: the number of enclosing push/pop + start/end ranges and the
/// innermost one's (start, text), by SQL; compared with our stack. Returns ops checked.
size_t compareStacks(Loaded& l, const Attribution& a) {
  auto& m = l.model;
  // A range containing the call starts at or after call.end - (longest range on that thread):
  // a pure search bound that keeps the index scan short.
  std::map<int64_t, int64_t> maxLen;
  {
    auto q = l.db.prepare("SELECT globalTid, max(\"end\" - start) FROM NVTX_EVENTS GROUP BY 1");
    REQUIRE(q.ok());
    while (*q->step()) maxLen[q->int64(0)] = q->int64(1);
  }
  auto st = l.db.prepare(
      "SELECT count(*), max(start), (SELECT COALESCE((SELECT value FROM StringIds WHERE id = n2.textId), n2.text) "
      "  FROM NVTX_EVENTS n2 WHERE n2.globalTid = ?1 AND n2.eventType IN (59, 60) AND n2.start BETWEEN ?4 AND ?2 AND "
      "n2.\"end\" >= ?3 "
      "  ORDER BY n2.start DESC, n2.\"end\" ASC LIMIT 1) "
      "FROM NVTX_EVENTS n WHERE n.globalTid = ?1 AND n.eventType IN (59, 60) AND n.start BETWEEN ?4 AND ?2 AND "
      "n.\"end\" >= ?3");
  REQUIRE(st.ok());
  size_t checked = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    const auto& o = a.op(i);
    if (o.launch == kNone) continue;
    const auto& call = m.apiCalls[o.launch];
    REQUIRE(st->reset().ok());
    REQUIRE(st->bind(1, m.threads[call.thread].globalTid).ok());
    REQUIRE(st->bind(2, call.start).ok());
    REQUIRE(st->bind(3, call.end).ok());
    int64_t gt = m.threads[call.thread].globalTid;
    REQUIRE(st->bind(4, call.end - (maxLen.count(gt) ? maxLen[gt] : 0)).ok());
    REQUIRE(*st->step());
    int64_t n = st->int64(0);
    CHECK(static_cast<int64_t>(o.stackSize) == n);
    if (n > 0) {
      uint32_t in = a.innermost(i);
      REQUIRE(in != kNone);
      CHECK(m.ranges[in].start == st->int64(1));
      CHECK(m.str(m.ranges[in].text) == st->text(2));
      CHECK(o.reason == Unattributed::None);
    } else {
      CHECK(o.reason == Unattributed::OutsideRanges);
    }
    ++checked;
  }
  return checked;
}

}  // namespace

TEST_CASE("real h100_2gpu_1s: 1,810 of 3,442 kernels have no launch call (process-aware join)") {
  auto l = load("nsys/h100_2gpu_1s.sqlite.gz");
  auto& m = l->model;
  auto a = attribute(m);
  REQUIRE(a.ok());
  int64_t kernels = kl::test::sqlInt(l->db, "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL");
  int64_t noLaunch = kl::test::sqlInt(
      l->db,
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "WHERE r.correlationId = k.correlationId AND (r.globalTid & -16777216) = k.globalPid)");
  CHECK(kernels == 3442);
  CHECK(noLaunch == 1810);
  int64_t ours = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.gpuOps[i].kind == GpuOpKind::Kernel && a->op(i).reason == Unattributed::NoLaunchCall) ++ours;
  CHECK(ours == noLaunch);
  // Memcpys: joining on the id alone links some to calls of the OTHER process; we must not.
  int64_t memNoLaunch = kl::test::sqlInt(
      l->db,
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY k WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "WHERE r.correlationId = k.correlationId AND (r.globalTid & -16777216) = k.globalPid)");
  int64_t memNoLaunchIdOnly = kl::test::sqlInt(
      l->db,
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY k WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "WHERE r.correlationId = k.correlationId)");
  CHECK(memNoLaunch != memNoLaunchIdOnly);
  int64_t oursMem = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.gpuOps[i].kind == GpuOpKind::Memcpy && a->op(i).launch == kNone) ++oursMem;
  CHECK(oursMem == memNoLaunch);
  // Every launched op: stack and innermost range as SQL says (all 1,632 kernels find a range).
  CHECK(compareStacks(*l, *a) == m.gpuOps.size() - a->noLaunchCount());
  int64_t kernelsAttributed = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i)
    if (m.gpuOps[i].kind == GpuOpKind::Kernel && a->op(i).reason == Unattributed::None) ++kernelsAttributed;
  CHECK(kernelsAttributed == kernels - noLaunch);
}

TEST_CASE("real mfu_2gpu_before: NCCL kernels land in the NCCL-domain ncclGroupEnd range") {
  auto l = load("nsys/mfu_2gpu_before.sqlite.gz");
  auto& m = l->model;
  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(compareStacks(*l, *a) == m.gpuOps.size() - a->noLaunchCount());
  int64_t noLaunch = kl::test::sqlInt(
      l->db,
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
      "WHERE r.correlationId = k.correlationId AND (r.globalTid & -16777216) = k.globalPid)");
  CHECK(noLaunch == 24);
  // Kernels whose innermost enclosing range is an NCCL-domain (domainId 1) range, by SQL.
  int64_t ncclInner = kl::test::sqlInt(
      l->db,
      "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
      "  ON r.correlationId = k.correlationId AND (r.globalTid & -16777216) = k.globalPid "
      "WHERE (SELECT n.domainId FROM NVTX_EVENTS n WHERE n.globalTid = r.globalTid AND n.eventType IN (59,60) "
      "       AND n.start <= r.start AND n.\"end\" >= r.\"end\" ORDER BY n.start DESC LIMIT 1) = 1");
  CHECK(ncclInner > 0);
  int64_t ours = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) {
    if (m.gpuOps[i].kind != GpuOpKind::Kernel) continue;
    uint32_t in = a->innermost(i);
    if (in != kNone && m.ranges[in].domainId == 1) {
      ++ours;
      CHECK(m.str(m.ranges[in].text) == "ncclGroupEnd");
      CHECK(m.shortName(m.gpuOps[i]).find("nccl") != std::string_view::npos);
    }
  }
  CHECK(ours == ncclInner);
  // Per-name inclusive GPU time of ncclGroupEnd equals the SQL sum over distinct ops.
  int64_t sqlIncl = kl::test::sqlInt(
      l->db,
      "WITH g AS (SELECT globalTid, start, \"end\" FROM NVTX_EVENTS n WHERE n.eventType IN (59,60) AND "
      "           COALESCE((SELECT value FROM StringIds WHERE id = n.textId), n.text) = 'ncclGroupEnd') "
      "SELECT total(d) FROM (SELECT DISTINCT k.rowid AS id, k.\"end\" - k.start AS d FROM CUPTI_ACTIVITY_KIND_KERNEL k "
      "JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (r.globalTid & -16777216) = "
      "k.globalPid "
      "JOIN g ON g.globalTid = r.globalTid AND g.start <= r.start AND g.\"end\" >= r.\"end\")");
  int64_t oursIncl = -1;
  for (const auto& ns : a->names())
    if (m.str(ns.name) == "ncclGroupEnd") oursIncl = ns.inclusiveGpuNs;
  CHECK(oursIncl == sqlIncl);
  // Consistency: per-range inclusive op counts sum to the total stack length.
  uint64_t stackTotal = 0, rangeTotal = 0;
  for (uint32_t i = 0; i < m.gpuOps.size(); ++i) stackTotal += a->stack(i).size();
  for (const auto& r : a->ranges()) rangeTotal += r.ops;
  CHECK(stackTotal == rangeTotal);
}

TEST_CASE("real nvFuser / pipit exports: stacks match SQL") {
  for (const char* rel : {"fuser_h200_xent_nvtx.sqlite.gz", "fuser_h200_matmul_nvtx_2024.sqlite.gz"}) {
    CAPTURE(rel);
    auto l = load(rel);
    auto a = attribute(l->model);
    REQUIRE(a.ok());
    CHECK(compareStacks(*l, *a) > 0);
  }
  // pipit saxpy: each kernel has two RUNTIME rows (the call and its _v7000 twin); we link the
  // outer launch call and the user range "saxpy" encloses all 5 kernels.
  auto l = load("pipit_a100_saxpy_mpi_nvtx.sqlite.gz");
  auto a = attribute(l->model);
  REQUIRE(a.ok());
  int kernels = 0;
  for (uint32_t i = 0; i < l->model.gpuOps.size(); ++i) {
    if (l->model.gpuOps[i].kind != GpuOpKind::Kernel) continue;
    ++kernels;
    CHECK(a->path(l->model, i) == "saxpy");
    CHECK(l->model.str(l->model.apiCalls[a->op(i).launch].name) == "cudaLaunchKernel");
  }
  CHECK(kernels == 5);
}
