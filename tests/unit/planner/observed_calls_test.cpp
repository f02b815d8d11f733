// Call discovery in the planner: the discovery file format, and a line refined into the workspace
// functions observed to run beneath it where static resolution sees nothing (a ModuleDict of a
// ModuleList, a lambda looked through). No Python run: in-memory modules and a hand-written file.
#include "core/planner/observed_calls.h"

#include <algorithm>
#include <memory>

#include "core/planner/plan.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl::planner;

TEST_CASE("discovery file: codes, edges, line counts; malformed records are errors with their line") {
  auto oc = ObservedCalls::parse(
      "kernlens-calls\t1\n"
      "code\t0\tm.py\t1\t<module>\t1\n"
      "code\t1\tm.py\t5\tNet.forward\t2\n"
      "code\t2\tm.py\t2\tBlock.forward\t4\n"
      "line\t1\t6\t2\nline\t1\t7\t4\n"
      "edge\t1\t7\t2\t4\nedge\t0\t12\t1\t2\n"
      "root\t0\t1\nfuture\tignored\n");
  REQUIRE(oc.ok());
  CHECK(oc->codes().size() == 3);
  CHECK(oc->codesOf("m.py", "Net.forward") == std::vector<int32_t>{1});
  auto e = oc->edgesFrom(1, 6, 7);
  REQUIRE(e.size() == 1);
  CHECK(e[0].callee == 2);
  CHECK(e[0].count == 4);
  CHECK(oc->edgesFrom(1, 1, 6).empty());
  CHECK(oc->maxLineHits(1, 5, 9) == 4);
  CHECK(oc->anyLineRan(1, 6, 6));
  CHECK_FALSE(oc->anyLineRan(1, 8, 9));
  CHECK(oc->edgesInto(1).size() == 1);
  CHECK_FALSE(oc->backwardCalls());  // no backward record: unknown
  auto bw = ObservedCalls::parse("kernlens-calls\t1\nbackward\t0\n");
  REQUIRE(bw.ok());
  CHECK(bw->backwardCalls() == uint64_t{0});
  CHECK(ObservedCalls::parse("kernlens-calls\t1\nbackward\t3\n")->backwardCalls() == uint64_t{3});
  CHECK_FALSE(ObservedCalls::parse("kernlens-calls\t1\nbackward\tx\n").ok());
  auto bad = ObservedCalls::parse("kernlens-calls\t1\nedge\t0\t1\n");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find("line 2") != std::string::npos);
  CHECK_FALSE(ObservedCalls::parse("something else\n").ok());
  CHECK_FALSE(ObservedCalls::parse("kernlens-calls\t1\nedge\t0\t1\t7\t1\n").ok());  // unknown code ids
}

TEST_CASE("a line is refined into the callees that ran; a lambda is looked through and named") {
  WorkspaceIndex ix(kl::test::sourcePath("samples/mlp"));
  REQUIRE(ix.addFile("net.py",
                     "import torch.nn as nn\n"                                                               // 1
                     "class Block(nn.Module):\n"                                                             // 2
                     "    def __init__(self):\n"                                                             // 3
                     "        super().__init__()\n"                                                          // 4
                     "        self.f = lambda x: self.helper(x)\n"                                           // 5
                     "    def helper(self, x):\n"                                                            // 6
                     "        return x * 2\n"                                                                // 7
                     "    def forward(self, x):\n"                                                           // 8
                     "        return self.f(x) + 1\n"                                                        // 9
                     "class Net(nn.Module):\n"                                                               // 10
                     "    def __init__(self):\n"                                                             // 11
                     "        super().__init__()\n"                                                          // 12
                     "        self.t = nn.ModuleDict(dict(h=nn.ModuleList([Block() for _ in range(2)])))\n"  // 13
                     "    def forward(self, x):\n"                                                           // 14
                     "        for b in self.t.h:\n"                                                          // 15
                     "            x = b(x)\n"                                                                // 16
                     "        return x\n")                                                                   // 17
              .ok());
  Plan plan(ix);
  auto fwd = plan.resolver().findFunction("net.py", "Net.forward");
  REQUIRE(fwd);
  auto body = plan.addFunction(*fwd, Origin::Focus, -1, 0);
  REQUIRE(body.ok());
  int loopLine = -1, callLine = -1;
  for (const auto& n : plan.nodes())
    if (n.kind == NodeKind::Statements && n.lines.first == 14) loopLine = n.id;
  REQUIRE(loopLine >= 0);
  // Static resolution cannot see through the ModuleDict(dict(h=ModuleList(...))).
  plan.expand(loopLine, 1);
  for (const auto& n : plan.nodes())
    if (n.kind == NodeKind::Statements && n.lines.first == 15) callLine = n.id;
  REQUIRE(callLine >= 0);
  CHECK(plan.children(callLine).callees.empty());

  auto oc = ObservedCalls::parse(
      "kernlens-calls\t1\n"
      "code\t0\tnet.py\t14\tNet.forward\t1\n"
      "code\t1\tnet.py\t8\tBlock.forward\t2\n"
      "code\t2\tnet.py\t5\tBlock.__init__.<locals>.<lambda>\t2\n"
      "code\t3\tnet.py\t6\tBlock.helper\t2\n"
      "edge\t0\t16\t1\t2\nedge\t1\t9\t2\t2\nedge\t2\t5\t3\t2\n");
  REQUIRE(oc.ok());
  plan.setObserved(std::make_shared<const ObservedCalls>(std::move(*oc)));
  Children c = plan.children(callLine);
  REQUIRE(c.callees.size() == 1);
  CHECK(c.callees[0].qualName == "Block.forward");
  // Block.forward's line calls a lambda: its callee (helper) is followed, the lambda is named.
  plan.expand(callLine, 2);
  int retLine = -1;
  for (const auto& n : plan.nodes())  // its line, or its body when that is the only statement
    if ((n.kind == NodeKind::Statements && n.lines.first == 8) ||
        (retLine < 0 && n.kind == NodeKind::FunctionBody && n.qualName == "Block.forward"))
      retLine = n.id;
  REQUIRE(retLine >= 0);
  Children r = plan.children(retLine);
  REQUIRE(r.callees.size() == 1);
  CHECK(r.callees[0].qualName == "Block.helper");
  REQUIRE(r.unfollowed.size() == 1);
  CHECK(r.unfollowed[0].qualName == "Block.__init__.<locals>.<lambda>");
  CHECK(r.unfollowed[0].why.find("lambda") != std::string::npos);
  CHECK_FALSE(r.unfollowed[0].noSource);
}
