// Call resolution through the tree-sitter index: real sample files and in-memory modules.
#include <algorithm>

#include "core/planner/call_resolution.h"
#include "core/planner/plan.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl::planner;

namespace {

/// Callees of the statement starting at 1-based `line` of `path`.
std::vector<std::string> calleesAt(CallResolver& r, WorkspaceIndex& ix, const std::string& path, uint32_t line) {
  auto f = ix.file(path);
  REQUIRE(f.ok());
  const auto& m = (*f)->model();
  int32_t si = -1;
  for (size_t i = 0; i < m.statements.size(); ++i)
    if (m.statements[i].lines.first == line - 1) si = static_cast<int32_t>(i);  // innermost wins
  REQUIRE(si >= 0);
  std::vector<std::string> out;
  for (const auto& fn : r.calleesOfStatement(path, si)) out.push_back(fn.path + "::" + fn.qualName);
  return out;
}

}  // namespace

TEST_CASE("transformer sample: module instances, ModuleList members, imports across files") {
  WorkspaceIndex ix(kl::test::sourcePath("samples/transformer"));
  CallResolver r(ix);
  // self.attn(self.norm1(x)): attributes assigned in __init__ from imported classes.
  CHECK(calleesAt(r, ix, "tinyformer/block.py", 17) ==
        std::vector<std::string>{"tinyformer/attention.py::CausalSelfAttention.forward",
                                 "tinyformer/norm.py::RMSNorm.forward"});
  CHECK(calleesAt(r, ix, "tinyformer/block.py", 18) ==
        std::vector<std::string>{"tinyformer/mlp.py::FeedForward.forward", "tinyformer/norm.py::RMSNorm.forward"});
  // for block in self.blocks: x = block(x)   (nn.ModuleList([Block(...) for ...]))
  CHECK(calleesAt(r, ix, "tinyformer/model.py", 22) == std::vector<std::string>{"tinyformer/block.py::Block.forward"});
  // nn.Linear / F.cross_entropy are not workspace code.
  CHECK(calleesAt(r, ix, "tinyformer/model.py", 26).empty());
  CHECK(calleesAt(r, ix, "tinyformer/attention.py", 17).empty());
  // train.py: `model` is a parameter; its type comes from the call site in main()
  // (model = TinyFormer().to(device), imported through the package __init__).
  (void)ix.file("train.py");
  CHECK(calleesAt(r, ix, "train.py", 14) == std::vector<std::string>{"tinyformer/model.py::TinyFormer.forward"});
  // TinyFormer() in main runs TinyFormer.__init__; train_step(...) resolves to the module function.
  auto main35 = calleesAt(r, ix, "train.py", 35);
  CHECK(std::find(main35.begin(), main35.end(), "train.py::train_step") != main35.end());
  // Callers of train_step: main.
  auto ts = r.findFunction("train.py", "train_step");
  REQUIRE(ts);
  auto callers = r.callers(*ts);
  REQUIRE(callers.size() == 1);
  CHECK(callers[0].qualName == "main");
}

TEST_CASE("super().forward, nn.Sequential members, module imports, annotations, thread targets") {
  kl::test::TempDir d;
  WorkspaceIndex ix(d.path());
  REQUIRE(ix.addFile("pkg/__init__.py", "").ok());
  REQUIRE(ix.addFile("pkg/layers.py",
                     "import torch.nn as nn\n"
                     "class Base(nn.Module):\n"
                     "    def forward(self, x):\n"
                     "        return x * 2\n"
                     "class Child(Base):\n"
                     "    def forward(self, x):\n"
                     "        return super().forward(x) + 1\n"
                     "class Gate(nn.Module):\n"
                     "    def __call__(self, x):\n"
                     "        return x\n"
                     "def helper(x):\n"
                     "    return x\n")
              .ok());
  REQUIRE(ix.addFile("pkg/net.py",
                     "import threading\n"
                     "import torch.nn as nn\n"
                     "from . import layers\n"
                     "from .layers import Child, Gate\n"
                     "class Net(nn.Module):\n"
                     "    def __init__(self):\n"
                     "        super().__init__()\n"
                     "        self.seq = nn.Sequential(layers.Child(), Gate())\n"
                     "    def forward(self, x):\n"
                     "        y = self.seq(x)\n"
                     "        return layers.helper(y)\n"
                     "def run(net: Net, x):\n"
                     "    out = net(x)\n"
                     "    return out\n"
                     "def spawn(net, x):\n"
                     "    t = threading.Thread(target=run, args=(net, x))\n"
                     "    t.start()\n")
              .ok());
  CallResolver r(ix);
  CHECK(calleesAt(r, ix, "pkg/layers.py", 7) == std::vector<std::string>{"pkg/layers.py::Base.forward"});
  CHECK(calleesAt(r, ix, "pkg/net.py", 10) ==
        std::vector<std::string>{"pkg/layers.py::Child.forward", "pkg/layers.py::Gate.__call__"});
  CHECK(calleesAt(r, ix, "pkg/net.py", 11) == std::vector<std::string>{"pkg/layers.py::helper"});
  CHECK(calleesAt(r, ix, "pkg/net.py", 13) == std::vector<std::string>{"pkg/net.py::Net.forward"});
  auto targets = r.threadTargets();
  REQUIRE(targets.size() == 1);
  CHECK(targets[0].qualName == "run");
}

