#!/usr/bin/env bash
# ctest-labels: slow
# ctest-resource-lock: nsys
# probe_unchanged.sh under the real Nsight Systems (2022.4 here, NVTX + OS runtime only, no GPU):
# the program's output is redirected inside the profiled command, so nsys's own messages never mix
# with it. A subset of the entries (each nsys run costs ~10 s of its own): one sample, one real-code
# training loop, and every program of tests/data/probe/unchanged_ws.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${KL_PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || { echo "probe_unchanged_nsys: $PY has no torch (scripts/venv.sh makes .venv)" >&2; exit 1; }
if [[ -n "${KL_BINARY_DIR:-}" && -d "$KL_BINARY_DIR/share/kernlens/probe/kernlens_probe" ]]; then
  export KL_PROBE_DIR="$KL_BINARY_DIR/share/kernlens/probe"
fi
export KL_SOURCE_DIR="$SRC" KL_PYTHON="$PY"
exec "$PY" "$SRC/tests/e2e/program_unchanged.py" --backends nsys \
  --only mlp,nanogpt,raises,introspect,tracers,workers,legacy
