// The backward -> forward link on hand-built nsys exports (reference schema): emit_nvtx ranges
// ("name, seq = N" / "stashed seq = N") on the thread that ran the forward and on the autograd
// device thread that ran the backward. Expected owners are stated by construction.
#include <doctest/doctest.h>

#include <string>

#include "core/attribution/attribution.h"
#include "core/profile/reader.h"
#include "tests/unit/attribution/nsys_fixture.h"

using namespace kl::profile;
using namespace kl::attribution;
using kl::test::gpid;
using kl::test::gtid;
using kl::test::NsysFixture;
using kl::test::opNamed;
using kl::test::readFixture;
using kl::test::TempDir;

namespace {

constexpr int64_t T0 = 200'000'000'000;

std::string innermostKl(const ProfileModel& m, const Attribution& a, uint32_t op) {
  auto st = a.stack(op);
  for (size_t k = st.size(); k-- > 0;) {
    std::string t(m.str(m.ranges[st[k]].text));
    if (t.rfind("kl:", 0) == 0) return t;
  }
  return "<none>";
}

/// One launch + kernel with a fresh correlation id.
struct Launcher {
  NsysFixture& f;
  int64_t pid;
  int64_t corr = 0;
  void operator()(int64_t tid, int64_t at, const std::string& kernel) {
    ++corr;
    f.runtime(T0 + at, T0 + at + 5, tid, corr, "cudaLaunchKernel_v7000");
    f.kernel(T0 + 100'000 + corr * 100, T0 + 100'000 + corr * 100 + 50, gpid(static_cast<uint32_t>(pid)), corr, kernel);
  }
};

}  // namespace

TEST_CASE("autograd link: emit_nvtx texts") {
  auto t = parseSeqTag("aten::mm, seq = 42");
  REQUIRE(t);
  CHECK(t->seq == 42);
  CHECK_FALSE(t->backwardNode);
  t = parseSeqTag("MmBackward0, seq = 42, op_id = 7, sizes = [[2, 3], [3, 4]]");
  REQUIRE(t);
  CHECK(t->seq == 42);
  CHECK(t->backwardNode);
  t = parseSeqTag("MmBackward, stashed seq = 9");
  REQUIRE(t);
  CHECK(t->seq == 9);
  CHECK(t->backwardNode);
  t = parseSeqTag("MyFunction, seq=3");  // custom Function's forward (apply) range
  REQUIRE(t);
  CHECK_FALSE(t->backwardNode);
  CHECK(parseSeqTag("torch::autograd::CopySlices, seq = 5")->backwardNode);
  CHECK_FALSE(parseSeqTag("aten::mm"));
  CHECK_FALSE(parseSeqTag("torch::autograd::AccumulateGrad"));
  CHECK_FALSE(parseSeqTag("kl:model.py:3-3:x, seq = 1, or so"));
  CHECK_FALSE(parseSeqTag("aten::mm, seq = -1"));
  CHECK(std::string(passName(Pass::Recompute)) == "recompute");
}

