#!/usr/bin/env bash
# The other focus modes and the line strategy, end to end (emulate backend):
#  - --strategy lines on mlp (focus train_step): ONE round, the forward lines of MLP.forward (traced
#    because statically reachable) carry their GEMMs, forward and backward (linked from the
#    autograd thread), the loss/step lines theirs, loss.backward() no GEMM;
#  - --kernel REGEX on the dispatch sample: only ranges launching cunn_SoftMaxForward are refined and
#    the kernel ends on dispatch.py:23;
#  - --lines on the transformer's train.py train_step body (lines 13-16).
source "$(dirname "$0")/planner_run.inc"
planner_run mlp "$T/lines.json" "python3 mlp.py --steps 2" --focus mlp.py::train_step --strategy lines --no-baseline
$PY - "$T/lines.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["converged"] and d["rounds"] == 1 and d["emulated"], d
at = {(l["file"], l["line"]): [("bwd:" if k["backward"] else "") + k["name"] for k in l["kernels"]] for l in d["lines"]}
def has(line, rx):
    assert any(re.search(rx, k) for k in at.get(("mlp.py", line), [])), ("mlp.py:%d lacks /%s/: %s" % (line, rx, at))
has(20, "gemm_.*_tn_"); has(21, "Gelu"); has(22, "gemm_.*_tn_"); has(28, "nll_loss_forward")
has(20, "^bwd:.*gemm_.*_nt_"); has(22, "^bwd:.*gemm_.*_nn_"); has(30, "multi_tensor_apply_kernel")
assert not any("gemm" in k for k in at.get(("mlp.py", 29), [])), "backward GEMMs left on loss.backward(): %s" % at
assert ("mlp.py", 27) not in at, "model(x) must own nothing: its kernels are in MLP.forward's lines"
print("ok: line strategy, %d lines in one round" % len(at))
PY
planner_run dispatch "$T/kernel.json" "python3 dispatch.py --steps 2" --kernel cunn_SoftMaxForward --no-baseline
$PY - "$T/kernel.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["converged"], d["stop_reason"]
where = [(l["file"], l["line"]) for l in d["lines"] for k in l["kernels"] if "cunn_SoftMaxForward" in k["name"]]
assert where == [("dispatch.py", 23)], where
print("ok: --kernel pinned cunn_SoftMaxForward to dispatch.py:23 in %d rounds" % d["rounds"])
PY
planner_run transformer "$T/region.json" "python3 train.py --steps 2" --lines train.py:13-16 --no-baseline
$PY - "$T/region.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["converged"], d["stop_reason"]
lines = {(l["file"], l["line"]) for l in d["lines"]}
for want in [("train.py", 15), ("train.py", 16), ("tinyformer/norm.py", 12), ("tinyformer/attention.py", 24)]:
    assert want in lines, (want, sorted(lines))
print("ok: --lines region refined into %d lines" % len(lines))
PY
