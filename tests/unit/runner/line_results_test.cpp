// Per-line aggregation on a synthetic attributed model (every number known by construction),
// plus overlay-driven disk lines, functions and never-run ranges.
#include "core/runner/line_results.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>

#include "core/nvtx/overlay.h"
#include "core/profile/reader.h"
#include "tests/support/profile_builder.h"
#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::profile;

namespace {

using Fixture = kl::test::ProfileBuilder;

const attribution::LineResult* find(const store::RoundResults& r, const std::string& name) {
  for (const auto& s : r.spans)
    if (s.range.name == name) return &s;
  return nullptr;
}

}  // namespace

TEST_CASE("lineResults: inclusive/exclusive per span, kernel sets, unmapped reasons") {
  Fixture f;
  // Function body 1-20 with two statements; statement 3 runs twice (a loop), with different sets.
  f.range("kl:m.py:2-20:body", 0, 1000);
  f.range("kl:m.py:2-2:a", 10, 100);
  f.range("kl:m.py:5-6:b", 200, 300);
  f.range("kl:m.py:5-6:b", 400, 500);
  f.range("kl:/abs.py:1-1", 600, 700);  // bad name
  f.range("user range", 800, 900);      // not ours
  f.kernel("gemm<a>", 20, 50);
  f.kernel("gemm<a>", 30, 50);
  f.kernel("relu", 210, 5);
  f.kernel("gemm<a>", 410, 50);
  f.kernel("add", 150, 7);             // in the body, outside statements -> body exclusive
  f.kernel("copy", 610, 3);            // innermost kl: range has a bad name
  f.kernel("relu", 810, 4);            // in a user range inside the body -> body exclusive
  f.kernel("fill", 1500, 2);           // outside every kl: range
  f.kernel("orphan", 1600, 9, false);  // no launch call
  f.finish();

  auto r = runner::lineResults(*attribution::tabulateRanges(f.m));
  REQUIRE(r.ok());
  CHECK(r->totalOps == 9);
  CHECK(r->totalGpuNs == 50 * 3 + 5 + 7 + 3 + 4 + 2 + 9);
  CHECK(r->mappedOps == 6);
  CHECK(r->klRanges == 5);
  CHECK(r->badRangeNames == std::vector<std::string>{"kl:/abs.py:1-1"});
  REQUIRE(r->spans.size() == 3);
  // Sorted by (path, first line, last line desc): body, a, b.
  CHECK(r->spans[0].range.name == "kl:m.py:2-20:body");
  CHECK(r->spans[1].range.name == "kl:m.py:2-2:a");

  const auto* body = find(*r, "kl:m.py:2-20:body");
  REQUIRE(body);
  CHECK(body->invocations == 1);
  CHECK(body->range.launches == 7);  // everything launched while it was open (bad-name and user ranges included)
  CHECK(body->range.gpuNs == 50 * 3 + 5 + 7 + 3 + 4);
  CHECK(body->ops == 2);  // add + relu in the user range
  CHECK(body->gpuNs == 11);
  CHECK_FALSE(body->range.leaf);
  CHECK(body->range.depth == 0);
  CHECK(body->path == "m.py");
  CHECK(body->range.firstLine == 2);
  CHECK(body->range.lastLine == 20);
  CHECK(body->label == "body");

  const auto* a = find(*r, "kl:m.py:2-2:a");
  REQUIRE(a);
  CHECK(a->range.leaf);
  CHECK(a->range.depth == 1);
  CHECK(a->range.parent == "kl:m.py:2-20:body");
  CHECK(a->range.launches == 2);
  CHECK(a->ops == 2);
  CHECK(a->range.gpuNs == 100);
  CHECK(a->range.distinctKernels == 1);
  REQUIRE(a->kernels.size() == 1);
  CHECK(a->kernels[0].opName == "gemm<a>");
  CHECK(a->kernels[0].name == "gemm");
  CHECK(a->kernels[0].launches == 2);
  CHECK(a->kernels[0].kind == GpuOpKind::Kernel);

  const auto* b = find(*r, "kl:m.py:5-6:b");
  REQUIRE(b);
  CHECK(b->invocations == 2);
  CHECK(b->range.launches == 2);
  CHECK(b->range.distinctKernels == 2);
  CHECK(b->range.minKernelsPerInvocation == 1);
  CHECK(b->range.maxKernelsPerInvocation == 1);
  CHECK(b->range.distinctKernelSets == 2);
  REQUIRE(b->range.kernelSets.size() == 2);
  REQUIRE(b->kernels.size() == 2);
  CHECK(b->kernels[0].opName == "gemm<a>");  // most GPU time first
  CHECK(b->kernels[1].opName == "relu");

  REQUIRE(r->unmapped.size() == 3);
  std::map<std::string, std::string> reasons;
  for (const auto& u : r->unmapped) reasons[u.name] = std::string(attribution::unmappedReasonName(u.reason));
  CHECK(reasons["copy"] == "bad_range_name");
  CHECK(reasons["fill"] == "outside_kl_ranges");
  CHECK(reasons["orphan"] == "no_launch_call");
  CHECK(r->unmapped[0].name == "orphan");  // most GPU time first
}

