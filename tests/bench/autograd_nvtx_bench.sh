#!/usr/bin/env bash
# Cost of the autograd sequence ranges (torch.autograd.profiler.emit_nvtx: one NVTX push/pop per
# ATen op and per backward node) that link backward kernels to forward lines, on a real training
# step (nanoGPT from tests/data/realcode, 2 steps, CPU PyTorch):
#   1. ranges per kernel launch: the RecordFunction scopes emit_nvtx pushes (counted with PyTorch's
#      legacy CPU profiler, the same callbacks emit_nvtx uses) / the launches a CUDA build makes
#      (the emulator's count for the same run) — the number the loop's NVTX budget is stated in;
#   2. ns per push/pop pair with nsys attached (`nsys profile --trace=nvtx`, libnvToolsExt via
#      ctypes) against the same loop without nsys (baseline measured in the same run);
#   3. the emulator's own cost of writing the ranges: probe wall time --autograd-nvtx on / off.
#   tests/bench/autograd_nvtx_bench.sh [BUILD_DIR]     prints a small table (docs/loop.md has a run)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
PROBE=$BUILD/share/kernlens/probe
[ -d "$PROBE/kernlens_probe" ] || PROBE=$SRC/core/runner/probe
PY=${KL_PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cp -r "$SRC/tests/data/realcode/nanogpt" "$T/ng"
cd "$T/ng"

# 1. RecordFunction scopes (= emit_nvtx ranges) of the run, and the emulated launches.
cat > "$T/count.py" <<'PY'
import runpy, sys
import torch
from torch.autograd import ProfilerConfig, ProfilerState
try:
    from torch._C._profiler import _ExperimentalConfig
    cfg = ProfilerConfig(ProfilerState.CPU, False, False, False, False, False, _ExperimentalConfig())
except (ImportError, TypeError):
    cfg = ProfilerConfig(ProfilerState.CPU, False, False, False, False, False)
sys.argv = ["train_tiny.py", "--steps", "2"]
sys.path.insert(0, ".")
torch.autograd._enable_profiler_legacy(cfg)
try:
    runpy.run_path("train_tiny.py", run_name="__main__")
finally:
    evs = torch.autograd._disable_profiler_legacy()
pushes = sum(1 for t in evs for e in t if e.kind() == "push")
seq = sum(1 for t in evs for e in t if e.kind() == "push" and e.sequence_nr() >= 0)
print(pushes, seq)
PY
COUNTS=$(cd "$T/ng" && $PY "$T/count.py" 2>/dev/null | tail -1)
PUSHES=${COUNTS% *}
SEQ=${COUNTS#* }
run_probe() {  # on|off -> wall ms; writes $T/st-$1.json
  local t0 t1
  t0=$(date +%s%N)
  PYTHONPATH=$PROBE $PY -m kernlens_probe --backend emulate --out "$T/out-$1.sqlite" --status "$T/st-$1.json" \
    --autograd-nvtx "$1" -- python3 train_tiny.py --steps 2 > /dev/null 2>&1
  t1=$(date +%s%N)
  echo $(( (t1 - t0) / 1000000 ))
}
OFF1=$(run_probe off); ON1=$(run_probe on); OFF2=$(run_probe off); ON2=$(run_probe on)
LAUNCHES=$($PY -c "import json; s=json.load(open('$T/st-on.json'))['summary']; print(s['kernels'] + s['memcpys'])")

# 2. ns per NVTX push/pop pair, with and without nsys attached.
cat > "$T/nvtx.py" <<'PY'
import ctypes, time
lib = ctypes.CDLL("libnvToolsExt.so.1")
lib.nvtxRangePushA.argtypes = [ctypes.c_char_p]
msg = b"aten::mm, seq = 1234"
n = 200000
for _ in range(1000):
    lib.nvtxRangePushA(msg); lib.nvtxRangePop()
t0 = time.perf_counter_ns()
for _ in range(n):
    lib.nvtxRangePushA(msg); lib.nvtxRangePop()
t1 = time.perf_counter_ns()
print((t1 - t0) / n)
PY
NS_BASE=n/a NS_NSYS=n/a
if $PY -c "import ctypes; ctypes.CDLL('libnvToolsExt.so.1')" 2>/dev/null; then
  NS_BASE=$($PY "$T/nvtx.py")
  if command -v nsys > /dev/null; then
    NS_NSYS=$(nsys profile --trace=nvtx --sample=none --cpuctxsw=none -o "$T/nv" --force-overwrite=true \
              $PY "$T/nvtx.py" 2>/dev/null | grep -E '^[0-9.]+$' | tail -1 || true)
    [ -n "$NS_NSYS" ] || NS_NSYS=n/a
  fi
fi
$PY - "$PUSHES" "$SEQ" "$LAUNCHES" "$NS_BASE" "$NS_NSYS" "$OFF1" "$ON1" "$OFF2" "$ON2" <<'PY'
import sys
pushes, seq, launches = (int(x) for x in sys.argv[1:4])
base, nsys = sys.argv[4], sys.argv[5]
off = min(int(sys.argv[6]), int(sys.argv[8])); on = min(int(sys.argv[7]), int(sys.argv[9]))
print("| measure (nanoGPT tiny, 2 training steps) | value |")
print("|---|---|")
print("| emit_nvtx ranges (RecordFunction scopes) | %d (%d with a sequence number) |" % (pushes, seq))
print("| kernel launches (emulated CUDA build) | %d |" % launches)
print("| emit_nvtx ranges per launch | %.1f |" % (pushes / max(1, launches)))
if base != "n/a":
    print("| NVTX push+pop, no tool attached | %.0f ns (ctypes) |" % float(base))
if nsys != "n/a" and base != "n/a":
    d = float(nsys) - float(base)
    print("| NVTX push+pop under nsys | %.0f ns (+%.0f ns) |" % (float(nsys), d))
    print("| added CPU time per launch under nsys | %.2f us |" % (pushes / max(1, launches) * d / 1000))
print("| emulator wall, ranges off / on (best of 2) | %d ms / %d ms (ratio %.2f) |" % (off, on, on / max(1, off)))
PY
