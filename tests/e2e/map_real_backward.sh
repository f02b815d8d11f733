#!/usr/bin/env bash
# kernlens map on real training traces recorded by others (tests/data/real, see README.md there):
# backward kernels go to the forward function (Python stacks) or forward ATen op (no stacks) that
# created their autograd node. Checked against an independent count of the trace's own records
# (kineto_backward_truth.py: json module, fwdbwd flows and sequence numbers), exact per owner.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
R="$KL_SOURCE_DIR/tests/data/real"
TRUTH="$KL_SOURCE_DIR/tests/e2e/kineto_backward_truth.py"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Stand-in workspace files at the paths the MI300X trace's frames name (only their line count
# matters: the trace records each frame's first line).
mkdir -p "$T/ws/torchvision/models"
python3 -c "print('\n'.join('x%d = %d' % (i, i) for i in range(400)))" > "$T/ws/torchvision/models/resnet.py"
cp "$T/ws/torchvision/models/resnet.py" "$T/ws/train_ddp.py"

compare() {  # compare KERNLENS_JSON TRUTH_JSON MODE
  python3 - "$1" "$2" "$3" <<'PY'
import collections, json, sys
j, truth, mode = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3]
got = collections.defaultdict(lambda: collections.Counter())
if mode == "lines":
    assert j["source"] == "python-stacks", j["source"]
    for l in j["lines"]:
        bwd = sum(k["gpu_ns"] for k in l["kernels"] if k["backward"])
        assert l["backward_gpu_ns"] == bwd, (l["line"], l["backward_gpu_ns"], bwd)
        for k in l["kernels"]:
            assert k["backward"] == (k["pass"] in ("backward", "recompute")), k
            p = k["pass"] if k["forward_owner"] else "unowned"
            got[p]["%s:%d" % (l["file"], l["line"])] += k["launches"]
    truth["unowned"] = {}  # checked below: on the line that called backward()
    unowned = sum(got["unowned"].values())
    got["unowned"].clear()
else:
    assert j["source"] == "forward-ops", j["source"]
    for o in j["ops"]:
        assert o["backward_launches"] == sum(k["launches"] for k in o["kernels"] if k["backward"]), o["op"]
        for k in o["kernels"]:
            got[k["pass"] if o["forward_owner"] else "unowned"][o["op"] if o["forward_owner"] else "-"] += k["launches"]
for p in sorted(set(truth) | set(got) | {"forward", "backward"}):
    if p == "no_launch":
        continue
    want = {k: v for k, v in truth.get(p, {}).items() if k != "-" or p == "unowned"}
    have = dict(got.get(p, {}))
    assert have == want, (p, sorted(set(have.items()) ^ set(want.items())))
bwd = sum(truth.get("backward", {}).values())
assert bwd > 500, bwd
steps = {p: sum(v.values()) for p, v in truth.items() if p in ("optimizer", "zero_grad", "grad-clip", "amp-scaler")}
print("%s: %d backward, %d recompute launches on their forward owner; %d with no forward op; step kinds %s"
      % (mode, bwd, sum(truth.get("recompute", {}).values()),
         unowned if mode == "lines" else sum(truth.get("unowned", {}).values()), steps or "none"))
PY
}

# 1. AMD MI300X ResNet DDP step with activation checkpointing and Python stacks: backward kernels
#    on the forward function, recomputation marked recompute, engine work on train_step.
tr="$R/tracelens_mi300x_resnet_actckpt_rank0.json.gz"
"$KERNLENS" map "$tr" --root "$T/ws" --format json > "$T/mi.json" || fail "map mi300x"
python3 "$TRUTH" "$tr" --files train_ddp.py torchvision/models/resnet.py > "$T/mi.truth"
compare "$T/mi.json" "$T/mi.truth" lines || fail "mi300x differs from the trace's own count"
python3 - "$T/mi.json" <<'PY' || fail "mi300x: engine work not on train_step"
import json, sys
j = json.load(open(sys.argv[1]))
un = {(l["file"], l["line"]) for l in j["lines"] for k in l["kernels"] if not k["forward_owner"]}
assert un == {("train_ddp.py", 82)}, un   # train_step (line 82) calls loss.backward()
PY
"$KERNLENS" map "$tr" --root "$T/ws" > "$T/mi.txt" || fail "map mi300x (text)"
grep -Eq '^  89 \| .*# [0-9.]+ .?s \+ bwd [0-9.]+ .?s · ' "$T/mi.txt" || fail "text lacks '+ bwd': $(head -5 "$T/mi.txt")"
grep -q '(recompute)' "$T/mi.txt" || fail "text lacks recompute kernels"

# 2. Traces without Python stacks (V100 DDP, A100 DDP with NCCL): per forward ATen op.
for name in hta_v100_ns_resolution_rank0 hta_a100_nccl_2ranks_rank0; do
  tr="$R/$name.json.gz"
  "$KERNLENS" map "$tr" --root "$T/ws" --format json > "$T/$name.json" || fail "map $name"
  python3 "$TRUTH" "$tr" > "$T/$name.truth"
  compare "$T/$name.json" "$T/$name.truth" ops || fail "$name differs from the trace's own count"
  "$KERNLENS" map "$tr" --root "$T/ws" > "$T/$name.txt" || fail "map $name (text)"
  grep -Eq '^  aten::conv2d +# .* \+ bwd ' "$T/$name.txt" || fail "$name: no conv2d fwd + bwd line: $(head -4 "$T/$name.txt")"
  grep -q 'AccumulateGrad  (backward, no forward op)' "$T/$name.txt" || fail "$name: engine work not labelled"
done
echo "PASS map_real_backward"
