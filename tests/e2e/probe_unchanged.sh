#!/usr/bin/env bash
# ctest-labels: slow
# The program under the probe is the program: every sample, and the programs of
# tests/data/probe/unchanged_ws (a traceback, introspection, the program's own settrace/setprofile,
# spawn children and DataLoader workers), run without kernlens and under the emulate and torch
# backends with every workspace file instrumented; stdout, exit status and stderr (tracebacks and
# warnings) must be identical (tests/e2e/program_unchanged.py). The real-code entries:
# probe_unchanged_realcode.sh; the nsys backend: probe_unchanged_nsys.sh.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${KL_PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || { echo "probe_unchanged: $PY has no torch (scripts/venv.sh makes .venv)" >&2; exit 1; }
if [[ -n "${KL_BINARY_DIR:-}" && -d "$KL_BINARY_DIR/share/kernlens/probe/kernlens_probe" ]]; then
  export KL_PROBE_DIR="$KL_BINARY_DIR/share/kernlens/probe"
fi
export KL_SOURCE_DIR="$SRC" KL_PYTHON="$PY"
exec "$PY" "$SRC/tests/e2e/program_unchanged.py" --backends emulate,torch \
  --only mlp,transformer,dispatch,threads,raises,introspect,tracers,workers,legacy
