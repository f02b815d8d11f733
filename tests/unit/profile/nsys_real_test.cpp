// nsys reader on real exports (tests/data/real, copied from ../shared/data). Every expected
// number is computed here with our own SQL on a decompressed copy of the same file.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>

#include "core/profile/reader.h"
#include "tests/unit/profile/profile_test_util.h"

using namespace kl::profile;
using kl::test::TempDir;

namespace {

ProfileModel load(const std::string& rel) {
  auto m = readProfile(kl::test::dataPath("real/" + rel));
  REQUIRE_MESSAGE(m.ok(), rel << ": " << (m.ok() ? "" : m.error().message));
  return std::move(*m);
}

size_t countKind(const ProfileModel& m, GpuOpKind k) {
  return static_cast<size_t>(
      std::count_if(m.gpuOps.begin(), m.gpuOps.end(), [&](const GpuOp& o) { return o.kind == k; }));
}

/// Table row count, 0 when the table is absent (lazy tables).
int64_t rows(const kl::sql::Database& db, const std::string& table, const std::string& where = "") {
  if (!db.tableExists(table)) return 0;
  return kl::test::sqlInt(db, "SELECT count(*) FROM " + table + (where.empty() ? "" : " WHERE " + where));
}

/// Generic checks of a real nsys export against SQL on the file.
void checkCounts(const std::string& rel) {
  TempDir dir;
  auto plain = kl::test::plainCopy(rel, dir);
  auto db = kl::test::openScratch(plain);
  auto m = load(rel);
  CHECK(m.meta.format == SourceFormat::Nsys);
  CHECK(countKind(m, GpuOpKind::Kernel) == static_cast<size_t>(rows(db, "CUPTI_ACTIVITY_KIND_KERNEL")));
  CHECK(countKind(m, GpuOpKind::Memcpy) == static_cast<size_t>(rows(db, "CUPTI_ACTIVITY_KIND_MEMCPY")));
  CHECK(countKind(m, GpuOpKind::Memset) == static_cast<size_t>(rows(db, "CUPTI_ACTIVITY_KIND_MEMSET")));
  CHECK(m.apiCalls.size() == static_cast<size_t>(rows(db, "CUPTI_ACTIVITY_KIND_RUNTIME")));
  CHECK(m.ranges.size() == static_cast<size_t>(rows(db, "NVTX_EVENTS", "eventType IN (34,59,60,70,71)")));
  // Total kernel GPU time.
  if (db.tableExists("CUPTI_ACTIVITY_KIND_KERNEL")) {
    int64_t want = kl::test::sqlInt(db, "SELECT total(\"end\" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL");
    int64_t got = 0;
    for (const auto& o : m.gpuOps)
      if (o.kind == GpuOpKind::Kernel) got += o.duration();
    CHECK(got == want);
  }
  // Sorted invariant.
  CHECK(std::is_sorted(m.gpuOps.begin(), m.gpuOps.end(),
                       [](const GpuOp& a, const GpuOp& b) { return a.start < b.start; }));
  CHECK(std::is_sorted(m.ranges.begin(), m.ranges.end(),
                       [](const Range& a, const Range& b) { return a.start < b.start; }));
  for (const auto& c : m.apiCalls) REQUIRE(c.thread < m.threads.size());
  for (const auto& t : m.threads) REQUIRE(t.process < m.processes.size());
  // Version string straight from the metadata table (either name).
  std::string meta = db.tableExists("META_DATA_EXPORT") ? "META_DATA_EXPORT" : "EXPORT_META_DATA";
  auto st = db.prepare("SELECT value FROM " + meta + " WHERE name = 'EXPORT_PRODUCT_VERSION'");
  REQUIRE(st.ok());
  REQUIRE(*st->step());
  CHECK(m.meta.toolVersion == st->text(0));
  CHECK_FALSE(m.meta.emulated);
}

}  // namespace

TEST_CASE("nsys real: row counts, times and versions match SQL on every stored export") {
  for (const char* rel :
       {"nsys/h100_2gpu_1s.sqlite.gz", "nsys/mfu_2gpu_before.sqlite.gz", "nsys/mock.sqlite.gz",
        "recorded/nsys2022-cpu-nvtx.sqlite.gz", "fuser_h200_matmul_nvtx_2024.sqlite.gz",
        "fuser_h200_xent_nvtx.sqlite.gz", "pipit_a100_saxpy_mpi_nvtx.sqlite.gz", "pipit_a100x4_cloverleaf.sqlite.gz"}) {
    CAPTURE(rel);
    checkCounts(rel);
  }
}