TEST_CASE("lineResults with an overlay: functions, disk lines of kept ranges, ranges that never ran") {
  // On disk the file already holds a kept kernlens range around `y = x * 2` (so disk lines shift).
  std::string disk =
      "import torch\n"
      "\n"
      "def f(x):\n"
      "    with torch.cuda.nvtx.range(\"kl:w.py:4-4\"):\n"
      "        y = x * 2\n"
      "    z = y + 1\n"
      "    return z\n";
  auto of = nvtx::instrumentFile(
      "w.py", disk, std::vector{nvtx::RangeRequest::functionBody("f"), nvtx::RangeRequest::statements(5, 5)});
  REQUIRE_MESSAGE(of.ok(), of.error().message);
  nvtx::Overlay ov;
  std::vector<std::string> names;
  for (const auto& pr : of->ranges) names.push_back(pr.name);
  ov.files.emplace("w.py", *of);
  // Original (stripped) text: line 4 = "y = x * 2", 5 = "z = y + 1", 6 = "return z".
  REQUIRE(std::find(names.begin(), names.end(), "kl:w.py:5-5:z = y + 1") != names.end());
  Fixture fx;
  fx.range("kl:w.py:5-5:z = y + 1", 0, 100);
  fx.kernel("add", 10, 5);
  fx.finish();
  runner::LineResultOptions o;
  o.overlay = &ov;
  auto r = runner::lineResults(*attribution::tabulateRanges(fx.m), o);
  REQUIRE(r.ok());
  const auto* z = find(*r, "kl:w.py:5-5:z = y + 1");
  REQUIRE(z);
  CHECK(z->function == "f");
  CHECK(z->range.firstLine == 5);
  CHECK(z->line + 1 == 6);  // one line lower on disk: the kept `with` header
  CHECK(z->ops == 1);
  // The body range and the kept range were placed but never ran: present with 0 invocations.
  size_t notRun = 0;
  for (const auto& s : r->spans) {
    if (s.invocations == 0) {
      ++notRun;
      CHECK(s.range.launches == 0);
      CHECK(s.function == "f");
    }
  }
  CHECK(notRun == names.size() - 1);
  bool sawBody = false;
  for (const auto& s : r->spans) sawBody = sawBody || s.body;
  CHECK(sawBody);
}

TEST_CASE("lineResults on a real emulated export (probe output in tests/data) is consistent") {
  // Any real nsys-schema export with kl: ranges: spans' exclusive ops + unmapped == all ops.
  auto path = kl::test::dataPath("runner/mlp-emulated.sqlite");
  auto m = readProfile(path);
  REQUIRE_MESSAGE(m.ok(), m.error().message);
  auto r = runner::lineResults(*attribution::tabulateRanges(*m));
  REQUIRE(r.ok());
  CHECK(r->emulated);
  int64_t excl = 0, un = 0;
  for (const auto& s : r->spans) excl += static_cast<int64_t>(s.ops);
  for (const auto& u : r->unmapped) un += u.launches;
  CHECK(excl == r->mappedOps);
  CHECK(excl + un == r->totalOps);
  CHECK(r->klRanges > 0);
  CHECK(r->mappedOps > 0);
  // The forward Linear GEMMs of train_step's `logits = model(x)` line.
  const attribution::LineResult* fwd = nullptr;
  for (const auto& s : r->spans)
    if (s.range.firstLine == 27 && s.range.lastLine == 27) fwd = &s;
  REQUIRE(fwd);
  bool gemm = false;
  for (const auto& k : fwd->kernels) gemm = gemm || k.name.find("gemm") != std::string::npos;
  CHECK(gemm);
}
