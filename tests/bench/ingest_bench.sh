#!/usr/bin/env bash
# Ingestion benchmark (not a test): generates an nsys export with N kernels, N launch calls and
# N NVTX ranges (default 5,000,000), then times in the same run
#   (a) kernlens: read the export into a ProfileModel + attribute every kernel, and
#   (b) the baseline: a bare `sqlite3` scan of the same columns (output discarded),
# and prints both, the ratio (a)/(b) and the peak RSS of each.
# Usage: tests/bench/ingest_bench.sh [N] [BUILD_DIR]     (BUILD_DIR default: build)
set -euo pipefail
N=${1:-5000000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${2:-$ROOT/build}
BIN=$BUILD/tests/bench/kl_ingest_bench
if [[ ! -x $BIN ]]; then
  cmake --build "$BUILD" --target kl_ingest_bench >/dev/null
fi
command -v sqlite3 >/dev/null || { echo "ingest_bench: needs the sqlite3 CLI" >&2; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-ingest-bench-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
DB=$WORK/bench.sqlite
"$BIN" generate "$DB" "$N" "$ROOT/tests/data/fixtures/nsys-schema.sql"
ls -l "$DB" | awk '{printf "export size: %.1f MB\n", $5/1048576}'
# Warm the page cache so both sides read from memory.
cat "$DB" > /dev/null

SQL='SELECT start, "end", deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName,
            mangledName, gridX, gridY, gridZ, blockX, blockY, blockZ, registersPerThread,
            staticSharedMemory, dynamicSharedMemory, graphId, graphNodeId FROM CUPTI_ACTIVITY_KIND_KERNEL;
     SELECT start, "end", eventClass, globalTid, correlationId, nameId FROM CUPTI_ACTIVITY_KIND_RUNTIME;
     SELECT start, "end", eventType, globalTid, endGlobalTid, text, textId, domainId, category
       FROM NVTX_EVENTS WHERE eventType IN (34, 59, 60, 70, 71);
     SELECT id, value FROM StringIds;'

t0=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$WORK/sqlite.rss" sqlite3 "file:$DB?immutable=1" "$SQL" > /dev/null
t1=$(date +%s.%N)
/usr/bin/time -f "%M" -o "$WORK/kl.rss" "$BIN" ingest "$DB" | tee "$WORK/kl.out"
t2=$(date +%s.%N)

base=$(echo "$t1 - $t0" | bc -l)
ours=$(echo "$t2 - $t1" | bc -l)
printf 'baseline sqlite3 scan:        %.3f s, peak RSS %.1f MB\n' "$base" "$(echo "$(cat "$WORK/sqlite.rss")/1024" | bc -l)"
printf 'kernlens ingest + attribute:  %.3f s, peak RSS %.1f MB\n' "$ours" "$(echo "$(cat "$WORK/kl.rss")/1024" | bc -l)"
printf 'ratio kernlens / sqlite3:     %.2f\n' "$(echo "$ours / $base" | bc -l)"
