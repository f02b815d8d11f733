// Branch extraction (harness generation), focus-flag parsing, entry detection, JSON rendering.
#include "core/planner/harness.h"
#include "core/planner/loop.h"
#include "core/planner/profile_request.h"
#include "core/planner/report.h"
#include "core/support/format.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl::planner;

TEST_CASE("harness: shapes comment, defaults, constructor args, factory") {
  kl::test::TempDir d;
  kl::test::writeFile(d / "pkg/__init__.py", "");
  kl::test::writeFile(d / "pkg/layer.py",
                      "import torch.nn as nn\n"
                      "# kernlens: args dim=128\n"
                      "class Layer(nn.Module):\n"
                      "    def __init__(self, dim, bias=True):\n"
                      "        super().__init__()\n"
                      "        self.lin = nn.Linear(dim, dim, bias=bias)\n"
                      "    # kernlens: shapes x=(8,16,128)\n"
                      "    def forward(self, x, scale=1.0):\n"
                      "        return self.lin(x) * scale\n"
                      "class Hard(nn.Module):\n"
                      "    def __init__(self, cfg):\n"
                      "        super().__init__()\n"
                      "    # kernlens: shapes x=(2,2)\n"
                      "    def forward(self, x):\n"
                      "        return x\n"
                      "def free(a, b):\n"
                      "    return a + b\n");
  WorkspaceIndex ix(d.path());
  HarnessRequest req{d.path(), "pkg/layer.py", "Layer.forward", "", 1, 3};
  auto h = generateHarness(ix, req);
  REQUIRE(h.ok());
  CHECK(h->module == "pkg.layer");
  CHECK(h->sysPath == d.path().string());
  CHECK(h->script.find("obj = mod.Layer(dim=128)") != std::string::npos);
  CHECK(h->script.find("x=torch.randn((8,16,128), device=device)") != std::string::npos);
  CHECK(h->script.find("fn = obj.forward") != std::string::npos);

  // A constructor argument nobody can provide: say so, name the way out.
  auto hard = generateHarness(ix, HarnessRequest{d.path(), "pkg/layer.py", "Hard.forward", "", 1, 3});
  REQUIRE_FALSE(hard.ok());
  CHECK(hard.error().message.find("cfg") != std::string::npos);
  CHECK(hard.error().message.find("factory") != std::string::npos);
  // ... unless a factory builds the object.
  auto fac = generateHarness(ix, HarnessRequest{d.path(), "pkg/layer.py", "Hard.forward", "pkg.make:build", 1, 3});
  REQUIRE(fac.ok());
  CHECK(fac->script.find("obj = importlib.import_module(\"pkg.make\").build()") != std::string::npos);
  CHECK_FALSE(generateHarness(ix, HarnessRequest{d.path(), "pkg/layer.py", "Hard.forward", "nocolon", 1, 3}).ok());
  // Inputs without shape, value or default: said clearly, with the comment to add.
  auto free = generateHarness(ix, HarnessRequest{d.path(), "pkg/layer.py", "free", "", 1, 3});
  REQUIRE_FALSE(free.ok());
  CHECK(free.error().message.find("cannot synthesise inputs") != std::string::npos);
  CHECK(free.error().message.find("a, b") != std::string::npos);
  CHECK(free.error().message.find("kernlens: shapes a=") != std::string::npos);

  CHECK(parseShapesComment("x=(8,128,512), m=(4,)").ok());
  CHECK_FALSE(parseShapesComment("x=[8,128]").ok());
  CHECK_FALSE(parseShapesComment("x=(a,b)").ok());
  CHECK_FALSE(parseShapesComment("").ok());
}

