// core/results/from_store.h: stored rounds -> ResultSet (lines at disk lines, exclusive kernels,
// snapshots, provenance, unmapped, previous run), and a workspace without a database.
#include <doctest/doctest.h>

#include "core/results/from_store.h"
#include "core/results/remap.h"
#include "core/store/store.h"
#include "tests/support/range_verdict.h"
#include "tests/support/test_support.h"

using namespace kl;

namespace {

const char* kSource = "def f(x):\n    a = g(x)\n    return h(a)\n";

attribution::LineResult span(const std::string& name, uint32_t first, uint32_t last, int64_t ns,
                             const std::string& kernel, bool leaf = true) {
  attribution::LineResult s;
  s.range.name = name;
  s.path = "m.py";
  s.range.firstLine = first;
  s.line = first - 1;
  s.range.lastLine = last;
  s.lastLine = last - 1;
  s.function = "f";
  s.invocations = 2;
  s.range.launches = 2;
  s.ops = 2;
  s.range.gpuNs = s.gpuNs = ns;
  s.range.distinctKernels = 1;
  s.range.leaf = leaf;
  attribution::KernelStat k;
  k.name = k.fullName = k.opName = kernel;
  k.launches = 2;
  k.totalNs = ns;
  s.kernels.push_back(k);
  return s;
}

int64_t writeRun(store::Store& st, int64_t nsA, int64_t nsB) {
  static int n = 0;
  store::RunInfo run;
  run.key = "run-" + std::to_string(++n);
  run.startedAt = store::isoNow();
  run.command = "python m.py";
  run.backend = "emulate";
  run.focusPath = "m.py";
  run.focusFunction = "f";
  run.gpu = "NVIDIA H100 (emulated)";
  run.emulated = true;
  run.gitCommit = "0123456789abcdef";
  auto begun = st.beginRun(run);
  REQUIRE_MESSAGE(begun.ok(), (begun.ok() ? "" : begun.error().message));
  store::RoundRecord round;
  round.results.spans = {span("kl:m.py:2-2", 2, 2, nsA, "gemm"), span("kl:m.py:3-3", 3, 3, nsB, "relu")};
  round.results.unmapped.push_back(
      {"memcpy", kl::profile::GpuOpKind::Memcpy, kl::attribution::UnmappedReason::OutsideRanges, 1, 500});
  round.results.totalOps = 5;
  round.results.totalGpuNs = nsA + nsB + 500;
  round.results.mappedOps = 4;
  round.results.emulated = true;
  round.files.push_back({"m.py", kSource});
  auto written = st.writeRound(run.id, round);
  REQUIRE_MESSAGE(written.ok(), (written.ok() ? "" : written.error().message));
  run.status = store::RunStatus::Ok;
  run.endedAt = store::isoNow();
  REQUIRE(st.finishRun(run).ok());
  return run.id;
}

}  // namespace

TEST_CASE("loadFromStore: no database -> nothing, and none is created") {
  test::TempDir ws;
  auto rs = results::loadFromStore(ws.path());
  REQUIRE(rs.ok());
  CHECK_FALSE(rs->has_value());
  CHECK_FALSE(std::filesystem::exists(ws / ".kernlens"));
}

TEST_CASE("loadFromStore: latest round per file, snapshot, provenance, previous run") {
  test::TempDir ws;
  {
    auto st = store::Store::open(ws.path());
    REQUIRE(st.ok());
    writeRun(*st, 4000, 1000);  // the previous run
    writeRun(*st, 3000, 1000);  // the latest
  }
  auto rs = results::loadFromStore(ws.path());
  REQUIRE(rs.ok());
  REQUIRE(rs->has_value());
  const auto& r = **rs;
  REQUIRE(r.files.size() == 1);
  const auto& f = r.files[0];
  CHECK(f.path == "m.py");
  CHECK(f.hasSnapshot);
  CHECK(f.snapshot == kSource);
  REQUIRE(f.lines.size() == 2);
  CHECK(f.lines[0].line == 1);
  CHECK(f.lines[0].gpuNs == 3000);
  CHECK(f.lines[0].kernels[0].name == "gemm");
  CHECK(f.lines[1].line == 2);
  REQUIRE(f.functions.size() == 1);
  CHECK(f.functions[0].gpuNs == 4000);
  CHECK(r.provenance.backend == "emulate");
  CHECK(r.provenance.emulated);
  CHECK(r.provenance.gitCommit == "0123456789abcdef");
  CHECK(r.provenance.createdUnix > 0);
  CHECK(r.totalGpuNs == 4500);
  CHECK(r.unmapped.ops == 1);
  CHECK(r.unmapped.topKernels == std::vector<std::string>{"memcpy"});
  auto prev = r.previousFunctions.find(results::functionKey("m.py", "f"));
  REQUIRE(prev != r.previousFunctions.end());
  CHECK(prev->second.gpuNs == 5000);
  // The stored snapshot drives the remap onto an edited buffer.
  auto moved = results::remapFile(f, std::string("import os\n") + kSource);
  CHECK(moved.stale);
  REQUIRE(moved.file.lines.size() == 2);
  CHECK(moved.file.lines[0].line == 2);
}

TEST_CASE("loadFromStore: the loop's verdict on a line (why it is atomic, what to focus on)") {
  test::TempDir ws;
  {
    auto st = store::Store::open(ws.path());
    REQUIRE(st.ok());
    writeRun(*st, 3000, 1000);
    auto runs = st->runs(1);
    REQUIRE(runs.ok());
    auto rounds = st->rounds(runs->front().id);
    REQUIRE(rounds.ok());
    using attribution::AtomicReason;
    REQUIRE(st->annotateRanges(rounds->front().id,
                               {test::rangeVerdict("kl:m.py:2-2", AtomicReason::Unfollowed,
                                                   "m.py::g ran beneath it but could not be wrapped (x)", "m.py::g"),
                                test::rangeVerdict("kl:m.py:3-3", AtomicReason::Library,
                                                   "its launches come from code outside the workspace")})
                .ok());
  }
  auto rs = results::loadFromStore(ws.path());
  REQUIRE(rs.ok());
  REQUIRE(rs->has_value());
  const auto* file = (*rs)->file("m.py");
  REQUIRE(file);
  REQUIRE(file->lines.size() == 2);
  CHECK(file->lines[0].line == 1);
  CHECK(file->lines[0].atomicReason == attribution::AtomicReason::Unfollowed);
  CHECK(file->lines[0].note == "m.py::g ran beneath it but could not be wrapped (x)");
  CHECK(file->lines[0].suggestFocus == "m.py::g");
  CHECK(file->lines[1].atomicReason == attribution::AtomicReason::Library);
  CHECK(file->lines[1].suggestFocus.empty());
}
