// The loop on a SCRIPTED round executor (no Python run): the executor instruments the plan's files
// like the runner (nvtx::instrumentFile, so range names are real), then "runs" a fixed launch script
// — each launch with the source stack that issued it — and builds the profile from the ranges that
// contain those stack frames. The discovery pass returns a hand-written call-discovery file.
#include <fstream>
#include <map>

#include "core/nvtx/overlay.h"
#include "core/planner/loop.h"
#include "doctest/doctest.h"
#include "tests/support/test_support.h"

using namespace kl;
using namespace kl::planner;

namespace {

const char* kNet =
    "import torch.nn as nn\n"                                                      // 1
    "class Block(nn.Module):\n"                                                    // 2
    "    def forward(self, x):\n"                                                  // 3
    "        x = x + 1\n"                                                          // 4
    "        return self.f(x) * 2\n"                                               // 5
    "class Net(nn.Module):\n"                                                      // 6
    "    def __init__(self):\n"                                                    // 7
    "        super().__init__()\n"                                                 // 8
    "        self.t = nn.ModuleDict(dict(h=nn.ModuleList([Block() for _ in range(2)])))\n"  // 9
    "    def forward(self, x):\n"                                                  // 10
    "        x = x * 3\n"                                                          // 11
    "        for b in self.t.h:\n"                                                 // 12
    "            x = b(x)\n"                                                       // 13
    "        return x.sum()\n";                                                    // 14

struct Frame {
  uint32_t line;   // 1-based, net.py
  int call;        // function invocation id
  int stmt;        // statement invocation id (a loop body line runs once per iteration)
};
struct Launch {
  std::vector<Frame> stack;  // outermost first
  std::string kernel;
};

/// One Net.forward call with two blocks.
std::vector<Launch> script() {
  std::vector<Launch> s;
  s.push_back({{{11, 0, 0}}, "mul3"});
  for (int i = 0; i < 2; ++i) {
    Frame call13{13, 0, 1 + i};
    s.push_back({{call13, {12, 0, 100}, {4, 10 + i, 20 + i}}, "add"});
    s.push_back({{call13, {12, 0, 100}, {5, 10 + i, 30 + i}}, "gemm"});
    s.push_back({{call13, {12, 0, 100}, {5, 10 + i, 30 + i}}, "mul2"});
  }
  s.push_back({{{14, 0, 2}}, "sum"});
  return s;
}

class ScriptedExecutor : public RoundExecutor {
 public:
  ScriptedExecutor(std::filesystem::path ws, std::string calls) : ws_(std::move(ws)), calls_(std::move(calls)) {}
  int runs = 0;
  Result<RoundOutcome> run(const RoundRequest& req, const CancellationToken& cancel) override {
    if (cancel.isCancelled()) return Error::cancelled();
    ++runs;
    RoundOutcome out;
    auto model = std::make_shared<profile::ProfileModel>();
    model->processes.push_back(profile::Process{profile::GlobalId::make(0, 1, 100, 0), 100, 0, 0});
    model->threads.push_back(profile::Thread{profile::GlobalId::make(0, 1, 100, 100), 100, 0, 0});
    if (req.discoverCalls) {
      out.callsFile = ws_ / "calls.tsv";
      std::ofstream(out.callsFile) << calls_;
    }
    for (const auto& fp : req.files) {
      std::ifstream in(ws_ / fp.relPath);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      auto of = nvtx::instrumentFile(fp.relPath, text, fp.ranges);
      REQUIRE(of.ok());
      out.overlay.files.emplace(fp.relPath, std::move(*of));
    }
    // Ranges: per placed range, the invocations that contain launches (a range contains a frame
    // when the frame's line is inside it; a body range is one invocation per call, a statement
    // range one per statement run).
    auto sc = script();
    std::map<std::pair<std::string, int>, std::pair<int64_t, int64_t>> inv;  // (name, id) -> span
    std::map<std::pair<std::string, int>, int64_t> depth;
    for (size_t i = 0; i < sc.size(); ++i) {
      int64_t t = 1000 + 100 * static_cast<int64_t>(i);
      for (const auto& [path, of] : out.overlay.files)
        for (const auto& r : of.ranges)
          for (size_t d = 0; d < sc[i].stack.size(); ++d) {
            const Frame& f = sc[i].stack[d];
            if (f.line < r.original.first + 1 || f.line > r.original.last + 1) continue;
            bool body = r.kind == nvtx::RangeRequest::Kind::FunctionBody;
            std::pair<std::string, int> key{r.name, body ? f.call : f.stmt};
            auto& span = inv.try_emplace(key, t, t).first->second;
            span.second = t;
            // Outer frames open earlier and close later; a body encloses its statements.
            depth[key] = static_cast<int64_t>(d) * 4 + (body ? 0 : 2);
            break;
          }
      profile::ApiCall c;
      c.start = t;
      c.end = t + 1;
      c.correlationId = static_cast<int64_t>(i) + 1;
      c.name = model->strings.intern("cudaLaunchKernel_v7000");
      c.thread = 0;
      c.role = profile::ApiRole::Launch;
      model->apiCalls.push_back(c);
      profile::GpuOp op;
      op.start = t + 10;
      op.end = t + 20;
      op.correlationId = c.correlationId;
      op.name = model->strings.intern(sc[i].kernel);
      op.process = 0;
      model->gpuOps.push_back(op);
    }
    for (const auto& [key, span] : inv) {
      profile::Range r;
      int64_t margin = 40 - depth[key];
      r.start = span.first - margin;
      r.end = span.second + margin;
      r.text = model->strings.intern(key.first);
      r.thread = 0;
      model->ranges.push_back(r);
    }
    std::stable_sort(model->ranges.begin(), model->ranges.end(),
                     [](const auto& a, const auto& b) { return a.start < b.start || (a.start == b.start && a.end > b.end); });
    out.model = model;
    out.emulated = true;
    return out;
  }
  Result<void> record(const RoundRequest&, const attribution::RangeTable&, const CancellationToken&) override {
    return {};
  }
  std::string backendName() const override { return "scripted"; }
  std::filesystem::path runDir() const override { return ws_; }

