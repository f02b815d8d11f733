#!/usr/bin/env bash
# Focus modes on the mlp sample (emulate backend):
#  - --lines A-B starting on a `def` line wraps the function's body: its lines carry their kernels;
#  - a region that launches nothing says so in the JSON notes;
#  - --kernel REGEX: lines that launch no matching kernel are labelled so and not counted in `why`.
source "$(dirname "$0")/planner_run.inc"
planner_run mlp "$T/def.json" "python3 mlp.py --steps 1" --lines mlp.py:19-22 --no-baseline
planner_run mlp "$T/none.json" "python3 mlp.py --steps 1" --lines mlp.py:8-8 --no-baseline
FORMAT=text planner_run mlp "$T/kernel.txt" "python3 mlp.py --steps 1" --focus mlp.py::train_step --kernel gemm --no-baseline
$PY - "$T/def.json" "$T/none.json" "$T/kernel.txt" <<'PY'
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
print("ok: def region wrapped as the body, empty region noted, --kernel labels")
PY