TEST_CASE(
    "awkward shapes: ModuleDict/ModuleList/Sequential, zip/enumerate, chained and annotated locals, keyword call "
    "sites") {
  kl::test::TempDir d;
  WorkspaceIndex ix(d.path());
  REQUIRE(ix.addFile("blocks.py",
                     "import torch.nn as nn\n"
                     "class A(nn.Module):\n"
                     "    def forward(self, x): return x\n"
                     "class B(nn.Module):\n"
                     "    def forward(self, x): return x\n"
                     "class C(B):\n"
                     "    def forward(self, x):\n"
                     "        return super(C, self).forward(x)\n")
              .ok());
  REQUIRE(ix.addFile("net.py",
                     "import torch.nn as nn\n"                                                 // 1
                     "import blocks\n"                                                         // 2
                     "from blocks import A as AliasA, C\n"                                     // 3
                     "class Net(nn.Module):\n"                                                 // 4
                     "    def __init__(self, n):\n"                                            // 5
                     "        super().__init__()\n"                                            // 6
                     "        self.heads = nn.ModuleDict({'a': AliasA(), 'b': blocks.B()})\n"  // 7
                     "        self.layers = nn.ModuleList([C() for _ in range(n)])\n"          // 8
                     "        self.norms = [AliasA(), AliasA()]\n"                             // 9
                     "        self.pair = nn.Sequential(C(),\n"                                // 10
                     "                                  blocks.B())\n"                         // 11
                     "    def forward(self, x, gate: blocks.B):\n"                             // 12
                     "        x = self.heads['a'](x)\n"                                        // 13
                     "        for i, layer in enumerate(self.layers):\n"                       // 14
                     "            x = layer(x)\n"                                              // 15
                     "        for norm, blk in zip(self.norms, self.layers):\n"                // 16
                     "            x = norm(x) + blk(x)\n"                                      // 17
                     "        p = q = self.pair\n"                                             // 18
                     "        x = q(x)\n"                                                      // 19
                     "        h: AliasA = make()\n"                                            // 20
                     "        x = h(x)\n"                                                      // 21
                     "        x = gate(x)\n"                                                   // 22
                     "        x = (self.pair)(x)\n"                                            // 23
                     "        return self.layers[0](x) * 2\n"                                  // 24
                     "def apply(model, x):\n"                                                  // 25
                     "    return model(x)\n"                                                   // 26
                     "def main():\n"                                                           // 27
                     "    apply(x=1, model=Net(2).cuda().eval())\n")                           // 28
              .ok());
  CallResolver r(ix);
  std::vector<std::string> ab{"blocks.py::A.forward", "blocks.py::B.forward"};
  std::vector<std::string> c{"blocks.py::C.forward"};
  std::vector<std::string> b{"blocks.py::B.forward"};
  // nn.ModuleDict({...}) holds every class built in it; indexing gives its members.
  CHECK(calleesAt(r, ix, "net.py", 13) == ab);
  // enumerate(...) yields the ModuleList's members as its second target.
  CHECK(calleesAt(r, ix, "net.py", 15) == c);
  // zip(a, b): each target from its own argument (a list of AliasA, the ModuleList of C).
  CHECK(calleesAt(r, ix, "net.py", 17) == std::vector<std::string>{"blocks.py::A.forward", "blocks.py::C.forward"});
  // A chained assignment binds both names; nn.Sequential over two lines holds both classes.
  CHECK(calleesAt(r, ix, "net.py", 19) == std::vector<std::string>{"blocks.py::B.forward", "blocks.py::C.forward"});
  // An annotated local: the value decides (make() is unknown), so h stays unknown.
  CHECK(calleesAt(r, ix, "net.py", 21).empty());
  // A parameter by its annotation (a class through a module import).
  CHECK(calleesAt(r, ix, "net.py", 22) == b);
  // A parenthesised callee is not a plain chain: unknown, as before.
  CHECK(calleesAt(r, ix, "net.py", 23).empty());
  // Indexing a ModuleList inside an operator expression.
  CHECK(calleesAt(r, ix, "net.py", 24) == c);
  // super(C, self).forward -> the base's method.
  CHECK(calleesAt(r, ix, "blocks.py", 8) == b);
  // A keyword argument at the call site types the parameter (passthrough .cuda().eval()).
  CHECK(calleesAt(r, ix, "net.py", 26) == std::vector<std::string>{"net.py::Net.forward"});
  // Net(2) runs Net.__init__; super().__init__() reaches no workspace __init__.
  CHECK(calleesAt(r, ix, "net.py", 28) == std::vector<std::string>{"net.py::Net.__init__", "net.py::apply"});
  CHECK(calleesAt(r, ix, "net.py", 6).empty());
}

