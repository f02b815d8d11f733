#!/usr/bin/env bash
# ctest-labels: realcode slow
# Activation checkpointing on real third-party code: nanoGPT's blocks (tests/data/realcode) run
# under torch.utils.checkpoint (our entry train_ckpt.py), so their forward ops run again during
# backward, on the emulator's `pt_autograd_0` thread as in CUDA PyTorch. kernlens must put the
# recomputed GEMMs on the forward line that runs them, marked `recompute`, and the backward GEMMs
# (of the recomputed nodes) on that line too, marked `backward` (>= 90 % each). Ground truth:
# tests/e2e/backward_truth.py (grad mode on inside backward = recompute, at the innermost workspace
# line on the stack; anomaly-mode tracebacks + node post-hooks for backward; no kernlens code).
source "$(dirname "$0")/planner_run.inc"
R="$KL_SOURCE_DIR/tests/data/realcode"
# Three steps: on PyTorch 2.x nanoGPT takes its scaled_dot_product_attention branch, so attention
# has no GEMMs of its own (8 recompute GEMM launches a step, 18 backward).
planner_run "$R/nanogpt" "$T/out.json" "python3 train_ckpt.py --steps 3" --focus train_ckpt.py::train_step --no-baseline
WS="$T/ws-nanogpt"
(cd "$WS" && $PY "$KL_SOURCE_DIR/tests/e2e/backward_truth.py" "$WS" "$T/truth.json" -- train_ckpt.py --steps 3 > /dev/null 2>&1) \
  || { echo "FAIL: ground truth run failed"; exit 1; }
$PY - "$T/out.json" "$T/truth.json" <<'PY'
import collections, json, sys
doc, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
errors = []
got = {"backward": collections.Counter(), "recompute": collections.Counter()}
for l in doc["lines"]:
    for k in l["kernels"]:
        if k["pass"] in got and "gemm" in k["name"].lower():
            got[k["pass"]]["%s:%d" % (l["file"], l["line"])] += k["launches"]
for pass_, key in (("recompute", "rec"), ("backward", "bwd")):
    want = collections.Counter(truth[key])
    total = sum(want.values())
    hit = sum(min(got[pass_][w], n) for w, n in want.items())
    share = hit / total if total else 0.0
    print("%s GEMM launches: truth %d on %d lines, kernlens %d, on their forward line %d (%.1f %%)"
          % (pass_, total, len(want), sum(got[pass_].values()), hit, 100 * share))
    if total < 20:
        errors.append("truth too small for %s: %r" % (pass_, truth))
    if share < 0.9:
        errors.append("only %.1f %% of %s GEMMs on their line; kernlens %r truth %r"
                      % (100 * share, pass_, dict(got[pass_]), dict(want)))
if truth["unknown_bwd"]:
    errors.append("truth has backward GEMMs of unknown nodes: %r" % truth)
for u in doc["unmapped"]:
    if "gemm" in u["name"].lower():
        errors.append("unmapped GEMM %s (%s)" % (u["name"][:80], u["reason"]))
# The checkpoint call and loss.backward() keep no GEMM: every one is on a model line.
for l in doc["lines"]:
    if l["file"] == "train_ckpt.py" and any("gemm" in k["name"].lower() for k in l["kernels"]):
        errors.append("GEMMs on %s:%d: %r" % (l["file"], l["line"], l["kernels"]))
if errors:
    print("FAIL realcode_checkpoint:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("PASS realcode_checkpoint")
PY