TEST_CASE("harness directives are read as Python keyword arguments") {
  // Strings with commas and brackets, nested brackets and a trailing comment.
  kl::test::TempDir d;
  kl::test::writeFile(
      d / "m.py",
      "# kernlens: args name=\"a, (b\", dims=dict(a=[1, 2], b=(3, 4)), n=4  # why: a comment, with a=1\n"
      "# kernlens: shapes x=(8, 16)  # batch, dim\n"
      "def f(x, name, dims, n):\n"
      "    return x\n");
  WorkspaceIndex ix(d.path());
  auto h = generateHarness(ix, HarnessRequest{d.path(), "m.py", "f", "", 1, 3});
  REQUIRE_MESSAGE(h.ok(), (h.ok() ? "" : h.error().message));
  CHECK(h->script.find("x=torch.randn((8, 16), device=device), name=\"a, (b\", dims=dict(a=[1, 2], b=(3, 4)), n=4)") !=
        std::string::npos);
  auto shapes = parseShapesComment("x=(8,128,512), m=(4,), s=(8)");
  REQUIRE(shapes.ok());
  CHECK(shapes->size() == 3);
  CHECK((*shapes)[1] == std::pair<std::string, std::string>{"m", "(4,)"});
  // Not name=value items: said with the item at fault.
  auto positional = parseShapesComment("x=(8,2), y");
  REQUIRE_FALSE(positional.ok());
  CHECK(positional.error().message == "'# kernlens: shapes' expects name=(d0,d1,...) items, got 'y'");
  auto broken = parseShapesComment("x=(8,2");
  REQUIRE_FALSE(broken.ok());
  CHECK(broken.error().message == "'# kernlens: shapes' expects name=(d0,d1,...) items, got 'x=(8,2'");
  CHECK_FALSE(parseShapesComment("x=(8,2)) + (1").ok());
  CHECK_FALSE(parseShapesComment("**kw").ok());
  CHECK_FALSE(parseShapesComment("x=(8,2), x2=f(1)").ok());
}

TEST_CASE("a profile request: typed focus checked against the workspace, refusals name the field") {
  auto root = kl::test::sourcePath("samples/transformer");
  ProfileRequest req;
  req.run.workspace = root;
  req.run.entry = "python3 train.py";
  req.file = "tinyformer/block.py";
  req.function = "Block.forward";
  auto ok = checkRequest(req);
  REQUIRE(ok.config);
  CHECK(ok.config->focus.kind == FocusKind::Function);
  CHECK(ok.config->focus.path == "tinyformer/block.py");
  CHECK(ok.config->focus.qualName == "Block.forward");
  CHECK(ok.config->cwd == root);
  req.file = root / "tinyformer" / "block.py";  // absolute: the same file
  CHECK(checkRequest(req).config->focus.path == "tinyformer/block.py");
  auto refused = [](const ProfileRequest& r) {
    auto c = checkRequest(r);
    CHECK_FALSE(c.config);
    return c.config ? std::string("accepted") : std::string(requestFieldName(c.error.field));
  };
  ProfileRequest bad = req;
  bad.file = "nope.py";
  CHECK(refused(bad) == "file");
  bad = req;
  bad.file = "/etc/hostname";  // not inside the workspace
  CHECK(refused(bad) == "file");
  bad = req;
  bad.run.workspace = "samples/transformer";  // never resolved against the working directory
  CHECK(refused(bad) == "workspace");
  bad = req;
  bad.rounds = 0;
  CHECK(refused(bad) == "rounds");
  bad = req;
  bad.run.entry.clear();
  CHECK(refused(bad) == "entry");
  bad = req;
  bad.kernelPattern = "(";
  CHECK(refused(bad) == "kernel_pattern");
  bad = req;
  bad.function.clear();
  bad.lines = FocusLines{17, 12};
  bad.file = "train.py";
  CHECK(refused(bad) == "lines");
  bad.lines = FocusLines{12, 17};
  auto lines = checkRequest(bad);
  REQUIRE(lines.config);
  CHECK(lines.config->focus.kind == FocusKind::Lines);
  CHECK(lines.config->focus.firstLine == 12);
  CHECK(lines.config->focus.lastLine == 17);
  bad.harness = HarnessMode::Auto;  // a harness needs a function
  CHECK(refused(bad) == "harness");
  ProfileRequest kernel = req;
  kernel.file.clear();
  kernel.function.clear();
  kernel.kernelPattern = "gemm";
  auto k = checkRequest(kernel);
  REQUIRE(k.config);
  CHECK(k.config->focus.kind == FocusKind::Kernel);
  kernel.kernelPattern.clear();
  CHECK(refused(kernel) == "function");
}

