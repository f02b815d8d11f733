#!/usr/bin/env bash
# ctest-labels: realcode
# Backward attribution on real third-party training code: nanoGPT's model (tests/data/realcode),
# emulated training steps (forward, loss.backward(), clip_grad_norm_, AdamW). The emulator launches
# the backward from its `pt_autograd_0` thread, as CUDA PyTorch does; kernlens must put the
# backward GEMMs on the forward line whose op created their autograd node (>= 90 %). Ground truth:
# tests/e2e/backward_truth.py (anomaly-mode tracebacks + node post-hooks, no kernlens code).
source "$(dirname "$0")/planner_run.inc"
R="$KL_SOURCE_DIR/tests/data/realcode"
planner_run "$R/nanogpt" "$T/out.json" "python3 train_tiny.py --steps 2" --focus train_tiny.py::train_step --no-baseline
WS="$T/ws-nanogpt"
(cd "$WS" && $PY "$KL_SOURCE_DIR/tests/e2e/backward_truth.py" "$WS" "$T/truth.json" -- train_tiny.py --steps 2 > /dev/null 2>&1) \
  || { echo "FAIL: ground truth run failed"; exit 1; }
$PY - "$T/out.json" "$T/truth.json" "$WS/train_tiny.py" <<'PY'
import collections, json, sys
doc, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
src = open(sys.argv[3]).read().splitlines()
errors = []
kl = collections.Counter()
for l in doc["lines"]:
    for k in l["kernels"]:
        if k["backward"] and "gemm" in k["name"].lower():
            kl["%s:%d" % (l["file"], l["line"])] += k["launches"]
    bwd = sum(k["gpu_ns"] for k in l["kernels"] if k["backward"])
    if l["backward_gpu_ns"] != bwd:
        errors.append("%s:%d backward_gpu_ns %d != %d" % (l["file"], l["line"], l["backward_gpu_ns"], bwd))
want = collections.Counter(truth["bwd"])
total = sum(want.values())
hit = sum(min(kl[w], n) for w, n in want.items())
share = hit / total if total else 0.0
print("backward GEMM launches: truth %d on %d lines, kernlens %d, on the creating line %d (%.1f %%)"
      % (total, len(want), sum(kl.values()), hit, 100 * share))
if total < 20 or truth["unknown_bwd"]:
    errors.append("truth too small or has unknown nodes: %r" % truth)
if share < 0.9:
    errors.append("only %.1f %% of backward GEMMs on their forward line; kernlens %r truth %r" % (100 * share, dict(kl), dict(want)))
# Nothing the autograd thread launched is left outside every line.
for u in doc["unmapped"]:
    if "gemm" in u["name"].lower():
        errors.append("unmapped GEMM %s (%s)" % (u["name"][:80], u["reason"]))
# loss.backward() keeps only work with no forward owner (no GEMM); optimizer/clipping stay on their lines.
mine = {l["line"]: l for l in doc["lines"] if l["file"] == "train_tiny.py"}
for n, l in mine.items():
    text = src[n - 1]
    if "loss.backward()" in text and any("gemm" in k["name"].lower() for k in l["kernels"]):
        errors.append("GEMMs left on loss.backward(): %r" % l["kernels"])
    if ("optimizer.step()" in text or "clip_grad_norm_" in text) and any(k["backward"] for k in l["kernels"]):
        errors.append("optimizer kernels marked backward: %r" % l["kernels"])
for what in ("optimizer.step()", "clip_grad_norm_"):
    if not any(what in src[n - 1] for n in mine):
        errors.append("no kernels on %s" % what)
if errors:
    print("FAIL realcode_backward:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("PASS realcode_backward")
PY
