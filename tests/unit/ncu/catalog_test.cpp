// The kernel catalogue: schema versioning, imports, re-import, merging, aggregation.
#include "core/ncu/catalog.h"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support/test_support.h"

using namespace kl::ncu;
using kl::test::dataPath;
using kl::test::TempDir;

namespace {

const KernelRow* findRow(const std::vector<KernelRow>& rows, const std::string& base) {
  for (const auto& r : rows)
    if (r.baseName == base) return &r;
  return nullptr;
}

}  // namespace

TEST_CASE("schema: created at v1, idempotent, newer versions refused") {
  TempDir dir;
  auto path = defaultCatalogPath(dir.path());
  CHECK(path == dir.path() / ".kernlens" / "kernlens.db");
  {
    auto c = Catalog::open(path);
    REQUIRE(c.ok());
    CHECK(*Catalog::schemaVersion(c->db()) == kCatalogSchemaVersion);
    CHECK(c->db().tableExists("ncu_launches"));
    CHECK(c->db().tableExists("ncu_metrics"));
  }
  {
    auto c = Catalog::open(path);  // reopen: no migration re-run
    REQUIRE(c.ok());
    CHECK(*Catalog::schemaVersion(c->db()) == 1);
    REQUIRE(c->db().exec("UPDATE kl_schema SET version = 99 WHERE component = 'ncu'").ok());
  }
  auto c = Catalog::open(path);
  REQUIRE_FALSE(c.ok());
  CHECK(c.error().message.find("newer") != std::string::npos);
}

TEST_CASE("schema: two processes creating the catalogue at once both succeed") {
  for (int round = 0; round < 20; ++round) {
    TempDir dir;
    auto path = defaultCatalogPath(dir.path());
    pid_t child = fork();
    REQUIRE(child >= 0);
    if (child == 0) _exit(Catalog::open(path).ok() ? 0 : 1);
    auto mine = Catalog::open(path);
    int status = 0;
    REQUIRE(waitpid(child, &status, 0) == child);
    CHECK_MESSAGE(mine.ok(), (mine.ok() ? "" : mine.error().message));
    CHECK(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 0);
  }
}

TEST_CASE("import: a launch split over files is merged, re-import does not double count") {
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  ImportOptions opt{"deepseek-ocr", "v2"};
  auto s = cat->importFiles(
      {dataPath("ncu/dsocr_v2/kernel_0001.details.csv"), dataPath("ncu/dsocr_v2/kernel_0001.metrics.csv"),
       dataPath("ncu/dsocr_v2/kernel_0001.section_SpeedOfLight.csv"),
       dataPath("ncu/dsocr_v2/kernel_0001.section_SpeedOfLight_RooflineChart.csv")},
      opt);
  REQUIRE_MESSAGE(s.ok(), (s.ok() ? "" : s.error().message));
  REQUIRE(s->files.size() == 4);
  CHECK(s->files[0].launchesAdded == 1);
  CHECK(s->files[1].launchesMerged == 1);
  CHECK(s->files[3].launchesMerged == 1);
  REQUIRE(s->kernels.size() == 1);
  const KernelRow& k = s->kernels[0];
  CHECK(k.launches == 1);
  CHECK(k.profiled == 1);
  CHECK(k.family == "cuBLAS");
  CHECK(k.baseName == "kernel");
  CHECK(k.bound == Bound::Latency);
  CHECK(*k.smPct == doctest::Approx(9.15));
  CHECK(*k.memPct == doctest::Approx(19.66));
  CHECK(k.models == std::vector<std::string>{"deepseek-ocr"});
  // The merged roofline-chart section gives the launch a roofline point.
  REQUIRE(k.intensity);
  CHECK(*k.intensity == doctest::Approx((158.12 + 1.97) * 2.15e9 / 345.14e9));

  auto again = cat->importFiles({dataPath("ncu/dsocr_v2/kernel_0001.details.csv")}, opt);
  REQUIRE(again.ok());
  CHECK(again->files[0].alreadyImported);
  CHECK(again->kernels.size() == 1);
  auto rows = cat->kernels();
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].launches == 1);
}

