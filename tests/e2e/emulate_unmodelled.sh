#!/usr/bin/env bash
# An op the emulator does not model (aten::grid_sampler_2d, called 3 times by the program below) is
# reported with its count in `kernlens profile`'s output — text `note:` and JSON "notes" — and its
# launches are labelled guesses; ops it models are not listed there. The note names the round it is
# about (a note under the result must not read as a statement about another run).
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
run() { (cd "$WS" && "$KERNLENS" profile --root "$WS" --entry "python3 m.py" --backend emulate --focus m.py::f \
           --rounds 1 --no-discovery --no-baseline --no-store "$@"); }
run --format text > "$T/out.txt"
run --format json > "$T/out.json"
want="launches of ops it does not model, emitted as a generic elementwise kernel (their kernels and times are guesses): aten::grid_sampler_2d x3"
grep -F "note: round 1: emulator: 3 $want" "$T/out.txt" > /dev/null || { echo "FAIL: no emulator note with the count in the text output:"; cat "$T/out.txt"; exit 1; }
$PY - "$T/out.json" "$want" <<'PY'
import json, sys
doc, want = json.load(open(sys.argv[1])), sys.argv[2]
notes = [n for n in doc["notes"] if "emulator:" in n]
if notes != ["round 1: emulator: 3 " + want]:
    sys.exit("FAIL: JSON notes about unmodelled ops: %s" % notes)
if not any("emulator:" in n for r in doc["round_log"] for n in r["notes"]):
    sys.exit("FAIL: the round log does not carry the emulator note")
print("ok: 3 unmodelled launches reported")
PY
