#!/usr/bin/env bash
# ctest-labels: realcode slow
# The program under the probe is the program, on the real-code entries of tests/data/realcode
# (nanoGPT: training, --foreach, --forward-only, checkpointed; word_language_model: LSTM and
# Transformer), run without kernlens and under the emulate and torch
# backends with every workspace file instrumented; stdout, exit status and stderr (tracebacks and
# warnings; loss values with fixed seeds) must be identical (tests/e2e/program_unchanged.py).
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${KL_PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || { echo "probe_unchanged_realcode: $PY has no torch (scripts/venv.sh makes .venv)" >&2; exit 1; }
if [[ -n "${KL_BINARY_DIR:-}" && -d "$KL_BINARY_DIR/share/kernlens/probe/kernlens_probe" ]]; then
  export KL_PROBE_DIR="$KL_BINARY_DIR/share/kernlens/probe"
fi
export KL_SOURCE_DIR="$SRC" KL_PYTHON="$PY"
exec "$PY" "$SRC/tests/e2e/program_unchanged.py" --backends emulate,torch \
  --only nanogpt,nanogpt-foreach,nanogpt-eval,nanogpt-ckpt,wlm-lstm,wlm-transformer
