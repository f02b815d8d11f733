#!/usr/bin/env bash
# ctest-labels: realcode
# The steps of a training step around the model, on real third-party code: nanoGPT's model
# (tests/data/realcode) trained by our entry with AdamW's multi-tensor (foreach) implementation and
# clip_grad_norm_ (foreach too in PyTorch 2.x). Their kernels stay on the lines that call them, labelled by kind
# (step_kind / pass "optimizer", "grad-clip"), never marked backward; the optimizer's
# and clip_grad_norm_'s multi_tensor_apply_kernel launches equal an independent count (tests/e2e/foreach_truth.py:
# the run's _foreach_* ops under a TorchDispatchMode and ATen's chunking rule); loss.backward()
# keeps only backward work of no forward op (and the gradient seed).
source "$(dirname "$0")/planner_run.inc"
R="$KL_SOURCE_DIR/tests/data/realcode"
planner_run "$R/nanogpt" "$T/out.json" "python3 train_tiny.py --steps 2 --foreach" --focus train_tiny.py::train_step --no-baseline
WS="$T/ws-nanogpt"
(cd "$WS" && $PY "$KL_SOURCE_DIR/tests/e2e/foreach_truth.py" "$WS" "$T/truth.json" -- train_tiny.py --steps 2 --foreach > /dev/null 2>&1) \
  || { echo "FAIL: ground truth run failed"; exit 1; }
$PY - "$T/out.json" "$T/truth.json" "$WS/train_tiny.py" <<'PY'
import json, sys
doc, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
src = open(sys.argv[3]).read().splitlines()
errors = []
mine = {l["line"]: l for l in doc["lines"] if l["file"] == "train_tiny.py"}
def line_of(text):
    hits = [n for n in mine if text in src[n - 1]]
    if len(hits) != 1:
        errors.append("%r: expected one mapped line, got %r" % (text, hits))
        return None
    return mine[hits[0]]
STEP_KINDS = {"optimizer", "zero_grad", "grad-clip", "amp-scaler"}
for text, kind in (("optimizer.step()", "optimizer"), ("clip_grad_norm_", "grad-clip")):
    l = line_of(text)
    if l is None:
        continue
    if l["step_kind"] != kind:
        errors.append("%s: step_kind %r, want %r" % (text, l["step_kind"], kind))
    bad = [k for k in l["kernels"] if k["pass"] != kind or k["backward"]]
    if bad:
        errors.append("%s: kernels not labelled %s: %r" % (text, kind, bad))
# PyTorch >= 2.0 runs clip_grad_norm_ through foreach ops as well (_foreach_norm, _foreach_mul_;
# torch/nn/utils/clip_grad.py, on CUDA and CPU alike), so the truth holds exactly the lines of
# optimizer.step() and clip_grad_norm_, and each line's launches must equal it.
keys = set()
for text in ("optimizer.step()", "clip_grad_norm_"):
    l = line_of(text)
    if l is None:
        continue
    key = "train_tiny.py:%d" % l["line"]
    keys.add(key)
    mta = sum(k["launches"] for k in l["kernels"] if k["name"].startswith("void at::native::(anonymous namespace)::multi_tensor_apply_kernel"))
    print("%s: %d multi_tensor_apply_kernel launches, truth %d" % (text, mta, truth.get(key, 0)))
    if mta != truth.get(key) or not mta:
        errors.append("%s: multi_tensor_apply_kernel launches %d != truth %r" % (text, mta, truth))
if set(truth) != keys:
    errors.append("foreach ops outside optimizer.step() and clip_grad_norm_: %r" % truth)
bwd = line_of("loss.backward()")
if bwd is not None:
    # The gradient seed (ones_like, made by backward() on the calling thread) is forward work.
    bad = [k for k in bwd["kernels"] if (not k["backward"] and "FillFunctor" not in k["name"])
           or (k["backward"] and k["forward_owner"])]
    if bad or bwd["step_kind"] is not None:
        errors.append("loss.backward() keeps more than backward work of no forward op: %r" % bwd)
for l in doc["lines"]:
    stray = [k for k in l["kernels"] if k["pass"] in STEP_KINDS]
    if stray and not (l["file"] == "train_tiny.py" and l["step_kind"]):
        errors.append("step-kind kernels on %s:%d: %r" % (l["file"], l["line"], stray))
if errors:
    print("FAIL realcode_optimizer:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("PASS realcode_optimizer")
PY
