#!/usr/bin/env bash
# Branch extraction: the entry never reaches RMSNorm.forward, so --harness auto generates a script
# (object from `# kernlens: args dim=128`, input from `# kernlens: shapes x=(4,32,128)`) and the loop
# maps norm.py's lines from it. A function whose inputs cannot be synthesised fails clearly.
source "$(dirname "$0")/planner_run.inc"
planner_run transformer "$T/h.json" "python3 -c 'import tinyformer'" \
  --focus tinyformer/norm.py::RMSNorm.forward --harness auto --no-baseline
$PY - "$T/h.json" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
assert d["converged"], d["stop_reason"]
at = {(l["file"], l["line"]): [k["name"] for k in l["kernels"]] for l in d["lines"]}
for line, rx in [(12, "pow_kernel"), (12, "MeanOps"), (13, "rsqrt"), (14, "MulFunctor")]:
    assert any(re.search(rx, k) for k in at.get(("tinyformer/norm.py", line), [])), (line, rx, at)
print("ok: harness mapped RMSNorm.forward's lines")
PY