TEST_CASE("entry scripts") {
  auto root = kl::test::sourcePath("samples/transformer");
  WorkspaceIndex ix(root);
  CHECK(entryScript("python3 train.py --steps 2", root, ix) == std::optional<std::string>("train.py"));
  CHECK(entryScript("python -u -W ignore train.py", root, ix) == std::optional<std::string>("train.py"));
  CHECK(entryScript("python3 -m tinyformer.model", root, ix) == std::optional<std::string>("tinyformer/model.py"));
  CHECK_FALSE(entryScript("bash run.sh", root, ix).has_value());
  CHECK_FALSE(entryScript("python3 -c 'print(1)'", root, ix).has_value());
}

TEST_CASE("the JSON document has exactly the documented shape") {
  LoopResult r;
  r.converged = true;
  r.stopReason = StopReason::Converged;
  r.rounds = 3;
  r.backend = "emulate";
  r.emulated = true;
  LineResult l;
  l.path = "m.py";
  l.line = 3;  // 0-based: JSON line 4
  l.lastLine = 4;
  l.function = "f";
  l.gpuNs = 1200;
  l.ops = 2;
  l.atomic = true;
  l.atomicReason = kl::attribution::AtomicReason::Library;
  l.kernels.resize(2);
  l.kernels[0].opName = "k\"1";
  l.kernels[0].launches = 2;
  l.kernels[0].totalNs = 1200;
  l.kernels[1].opName = "k\"1";  // same name, launched by the backward pass: a separate entry
  l.kernels[1].launches = 1;
  l.kernels[1].totalNs = 700;
  l.kernels[1].pass = kl::attribution::Pass::Backward;
  l.gpuNs += 700;
  l.ops += 1;
  l.backwardNs = 700;
  r.lines.push_back(l);
  kl::attribution::UnmappedEntry u;
  u.name = "memcpy";
  u.launches = 1;
  u.gpuNs = 5;
  u.reason = kl::attribution::UnmappedReason::OutsideRanges;
  r.unmapped.push_back(u);
  r.notes.push_back({kl::NoteKind::Harness, "", "n1"});
  CHECK(renderJson(r) ==
        "{\"schema\":\"kernlens/"
        "profile@1\",\"converged\":true,\"stop_reason\":\"converged\",\"rounds\":3,\"backend\":\"emulate\","
        "\"emulated\":true,"
        "\"lines\":[{\"file\":\"m.py\",\"line\":4,\"end_line\":5,\"function\":\"f\",\"gpu_ns\":1900,"
        "\"backward_gpu_ns\":700,\"step_kind\":null,\"launches\":3,\"invocations\":0,\"atomic\":true,\"atomic_reason\":"
        "\"library\",\"no_matching_kernel\":false,\"note\":null,\"suggest_focus\":null,\"kernels\":["
        "{\"name\":\"k\\\"1\",\"backward\":false,\"pass\":\"forward\",\"launches\":2,\"gpu_ns\":1200},"
        "{\"name\":\"k\\\"1\",\"backward\":true,\"pass\":\"backward\",\"forward_owner\":true,\"launches\":1,"
        "\"gpu_ns\":700}]}],"
        "\"unmapped\":[{\"name\":\"memcpy\",\"launches\":1,\"gpu_ns\":5,\"reason\":\"outside_kl_ranges\"}],"
        "\"notes\":[\"n1\"],\"round_log\":[]}");
  CHECK(kl::formatDuration(1500000) == "1.50 ms");
  CHECK(kl::formatDuration(730) == "730 ns");
}
