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
  CHECK(m.match("pkg/model.py") == "pkg/model.py");               // exact
  CHECK(m.match("/home/u/proj/pkg/model.py") == "pkg/model.py");  // longest suffix
  CHECK(m.match("/home/u/proj/model.py") == std::nullopt);        // ambiguous
  CHECK(m.match("/home/u/proj/train.py") == "train.py");          // fully consumed wins
  CHECK(m.match("/x/sub/train.py") == "sub/train.py");
  CHECK(m.match("/x/b/util.py") == "a/b/util.py");
  CHECK(m.match("torch/nn/modules/linear.py") == std::nullopt);  // not in the workspace
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
  a.kernels.push_back({"k1", "k1", "k1", kl::profile::GpuOpKind::Kernel, 1, 1000, 1000, 1000, {}, {}, false, {7}});
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

TEST_CASE("computeFunctions: innermost function per line, totals over nested spans") {
  FileResult f;
  auto line = [](uint32_t l, int64_t ns, const char* kernel) {
    LineResult r;
    r.line = r.lastLine = l;
    r.gpuNs = ns;
    r.ops = 1;
    r.kernels.push_back({kernel, kernel, kernel, kl::profile::GpuOpKind::Kernel, 1, ns, ns, ns, {}, {}, false, {7}});
    return r;
  };
  f.lines = {line(9, 5, "z"), line(1, 10, "a"), line(3, 20, "b"), line(5, 40, "a"), line(7, 80, "c")};
  // outer [0, 6] holds inner [2, 4]; a sibling [7, 7]; line 9 is module level.
  computeFunctions(f, {{"outer", 0, 6}, {"outer.<locals>.inner", 2, 4}, {"other", 7, 7}, {"empty", 8, 8}});
  REQUIRE(f.lines.size() == 5);
  CHECK(f.lines[0].line == 1);
  CHECK(f.lines[0].function == "outer");
  CHECK(f.lines[1].function == "outer.<locals>.inner");
  CHECK(f.lines[2].function == "outer");
  CHECK(f.lines[3].function == "other");
  CHECK(f.lines[4].function.empty());
  REQUIRE(f.functions.size() == 3);  // "empty" has no GPU work
  CHECK(f.functions[0].qualName == "outer");
  CHECK(f.functions[0].gpuNs == 70);
  CHECK(f.functions[0].ops == 3);
  CHECK(f.functions[0].distinctKernels == 2);  // a twice, b
  CHECK(f.functions[1].qualName == "outer.<locals>.inner");
  CHECK(f.functions[1].gpuNs == 20);
  CHECK(f.functions[2].qualName == "other");
  CHECK(f.functions[2].distinctKernels == 1);
}

