#!/usr/bin/env bash
# ctest-labels: slow
# Focus modes on the mlp sample (emulate backend):
#  - --lines A-B starting on a `def` line wraps the function's body: its lines carry their kernels;
#  - a region that launches nothing says so in the JSON notes;
#  - --kernel REGEX: lines that launch no matching kernel are labelled so and not counted in `why`.
source "$(dirname "$0")/planner_run.inc"
planner_run mlp "$T/def.json" "python3 mlp.py --steps 1" --lines mlp.py:19-22 --no-baseline
planner_run mlp "$T/none.json" "python3 mlp.py --steps 1" --lines mlp.py:8-8 --no-baseline
FORMAT=text planner_run mlp "$T/kernel.txt" "python3 mlp.py --steps 1" --focus mlp.py::train_step --kernel gemm --no-baseline
planner_run mlp "$T/kernel.json" "python3 mlp.py --steps 1" --focus mlp.py::train_step --kernel gemm --no-baseline
$PY - "$T/def.json" "$T/none.json" "$T/kernel.txt" "$T/kernel.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["converged"], d["stop_reason"]
at = {l["line"]: [k["name"] for k in l["kernels"]] for l in d["lines"] if l["file"] == "mlp.py"}
for line in (20, 21, 22):
    assert at.get(line), ("mlp.py:%d has no kernel; region def -> body not wrapped" % line, sorted(at))
n = json.load(open(sys.argv[2]))
assert any("launched nothing" in x for x in n["notes"]), n["notes"]
t = open(sys.argv[3]).read()
why = re.search(r"why: (.*)", t).group(1)
assert "launch no kernel matching --kernel (not counted)" in why, why
loss = [l for l in t.splitlines() if "F.cross_entropy(logits, y)" in l]
assert loss and "[launches no kernel matching --kernel]" in loss[0], loss
k = json.load(open(sys.argv[4]))
for l in k["lines"]:  # the JSON carries the same label, decided from the line's own kernels
    match = any(re.search("gemm", x["name"]) for x in l["kernels"])
    assert l["no_matching_kernel"] == (not match), (l["line"], l["no_matching_kernel"], [x["name"] for x in l["kernels"]])
    if not match:
        assert l["note"] == "launches no kernel matching --kernel", l
assert any(l["no_matching_kernel"] for l in k["lines"]) and any(not l["no_matching_kernel"] for l in k["lines"])
print("ok: def region wrapped as the body, empty region noted, --kernel labels")
PY
