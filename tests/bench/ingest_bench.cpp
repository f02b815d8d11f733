// Bench-only tool (not a test): generates the synthetic nsys exports of the benchmarks
// (tests/bench/attribution_bench.sh, lsp_bench.py) and of tests/e2e/attribution_counts.sh, and
// times kernlens ingestion + attribution of a file without the CLI (`ingest`).
//
//   kl_ingest_bench generate OUT.sqlite N SCHEMA.sql   N kernels, N launch calls, N NVTX ranges
//   kl_ingest_bench ingest FILE                        prints rows, seconds, peak RSS
//   kl_ingest_bench generate-lines OUT N PATH LINES SCHEMA.sql   the language-server bench's profile
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"
#include "core/support/sqlite.h"

namespace {

int die(const std::string& m) {
  std::fprintf(stderr, "kl_ingest_bench: %s\n", m.c_str());
  return 1;
}

void ok(const kl::Result<void>& r) {
  if (!r) {
    std::fprintf(stderr, "kl_ingest_bench: %s\n", r.error().message.c_str());
    std::exit(1);
  }
}

/// Layout per group of 10 launches on one thread: an outer range spanning the group, and 9 inner
/// ranges each around one launch (the 10th launch sits in the outer range only). So N kernels,
/// N launches, N ranges, depth 2. 4 threads in 2 processes; correlation ids repeat across the
/// two processes (as in real multi-process files).
/// A fresh export at `out` with the reference schema, version rows, StringIds 1..N = `kernelNames`
/// and 100 = cudaLaunchKernel_v7000, inside an open transaction, with the row inserters:
///   rt(start, end, globalTid, correlationId), k(start, end, deviceId, correlationId, globalPid,
///   demangledName, shortName), nv(start, end, globalTid, text).
struct BenchDb {
  kl::sql::Database db;
  kl::sql::Statement rt, k, nv;
};
BenchDb openBenchDb(const std::string& out, const std::string& schemaPath,
                    const std::vector<std::string>& kernelNames) {
  std::remove(out.c_str());
  std::ifstream in(schemaPath);
  if (!in) std::exit(die("cannot read " + schemaPath));
  std::stringstream ss;
  ss << in.rdbuf();
  auto db = kl::sql::Database::openReadWrite(out);
  if (!db) std::exit(die(db.error().message));
  ok(db->exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;"));
  ok(db->exec(ss.str()));
  ok(
      db->exec("INSERT INTO META_DATA_EXPORT VALUES ('EXPORT_PRODUCT_VERSION', '2026.2.1.210'), "
               "('EXPORT_SCHEMA_VERSION', '3.25.0'); BEGIN"));
  auto str = db->prepare("INSERT INTO StringIds(id, value) VALUES (?, ?)");
  for (size_t i = 0; i < kernelNames.size(); ++i) {
    ok(str->reset());
    ok(str->bind(1, static_cast<int64_t>(1 + i)));
    ok(str->bind(2, kernelNames[i]));
    ok(str->run());
  }
  ok(str->reset());
  ok(str->bind(1, int64_t{100}));
  ok(str->bind(2, "cudaLaunchKernel_v7000"));
  ok(str->run());
  auto rt = db->prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME(start, \"end\", eventClass, globalTid, correlationId, "
      "nameId, returnValue) VALUES (?, ?, 0, ?, ?, 100, 0)");
  auto k = db->prepare(
      "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL(start, \"end\", deviceId, contextId, streamId, correlationId, globalPid, "
      "demangledName, shortName, registersPerThread, gridX, gridY, gridZ, blockX, blockY, blockZ, staticSharedMemory, "
      "dynamicSharedMemory, localMemoryPerThread, localMemoryTotal, gridId, tensorSizeMinusOneElements) "
      "VALUES (?, ?, ?, 1, 7, ?, ?, ?, ?, 32, 128, 1, 1, 256, 1, 1, 0, 0, 0, 0, 1, '[]')");
  auto nv = db->prepare(
      "INSERT INTO NVTX_EVENTS(start, \"end\", eventType, globalTid, text, domainId) "
      "VALUES (?, ?, 59, ?, ?, 0)");
  if (!rt || !k || !nv) std::exit(die("prepare failed"));
  return {std::move(*db), std::move(*rt), std::move(*k), std::move(*nv)};
}

int generate(const std::string& out, int64_t n, const std::string& schemaPath) {
  const int kKernelNames = 50, kRangeNames = 1000;
  std::vector<std::string> names;
  for (int i = 0; i < kKernelNames; ++i)
    names.push_back("void bench_kernel_" + std::to_string(i) + "<float, 128>(float*, int)");
  auto b = openBenchDb(out, schemaPath, names);
  auto* db = &b.db;
  auto* rt = &b.rt;
  auto* k = &b.k;
  auto* nv = &b.nv;
  const int64_t T0 = 100'000'000'000;
  const int kThreads = 4;
  int64_t rangesLeft = n;
  for (int64_t i = 0; i < n; ++i) {
    int th = static_cast<int>(i % kThreads);
    uint32_t pid = th < 2 ? 1000 : 2000;
    int64_t gt = kl::profile::GlobalId::make(0, 1, pid, pid + 1 + static_cast<uint32_t>(th));
    int64_t gp = kl::profile::GlobalId::make(0, 1, pid, 0);
    int64_t j = i / kThreads;                          // launch index on this thread
    int64_t t = T0 + j * 1000;                         // 1 µs per launch slot
    int64_t corr = (i / kThreads) * 2 + (th % 2) + 1;  // unique per process, repeated across the two
    if (j % 10 == 0 && rangesLeft > 0) {               // outer range for the next 10 launches
      ok(nv->reset());
      ok(nv->bind(1, t - 10));
      ok(nv->bind(2, t + 10 * 1000 - 20));
      ok(nv->bind(3, gt));
      ok(nv->bind(4, "step " + std::to_string(j / 10 % kRangeNames)));
      ok(nv->run());
      --rangesLeft;
    }
    if (j % 10 != 9 && rangesLeft > 0) {
      ok(nv->reset());
      ok(nv->bind(1, t));
      ok(nv->bind(2, t + 500));
      ok(nv->bind(3, gt));
      ok(nv->bind(4, "kl:model.py:" + std::to_string(j % 10 + 1) + "-" + std::to_string(j % 10 + 1)));
      ok(nv->run());
      --rangesLeft;
    }
    ok(rt->reset());
    ok(rt->bind(1, t + 100));
    ok(rt->bind(2, t + 200));
    ok(rt->bind(3, gt));
    ok(rt->bind(4, corr));
    ok(rt->run());
    ok(k->reset());
    ok(k->bind(1, t + 5'000'000));
    ok(k->bind(2, t + 5'000'000 + 700));
    ok(k->bind(3, int64_t{th < 2 ? 0 : 1}));
    ok(k->bind(4, corr));
    ok(k->bind(5, gp));
    int64_t name = 1 + (j % kKernelNames);
    ok(k->bind(6, name));
    ok(k->bind(7, name));
    ok(k->run());
  }
  ok(db->exec("COMMIT"));
  std::printf("generated %s: %lld kernels, %lld launch calls, %lld ranges\n", out.c_str(), static_cast<long long>(n),
              static_cast<long long>(n), static_cast<long long>(n - rangesLeft));
  return 0;
}

/// The language-server benchmark's profile: N kernels, each launched inside one kernlens range
/// "kl:PATH:L-L" whose line L cycles through LINES (a comma-separated list of 1-based lines),
/// on one thread of one process; kernel names cycle through 8 names.
int generateLines(const std::string& out, int64_t n, const std::string& path, const std::string& lineList,
                  const std::string& schemaPath) {
  std::vector<int64_t> lines;
  for (size_t p = 0; p < lineList.size();) {
    size_t q = lineList.find(',', p);
    if (q == std::string::npos) q = lineList.size();
    lines.push_back(std::atoll(lineList.substr(p, q - p).c_str()));
    p = q + 1;
  }
  if (lines.empty()) return die("no lines");
  std::vector<std::string> names;
  for (int i = 0; i < 8; ++i) names.push_back("void lsp_bench_kernel_" + std::to_string(i) + "<float>(float*, int)");
  auto b = openBenchDb(out, schemaPath, names);
  auto* db = &b.db;
  auto* rt = &b.rt;
  auto* k = &b.k;
  auto* nv = &b.nv;
  const int64_t gt = kl::profile::GlobalId::make(0, 1, 1000, 1001), gp = kl::profile::GlobalId::make(0, 1, 1000, 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t t = 100'000'000'000 + i * 1000, line = lines[static_cast<size_t>(i) % lines.size()];
    ok(nv->reset());
    ok(nv->bind(1, t));
    ok(nv->bind(2, t + 500));
    ok(nv->bind(3, gt));
    ok(nv->bind(4, "kl:" + path + ":" + std::to_string(line) + "-" + std::to_string(line)));
    ok(nv->run());
    ok(rt->reset());
    ok(rt->bind(1, t + 100));
    ok(rt->bind(2, t + 200));
    ok(rt->bind(3, gt));
    ok(rt->bind(4, i + 1));
    ok(rt->run());
    ok(k->reset());
    ok(k->bind(1, t + 5'000'000));
    ok(k->bind(2, t + 5'000'000 + 300 + 10 * (line % 50)));
    ok(k->bind(3, int64_t{0}));
    ok(k->bind(4, i + 1));
    ok(k->bind(5, gp));
    ok(k->bind(6, int64_t{1 + line % 8}));
    ok(k->bind(7, int64_t{1 + line % 8}));
    ok(k->run());
  }
  ok(db->exec("COMMIT"));
  return 0;
}

int ingest(const std::string& file) {
  auto t0 = std::chrono::steady_clock::now();
  auto m = kl::profile::readProfile(file);
  if (!m) return die(m.error().message);
  auto t1 = std::chrono::steady_clock::now();
  auto a = kl::attribution::attribute(*m);
  if (!a) return die(a.error().message);
  auto t2 = std::chrono::steady_clock::now();
  struct rusage ru {};
  getrusage(RUSAGE_SELF, &ru);
  std::printf("kernlens: ops=%zu api=%zu ranges=%zu attributed=%u no_launch=%u outside=%u\n", m->gpuOps.size(),
              m->apiCalls.size(), m->ranges.size(), a->attributedCount(), a->noLaunchCount(), a->outsideRangesCount());
  std::printf("kernlens_read_s=%.3f kernlens_attribute_s=%.3f kernlens_total_s=%.3f kernlens_peak_rss_mb=%.1f\n",
              std::chrono::duration<double>(t1 - t0).count(), std::chrono::duration<double>(t2 - t1).count(),
              std::chrono::duration<double>(t2 - t0).count(), static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "generate" && argc == 5) return generate(argv[2], std::atoll(argv[3]), argv[4]);
  if (cmd == "ingest" && argc == 3) return ingest(argv[2]);
  if (cmd == "generate-lines" && argc == 7)
    return generateLines(argv[2], std::atoll(argv[3]), argv[4], argv[5], argv[6]);
  std::fprintf(stderr,
               "usage: kl_ingest_bench generate OUT N SCHEMA.sql | ingest FILE\n"
               "       kl_ingest_bench generate-lines OUT N PATH LINE,LINE,... SCHEMA.sql\n");
  return 2;
}
