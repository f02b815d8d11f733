#!/usr/bin/env bash
# Every note is true of the result it is printed under. The emulate backend records ranges
# through the probe's own listener whatever NVTX provider the program has, so a no-op provider
# (forced here: KERNLENS_PROBE_NVTX=noop, as on a machine with neither torch NVTX nor
# libnvToolsExt) must not produce "the profiler saw no ranges" under a fully mapped result; and a
# runner note names the round it is about.
source "$(dirname "$0")/planner_run.inc"
WS="$T/ws"
mkdir -p "$WS"
cat > "$WS/m.py" <<'PY'
import torch
import torch.nn.functional as F


def f(x, grid):
    y = F.grid_sample(x, grid, align_corners=False)
    return torch.relu(y) * 2


if __name__ == "__main__":
    x, grid = torch.randn(1, 3, 8, 8).to("cpu"), torch.zeros(1, 4, 4, 2).to("cpu")
    for _ in range(3):
        f(x, grid)
PY
(cd "$WS" && KERNLENS_PROBE_NVTX=noop "$KERNLENS" profile --root "$WS" --entry "python3 m.py" --backend emulate \
   --focus m.py::f --rounds 2 --no-baseline --no-store --format json) > "$T/out.json"
$PY - "$T/out.json" <<'PY'
import json, re, sys
doc = json.load(open(sys.argv[1]))
mapped = sum(l["launches"] for l in doc["lines"])
if not doc["converged"] or mapped == 0:
    sys.exit("FAIL: expected a converged, mapped result: %s" % json.dumps(doc)[:2000])
bad = [n for n in doc["notes"] if "no-op" in n or "no kl: range" in n]
if bad:
    sys.exit("FAIL: notes contradicting a mapped result: %s" % bad)
runner = [n for n in doc["notes"] if "emulator:" in n]
if not runner or not all(re.match(r"rounds? \d", n) for n in runner):
    sys.exit("FAIL: runner notes without their round: %s" % doc["notes"])
print("ok: %d launches mapped, notes %s" % (mapped, doc["notes"]))
PY
