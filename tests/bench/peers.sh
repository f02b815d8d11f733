#!/usr/bin/env bash
# kernlens next to the tools users already use, on the same inputs, in one run (not a test):
# nsys-ai on the nsys exports of tests/data/real and on the generated exports of the attribution
# benchmark (sizes N...), HolisticTraceAnalysis on the Kineto traces of tests/data/real (the
# 8-rank set as one run). Time, peak memory and agreement with an independent count per input
# (tests/bench/peers_bench.py says how each is measured). The peers come from the bench venv
# (.venv-bench/, pinned and hash-checked: requirements/bench.txt), made here when missing or out
# of date; nothing is downloaded while measuring.
#
# Usage: tests/bench/peers.sh [BUILD_DIR] [N...]   (default N: 2000000 5000000)
# Env: KL_PEERS_REPEAT (best of, default 3; 1 on the generated exports), KL_PEERS_TIMEOUT (s per
# peer command, default 1800: a peer that runs longer is reported as timed out),
# KL_BENCH_CACHE (where the generated exports are kept, shared with attribution_bench.sh).
# Writes the table as Markdown to BUILD_DIR/peers-bench.md (docs/performance.md shows one).
# Exit 1 when kernlens disagrees with the independent count; a peer disagreeing is printed.
set -euo pipefail
# shellcheck source=tests/bench/generated_exports.sh
source "$(dirname "$0")/generated_exports.sh"
bench_args peers "$@"
[[ -x /usr/bin/time ]] || { echo "peers: needs GNU time at /usr/bin/time" >&2; exit 1; }
VENV=${KL_BENCH_VENV:-$ROOT/.venv-bench}
KL_BENCH_VENV=$VENV bash "$ROOT/scripts/venv.sh" bench
CACHE=${KL_BENCH_CACHE:-$ROOT/.tmp/bench}
mkdir -p "$CACHE"
gen=()
for N in "${SIZES[@]}"; do
  DB=$CACHE/attr-bench-v1-$N.sqlite  # the attribution benchmark's file of the same size
  if [[ ! -s $DB ]]; then
    "$GEN" generate "$DB.part" "$N" "$ROOT/tests/data/fixtures/nsys-schema.sql" >/dev/null
    mv "$DB.part" "$DB"
  fi
  gen+=("$DB")
done
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-peers-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
D=$ROOT/tests/data/real
python3 "$ROOT/tests/bench/peers_bench.py" --kernlens "$KL" --bench-venv "$VENV" --work "$WORK" \
  --repeat "${KL_PEERS_REPEAT:-3}" --timeout "${KL_PEERS_TIMEOUT:-1800}" --markdown "$BUILD/peers-bench.md" \
  --nsys "$D"/nsys/*.sqlite.gz "$D"/*.sqlite.gz "$D"/recorded/*.sqlite.gz "${gen[@]}" \
  --kineto "$D"/*.json.gz "$D/param_dlrm_v100_8ranks"
echo "(table as Markdown: $BUILD/peers-bench.md)"
