#!/usr/bin/env bash
# ctest-labels: realcode
# emit_nvtx's sequence ranges only where a backward pass runs: nanoGPT's evaluate() (tests/data/
# realcode, --forward-only: no backward pass) — the discovery pass counts no backward pass, so every
# instrumented round runs the probe with `--autograd-nvtx off` (the command is in the round's log
# folder) and the loop says so; every mapped kernel is forward work.
source "$(dirname "$0")/planner_run.inc"
R="$KL_SOURCE_DIR/tests/data/realcode"
planner_run "$R/nanogpt" "$T/out.json" "python3 train_tiny.py --steps 1 --forward-only" --focus train_tiny.py::evaluate --no-baseline
WS="$T/ws-nanogpt"
$PY - "$T/out.json" "$WS" <<'PY'
import glob, json, os, sys
doc, ws = json.load(open(sys.argv[1])), sys.argv[2]
errors = []
if "no backward pass ran in the discovery run: autograd sequence ranges off" not in doc["notes"]:
    errors.append("no note about the sequence ranges: %r" % doc["notes"])
if any(k["pass"] != "forward" for l in doc["lines"] for k in l["kernels"]):
    errors.append("non-forward kernels in an inference run")
if not doc["lines"]:
    errors.append("nothing mapped")
cmds = []
for rl in doc["round_log"]:
    for f in glob.glob(os.path.join(rl["dir"], "*")):
        if os.path.isfile(f):
            try:
                text = open(f, errors="replace").read()
            except OSError:
                continue
            if "kernlens_probe" in text and "--backend" in text:
                cmds.append(text)
if not cmds:
    errors.append("no probe command found in the round folders %r" % [rl["dir"] for rl in doc["round_log"]])
elif not all("--autograd-nvtx off" in c for c in cmds):
    errors.append("a round ran with the sequence ranges on")
if errors:
    print("FAIL realcode_inference_ranges:\n  " + "\n  ".join(errors))
    sys.exit(1)
print("PASS realcode_inference_ranges (%d rounds)" % len(doc["round_log"]))
PY
