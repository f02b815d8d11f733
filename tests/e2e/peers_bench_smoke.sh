#!/usr/bin/env bash
# The peer comparison of `make bench` (tests/bench/peers_bench.py) cannot rot: its kernlens side
# and its independent counts run here on small inputs, without the peers (nsys-ai and
# HolisticTraceAnalysis live in the bench venv, which only `make bench` installs). The checker
# must report a planted difference (--self-test), and kernlens must agree with the independent
# count on: a generated two-process export whose correlation ids repeat, two real nsys exports
# (one with NVTX ranges), a one-kernel Kineto trace and the 8-rank Kineto set (NCCL overlap).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
PY=${KL_PYTHON:-python3}
GEN=$KL_BINARY_DIR/tests/bench/kl_ingest_bench
[[ -x $GEN ]] || { echo "missing $GEN (built with the project)"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-peers-smoke-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
BENCH=$KL_SOURCE_DIR/tests/bench/peers_bench.py
D=$KL_SOURCE_DIR/tests/data/real

"$PY" "$BENCH" --self-test

"$GEN" generate "$WORK/gen-3000.sqlite" 3000 "$KL_SOURCE_DIR/tests/data/fixtures/nsys-schema.sql" >/dev/null
"$PY" "$BENCH" --kernlens "$KERNLENS" --kernlens-only --repeat 1 --work "$WORK/w" \
  --markdown "$WORK/table.md" \
  --nsys "$WORK/gen-3000.sqlite" "$D/nsys/mock.sqlite.gz" "$D/fuser_h200_matmul_nvtx_2024.sqlite.gz" \
  --kineto "$D/hta_a100_triton_tiny.json.gz" "$D/param_dlrm_v100_8ranks" | tee "$WORK/out.txt"

# Not vacuous: the generated export's ranges were compared path by path, the 8 ranks' overlap
# rank by rank, and the table has one row per input.
paths=$(grep -A1 '^gen-3000.sqlite ' "$WORK/out.txt" | sed -n 's/.*tree: kernlens =SQL (\([0-9]*\) range paths).*/\1/p')
[[ -n $paths && $paths -ge 100 ]] ||
  { echo "FAIL: the generated export's range paths were not compared (got '${paths}')"; exit 1; }
grep -q 'overlap: kernlens =JSON (8 ranks)' "$WORK/out.txt" ||
  { echo "FAIL: the 8-rank overlap was not compared"; exit 1; }
rows=$(grep -c '^| ' "$WORK/table.md")
[[ $rows == 6 ]] || { echo "FAIL: $rows table lines, want a header and 5 inputs"; exit 1; }
echo "peers_bench smoke: ok"
