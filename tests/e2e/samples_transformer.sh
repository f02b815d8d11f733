#!/usr/bin/env bash
# The convergence loop on samples/transformer with the emulate backend: every kernel family must land on
# its expected line (samples/transformer/expected_lines.txt, checked by planner_check.py), converged.
source "$(dirname "$0")/planner_run.inc"
planner_run transformer "$T/out.json" "python3 train.py --steps 2" --focus train.py::train_step --no-baseline
$PY "$KL_SOURCE_DIR/tests/e2e/planner_check.py" "$T/out.json" "$KL_SOURCE_DIR/samples/transformer/expected_lines.txt"
