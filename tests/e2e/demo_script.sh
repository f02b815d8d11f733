#!/usr/bin/env bash
# `make demo`'s script (scripts/demo.sh), with the binary given relative to the repo as the
# Makefile does: the loop converges on samples/transformer and the output says EMULATED.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
cd "$KL_SOURCE_DIR"
rel=$(realpath --relative-to=. "$KERNLENS")
out=$(bash scripts/demo.sh "$rel" 2>&1) || { echo "$out" | tail -20; echo "FAIL: demo script failed"; exit 1; }
grep -q "converged (converged)" <<<"$out" || { echo "$out" | tail -20; echo "FAIL: the demo loop did not converge"; exit 1; }
grep -q "EMULATED" <<<"$out" || { echo "FAIL: emulated results not labelled"; exit 1; }
grep -q "== tinyformer/attention.py" <<<"$out" || { echo "FAIL: the loop did not reach the attention module"; exit 1; }
echo "PASS demo_script"
