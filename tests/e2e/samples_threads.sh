#!/usr/bin/env bash
# The convergence loop on samples/threads with the emulate backend: every kernel family must land on
# its expected line (samples/threads/expected_lines.txt, checked by planner_check.py), converged.
source "$(dirname "$0")/planner_run.inc"
planner_run threads "$T/out.json" "python3 threads.py --steps 2" --focus threads.py::Encoder.forward --no-baseline
$PY "$KL_SOURCE_DIR/tests/e2e/planner_check.py" "$T/out.json" "$KL_SOURCE_DIR/samples/threads/expected_lines.txt"