namespace {

bool sameRange(const Range& a, const Range& b) {
  return a.start == b.start && a.end == b.end && a.text == b.text && a.domain == b.domain && a.category == b.category &&
         a.thread == b.thread && a.endThread == b.endThread && a.kind == b.kind && a.open == b.open &&
         a.domainId == b.domainId && a.categoryId == b.categoryId;
}

}  // namespace

// A plain file is read on two connections (NVTX_EVENTS in a second thread, merged afterwards);
// a .gz from memory on one, in table order. Both must give the same model, ids included.
TEST_CASE("nsys real: a plain file (NVTX on a second connection) reads exactly like the same export from memory") {
  for (const char* rel :
       {"nsys/h100_2gpu_1s.sqlite.gz", "nsys/mfu_2gpu_before.sqlite.gz", "nsys/mock.sqlite.gz",
        "recorded/nsys2022-cpu-nvtx.sqlite.gz", "fuser_h200_matmul_nvtx_2024.sqlite.gz",
        "fuser_h200_xent_nvtx.sqlite.gz", "pipit_a100_saxpy_mpi_nvtx.sqlite.gz", "pipit_a100x4_cloverleaf.sqlite.gz"}) {
    CAPTURE(rel);
    TempDir dir;
    auto plain = kl::test::plainCopy(rel, dir);
    auto a = readProfile(plain);
    REQUIRE(a.ok());
    auto b = load(rel);
    REQUIRE(a->strings.size() == b.strings.size());
    for (StrId i = 0; i < b.strings.size(); ++i) REQUIRE(a->strings.str(i) == b.strings.str(i));
    REQUIRE(a->threads.size() == b.threads.size());
    for (size_t i = 0; i < b.threads.size(); ++i) {
      CHECK(a->threads[i].globalTid == b.threads[i].globalTid);
      CHECK(a->threads[i].name == b.threads[i].name);
      CHECK(a->threads[i].process == b.threads[i].process);
    }
    REQUIRE(a->processes.size() == b.processes.size());
    for (size_t i = 0; i < b.processes.size(); ++i) CHECK(a->processes[i].globalPid == b.processes[i].globalPid);
    REQUIRE(a->ranges.size() == b.ranges.size());
    size_t differ = 0;
    for (size_t i = 0; i < b.ranges.size(); ++i) differ += !sameRange(a->ranges[i], b.ranges[i]);
    CHECK(differ == 0);
    REQUIRE(a->gpuOps.size() == b.gpuOps.size());
    CHECK(a->gpuOps.col<&GpuOp::name>() == b.gpuOps.col<&GpuOp::name>());
    for (size_t i = 0; i < a->gpuOps.size(); ++i)
      CHECK(a->gpuOps.get<&GpuOp::process>(i) == b.gpuOps.get<&GpuOp::process>(i));
    REQUIRE(a->apiCalls.size() == b.apiCalls.size());
    for (size_t i = 0; i < a->apiCalls.size(); ++i)
      CHECK(a->apiCalls.get<&ApiCall::thread>(i) == b.apiCalls.get<&ApiCall::thread>(i));
    size_t namesDiffer = 0;  // a sparse column: compared row by row
    for (size_t i = 0; i < b.apiCalls.size(); ++i)
      namesDiffer += a->apiCalls.get<&ApiCall::name>(i) != b.apiCalls.get<&ApiCall::name>(i);
    CHECK(namesDiffer == 0);
    CHECK(a->meta.warnings == b.meta.warnings);
    CHECK(a->meta.skippedRows.count == b.meta.skippedRows.count);
    if (b.ranges.size() > 0 && rel == std::string("recorded/nsys2022-cpu-nvtx.sqlite.gz")) {
      // This export's NVTX texts are inline (text, not textId) and its threads are named by
      // eventType 39 rows: the merge's string and thread remapping is exercised.
      CHECK(std::any_of(b.threads.begin(), b.threads.end(), [](const Thread& t) { return t.name != kEmptyStr; }));
    }
  }
}

