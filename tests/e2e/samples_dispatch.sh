#!/usr/bin/env bash
# The convergence loop on samples/dispatch with the emulate backend: every kernel family must land on
# its expected line (samples/dispatch/expected_lines.txt, checked by planner_check.py), converged.
source "$(dirname "$0")/planner_run.inc"
planner_run dispatch "$T/out.json" "python3 dispatch.py --steps 2" --focus dispatch.py::score_all --no-baseline
$PY "$KL_SOURCE_DIR/tests/e2e/planner_check.py" "$T/out.json" "$KL_SOURCE_DIR/samples/dispatch/expected_lines.txt"
