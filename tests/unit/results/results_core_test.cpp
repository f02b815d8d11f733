// core/results: path matching, line diff / remap, formatting, and profile -> ResultSet on
// synthetic models (Python stacks, kl: ranges). The real emulated profile is in
// results_profile_test.cpp.
#include <doctest/doctest.h>

#include "core/profile/reader.h"
#include "core/results/format.h"
#include "core/results/from_profile.h"
#include "core/results/path_match.h"
#include "core/results/remap.h"

using namespace kl;
using namespace kl::results;

TEST_CASE("path components and suffix matching") {
  CHECK(pathComponents("/a//b/./c.py") == std::vector<std::string>{"a", "b", "c.py"});
  CHECK(pathComponents("C:\\x\\y.py") == std::vector<std::string>{"C:", "x", "y.py"});
  PathMatcher m({"pkg/model.py", "other/model.py", "train.py", "sub/train.py", "a/b/util.py"});
  CHECK(m.match("pkg/model.py") == "pkg/model.py");                      // exact
  CHECK(m.match("/home/u/proj/pkg/model.py") == "pkg/model.py");         // longest suffix
  CHECK(m.match("/home/u/proj/model.py") == std::nullopt);               // ambiguous
  CHECK(m.match("/home/u/proj/train.py") == "train.py");                 // fully consumed wins
  CHECK(m.match("/x/sub/train.py") == "sub/train.py");
  CHECK(m.match("/x/b/util.py") == "a/b/util.py");
  CHECK(m.match("torch/nn/modules/linear.py") == std::nullopt);          // not in the workspace
  CHECK(m.match("") == std::nullopt);
  CHECK(m.match("model.py/") == std::nullopt);
}

TEST_CASE("diffLines maps unchanged lines and marks changed ones") {
  std::string a = "l0\nl1\nl2\nl3\n";
  SUBCASE("identical") {
    auto m = diffLines(a, a);
    REQUIRE(m.ok());
    CHECK(m->identical);
    CHECK(m->map(2) == 2);
  }
  SUBCASE("two lines inserted at the top") {
    auto m = diffLines(a, "new\nnew2\n" + a);
    REQUIRE(m.ok());
    CHECK_FALSE(m->identical);
    for (uint32_t i = 0; i < 4; ++i) CHECK(m->map(i) == static_cast<int32_t>(i + 2));
  }
  SUBCASE("insertion in the middle") {
    auto m = diffLines(a, "l0\nl1\nX\nl2\nl3\n");
    REQUIRE(m.ok());
    CHECK(m->map(0) == 0);
    CHECK(m->map(1) == 1);
    CHECK(m->map(2) == 3);
    CHECK(m->map(3) == 4);
  }
  SUBCASE("a changed line and a deletion") {
    auto m = diffLines(a, "l0\nCHANGED\nl3\n");
    REQUIRE(m.ok());
    CHECK(m->map(0) == 0);
    CHECK(m->map(1) == -1);
    CHECK(m->map(2) == -1);
    CHECK(m->map(3) == 2);
  }
  SUBCASE("no trailing newline, CRLF") {
    auto m = diffLines("a\r\nb\r\nc", "z\r\na\r\nb\r\nc");
    REQUIRE(m.ok());
    CHECK(m->map(0) == 1);
    CHECK(m->map(2) == 3);
  }
}

namespace {
FileResult sampleFile() {
  FileResult f;
  f.path = "m.py";
  f.snapshot = "def f(x):\n    a = g(x)\n    b = h(a,\n          x)\n    return b\n";
  f.hasSnapshot = true;
  LineResult a;
  a.line = 1;
  a.lastLine = 1;
  a.gpuNs = 1000;
  a.ops = 1;
  a.kernels.push_back({"k1", "k1", "kernel", 1, 1000, 1000, 1000, {}, {}, false, {7}});
  LineResult b = a;
  b.line = 2;
  b.lastLine = 3;
  b.gpuNs = 3000;
  b.kernels[0].name = "k2";
  b.kernels[0].fullName = "k2";
  f.lines = {a, b};
  computeFunctions(f, functionSpans(f.snapshot));
  return f;
}
}  // namespace

TEST_CASE("computeFunctions sums lines into functions") {
  auto f = sampleFile();
  REQUIRE(f.functions.size() == 1);
  CHECK(f.functions[0].qualName == "f");
  CHECK(f.functions[0].gpuNs == 4000);
  CHECK(f.functions[0].distinctKernels == 2);
  CHECK(f.lines[0].function == "f");
}

