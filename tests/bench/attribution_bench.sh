#!/usr/bin/env bash
# Attribution benchmark (not a test): `kernlens tree FILE --format json` (read the export +
# attribute every kernel + the tree) against a bare `sqlite3` scan of the same columns that
# only aggregates them (no output), measured in the same run, best of 3, with the peak RSS
# of kernlens per kernel and exact-count checks against SQL.
#
# The export (kl_ingest_bench generate): N kernels launched by N cudaLaunchKernel calls on 4
# threads in 2 processes whose correlation ids repeat (the shape of a 2-GPU capture), and
# about N NVTX push/pop ranges (per thread, an outer range around every 10 launches and an
# inner range around 9 of them). Generated once per size into $KL_BENCH_CACHE (default
# .tmp/bench in the checkout) and reused by later runs.
#
# Usage: tests/bench/attribution_bench.sh [BUILD_DIR] [N...]   (default N: 2000000 5000000)
# Prints one line per size: times, ratio, peak RSS, bytes per kernel; exits 1 when a count
# check fails (kernels counted twice or lost), not when a ratio is above target.
set -euo pipefail
# shellcheck source=tests/bench/generated_exports.sh
source "$(dirname "$0")/generated_exports.sh"
bench_args attribution_bench "$@"
command -v sqlite3 >/dev/null || { echo "attribution_bench: needs the sqlite3 CLI" >&2; exit 1; }
command -v python3 >/dev/null || { echo "attribution_bench: needs python3" >&2; exit 1; }
CACHE=${KL_BENCH_CACHE:-$ROOT/.tmp/bench}
mkdir -p "$CACHE"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-attr-bench-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# The columns attribution + tree read, aggregated only (tests/bench/bare_scan.sql).
BASE_SQL=$(cat "$ROOT/tests/bench/bare_scan.sql")
# best-of-3 wall time (s) and the peak RSS (KiB) of that run: "SECONDS KIB"
best3() {
  local best="" rss="" i
  for i in 1 2 3; do
    /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" > "$WORK/out" 2> "$WORK/err" ||
      { echo "attribution_bench: $* failed:" >&2; cat "$WORK/err" >&2; exit 1; }
    read -r t r < "$WORK/time"
    if [[ -z $best ]] || (( $(echo "$t < $best" | bc -l) )); then best=$t; rss=$r; cp "$WORK/out" "$WORK/best.out"; fi
  done
  echo "$best $rss"
}

fail=0
printf '%-9s %9s %9s %7s %10s %9s  %s\n' kernels sqlite_s tree_s ratio peak_rss_mb B/kernel counts
for N in "${SIZES[@]}"; do
  DB=$CACHE/attr-bench-v1-$N.sqlite
  if [[ ! -s $DB ]]; then
    "$GEN" generate "$DB.part" "$N" "$ROOT/tests/data/fixtures/nsys-schema.sql" >/dev/null
    mv "$DB.part" "$DB"
  fi
  cat "$DB" > /dev/null  # page cache warm for both sides
  read -r tb _ < <(best3 sqlite3 "file:$DB?immutable=1" "$BASE_SQL")
  read -r tk rk < <(best3 "$KL" tree "$DB" --format json)
  # The count check needs every root (the timed run prints at most 2000 nodes): one more,
  # untimed run with --max-nodes 0.
  "$KL" tree "$DB" --format json --max-nodes 0 > "$WORK/tree.json"
  # Exact counts from SQL (independent of kernlens): every kernel once, total GPU time.
  read -r nk sumd < <(sqlite3 -separator ' ' "file:$DB?immutable=1" \
    'SELECT count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL')
  counts=$(python3 - "$WORK/tree.json" "$nk" "$sumd" <<'EOF'
import json, sys
t = json.load(open(sys.argv[1])); nk = int(sys.argv[2]); sumd = int(sys.argv[3])
u = t["unattributed"]
ops = sum(r["ops"] for r in t["roots"]) + u["no_launch_call_ops"] + u["outside_ranges_ops"]
ok = ops == nk and t["total_ns"] == sumd and u["no_launch_call_ops"] == 0
print(("ok" if ok else "FAIL") + f" ops={ops}/{nk} total_ns={t['total_ns']}/{sumd} no_launch={u['no_launch_call_ops']}")
EOF
)
  [[ $counts == ok* ]] || fail=1
  printf '%-9s %9.3f %9.3f %7.2f %10.1f %9.1f  %s\n' "$N" "$tb" "$tk" "$(echo "$tk / $tb" | bc -l)" \
    "$(echo "$rk / 1024" | bc -l)" "$(echo "$rk * 1024 / $N" | bc -l)" "$counts"
done
exit $fail
