#!/usr/bin/env bash
# ctest-labels: realcode slow
# The same program profiled N times (emulate backend, seeds fixed by the programs) gives identical
# per-line attribution: every real-code entry of tests/e2e/realcode_loop.sh (tests/data/realcode)
# (tests/e2e/determinism.py compares file, line, launches, forward/backward ns, atomic reason,
# kernels, unmapped ops, stop reason, rounds). N = KL_DETERMINISM_N (default 2 here; `make bench`
# runs tests/bench/determinism_bench.sh with 20).
set -euo pipefail
: "${KL_SOURCE_DIR:?}" "${KERNLENS:?}"
PY=${KL_PYTHON:-python3}
$PY -c "import torch" 2>/dev/null || { echo "FAIL: $PY cannot import torch (scripts/venv.sh makes .venv)"; exit 1; }
S=$KL_SOURCE_DIR/samples R=$KL_SOURCE_DIR/tests/data/realcode
exec $PY "$KL_SOURCE_DIR/tests/e2e/determinism.py" "$KERNLENS" "${KL_DETERMINISM_N:-2}" \
  "nanogpt=$R/nanogpt::python3 train_tiny.py --steps 1::train_tiny.py::train_step" \
  "wlm-lstm=$R/word_language_model::python3 train_tiny.py --model LSTM --steps 1::model.py::RNNModel.forward" \
  "wlm-transformer=$R/word_language_model::python3 train_tiny.py --model Transformer --steps 1::model.py::TransformerModel.forward"