 private:
  std::filesystem::path ws_;
  std::string calls_;
};

const char* kCalls =
    "kernlens-calls\t1\n"
    "code\t0\tnet.py\t10\tNet.forward\t1\n"
    "code\t1\tnet.py\t3\tBlock.forward\t2\n"
    "line\t0\t11\t1\nline\t0\t12\t3\nline\t0\t13\t2\nline\t0\t14\t1\nline\t1\t4\t2\nline\t1\t5\t2\n"
    "edge\t0\t13\t1\t2\n";

struct Run {
  LoopResult res;
  int executorRuns = 0;
};

Run runOn(bool discover, const CancellationToken& cancel = {}, const char* calls = kCalls, uint64_t eagerPushes = 100000) {
  test::TempDir dir;
  std::ofstream(dir / "net.py") << kNet;
  LoopConfig cfg;
  cfg.workspace = dir.path();
  cfg.entry = "python3 main.py";
  cfg.focus.kind = FocusKind::Function;
  cfg.focus.path = "net.py";
  cfg.focus.qualName = "Net.forward";
  cfg.measureBaseline = false;
  cfg.discoverCalls = discover;
  cfg.policy.maxEagerPushes = eagerPushes;
  auto exec = std::make_shared<ScriptedExecutor>(dir.path(), calls);
  auto r = runLoop(cfg, [&](const std::string&) -> Result<std::shared_ptr<RoundExecutor>> {
    return std::shared_ptr<RoundExecutor>(exec);
  }, {}, cancel);
  REQUIRE(r.ok());
  return Run{*r, exec->runs};
}

const LineResult* at(const LoopResult& r, uint32_t line) {
  for (const auto& l : r.lines)
    if (l.file == "net.py" && l.line == line) return &l;
  return nullptr;
}

}  // namespace

TEST_CASE("observed callees: a ModuleDict(ModuleList) call line is followed in one round") {
  Run run = runOn(true);
  const LoopResult& r = run.res;
  CHECK(r.converged);
  CHECK(r.rounds == 1);              // the observed tree was placed ahead: nothing left to refine
  CHECK(run.executorRuns == 2);      // the discovery pass + one instrumented round
  REQUIRE(at(r, 11));
  CHECK(at(r, 11)->launches == 1);
  REQUIRE(at(r, 4));                 // Block.forward's lines carry their own kernels
  CHECK(at(r, 4)->launches == 2);
  CHECK_FALSE(at(r, 4)->atomic);
  REQUIRE(at(r, 5));
  CHECK(at(r, 5)->atomic);
  CHECK(at(r, 5)->atomicReason == "library");
  CHECK(at(r, 13) == nullptr);       // x = b(x) keeps nothing of its own
  REQUIRE(at(r, 14));
}

TEST_CASE("without discovery the container call stays atomic; cancel before the first run") {
  Run run = runOn(false);
  const LoopResult& r = run.res;
  CHECK(r.converged);
  CHECK(r.rounds >= 2);
  const LineResult* l13 = at(r, 13);
  REQUIRE(l13);
  CHECK(l13->atomic);
  CHECK(l13->launches == 6);
  CHECK(at(r, 4) == nullptr);

  CancellationSource src;
  src.cancel();
  Run c = runOn(true, src.token());
  CHECK(c.res.stopReason == StopReason::Cancelled);
  CHECK(c.executorRuns == 0);
}

TEST_CASE("atomic reasons: a lambda beneath the line is unfollowed; no eager budget still converges") {
  std::string calls = std::string(kCalls) +
                      "code\t2\tnet.py\t9\tNet.__init__.<locals>.<lambda>\t2\n"
                      "edge\t1\t5\t2\t2\n";
  Run run = runOn(true, {}, calls.c_str());
  const LineResult* l5 = at(run.res, 5);
  REQUIRE(l5);
  CHECK(l5->atomic);
  CHECK(l5->atomicReason == "unfollowed");
  CHECK(l5->note.find("<lambda>") != std::string::npos);
  CHECK(l5->note.find("net.py:9") != std::string::npos);

  // Nothing placed ahead: the observed callees are followed round by round instead.
  Run slow = runOn(true, {}, kCalls, 0);
  CHECK(slow.res.converged);
  CHECK(slow.res.rounds > 1);
  REQUIRE(at(slow.res, 4));
  CHECK(at(slow.res, 4)->launches == 2);
  REQUIRE(at(slow.res, 5));
  CHECK(at(slow.res, 5)->atomicReason == "library");
}