TEST_CASE("autograd link: backward kernels on the autograd thread go to the forward line that created their node") {
  TempDir dir;
  NsysFixture f(dir / "bwd.sqlite");
  const uint32_t pid = 5000;
  auto main = gtid(pid, 5000), autograd = gtid(pid, 5007);
  Launcher launch{f, pid};
  // Forward on the main thread: two lines, each one op creating one node.
  f.range(0 + T0, 10'000 + T0, main, "kl:train.py:1-9:step");
  f.range(100 + T0, 1000 + T0, main, "kl:train.py:3-3:h = x @ w1");
  f.range(200 + T0, 900 + T0, main, "aten::mm, seq = 10");
  launch(main, 300, "fwd_gemm1");
  f.range(1100 + T0, 2000 + T0, main, "kl:train.py:4-4:y = h @ w2");
  f.range(1150 + T0, 1250 + T0, main, "aten::t, seq = 11");   // peeked 11, created no node
  f.range(1200 + T0, 1900 + T0, main, "aten::mm, seq = 11");  // created node 11 (latest start)
  launch(main, 1300, "fwd_gemm2");
  // loss.backward(): the main thread blocks; the engine runs nodes on the autograd thread.
  f.range(3000 + T0, 9000 + T0, main, "kl:train.py:6-6:loss.backward()");
  f.range(3100 + T0, 4000 + T0, autograd, "MmBackward0, seq = 11");
  f.range(3200 + T0, 3900 + T0, autograd, "aten::mm");
  launch(autograd, 3300, "bwd_gemm2");
  f.range(4100 + T0, 5000 + T0, autograd, "MmBackward0, stashed seq = 10");  // old wording
  launch(autograd, 4300, "bwd_gemm1");
  f.range(5100 + T0, 5500 + T0, autograd, "torch::autograd::AccumulateGrad");
  launch(autograd, 5200, "accumulate");
  // A kernel on the autograd thread outside any node and with no linked neighbour stays unmapped
  // only if nothing on the thread was linked; here it goes to the blocked caller too.
  f.range(5600 + T0, 5900 + T0, autograd, "FooBackward0, seq = 999");  // no forward op with 999
  launch(autograd, 5700, "orphan_node");
  auto m = readFixture(f);

  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(innermostKl(m, *a, opNamed(m, "fwd_gemm1")) == "kl:train.py:3-3:h = x @ w1");
  CHECK(a->op(opNamed(m, "fwd_gemm1")).pass == Pass::Forward);
  CHECK(innermostKl(m, *a, opNamed(m, "bwd_gemm2")) == "kl:train.py:4-4:y = h @ w2");
  CHECK(a->op(opNamed(m, "bwd_gemm2")).pass == Pass::Backward);
  CHECK(m.str(m.ranges[a->op(opNamed(m, "bwd_gemm2")).forwardOp].text) == "aten::mm, seq = 11");
  CHECK(innermostKl(m, *a, opNamed(m, "bwd_gemm1")) == "kl:train.py:3-3:h = x @ w1");
  // No forward owner: the line blocked in backward().
  CHECK(innermostKl(m, *a, opNamed(m, "accumulate")) == "kl:train.py:6-6:loss.backward()");
  CHECK(a->op(opNamed(m, "accumulate")).pass == Pass::Backward);
  CHECK(a->op(opNamed(m, "accumulate")).forwardOp == kNone);
  CHECK(innermostKl(m, *a, opNamed(m, "orphan_node")) == "kl:train.py:6-6:loss.backward()");
  CHECK(a->outsideRangesCount() == 0);

  // Inclusive statistics follow: the forward line's range owns its backward kernel too.
  uint32_t line4 = kNone;
  for (uint32_t r = 0; r < m.ranges.size(); ++r)
    if (m.str(m.ranges[r].text) == "kl:train.py:4-4:y = h @ w2") line4 = r;
  REQUIRE(line4 != kNone);
  CHECK(a->ranges()[line4].ops == 2);
  CHECK(a->ranges()[line4].launches == 2);

  // Without the link (rule 2 alone) every backward kernel is outside the ranges.
  Options off;
  off.linkBackward = false;
  off.namePrefix = "kl:";
  auto b = attribute(m, off);
  REQUIRE(b.ok());
  CHECK(b->outsideRangesCount() == 4);
}

TEST_CASE("autograd link: backward on the calling thread (CPU PyTorch) and activation recompute") {
  TempDir dir;
  NsysFixture f(dir / "cpu.sqlite");
  const uint32_t pid = 6000;
  auto main = gtid(pid, 6000), autograd = gtid(pid, 6001);
  Launcher launch{f, pid};
  f.range(T0 + 100, T0 + 1000, main, "kl:m.py:2-2:a = lin(x)");
  f.range(T0 + 200, T0 + 900, main, "aten::addmm, seq = 3");
  launch(main, 300, "fwd_addmm");
  f.range(T0 + 1100, T0 + 2000, main, "kl:m.py:3-3:b = checkpoint(blk, a)");
  f.range(T0 + 1200, T0 + 1900, main, "CheckpointFunction, seq = 4");
  f.range(T0 + 1300, T0 + 1800, main, "aten::relu");  // no grad inside the checkpointed forward
  launch(main, 1400, "fwd_relu");
  // Backward on the calling thread inside the loss.backward() line.
  f.range(T0 + 3000, T0 + 9000, main, "kl:m.py:5-5:loss.backward()");
  f.range(T0 + 3100, T0 + 3500, main, "AddmmBackward0, seq = 3");
  launch(main, 3200, "bwd_addmm");
  // Reentrant checkpoint on the autograd thread: the node re-runs the forward with grad on
  // (ops get the autograd thread's own sequence numbers) and then runs their backward nodes.
  f.range(T0 + 4000, T0 + 8000, autograd, "CheckpointFunctionBackward, seq = 4");
  f.range(T0 + 4100, T0 + 4500, autograd, "aten::relu, seq = 1");
  launch(autograd, 4200, "recompute_relu");
  f.range(T0 + 5000, T0 + 5500, autograd, "ReluBackward0, seq = 1");
  launch(autograd, 5100, "bwd_relu");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(innermostKl(m, *a, opNamed(m, "bwd_addmm")) == "kl:m.py:2-2:a = lin(x)");
  CHECK(a->op(opNamed(m, "bwd_addmm")).pass == Pass::Backward);
  CHECK(innermostKl(m, *a, opNamed(m, "recompute_relu")) == "kl:m.py:3-3:b = checkpoint(blk, a)");
  CHECK(a->op(opNamed(m, "recompute_relu")).pass == Pass::Recompute);
  // The recomputed op's node links back through the checkpoint node to the checkpoint line.
  CHECK(innermostKl(m, *a, opNamed(m, "bwd_relu")) == "kl:m.py:3-3:b = checkpoint(blk, a)");
  CHECK(a->op(opNamed(m, "bwd_relu")).pass == Pass::Backward);
  CHECK(a->op(opNamed(m, "fwd_relu")).pass == Pass::Forward);
}

TEST_CASE("autograd link: a checkpointed forward re-run with its own line ranges keeps its lines") {
  // As CUDA PyTorch runs a reentrant checkpoint: the re-run forward (blk's code, instrumented)
  // pushes its kl: ranges on the autograd thread inside CheckpointFunctionBackward.
  TempDir dir;
  NsysFixture f(dir / "ckpt.sqlite");
  const uint32_t pid = 6100;
  auto main = gtid(pid, 6100), autograd = gtid(pid, 6101);
  Launcher launch{f, pid};
  f.range(T0 + 1000, T0 + 2000, main, "kl:m.py:3-3:b = checkpoint(blk, a)");
  f.range(T0 + 1100, T0 + 1900, main, "CheckpointFunction, seq = 4");
  f.range(T0 + 1200, T0 + 1800, main, "kl:blk.py:7-7:h = lin(a)");
  launch(main, 1300, "fwd_addmm");
  f.range(T0 + 3000, T0 + 9000, main, "kl:m.py:5-5:loss.backward()");
  f.range(T0 + 4000, T0 + 8000, autograd, "CheckpointFunctionBackward, seq = 4");
  f.range(T0 + 4050, T0 + 4600, autograd, "kl:blk.py:7-7:h = lin(a)");
  f.range(T0 + 4100, T0 + 4500, autograd, "aten::addmm, seq = 1");
  launch(autograd, 4200, "recompute_addmm");
  f.range(T0 + 5000, T0 + 5500, autograd, "AddmmBackward0, seq = 1");
  launch(autograd, 5100, "bwd_addmm");
  f.range(T0 + 6000, T0 + 6500, autograd, "aten::mul, seq = 2");  // a checkpoint's own op: no line range
  launch(autograd, 6100, "recompute_unlined");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(innermostKl(m, *a, opNamed(m, "fwd_addmm")) == "kl:blk.py:7-7:h = lin(a)");
  CHECK(innermostKl(m, *a, opNamed(m, "recompute_addmm")) == "kl:blk.py:7-7:h = lin(a)");
  CHECK(a->op(opNamed(m, "recompute_addmm")).pass == Pass::Recompute);
  CHECK(innermostKl(m, *a, opNamed(m, "bwd_addmm")) == "kl:blk.py:7-7:h = lin(a)");
  CHECK(a->op(opNamed(m, "bwd_addmm")).pass == Pass::Backward);
  // No line range open around it inside the node: through the checkpoint node to its call line.
  CHECK(innermostKl(m, *a, opNamed(m, "recompute_unlined")) == "kl:m.py:3-3:b = checkpoint(blk, a)");
  CHECK(a->op(opNamed(m, "recompute_unlined")).pass == Pass::Recompute);
}

TEST_CASE("training-step scopes label the kernels launched inside them") {
  CHECK(stepKindOf("Optimizer.step#AdamW.step") == Pass::Optimizer);
  CHECK(stepKindOf("Optimizer.zero_grad#SGD.zero_grad") == Pass::ZeroGrad);
  CHECK(stepKindOf("torch.nn.utils.clip_grad_norm_") == Pass::GradClip);
  CHECK(stepKindOf("torch.nn.utils.clip_grad_value_") == Pass::GradClip);
  CHECK(stepKindOf("GradScaler.unscale_") == Pass::AmpScaler);
  CHECK_FALSE(stepKindOf("kl:m.py:3-3:opt.step()"));
  CHECK_FALSE(stepKindOf("aten::add_"));
  CHECK(std::string(passName(Pass::GradClip)) == "grad-clip");
  CHECK(std::string(passName(Pass::AmpScaler)) == "amp-scaler");
  CHECK_FALSE(isBackwardPass(Pass::Optimizer));
  CHECK(isStepPass(Pass::ZeroGrad));

  TempDir dir;
  NsysFixture f(dir / "steps.sqlite");
  const uint32_t pid = 6200;
  auto main = gtid(pid, 6200), autograd = gtid(pid, 6201);
  Launcher launch{f, pid};
  f.range(T0 + 100, T0 + 900, main, "kl:t.py:4-4:loss = model(x)");
  launch(main, 200, "fwd");
  f.range(T0 + 1000, T0 + 1900, main, "kl:t.py:5-5:scaler.scale(loss).backward()");
  f.range(T0 + 1100, T0 + 1300, main, "GradScaler.scale");
  launch(main, 1200, "scale_mul");
  f.range(T0 + 1500, T0 + 1800, autograd, "MulBackward0, seq = 9");  // no forward op: engine work
  launch(autograd, 1600, "bwd_mul");
  f.range(T0 + 2000, T0 + 2900, main, "kl:t.py:6-6:clip_grad_norm_(p, 1.0)");
  f.range(T0 + 2100, T0 + 2800, main, "torch.nn.utils.clip_grad_norm_");
  launch(main, 2200, "norm");
  f.range(T0 + 3000, T0 + 3900, main, "kl:t.py:7-7:scaler.step(opt)");
  f.range(T0 + 3050, T0 + 3850, main, "GradScaler.step");
  f.range(T0 + 3100, T0 + 3300, main, "GradScaler.unscale_");
  launch(main, 3200, "unscale");
  f.range(T0 + 3400, T0 + 3800, main, "Optimizer.step#AdamW.step");
  launch(main, 3500, "adam");
  f.range(T0 + 4000, T0 + 4900, main, "kl:t.py:8-8:opt.zero_grad()");
  f.range(T0 + 4100, T0 + 4800, main, "Optimizer.zero_grad#AdamW.zero_grad");
  launch(main, 4200, "zero");
  auto m = readFixture(f);
  auto a = attribute(m);
  REQUIRE(a.ok());
  CHECK(a->op(opNamed(m, "fwd")).pass == Pass::Forward);
  CHECK(a->op(opNamed(m, "scale_mul")).pass == Pass::AmpScaler);
  CHECK(a->op(opNamed(m, "bwd_mul")).pass == Pass::Backward);
  CHECK(a->op(opNamed(m, "norm")).pass == Pass::GradClip);
  CHECK(a->op(opNamed(m, "unscale")).pass == Pass::AmpScaler);
  CHECK(a->op(opNamed(m, "adam")).pass == Pass::Optimizer);  // innermost scope wins
  CHECK(a->op(opNamed(m, "zero")).pass == Pass::ZeroGrad);
  // Each stays on the line that called it.
  CHECK(innermostKl(m, *a, opNamed(m, "adam")) == "kl:t.py:7-7:scaler.step(opt)");
  CHECK(innermostKl(m, *a, opNamed(m, "norm")) == "kl:t.py:6-6:clip_grad_norm_(p, 1.0)");
  CHECK(innermostKl(m, *a, opNamed(m, "zero")) == "kl:t.py:8-8:opt.zero_grad()");
}

TEST_CASE("autograd link: ranges of one clock tick and rows in any order give one answer") {
  // The engine's "evaluate_function" wrapper and the node it runs, pushed within one clock tick
  // (same start, same end), written in either row order: the numbered node is the inner one, so
  // the backward kernel reaches its forward line; the same rows in the other order, the same.
  for (bool wrapperFirst : {true, false}) {
    CAPTURE(wrapperFirst);
    TempDir dir;
    NsysFixture f(dir / "tick.sqlite");
    const uint32_t pid = 5000;
    auto main = gtid(pid, 5000), autograd = gtid(pid, 5007);
    Launcher launch{f, pid};
    f.range(0 + T0, 10'000 + T0, main, "kl:train.py:1-9:step");
    f.range(100 + T0, 1000 + T0, main, "kl:train.py:3-3:h = x @ w1");
    f.range(200 + T0, 900 + T0, main, "aten::mm, seq = 10");
    launch(main, 300, "fwd_gemm");
    f.range(3000 + T0, 9000 + T0, main, "kl:train.py:6-6:loss.backward()");
    if (wrapperFirst) f.range(3100 + T0, 4000 + T0, autograd, "autograd::engine::evaluate_function: MmBackward0");
    f.range(3100 + T0, 4000 + T0, autograd, "MmBackward0, seq = 10");
    if (!wrapperFirst) f.range(3100 + T0, 4000 + T0, autograd, "autograd::engine::evaluate_function: MmBackward0");
    launch(autograd, 3300, "bwd_gemm");
    auto m = readFixture(f);
    auto a = attribute(m);
    REQUIRE(a.ok());
    CHECK(innermostKl(m, *a, opNamed(m, "bwd_gemm")) == "kl:train.py:3-3:h = x @ w1");
    CHECK(a->op(opNamed(m, "bwd_gemm")).pass == Pass::Backward);
  }
}