TEST_CASE("catalogue across runs, models and tools") {
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  REQUIRE(cat->importFiles(
                 {dataPath("ncu/dsocr_v2/kernel_0003.details.csv"), dataPath("ncu/dsocr_v2/kernel_0004.details.csv"),
                  dataPath("ncu/dsocr_v2/kernel_0010.details.csv")},
                 {"dsocr", "v2"})
              .ok());
  REQUIRE(cat->importFiles({dataPath("ncu/dsocr_v1/kernel_0003.details.csv")}, {"dsocr-v1", "v1"}).ok());
  REQUIRE(cat->importFiles({dataPath("ncu/xplacer/nsight_bfs_graph4096.log")}, {"rodinia-bfs", ""}).ok());
  auto nsys = cat->importFiles({dataPath("ncu/nsys/all-stage.summary_cuda_gpu_kern_sum.csv")}, {"dsocr", "nsys"});
  REQUIRE(nsys.ok());
  CHECK(nsys->files[0].format == NcuFormat::NsysKernSum);
  CHECK(nsys->kernels.size() == 113);

  auto rows = cat->kernels();
  REQUIRE(rows.ok());
  // The CUTLASS GEMM: 2 ncu launches (v1, v2) + its nsys instances, 2 models.
  const KernelRow* gemm = findRow(*rows, "cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8");
  REQUIRE(gemm);
  CHECK(gemm->models == std::vector<std::string>{"dsocr", "dsocr-v1"});
  CHECK(gemm->profiled == 2);
  CHECK(gemm->launches == 2 + 37853);  // nsys: 37853 instances
  CHECK(gemm->family == "CUTLASS");
  CHECK(gemm->bound == Bound::Memory);
  // Most popular first: it is the only kernel in 2 models.
  CHECK((*rows)[0].baseName == gemm->baseName);
  // bfs: 13 launches of 2 kernels, all latency-bound.
  const KernelRow* bfs = findRow(*rows, "Kernel");
  REQUIRE(bfs);
  CHECK(bfs->bound == Bound::Latency);
  // An nsys-only kernel is unknown, with no percentages.
  size_t unknown = 0;
  for (const auto& r : *rows)
    if (r.profiled == 0) {
      ++unknown;
      CHECK(r.bound == Bound::Unknown);
      CHECK_FALSE(r.smPct);
    }
  CHECK(unknown == rows->size() - 5);  // 0003, 0004, 0010 + bfs Kernel, Kernel2

  auto fam = cat->groups(GroupBy::Family);
  REQUIRE(fam.ok());
  bool sawCutlass = false;
  for (const auto& g : *fam)
    if (g.key == "CUTLASS") {
      sawCutlass = true;
      CHECK(g.kernels >= 1);
      CHECK(g.byBound[static_cast<int>(Bound::Memory)] >= 1);
    }
  CHECK(sawCutlass);
  auto byModel = cat->groups(GroupBy::Model);
  REQUIRE(byModel.ok());
  bool sawBfs = false;
  for (const auto& g : *byModel)
    if (g.key == "rodinia-bfs") {
      sawBfs = true;
      CHECK(g.kernels == 2);
      CHECK(g.launches == 13);
    }
  CHECK(sawBfs);
}

TEST_CASE("a bad file fails the whole import, nothing is written") {
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  auto r = cat->importFiles({dataPath("ncu/dsocr_v2/kernel_0003.details.csv"), dataPath("ncu/negative/raw.csv")}, {});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("==ERROR==") != std::string::npos);
  auto rows = cat->kernels();
  REQUIRE(rows.ok());
  CHECK(rows->empty());
  CHECK_FALSE(cat->importFiles({dataPath("ncu/missing.csv")}, {}).ok());
}

TEST_CASE("summary layout: invocations count as launches") {
  auto cat = Catalog::openMemory();
  REQUIRE(cat.ok());
  auto s = cat->importFiles({dataPath("ncu/synthetic/summary_per_kernel.csv")}, {"bench", ""});
  REQUIRE(s.ok());
  const KernelRow* add = findRow(s->kernels, "vectorized_elementwise_kernel");
  REQUIRE(add);
  CHECK(add->launches == 12);
  CHECK(add->bound == Bound::Memory);  // 10.76 vs 72.40
  CHECK(*add->totalNs == doctest::Approx(5020.0 * 12));
  const KernelRow* sgemm = findRow(s->kernels, "ampere_sgemm_128x64_nn");
  REQUIRE(sgemm);
  CHECK(sgemm->bound == Bound::Compute);  // 82 vs 56.5
  CHECK(sgemm->family == "cuBLAS");
}
