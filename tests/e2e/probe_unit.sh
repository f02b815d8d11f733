#!/usr/bin/env bash
# ctest-labels: slow
# Runs the probe's Python tests (tests/probe/*.py, unittest) with the project venv's Python (KL_PYTHON).
# Needs: scripts/install-deps.sh probe nsys (libnvtoolsext1 for the NVTX provider chain test).
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${KL_PYTHON:-python3}
if ! "$PY" -c "import torch" 2>/dev/null; then
  echo "probe_unit: $PY cannot import torch: run scripts/venv.sh (makes .venv)" >&2
  exit 1
fi
cd "$SRC/tests/probe"
# KL_PROBE_DIR: the probe as installed next to the binary when the build has copied it.
if [[ -n "${KL_BINARY_DIR:-}" && -d "$KL_BINARY_DIR/share/kernlens/probe/kernlens_probe" ]]; then
  export KL_PROBE_DIR="$KL_BINARY_DIR/share/kernlens/probe"
fi
export KL_SOURCE_DIR="$SRC"
exec "$PY" -m unittest discover -s . -p 'test_*.py' -v
