#!/usr/bin/env bash
# `make bench`: the benchmarks (never run by ctest). Each prints ratios against a baseline
# measured in the same run. Sizes can be lowered on a busy machine:
#   KL_BENCH_SIZES="300000 2000000" make bench
# The peer comparison installs its own venv first (.venv-bench/, scripts/venv.sh bench).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build}
export TMPDIR=${TMPDIR:-$ROOT/.tmp}
mkdir -p "$TMPDIR"
read -r -a sizes <<< "${KL_BENCH_SIZES:-2000000 5000000}"
echo "== attribution: kernlens tree vs a bare sqlite3 scan (best of 3)"
bash "$ROOT/tests/bench/attribution_bench.sh" "$BUILD" "${sizes[@]}"
echo "== peers: kernlens vs nsys-ai and HolisticTraceAnalysis on the same inputs (time, peak memory, agreement)"
bash "$ROOT/tests/bench/peers.sh" "$BUILD" "${sizes[@]}"
echo "== language server: 5k-line file, 200k mapped launches (client-side times)"
mkdir -p "${KL_BENCH_CACHE:-$ROOT/.tmp/bench}"
python3 "$ROOT/tests/bench/lsp_bench.py" "$BUILD/kernlens" "$BUILD/tests/bench/kl_ingest_bench" \
  "$ROOT/tests/data/fixtures/nsys-schema.sql" "${KL_BENCH_CACHE:-$ROOT/.tmp/bench}"
echo "== determinism: every sample and real-code entry profiled 20 times, per-line attribution compared"
bash "$ROOT/tests/bench/determinism_bench.sh" "$BUILD" 20