TEST_CASE("remapFile: results move with their code, changed lines drop, file is stale") {
  auto f = sampleFile();
  SUBCASE("unchanged") {
    auto r = remapFile(f, f.snapshot);
    CHECK_FALSE(r.stale);
    CHECK(r.file.lines.size() == 2);
  }
  SUBCASE("lines inserted above") {
    auto r = remapFile(f, "import os\n\n" + f.snapshot);
    CHECK(r.stale);
    CHECK(r.dropped == 0);
    REQUIRE(r.file.lines.size() == 2);
    CHECK(r.file.lines[0].line == 3);
    CHECK(r.file.lines[1].line == 4);
    CHECK(r.file.lines[1].lastLine == 5);
    REQUIRE(r.file.functions.size() == 1);
    CHECK(r.file.functions[0].defLine == 2);
    CHECK(r.file.functions[0].gpuNs == 4000);
  }
  SUBCASE("an edit inside a multi-line statement drops it, keeps the other") {
    std::string live = "def f(x):\n    a = g(x)\n    b = h(a,\n          y)\n    return b\n";
    auto r = remapFile(f, live);
    CHECK(r.stale);
    CHECK(r.dropped == 1);
    REQUIRE(r.file.lines.size() == 1);
    CHECK(r.file.lines[0].line == 1);
    CHECK(r.file.functions[0].gpuNs == 1000);
  }
  SUBCASE("no snapshot: as is") {
    f.hasSnapshot = false;
    auto r = remapFile(f, "completely different\n");
    CHECK_FALSE(r.stale);
    CHECK(r.file.lines.size() == 2);
  }
}

