#!/usr/bin/env bash
# kernlens export (CSV and JSON) on a REAL nsys export, checked with our own SQL: the CSV is
# imported into sqlite3 next to the source tables and every expected number is computed there.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
command -v sqlite3 >/dev/null || { echo "FAIL: sqlite3 CLI missing (scripts/install-deps.sh build)"; exit 1; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
src="$KL_SOURCE_DIR/tests/data/real/nsys/h100_2gpu_1s.sqlite.gz"
gunzip -c "$src" > "$tmp/p.sqlite"
fail() { echo "FAIL: $*"; exit 1; }

"$KERNLENS" export "$tmp/p.sqlite" --format csv -o "$tmp/ops.csv"
head -1 "$tmp/ops.csv" | tr -d '\r' | grep -qx 'kind,name,short_name,start_ns,end_ns,duration_ns,device,stream,pid,tid,correlation_id,rank,nvtx_path,innermost_range,unattributed_reason' \
  || fail "CSV header"

# Import the export into a copy of the profile, then query both side by side.
cp "$tmp/p.sqlite" "$tmp/q.sqlite"
sqlite3 "$tmp/q.sqlite" ".import --csv $tmp/ops.csv ops"
q() { sqlite3 "$tmp/q.sqlite" "$1"; }

rows=$(q "SELECT count(*) FROM ops")
expect=$(q "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)+(SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMSET)")
[[ "$rows" == "$expect" ]] || fail "rows $rows != $expect"

nolaunch=$(q "SELECT count(*) FROM ops WHERE kind='kernel' AND unattributed_reason='no_launch_call'")
sql_nolaunch=$(q "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL g WHERE NOT EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId=g.correlationId AND (r.globalTid & -16777216)=g.globalPid)")
[[ "$sql_nolaunch" == 1810 ]] || fail "SQL no-launch count $sql_nolaunch (data README says 1810)"
[[ "$nolaunch" == "$sql_nolaunch" ]] || fail "export no_launch_call kernels $nolaunch != $sql_nolaunch"

# Per kernel: total duration equals SUM(end-start) GROUP BY demangled name.
bad=$(q "WITH e AS (SELECT name, sum(CAST(duration_ns AS INTEGER)) t, count(*) c FROM ops WHERE kind='kernel' GROUP BY name),
              s AS (SELECT v.value name, sum(k.\"end\"-k.start) t, count(*) c FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds v ON v.id=k.demangledName GROUP BY v.value)
         SELECT count(*) FROM s LEFT JOIN e USING(name) WHERE e.t IS NOT s.t OR e.c IS NOT s.c")
[[ "$bad" == 0 ]] || fail "$bad kernel names differ in total time"

# pid = bits 24..47 of the GPU row's globalPid; tid = bits 0..23 of the launch call's globalTid.
bad=$(q "SELECT count(*) FROM ops o JOIN CUPTI_ACTIVITY_KIND_KERNEL k
           ON k.start = CAST(o.start_ns AS INTEGER) AND k.\"end\" = CAST(o.end_ns AS INTEGER) AND k.correlationId = CAST(o.correlation_id AS INTEGER)
         LEFT JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId AND (r.globalTid & -16777216) = k.globalPid
         WHERE o.kind='kernel' AND (CAST(o.pid AS INTEGER) != ((k.globalPid >> 24) & 16777215)
               OR COALESCE(CAST(NULLIF(o.tid,'') AS INTEGER), -1) != COALESCE(r.globalTid & 16777215, -1))")
[[ "$bad" == 0 ]] || fail "$bad kernel rows with a wrong pid/tid"
joined=$(q "SELECT count(*) FROM ops o JOIN CUPTI_ACTIVITY_KIND_KERNEL k ON k.start = CAST(o.start_ns AS INTEGER) AND k.\"end\" = CAST(o.end_ns AS INTEGER) AND k.correlationId = CAST(o.correlation_id AS INTEGER) WHERE o.kind='kernel'")
[[ "$joined" -ge 3442 ]] || fail "pid/tid check joined only $joined kernel rows"

# Attributed rows have a path whose last element is the innermost range; unattributed rows none.
bad=$(q "SELECT count(*) FROM ops WHERE (unattributed_reason = '' AND (nvtx_path = '' OR substr(nvtx_path, length(nvtx_path) - length(innermost_range) + 1) != innermost_range))
                                   OR (unattributed_reason != '' AND nvtx_path != '')")
[[ "$bad" == 0 ]] || fail "$bad rows with inconsistent nvtx_path/innermost_range"

# JSON export: same rows, exactly the 15 keys in order.
"$KERNLENS" export "$tmp/p.sqlite" --format json -o "$tmp/ops.json"
python3 - "$tmp/ops.json" "$rows" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == int(sys.argv[2]), (len(rows), sys.argv[2])
cols = "kind,name,short_name,start_ns,end_ns,duration_ns,device,stream,pid,tid,correlation_id,rank,nvtx_path,innermost_range,unattributed_reason".split(",")
for r in rows:
    assert list(r.keys()) == cols, list(r.keys())
    assert r["kind"] in ("kernel", "memcpy", "memset"), r["kind"]
    assert r["duration_ns"] == r["end_ns"] - r["start_ns"]
print("json export ok:", len(rows), "rows")
PY
echo "PASS analysis_export: $rows rows, $nolaunch kernels without a launch call"
