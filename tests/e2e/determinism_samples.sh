#!/usr/bin/env bash
# ctest-labels: slow
# The same program profiled N times (emulate backend, seeds fixed by the programs) gives identical
# per-line attribution: every loop sample (tests/e2e/samples_*.sh; determinism_realcode.sh: the real code)
# (tests/e2e/determinism.py compares file, line, launches, forward/backward ns, atomic reason,
# kernels, unmapped ops, stop reason, rounds). N = KL_DETERMINISM_N (default 2 here; `make bench`
# runs tests/bench/determinism_bench.sh with 20).
set -euo pipefail
: "${KL_SOURCE_DIR:?}" "${KERNLENS:?}"
PY=${KL_PYTHON:-python3}
$PY -c "import torch" 2>/dev/null || { echo "FAIL: $PY cannot import torch (scripts/venv.sh makes .venv)"; exit 1; }
S=$KL_SOURCE_DIR/samples R=$KL_SOURCE_DIR/tests/data/realcode
exec $PY "$KL_SOURCE_DIR/tests/e2e/determinism.py" "$KERNLENS" "${KL_DETERMINISM_N:-2}" \
  "transformer=$S/transformer::python3 train.py --steps 2::train.py::train_step" \
  "mlp=$S/mlp::python3 mlp.py --steps 2::mlp.py::MLP.forward" \
  "dispatch=$S/dispatch::python3 dispatch.py --steps 2::dispatch.py::score_all" \
  "threads=$S/threads::python3 threads.py --steps 2::threads.py::Encoder.forward"