TEST_CASE("formatting") {
  CHECK(formatDuration(1'920'000) == "1.92 ms");
  CHECK(formatDuration(12'400'000) == "12.4 ms");
  CHECK(formatDuration(850) == "850 ns");
  CHECK(formatDuration(12'345) == "12.3 µs");
  CHECK(formatDuration(1'200'000'000) == "1.20 s");
  CHECK(formatDuration(1'920'000, Units::Us) == "1920 µs");
  CHECK(formatShare(0.31) == "31 %");
  CHECK(formatShare(0.004) == "0.4 %");
  CHECK(formatShare(0.0001) == "<0.1 %");
  CHECK(kernelCount(1) == "1 kernel");
  CHECK(formatDims({128, 1, 1}) == "128×1×1");
  LineResult l;
  l.gpuNs = 1'920'000;
  l.kernels.resize(2);
  l.kernels[0].name = "a";
  l.kernels[1].name = "b";
  CHECK(hintLabel(l) == "◷ 1.92 ms · 2 kernels");
  FunctionResult fr{"f", 0, 3, 12'400'000, 20, 14};
  CHECK(lensTitle(fr, 40'000'000) == "GPU 12.4 ms · 14 kernels · 31 %");
  CHECK(formatAge(1000, 1000 + 180) == "3 min ago");
  CHECK(formatAge(0, 5) == "");
}

namespace {
/// One process, one thread, `n` launches (corr 1..n) each running a kernel of 100 ns * (i+1).
profile::ProfileModel syntheticModel(int n) {
  profile::ProfileModel m;
  m.processes.push_back({profile::GlobalId::make(0, 0, 42, 0), 42, 0, m.strings.intern("python")});
  m.threads.push_back({profile::GlobalId::make(0, 0, 42, 42), 42, 0, m.strings.intern("main")});
  for (int i = 0; i < n; ++i) {
    profile::ApiCall c;
    c.start = 1000 * (i + 1);
    c.end = c.start + 10;
    c.correlationId = i + 1;
    c.name = m.strings.intern("cudaLaunchKernel");
    c.thread = 0;
    c.role = profile::ApiRole::Launch;
    m.apiCalls.push_back(c);
    profile::GpuOp op;
    op.start = c.start + 50;
    op.end = op.start + 100 * (i + 1);
    op.correlationId = i + 1;
    op.process = 0;
    op.name = m.strings.intern(i % 2 ? "gemm_kernel" : "relu_kernel");
    op.kind = profile::GpuOpKind::Kernel;
    op.detail = static_cast<uint32_t>(m.kernels.size());
    profile::KernelDetail kd;
    kd.shortName = op.name;
    kd.demangledName = op.name;
    kd.grid[0] = 64, kd.grid[1] = 1, kd.grid[2] = 1;
    kd.block[0] = 256, kd.block[1] = 1, kd.block[2] = 1;
    m.kernels.push_back(kd);
    m.gpuOps.push_back(op);
  }
  return m;
}
}  // namespace

TEST_CASE("buildFromProfile: kl: ranges, path by suffix, unmapped ops") {
  auto m = syntheticModel(3);
  // kl: range around launches 1 and 2 (ops 0, 1); launch 3 outside every range.
  profile::Range r;
  r.start = 900;
  r.end = 2500;
  r.text = m.strings.intern("kl:m.py:2-2:a = g(x)");
  r.thread = 0;
  m.ranges.push_back(r);
  profile::Range user = r;  // a user range named otherwise never counts
  user.text = m.strings.intern("my range");
  user.end = 5000;
  m.ranges.push_back(user);
  profile::finalizeModel(m);
  PathMatcher matcher({"m.py"});
  BuildOptions o;
  o.matcher = &matcher;
  o.textOf = [](const std::string&) -> std::optional<std::string> {
    return std::string("def f(x):\n    a = g(x)\n    return a\n");
  };
  auto rs = buildFromProfile(m, o);
  REQUIRE(rs.ok());
  CHECK(rs->provenance.source == "kl-ranges");
  REQUIRE(rs->files.size() == 1);
  const auto& f = rs->files[0];
  REQUIRE(f.lines.size() == 1);
  CHECK(f.lines[0].line == 1);
  CHECK(f.lines[0].ops == 2);
  CHECK(f.lines[0].gpuNs == 100 + 200);
  CHECK(f.lines[0].distinctKernels() == 2);
  CHECK(f.lines[0].kernels[0].name == "gemm_kernel");  // by time
  CHECK(f.lines[0].kernels[0].grid[0] == 64);
  CHECK(f.lines[0].function == "f");
  CHECK_FALSE(f.lines[0].refinable);  // one simple statement
  CHECK(rs->unmapped.ops == 1);
  CHECK(rs->unmapped.gpuNs == 300);
  CHECK(rs->totalGpuNs == 600);
  REQUIRE(f.functions.size() == 1);
  CHECK(f.functions[0].gpuNs == 300);
}

TEST_CASE("buildFromProfile: Python stacks -> innermost workspace frame") {
  auto m = syntheticModel(2);
  // Frames: <module> in train.py (line 10) > forward in /abs/proj/pkg/model.py (line 3) >
  // torch's linear.py forward (line 124). Launch 1 is inside all three; launch 2 only inside
  // the module frame.
  auto frame = [&](int64_t s, int64_t e, const char* file, int line, uint32_t parent) {
    profile::PyFrame f;
    f.start = s;
    f.end = e;
    f.file = m.strings.intern(file);
    f.function = m.strings.intern("fn");
    f.line = line;
    f.thread = 0;
    f.parent = parent;
    m.pyFrames.push_back(f);
  };
  frame(0, 10000, "/abs/proj/train.py", 10, profile::kNone);
  frame(500, 1500, "/abs/proj/pkg/model.py", 3, 0);
  frame(600, 1400, "/usr/lib/python3/dist-packages/torch/nn/modules/linear.py", 124, 1);
  m.meta.format = profile::SourceFormat::Kineto;
  profile::finalizeModel(m);
  PathMatcher matcher({"pkg/model.py", "train.py"});
  BuildOptions o;
  o.matcher = &matcher;
  auto rs = buildFromProfile(m, o);
  REQUIRE(rs.ok());
  CHECK(rs->provenance.source == "python-stacks");
  CHECK(rs->provenance.backend == "torch");
  REQUIRE(rs->files.size() == 2);
  const auto* model = rs->file("pkg/model.py");
  REQUIRE(model);
  REQUIRE(model->lines.size() == 1);
  CHECK(model->lines[0].line == 2);
  CHECK(model->lines[0].kernels[0].name == "relu_kernel");
  const auto* train = rs->file("train.py");
  REQUIRE(train);
  CHECK(train->lines[0].line == 9);
  CHECK(train->lines[0].kernels[0].name == "gemm_kernel");
  CHECK(rs->unmapped.ops == 0);
}

TEST_CASE("buildFromProfile: a profile with nothing that maps to source is a clear error") {
  auto m = syntheticModel(1);
  profile::finalizeModel(m);
  BuildOptions o;
  o.profilePath = "/tmp/x.sqlite";
  auto rs = buildFromProfile(m, o);
  REQUIRE_FALSE(rs.ok());
  CHECK(rs.error().message.find("x.sqlite: no kl: ranges and no python_function stacks") == 0);
}
