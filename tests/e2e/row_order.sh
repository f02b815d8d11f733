#!/usr/bin/env bash
# ctest-labels: slow
# Row-order independence (tests/e2e/row_order.py): every real export in tests/data (nsys SQLite,
# Kineto JSON, the 8-rank Kineto run) and emulated ones (the stored ones and a fresh training
# step with backward-link ranges), rows of every table shuffled, against the same rows sorted:
# every command of tests/bench/compare_outputs.sh gives byte-identical output. Ties are broken
# by the documented keys of docs/profiles.md ("Row order"), never by row order.
set -euo pipefail
: "${KL_SOURCE_DIR:?}" "${KERNLENS:?}"
PY=${KL_PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
D=$KL_SOURCE_DIR/tests/data
inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(find "$D/real" -maxdepth 2 -type f \
  \( -name '*.sqlite.gz' -o -name '*.sqlite' -o -name '*.json.gz' -o -name '*.json' \) | sort)
inputs+=("$D/real/param_dlrm_v100_8ranks" "$D/editor/mlp_emulated.sqlite" "$D/runner/mlp-emulated.sqlite")
# A fresh emulated training step: backward kernels on pt_autograd_0 and emit_nvtx sequence ranges.
if $PY -c "import torch" 2>/dev/null; then
  cp -r "$KL_SOURCE_DIR/samples/transformer" "$T/ws"
  (cd "$T/ws" && PYTHONPATH="$KL_SOURCE_DIR/core/runner/probe" $PY -m kernlens_probe --backend emulate \
     --out "$T/emulated_transformer.sqlite" -- python3 train.py --steps 1 > /dev/null 2>&1)
  inputs+=("$T/emulated_transformer.sqlite")
fi
mkdir -p "$T/work"
$PY "$KL_SOURCE_DIR/tests/e2e/row_order.py" "$KERNLENS" "$T/work" "${inputs[@]}"
