#!/usr/bin/env bash
# The convergence loop on samples/mlp with the emulate backend: every kernel family must land on
# its expected line (samples/mlp/expected_lines.txt, checked by planner_check.py), converged.
source "$(dirname "$0")/planner_run.inc"
planner_run mlp "$T/out.json" "python3 mlp.py --steps 2" --focus mlp.py::MLP.forward --no-baseline
$PY "$KL_SOURCE_DIR/tests/e2e/planner_check.py" "$T/out.json" "$KL_SOURCE_DIR/samples/mlp/expected_lines.txt"
