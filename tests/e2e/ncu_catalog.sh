#!/usr/bin/env bash
# kernlens ncu import / kernels / drill on the real ncu files (tests/data/ncu).
set -euo pipefail
K=${KERNLENS:?}; SRC=${KL_SOURCE_DIR:?}; D=$SRC/tests/data/ncu
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# Import v2 kernels (json) — one object per kernel with the required fields.
"$K" ncu import "$D"/dsocr_v2/kernel_000{3,4}.details.csv "$D"/dsocr_v2/kernel_0010.details.csv \
  --model dsocr --run v2 --format json > imp.json
python3 - imp.json <<'PY'
import json, sys
objs = json.load(open(sys.argv[1]))
assert len(objs) == 3, objs
for o in objs:
    for f in ("name", "base_name", "family", "bound", "sm_pct", "mem_pct", "launches", "models"):
        assert f in o, (f, o)
    assert o["bound"] in ("compute", "memory", "latency", "balanced", "unknown")
    assert o["models"] == ["dsocr"]
by = {o["base_name"]: o for o in objs}
g = by["cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_128x2_tn_align8"]
assert g["bound"] == "memory" and abs(g["sm_pct"] - 41.49) < 1e-9 and g["family"] == "CUTLASS", g
assert by["unrolled_elementwise_kernel"]["bound"] == "latency"
PY
[ -f .kernlens/kernlens.db ] || fail "default catalogue not created"

# Re-import: nothing doubles.
"$K" ncu import "$D"/dsocr_v2/kernel_0003.details.csv --model dsocr --run v2 | grep -q "already imported" \
  || fail "re-import not detected"
# Same kernel from the v1 run of another "model": 2 launches, 2 models.
"$K" ncu import "$D"/dsocr_v1/kernel_0003.details.csv --model other --run v1 > /dev/null
"$K" kernels --format json --top 1 > top.json
python3 - top.json <<'PY'
import json, sys
o = json.load(open(sys.argv[1]))
assert len(o) == 1 and o[0]["launches"] == 2 and o[0]["models"] == ["dsocr", "other"], o
PY
"$K" kernels --by bound --format json | python3 -c 'import json,sys; g={x["bound"]:x for x in json.load(sys.stdin)}; assert g["memory"]["kernels"]==2 and g["latency"]["kernels"]==1, g'
"$K" kernels --format csv | head -1 | grep -q '^name,base_name,family,bound,sm_pct,mem_pct,launches' || fail "csv header"

# Legacy + ERROR-only output.
"$K" ncu import "$D"/xplacer/nsight_hotspot_1024 --model hotspot | grep -q "legacy-details" || fail legacy
set +e
"$K" ncu import "$D"/negative/raw.csv 2> err.txt; rc=$?
set -e
[ $rc -eq 1 ] || fail "error file: rc $rc"
[ "$(wc -l < err.txt)" -eq 1 ] || fail "error must be one line"
grep -q "ncu reported an error: ==ERROR== Option" err.txt || fail "error text"

# Drill: exact command; without ncu on PATH a clear error (exit 1).
cmd=$("$K" ncu drill --entry "python train.py" --range "kl:model.py:10-20" --print-command | head -1)
[ "$cmd" = "ncu --nvtx --nvtx-include kl:model.py:10-20/ --kernel-id :::1 --section SpeedOfLight --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section Occupancy --section LaunchStats --section SpeedOfLight_RooflineChart --force-overwrite -o .kernlens/ncu/drill python train.py" ] \
  || fail "drill command: $cmd"
if ! command -v ncu > /dev/null; then
  set +e
  PATH=/usr/bin:/bin "$K" ncu drill --entry "true" --range "kl:x.py:1-2" > /dev/null 2> derr.txt; rc=$?
  set -e
  [ $rc -eq 1 ] && grep -q "not found on PATH" derr.txt || fail "drill without ncu"
fi
set +e; "$K" kernels --by nonsense > /dev/null 2>&1; rc=$?; set -e
[ $rc -eq 2 ] || fail "bad --by must be a usage error"
echo "ncu_catalog: ok"
