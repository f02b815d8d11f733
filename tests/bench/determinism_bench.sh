#!/usr/bin/env bash
# Determinism at scale (`make bench`; ctest runs the same check with N = 2): every sample and
# real-code entry profiled N times (default 20) with the emulate backend, the per-line attribution
# of every run compared with the first (tests/e2e/determinism.py). Prints one line per case.
#   tests/bench/determinism_bench.sh [BUILD_DIR] [N]
# Optional load beside it (KL_DETERMINISM_LOAD=K: K busy CPU loops while it runs), the condition
# under which the emulator's clocks used to disagree.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
N=${2:-20}
export KL_SOURCE_DIR=$ROOT KERNLENS=$BUILD/kernlens KL_DETERMINISM_N=$N
[ -x "$ROOT/.venv/bin/python3" ] && export PATH="$ROOT/.venv/bin:$PATH" KL_PYTHON=$ROOT/.venv/bin/python3
pids=()
trap '[ ${#pids[@]} -eq 0 ] || kill "${pids[@]}" 2>/dev/null' EXIT
for ((i = 0; i < ${KL_DETERMINISM_LOAD:-0}; i++)); do
  python3 -c 'while True: pass' & pids+=($!)
done
echo "determinism: N=$N, ${KL_DETERMINISM_LOAD:-0} busy loops beside"
rc=0
bash "$ROOT/tests/e2e/determinism_samples.sh" || rc=1
bash "$ROOT/tests/e2e/determinism_realcode.sh" || rc=1
exit $rc
