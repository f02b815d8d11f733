#!/usr/bin/env bash
# `kernlens sync` on REAL profiles against an independent computation written here: SQL over the
# nsys tables (cloverleaf: cudaDeviceSynchronize + blocking cudaMemcpy; h100: stream syncs and
# cudaMemcpyAsync into pageable memory) and Python over the Kineto JSON (alexnet: pageable async
# copies; bert: call sites = innermost user Python frame around the call).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data="$KL_SOURCE_DIR/tests/data/real"

for f in pipit_a100x4_cloverleaf nsys/h100_2gpu_1s; do
  db="$tmp/$(basename $f).sqlite"
  gunzip -c "$data/$f.sqlite.gz" > "$db"
  "$KERNLENS" sync "$db" --format json > "$tmp/sync.json"
  # Independent: runtime calls by stripped name; async copies count when the copy is DtoH into
  # pageable memory (same correlation id AND same process).
  sqlite3 -csv "$db" "
    WITH r AS (SELECT r.start, r.\"end\", r.correlationId, r.globalTid,
                      CASE WHEN instr(s.value, '_v') > 0 THEN substr(s.value, 1, instr(s.value, '_v') - 1) ELSE s.value END AS n
               FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId)
    SELECT n, count(*), sum(\"end\" - start) FROM r
    WHERE n IN ('cudaDeviceSynchronize','cudaStreamSynchronize','cudaEventSynchronize','cudaThreadSynchronize')
       OR (n LIKE 'cudaMemcpy%' AND n NOT LIKE '%Async%')
       OR (n LIKE 'cudaMemcpy%Async%' AND EXISTS (SELECT 1 FROM CUPTI_ACTIVITY_KIND_MEMCPY m
             WHERE m.correlationId = r.correlationId AND m.globalPid = (r.globalTid & ~16777215)
               AND m.copyKind = 2 AND m.dstKind = 0))
    GROUP BY n" > "$tmp/sql.csv"
  python3 - "$tmp/sync.json" "$tmp/sql.csv" "$f" <<'PY'
import csv, json, sys
r = json.load(open(sys.argv[1]))
sql = {row[0]: (int(row[1]), int(row[2])) for row in csv.reader(open(sys.argv[2]))}
ours = {a["name"]: (a["calls"], a["total_ns"]) for a in r["by_api"]}
assert ours == sql, (sys.argv[3], ours, sql)
assert r["blocked_ns"] == sum(v[1] for v in sql.values()) == r["explicit_ns"] + r["implicit_ns"]
assert r["calls"] == sum(v[0] for v in sql.values())
assert sum(t["blocked_ns"] for t in r["threads"]) == r["blocked_ns"]
assert sum(s["total_ns"] for s in r["by_site"]) == r["blocked_ns"]
print(f"sync {sys.argv[3]}: {r['calls']} calls, blocked {r['blocked_ns']} ns == SQL ({len(sql)} APIs)")
PY
done
# nsys 2022.2 writes every runtime call twice (plain name + "_v3020", same thread and correlation
# id): one call, counted once (the longer row).
gunzip -c "$data/pipit_a100_saxpy_mpi_nvtx.sqlite.gz" > "$tmp/saxpy.sqlite"
want=$(sqlite3 -csv "$tmp/saxpy.sqlite" "
  SELECT count(*), sum(d) FROM (SELECT r.globalTid, r.correlationId, max(r.\"end\" - r.start) AS d
    FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId
    WHERE s.value LIKE 'cudaMemcpy%' AND s.value NOT LIKE '%Async%' OR s.value LIKE '%Synchronize%'
    GROUP BY r.globalTid, r.correlationId)")
got=$("$KERNLENS" sync "$tmp/saxpy.sqlite" --format json | python3 -c "import json,sys; r=json.load(sys.stdin); print(f\"{r['calls']},{r['blocked_ns']}\")")
[[ "$got" == "$want" ]] || { echo "FAIL: saxpy sync $got, SQL $want"; exit 1; }
echo "sync saxpy (duplicated runtime rows): $got == SQL"
"$KERNLENS" sync "$tmp/pipit_a100x4_cloverleaf.sqlite" --format csv | head -1 | grep -q '^group,key,calls,total_ns' \
  || { echo "FAIL: sync CSV header"; exit 1; }
"$KERNLENS" sync "$tmp/pipit_a100x4_cloverleaf.sqlite" | grep -q 'CPU blocked in' || { echo "FAIL: sync text"; exit 1; }

# Kineto: alexnet (pageable async copies, no stacks) and bert (python frames -> call sites).
for f in hta_a100_alexnet_small tracelens_h100_bert_small_infer; do
  "$KERNLENS" sync "$data/$f.json.gz" --format json > "$tmp/sync.json"
  python3 - "$tmp/sync.json" "$data/$f.json.gz" "$f" <<'PY'
import decimal, gzip, json, re, sys
r = json.load(open(sys.argv[1]))
t = json.load(gzip.open(sys.argv[2]), parse_float=decimal.Decimal)
ev = t["traceEvents"]
ns = lambda x: int(round(decimal.Decimal(x) * 1000))
explicit = {"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize", "cuCtxSynchronize",
            "cuStreamSynchronize", "cuEventSynchronize"}
pageable = set()
for e in ev:
    if e.get("cat") in ("gpu_memcpy", "Memcpy") and "DtoH" in e["name"] and "Pageable" in e["name"]:
        pageable.add(e["args"]["correlation"])
calls = []
for e in ev:
    if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver", "Runtime"): continue
    n = re.sub(r"_v\d+$", "", e["name"])
    if n in explicit or (n.startswith("cudaMemcpy") and "Async" not in n) or \
       (n.startswith("cudaMemcpy") and "Async" in n and e["args"].get("correlation") in pageable):
        calls.append(e)
blocked = sum(ns(e["dur"]) for e in calls)
assert r["calls"] == len(calls), (r["calls"], len(calls))
assert r["blocked_ns"] == blocked, (r["blocked_ns"], blocked)
# Call sites: innermost python_function of user code (not site-packages / torch / built-in)
# containing the call on the same pid/tid.
frames = [e for e in ev if e.get("cat") == "python_function" and e.get("ph") == "X"]
def lib(f): return f.startswith("<") or "site-packages/" in f or "dist-packages/" in f or f.startswith("torch/") or "/torch/" in f or "/lib/python3" in f
want = {}
for c in calls:
    s0, s1 = ns(c["ts"]), ns(c["ts"]) + ns(c["dur"])
    best = {True: None, False: None}  # innermost user frame / innermost frame of any code
    for f in frames:
        if f["pid"] != c["pid"] or f["tid"] != c["tid"]: continue
        f0 = ns(f["ts"]); f1 = f0 + ns(f["dur"])
        m = re.match(r"(.*)\((\d+)\): (.*)", f["name"])
        if not m or int(m.group(2)) <= 0 or not (f0 <= s0 and s1 <= f1): continue
        for user in (True, False):
            if user and lib(m.group(1)): continue
            b = best[user]
            if b is None or f0 > b[0] or (f0 == b[0] and f1 <= b[1]): best[user] = (f0, f1, m)
    b = best[True] or best[False]
    key = (b[2].group(1), int(b[2].group(2))) if b else None
    want[key] = want.get(key, 0) + ns(c["dur"])
got = {}
for s in r["by_site"]:
    key = (s["file"], s["line"]) if s["via"] == "python" else None
    got[key] = got.get(key, 0) + s["total_ns"]
assert got == want, (got, want)
print(f"sync {sys.argv[3]}: {len(calls)} calls, blocked {blocked} ns, {len([k for k in want if k])} python call sites: ok")
json.dump({f"{k[0]}:{k[1]}": v for k, v in want.items() if k}, open(sys.argv[1] + ".sites", "w"))
PY
done
# The editor's data: `kernlens map` (the loaded-profile results the server shows as hints) puts
# the same sync time on the workspace line that made the calls.
mkdir -p "$tmp/ws/moca/library/profiling"
# (long enough for line 34: lines past the end of a workspace file are not shown)
for i in $(seq 1 40); do echo "x$i = $i"; done > "$tmp/ws/moca/library/profiling/profile.py"
"$KERNLENS" map "$data/tracelens_h100_bert_small_infer.json.gz" --root "$tmp/ws" --format json > "$tmp/map.json"
python3 - "$tmp/map.json" "$tmp/sync.json.sites" <<'PY'
import json, sys
lines = {f"{l['file']}:{l['line']}": l for l in json.load(open(sys.argv[1]))["lines"]}
want = json.load(open(sys.argv[2]))["moca/library/profiling/profile.py:34"]
l = lines["moca/library/profiling/profile.py:34"]
assert l["sync_ns"] == want and l["sync_calls"] == 2, (l, want)
print(f"map: profile.py:34 syncs {want} ns (2 calls), as computed from the JSON: ok")
PY
echo "analyses_sync: ok"