TEST_CASE("lineDelta: one contiguous change in lines, without a diff") {
  std::string base = "a\nb\nc\nd\n";
  SUBCASE("identical") { CHECK(lineDelta(base, base).identical); }
  SUBCASE("a character typed at the end of a line changes that line only") {
    auto d = lineDelta(base, "a\nbx\nc\nd\n");
    CHECK(d.map(0) == 0);
    CHECK(d.map(1) == -1);
    CHECK(d.map(2) == 2);
    CHECK(d.map(3) == 3);
  }
  SUBCASE("whole lines inserted at a line start move the lines below, change nothing") {
    auto d = lineDelta(base, "a\nx\ny\nb\nc\nd\n");
    CHECK(d.map(0) == 0);
    CHECK(d.map(1) == 3);
    CHECK(d.map(3) == 5);
  }
  SUBCASE("whole lines deleted") {
    auto d = lineDelta(base, "a\nd\n");
    CHECK(d.map(0) == 0);
    CHECK(d.map(1) == -1);
    CHECK(d.map(2) == -1);
    CHECK(d.map(3) == 1);
  }
  SUBCASE("text inserted before a line's start joins it: that line changed") {
    auto d = lineDelta("ab\ncd", "ab\nxcd");
    CHECK(d.map(0) == 0);
    CHECK(d.map(1) == -1);
  }
  SUBCASE("a line that loses its line break is changed") {
    auto d = lineDelta("a\nb\n", "a\nb");
    CHECK(d.map(0) == 0);
    CHECK(d.map(1) == -1);
  }
  SUBCASE("property: every mapped line has the same text, mapping increases") {
    auto lines = [](const std::string& t) {
      std::vector<std::string> out(1);
      for (char c : t) {
        out.back() += c;
        if (c == '\n') out.emplace_back();
      }
      return out;
    };
    std::string text = "def f(x):\n    a = g(x)\n\n    b = h(a)\n    return b\n\nx = 1\n";
    uint32_t seed = 7;
    auto rnd = [&](uint32_t n) {
      seed = seed * 1103515245u + 12345u;
      return (seed >> 8) % n;
    };
    const char* pieces[] = {"", "\n", "x", "a\n", "\n\n", "    b = h(a)\n", "q"};
    for (int i = 0; i < 2000; ++i) {
      size_t a = rnd(static_cast<uint32_t>(text.size() + 1));
      size_t b = std::min(text.size(), a + rnd(4));
      std::string next = text.substr(0, a) + pieces[rnd(7)] + text.substr(b);
      auto d = lineDelta(text, next);
      auto oldLines = lines(text), newLines = lines(next);
      int32_t prev = -1;
      for (uint32_t l = 0; l < oldLines.size(); ++l) {
        int32_t m = d.map(l);
        if (m < 0) continue;
        REQUIRE(m > prev);
        REQUIRE(static_cast<size_t>(m) < newLines.size());
        REQUIRE(oldLines[l] == newLines[static_cast<size_t>(m)]);
        prev = m;
      }
      text = next.size() > 400 || next.empty() ? std::string("a\nb\nc\n") : next;
    }
  }
}

TEST_CASE("applyLineDelta: edit by edit, as remapFile from the snapshot") {
  auto f = sampleFile();
  auto r = remapFile(f, f.snapshot);
  CHECK(r.sourceIndex == std::vector<uint32_t>{0, 1});
  // Two lines inserted at the top: everything moves, nothing dropped, stale.
  std::string v2 = "import os\n\n" + f.snapshot;
  CHECK(applyLineDelta(r, lineDelta(f.snapshot, v2), functionSpans(v2), true) == 0);
  auto exact = remapFile(f, v2);
  REQUIRE(r.file.lines.size() == exact.file.lines.size());
  CHECK(r.file.lines[1].line == exact.file.lines[1].line);
  CHECK(r.file.lines[1].lastLine == exact.file.lines[1].lastLine);
  CHECK(r.file.functions[0].defLine == 2);
  CHECK(r.stale);
  // Edit inside the multi-line statement: it is dropped; its source index goes with it.
  std::string v3 = "import os\n\ndef f(x):\n    a = g(x)\n    b = h(a,\n          y)\n    return b\n";
  CHECK(applyLineDelta(r, lineDelta(v2, v3), functionSpans(v3), true) == 1);
  REQUIRE(r.file.lines.size() == 1);
  CHECK(r.file.lines[0].line == 3);
  CHECK(r.sourceIndex == std::vector<uint32_t>{0});
  CHECK(r.dropped == 1);
  CHECK(r.file.functions[0].gpuNs == 1000);
  auto exact3 = remapFile(f, v3);
  CHECK(exact3.dropped == 1);
  CHECK(exact3.sourceIndex == r.sourceIndex);
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
  CHECK(formatCount(1, "kernel") == "1 kernel");
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
  CHECK(std::string(attributionSourceName(rs->provenance.source)) == "kl-ranges");
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
  CHECK(std::string(attributionSourceName(rs->provenance.source)) == "python-stacks");
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
