// results::LineView, THE description of a line that every front end renders: built from hand-made
// results, its fields checked as tables (input results -> expected numbers and words), without a
// server. The expected strings are written out by hand from the inputs (the formatting rules of
// core/support/format.h), not produced by the code under test.
#include "core/results/line_view.h"

#include <doctest/doctest.h>

using namespace kl;
using namespace kl::results;

namespace {

KernelStat kernel(const std::string& name, int64_t ns, uint64_t launches,
                  attribution::Pass pass = attribution::Pass::Forward, bool noForwardOwner = false) {
  KernelStat k;
  k.name = k.fullName = k.opName = name;
  k.totalNs = ns;
  k.launches = launches;
  k.pass = pass;
  k.noForwardOwner = noForwardOwner;
  return k;
}

/// A file with one function `f` holding lines 1..9, whose lines are `lines`.
ResultSet oneFile(std::vector<LineResult> lines, int64_t runNs, bool emulated = false) {
  ResultSet rs;
  rs.totalGpuNs = runNs;
  rs.provenance.backend = emulated ? "emulate" : "nsys";
  rs.provenance.emulated = emulated;
  FileResult f;
  f.path = "m.py";
  for (auto& l : lines) {
    l.path = "m.py";
    if (l.function.empty() && l.line > 0) l.function = "f";
  }
  f.lines = std::move(lines);
  computeFunctions(f, {FunctionSpan{"f", 0, 9}});
  rs.files.push_back(std::move(f));
  return rs;
}

}  // namespace