TEST_CASE("nsys real: h100_2gpu_1s has 3,442 kernels on 2 processes with packed VM-id globalPids") {
  TempDir dir;
  auto db = kl::test::openScratch(kl::test::plainCopy("nsys/h100_2gpu_1s.sqlite.gz", dir));
  auto m = load("nsys/h100_2gpu_1s.sqlite.gz");
  CHECK(countKind(m, GpuOpKind::Kernel) == 3442);
  CHECK(m.meta.schemaVersion == "3.25.0");
  // Processes of GPU rows: OS pid = bits 24..47, as SQL decodes them.
  std::set<int64_t> sqlPids;
  auto st = db.prepare("SELECT DISTINCT (globalPid >> 24) & 16777215 FROM CUPTI_ACTIVITY_KIND_KERNEL");
  REQUIRE(st.ok());
  while (*st->step()) sqlPids.insert(st->int64(0));
  std::set<int64_t> ours;
  for (const auto& o : m.gpuOps)
    if (o.kind == GpuOpKind::Kernel) ours.insert(m.processes[o.process].pid);
  CHECK(ours == sqlPids);
  CHECK(ours.size() == 2);
  for (const auto& p : m.processes) CHECK(GlobalId::vmId(p.globalPid) == 1);
  // Launching threads: OS tid = bits 0..23 of the RUNTIME row's globalTid.
  std::set<int64_t> sqlTids;
  auto st2 = db.prepare("SELECT DISTINCT globalTid & 16777215 FROM CUPTI_ACTIVITY_KIND_RUNTIME");
  REQUIRE(st2.ok());
  while (*st2->step()) sqlTids.insert(st2->int64(0));
  std::set<int64_t> tids;
  for (const auto& c : m.apiCalls) tids.insert(m.threads[c.thread].tid);
  CHECK(tids == sqlTids);
  // No TARGET_INFO_GPU in this window cut: GPUs come from the device ids of the ops.
  CHECK_FALSE(db.tableExists("TARGET_INFO_GPU"));
  CHECK(m.gpus.size() ==
        static_cast<size_t>(kl::test::sqlInt(db, "SELECT count(DISTINCT deviceId) FROM CUPTI_ACTIVITY_KIND_KERNEL")));
  // Launch-role classification covers cudaLaunchKernel and cudaLaunchKernelExC_v11060.
  int64_t sqlLaunch =
      kl::test::sqlInt(db,
                       "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                       "WHERE s.value LIKE 'cudaLaunchKernel%' OR s.value LIKE 'cuLaunchKernel%'");
  CHECK(std::count_if(m.apiCalls.begin(), m.apiCalls.end(),
                      [](const ApiCall& c) { return c.role == ApiRole::Launch; }) == sqlLaunch);
}

TEST_CASE("nsys real: mfu_2gpu_before NCCL-domain ranges are named through textId") {
  TempDir dir;
  auto db = kl::test::openScratch(kl::test::plainCopy("nsys/mfu_2gpu_before.sqlite.gz", dir));
  auto m = load("nsys/mfu_2gpu_before.sqlite.gz");
  // Independent: texts of domain-1 ranges via COALESCE(StringIds.value, text), as a multiset.
  std::multiset<std::string> want;
  auto st = db.prepare(
      "SELECT COALESCE((SELECT value FROM StringIds WHERE id = n.textId), n.text) FROM NVTX_EVENTS n "
      "WHERE n.domainId = 1 AND n.eventType IN (59, 60)");
  REQUIRE(st.ok());
  while (*st->step()) want.insert(std::string(st->text(0)));
  CHECK(want.size() == 462);
  CHECK(kl::test::sqlInt(
            db, "SELECT count(*) FROM NVTX_EVENTS WHERE domainId = 1 AND textId IS NOT NULL AND text IS NULL") > 0);
  std::multiset<std::string> got;
  for (const auto& r : m.ranges)
    if (r.domainId == 1) got.insert(std::string(m.str(r.text)));
  CHECK(got == want);
  CHECK(want.count("ncclGroupEnd") > 0);
  // The domain-create rows were cut from this file: the domain stays unnamed, with a warning.
  CHECK(rows(db, "NVTX_EVENTS", "eventType = 75") == 0);
  CHECK(std::any_of(m.meta.warnings.begin(), m.meta.warnings.end(),
                    [](const std::string& w) { return w.find("domain 1") != std::string::npos; }));
  // NCCL kernels are launched with the driver API cuLaunchKernelEx.
  bool driverLaunch = std::any_of(m.apiCalls.begin(), m.apiCalls.end(), [&](const ApiCall& c) {
    return c.level == ApiLevel::Driver && c.role == ApiRole::Launch && m.str(c.name) == "cuLaunchKernelEx";
  });
  CHECK(driverLaunch);
}

TEST_CASE("nsys real: 2022.4 CPU-only recording (EXPORT_META_DATA, 59/60/34/33/75/39 rows)") {
  TempDir dir;
  auto db = kl::test::openScratch(kl::test::plainCopy("recorded/nsys2022-cpu-nvtx.sqlite.gz", dir));
  auto m = load("recorded/nsys2022-cpu-nvtx.sqlite.gz");
  CHECK(db.tableExists("EXPORT_META_DATA"));
  CHECK_FALSE(db.tableExists("META_DATA_EXPORT"));
  CHECK(m.meta.toolVersion == "2022.4.2.1");
  CHECK(m.meta.schemaVersion == "3.0.0");
  CHECK(m.gpuOps.empty());
  CHECK(m.apiCalls.empty());
  // Marks: end == start, counted from SQL.
  auto marks =
      std::count_if(m.ranges.begin(), m.ranges.end(), [](const Range& r) { return r.kind == RangeKind::NvtxMark; });
  CHECK(marks == rows(db, "NVTX_EVENTS", "eventType = 34"));
  for (const auto& r : m.ranges)
    if (r.kind == RangeKind::NvtxMark) CHECK(r.end == r.start);
  // Start/end range ended on another thread: endGlobalTid decoded to a different thread.
  auto st = db.prepare(
      "SELECT text, globalTid & 16777215, endGlobalTid & 16777215 FROM NVTX_EVENTS "
      "WHERE eventType = 60 AND endGlobalTid IS NOT NULL");
  REQUIRE(st.ok());
  REQUIRE(*st->step());
  std::string text(st->text(0));
  int64_t startTid = st->int64(1), endTid = st->int64(2);
  auto it = std::find_if(m.ranges.begin(), m.ranges.end(), [&](const Range& r) { return m.str(r.text) == text; });
  REQUIRE(it != m.ranges.end());
  CHECK(it->kind == RangeKind::NvtxStartEnd);
  CHECK(it->endsOnOtherThread());
  CHECK(m.threads[it->thread].tid == startTid);
  CHECK(m.threads[it->endThread].tid == endTid);
  // Domain names (eventType 75) and category names (eventType 33) resolved per process.
  auto dst = db.prepare("SELECT text FROM NVTX_EVENTS WHERE eventType = 75");
  REQUIRE(dst.ok());
  REQUIRE(*dst->step());
  std::string domainName(dst->text(0));
  int64_t inDomain = rows(db, "NVTX_EVENTS", "domainId <> 0 AND eventType IN (34,59,60)");
  CHECK(inDomain > 0);
  CHECK(std::count_if(m.ranges.begin(), m.ranges.end(),
                      [&](const Range& r) { return m.str(r.domain) == domainName; }) == inDomain);
  auto cst = db.prepare("SELECT c.text FROM NVTX_EVENTS c WHERE c.eventType = 33");
  REQUIRE(cst.ok());
  REQUIRE(*cst->step());
  std::string catName(cst->text(0));
  int64_t withCat =
      rows(db, "NVTX_EVENTS",
           "eventType IN (34,59,60) AND category IN (SELECT category FROM NVTX_EVENTS WHERE eventType = 33)");
  CHECK(std::count_if(m.ranges.begin(), m.ranges.end(), [&](const Range& r) { return m.str(r.category) == catName; }) ==
        withCat);
  // Thread names from ThreadNames / eventType 39.
  std::set<std::string> names;
  for (const auto& t : m.threads) names.insert(std::string(m.str(t.name)));
  CHECK(names.count("worker-py") + names.count("main-py") >= 1);
}

TEST_CASE("nsys real: 2022.2 export (schema 2.9.1) with duplicated runtime rows per correlation id") {
  TempDir dir;
  auto db = kl::test::openScratch(kl::test::plainCopy("pipit_a100_saxpy_mpi_nvtx.sqlite.gz", dir));
  auto m = load("pipit_a100_saxpy_mpi_nvtx.sqlite.gz");
  CHECK(m.meta.schemaVersion == "2.9.1");
  CHECK(m.gpus.size() == 1);
  CHECK(m.str(m.gpus[0].name) == "NVIDIA A100-SXM4-40GB");
  CHECK(m.gpus[0].smCount == 108);
  // Two RUNTIME rows per launched correlation id in this file.
  CHECK(kl::test::sqlInt(db,
                         "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId IN "
                         "(SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL)") == 10);
}

TEST_CASE("nsys real: memcpy rows keep copy kind and bytes (cloverleaf)") {
  TempDir dir;
  auto db = kl::test::openScratch(kl::test::plainCopy("pipit_a100x4_cloverleaf.sqlite.gz", dir));
  auto m = load("pipit_a100x4_cloverleaf.sqlite.gz");
  std::map<int, int64_t> want, got;
  auto st = db.prepare("SELECT copyKind, total(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY GROUP BY 1");
  REQUIRE(st.ok());
  while (*st->step()) want[static_cast<int>(st->int64(0))] = st->int64(1);
  for (const auto& o : m.gpuOps)
    if (o.kind == GpuOpKind::Memcpy) got[m.memcpys[o.detail].copyKind] += m.memcpys[o.detail].bytes;
  CHECK(got == want);
  CHECK(m.gpus.size() == 4);
}
