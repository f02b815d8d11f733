// Line strategy helpers: reachable functions, the probe spec, per-line results from line ranges.
#include "core/planner/line_strategy.h"

#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl::planner;

TEST_CASE("reachable functions, spec file and line results") {
  WorkspaceIndex ix(kl::test::sourcePath("samples/transformer"));
  CallResolver r(ix);
  auto root = r.findFunction("tinyformer/block.py", "Block.forward");
  REQUIRE(root);
  auto fns = reachableFunctions(r, {*root}, 8);
  REQUIRE(fns.size() == 4);  // Block.forward, attention, feed-forward, norm
  CHECK(fns[0] == *root);
  auto shallow = reachableFunctions(r, {*root}, 0);
  CHECK(shallow.size() == 1);

  kl::test::TempDir d;
  REQUIRE(writeLineSpec(ix, fns, d / "spec.json").ok());
  std::string spec = kl::test::readFile(d / "spec.json");
  CHECK(spec.find("\"qualname\": \"Block.forward\"") != std::string::npos);
  CHECK(spec.find("\"def_line\": 16") != std::string::npos);
  CHECK(spec.find("\"path\": \"tinyformer/norm.py\"") != std::string::npos);

  kl::attribution::RangeTable st;
  auto& a = **st.insert("kl:tinyformer/attention.py:21-21:line");
  a.invocations = 2;
  a.exclusiveLaunches = 6;
  a.maxExclusivePerInvocation = 3;
  a.kernels.resize(2);
  a.kernels[0].name = "gemm", a.kernels[0].launches = 2, a.kernels[0].gpuNs = 100;
  a.kernels[1].name = "copy", a.kernels[1].launches = 4, a.kernels[1].gpuNs = 40;
  auto& b = **st.insert("kl:tinyformer/block.py:17-17:line");
  b.invocations = 2;
  b.exclusiveLaunches = 2;
  b.maxExclusivePerInvocation = 1;
  (*st.insert("kl:tinyformer/block.py:19-19:line"))->invocations = 2;  // launched nothing: no line
  CHECK_FALSE(st.insert("not-a-kl-name").ok());                        // a table holds managed names only
  auto lines = lineResultsFromLineRanges(ix, st);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].path == "tinyformer/attention.py");
  CHECK(lines[0].line + 1 == 21);  // 0-based
  CHECK(lines[0].function == "CausalSelfAttention.forward");
  CHECK(lines[0].atomic);
  CHECK(lines[1].path == "tinyformer/block.py");
  CHECK_FALSE(lines[1].atomic);
  CHECK(lines[1].function == "Block.forward");
}