TEST_CASE("LineView: the numbers and words of plain, backward, call, sync and atomic lines") {
  using attribution::Pass;
  LineResult fwd;  // 300 µs of forward work, 2 kernels, 3 launches, 2 invocations
  fwd.line = 2;
  fwd.lastLine = 2;
  fwd.gpuNs = 300'000;
  fwd.ops = 3;
  fwd.invocations = 2;
  fwd.kernels = {kernel("gemm", 200'000, 2), kernel("relu", 100'000, 1)};

  LineResult bwd;  // 420 µs forward + 910 µs backward (of which 10 µs recompute), one kernel name
  bwd.line = 3;
  bwd.lastLine = 4;
  bwd.gpuNs = 1'330'000;
  bwd.backwardNs = 910'000;
  bwd.ops = 4;
  bwd.kernels = {kernel("conv", 900'000, 2, Pass::Backward), kernel("conv", 420'000, 1),
                 kernel("conv", 10'000, 1, Pass::Recompute)};

  LineResult call;  // calls workspace code: 730 µs inclusive, no kernels of its own
  call.line = 5;
  call.lastLine = 5;
  call.inclusiveNs = 730'000;
  call.callees = {CalleeLine{"n.py", 3, "x = g(x)", "g", 730'000}};

  LineResult sync;  // blocks the CPU only
  sync.line = 6;
  sync.lastLine = 6;
  sync.syncCalls = 2;
  sync.syncNs = 3'100'000;

  LineResult atomic = fwd;  // the loop's verdict and training-step kernels
  atomic.line = 7;
  atomic.lastLine = 7;
  atomic.atomic = true;
  atomic.atomicReason = attribution::AtomicReason::Library;
  atomic.gpuNs = 302'000;
  atomic.kernels.push_back(kernel("adam", 1'000, 1, Pass::Optimizer));
  atomic.kernels.push_back(kernel("scale", 1'000, 1, Pass::AmpScaler));

  // The function holds 300 + 1330 + 0 + 0 + 302 µs of own GPU time = 1.932 ms; the run 10 ms.
  auto rs = oneFile({fwd, bwd, call, sync, atomic}, 10'000'000, true);
  const auto& file = rs.files[0];
  REQUIRE(file.function("f"));
  CHECK(file.function("f")->gpuNs == 1'932'000);

  struct Row {
    uint32_t line;
    const char* time;
    const char* kernels;
    const char* launches;
    const char* total;
    const char* invocations;
    const char* share;
    const char* sync;
    const char* atomic;
    const char* stepKind;
    const char* hint;
  };
  const Row rows[] = {
      {2, "300 µs", "2 kernels", "3 launches", "", "2 invocations", "16 %", "", "", "", "◷ 300 µs · 2 kernels"},
      {3, "420 µs + bwd 910 µs", "1 kernel", "4 launches", "", "", "69 %", "", "", "",
       "◷ 420 µs + bwd 910 µs · 1 kernel"},
      // a call line's share is its inclusive time over its function's own time, at most all of it
      {5, "", "", "0 launches", "730 µs total", "", "38 %", "", "", "", "◷ 730 µs total"},
      {6, "0 ns", "0 kernels", "0 launches", "", "", "0 %", "‖ sync 3.10 ms", "", "", "‖ sync 3.10 ms"},
      {7, "302 µs", "4 kernels", "3 launches", "", "2 invocations", "16 %", "", "ATOMIC (library)",
       "amp-scaler+optimizer", "◷ 302 µs · 4 kernels"},
  };
  for (const auto& r : rows) {
    CAPTURE(r.line);
    const LineResult* l = file.lineAt(r.line);
    REQUIRE(l);
    LineView v = describeLine(rs, file, *l, false);
    CHECK(v.text.time == r.time);
    CHECK(v.text.kernels == r.kernels);
    CHECK(v.text.launches == r.launches);
    CHECK(v.text.total == r.total);
    CHECK(v.text.invocations == r.invocations);
    CHECK(v.text.share == r.share);
    CHECK(v.text.shareOf == "f");
    CHECK(v.text.sync == r.sync);
    CHECK(v.text.atomic == r.atomic);
    CHECK(v.text.stepKind == r.stepKind);
    CHECK(hintLabel(v.text, kHintPrefix) == r.hint);
    CHECK(v.emulated);
    CHECK(v.backend == "emulate");
    CHECK_FALSE(v.stale);
    CHECK(v.fusedWith.empty());
  }

  LineView b = describeLine(rs, file, *file.lineAt(3), true);
  CHECK(b.forwardNs == 420'000);
  CHECK(b.backwardNs == 910'000);
  CHECK(b.recomputeNs == 10'000);
  CHECK(b.stale);
  CHECK(b.shareDenominatorNs == 1'932'000);
  REQUIRE(b.kernels.size() == 3);
  CHECK(b.kernels[0].passTag == "backward");
  CHECK(b.kernels[0].time == "900 µs");
  CHECK(b.kernels[0].share == "47 %");  // 900 / 1932
  CHECK(b.kernels[1].passTag == "");
  CHECK(b.kernels[2].passTag == "recompute");

  LineView c = describeLine(rs, file, *file.lineAt(5), false);
  CHECK(c.callLine);
  CHECK(c.text.inclusive == "730 µs");
  CHECK(c.text.runShare == "7 %");  // 730 µs of the run's 10 ms
  CHECK(c.share == doctest::Approx(730.0 / 1932.0));
}

TEST_CASE("shareOfFunction: one definition for hints, hovers and the run view") {
  LineResult l;
  l.gpuNs = 250;
  struct Row {
    int64_t gpuNs, inclusiveNs, functionNs, runNs;
    double share;
  };
  const Row rows[] = {
      {250, 0, 1000, 4000, 0.25},    // of its function
      {250, 0, 0, 4000, 0.0625},     // module level: of the run
      {250, 0, 0, 0, 1.0},           // nothing else known: all of it
      {0, 0, 0, 0, 0.0},             // nothing at all
      {250, 3000, 1000, 4000, 1.0},  // a call line outweighing its function's own kernels: all of it
      {250, 500, 1000, 4000, 0.5},   // a call line: its inclusive time
  };
  for (const auto& r : rows) {
    CAPTURE(r.gpuNs);
    CAPTURE(r.inclusiveNs);
    l.gpuNs = r.gpuNs;
    l.inclusiveNs = r.inclusiveNs;
    CHECK(shareOfFunction(l, r.functionNs, r.runNs) == doctest::Approx(r.share));
  }
}

TEST_CASE("LineView: module-level lines are shared of the run; backward work of no forward op says so") {
  LineResult l;
  l.line = 0;
  l.gpuNs = 500'000;
  l.backwardNs = 500'000;
  l.ops = 2;
  l.kernels = {kernel("acc", 500'000, 2, attribution::Pass::Backward, true)};
  LineContext ctx;
  ctx.runNs = 2'000'000;
  LineView v = describeLine(l, ctx);
  CHECK(v.text.time == "0 ns + bwd 500 µs");
  CHECK(v.text.share == "25 %");
  CHECK(v.text.shareOf == "the run");
  CHECK(v.text.backwardNote == "backward work of no forward line: grad accumulation, engine");
  REQUIRE(v.kernels.size() == 1);
  CHECK(v.kernels[0].passTag == "backward, no forward op");
  CHECK(v.text.runShare == "25 %");

  ViewOptions us;
  us.units = Units::Us;
  CHECK(describeLine(l, ctx, us).text.time == "0 µs + bwd 500 µs");
}