TEST_CASE("unresolvable and self-referential code stays unknown without blowing up") {
  kl::test::TempDir d;
  WorkspaceIndex ix(d.path());
  REQUIRE(ix.addFile("m.py",
                     "def f(x):\n"
                     "    x = x + g(x)\n"
                     "    x = x + x\n"
                     "    y = x(x)\n"
                     "    return unknown_thing(y)\n"
                     "def g(x):\n"
                     "    return f(x)\n")
              .ok());
  CallResolver r(ix);
  CHECK(calleesAt(r, ix, "m.py", 2) == std::vector<std::string>{"m.py::g"});
  CHECK(calleesAt(r, ix, "m.py", 4).empty());
  CHECK(calleesAt(r, ix, "m.py", 5).empty());
}

TEST_CASE("plan: round 0 wraps the function and each top-level line; refining descends") {
  WorkspaceIndex ix(kl::test::sourcePath("samples/transformer"));
  Plan plan(ix);
  auto fn = plan.resolver().findFunction("tinyformer/block.py", "Block.forward");
  REQUIRE(fn);
  auto id = plan.addFunction(*fn, Origin::Focus, -1, 0);
  REQUIRE(id.ok());
  REQUIRE(plan.nodes().size() == 4);  // body + 3 statements
  CHECK(plan.node(*id).kind == NodeKind::FunctionBody);
  CHECK(plan.node(1).lines.first == 16);  // line 17, 0-based
  CHECK(plan.node(1).label.find('{') == std::string::npos);
  auto c = plan.children(1);
  CHECK(c.statements.empty());
  CHECK(c.callees.size() == 2);
  int added = plan.expand(1, 1);
  CHECK(added > 2);  // two callee bodies and their statements
  auto fp = plan.filePlans();
  CHECK(fp.size() == 3);  // block.py, attention.py, norm.py
  // A `return x` statement has nothing finer.
  CHECK(plan.children(3).empty());
  // Unknown function.
  CHECK_FALSE(plan.addFunction(FunctionRef{"tinyformer/block.py", "Nope.forward", 0}, Origin::Focus, -1, 0).ok());
}

TEST_CASE("plan: a statement node's label is the code of its first line (comments cut, strings kept)") {
  kl::test::TempDir d;
  kl::test::writeFile(d / "m.py",
                      "def f(y):\n"
                      "    x = g(\"a#b\", {1: 2},  # don't {k}\n"
                      "          y)\n"
                      "    # only a comment\n"
                      "    return x\n");
  WorkspaceIndex ix(d.path());
  Plan plan(ix);
  auto a = plan.addStatements("m.py", {1, 2}, Origin::Focus, -1, 0);
  REQUIRE(a.ok());
  CHECK(plan.node(*a).label == "x = g(\"a#b\", ?1: 2?,");
  auto b = plan.addStatements("m.py", {3, 4}, Origin::Focus, -1, 0);
  REQUIRE(b.ok());
  CHECK(plan.node(*b).label == "stmt");
}
