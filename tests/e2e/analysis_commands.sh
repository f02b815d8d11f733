#!/usr/bin/env bash
# The analysis subcommands on REAL data, against numbers computed here with sqlite3/python:
# summary CSV == SUM(end-start) GROUP BY name; overlap/gaps totals == a python sweep over the
# GPU rows; every command runs on nsys, Kineto and an 8-rank directory; diff exit codes.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
data="$KL_SOURCE_DIR/tests/data/real"
gunzip -c "$data/nsys/mfu_2gpu_before.sqlite.gz" > "$tmp/mfu.sqlite"

# summary --format csv (all names) vs SQL.
"$KERNLENS" summary "$tmp/mfu.sqlite" --top 0 --format csv > "$tmp/summary.csv"
sqlite3 -csv "$tmp/mfu.sqlite" "SELECT s.value, count(*), sum(k.\"end\"-k.start) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id=k.demangledName GROUP BY s.value" > "$tmp/sql.csv"
python3 - "$tmp/summary.csv" "$tmp/sql.csv" <<'PY'
import csv, sys
ours = {r["name"]: (int(r["count"]), int(r["total_ns"])) for r in csv.DictReader(open(sys.argv[1], newline=""))}
sql = {r[0]: (int(r[1]), int(r[2])) for r in csv.reader(open(sys.argv[2], newline=""))}
assert ours == sql, set(ours.items()) ^ set(sql.items())
print("summary == SQL for", len(sql), "kernel names")
PY

# overlap and gaps vs a python sweep over the rows (per device; NCCL = name contains nccl).
"$KERNLENS" overlap "$tmp/mfu.sqlite" --format json > "$tmp/overlap.json"
"$KERNLENS" gaps "$tmp/mfu.sqlite" --min-gap 1ns --top 100000 --format json > "$tmp/gaps.json"
sqlite3 -csv "$tmp/mfu.sqlite" "
  SELECT k.deviceId, k.start, k.\"end\", CASE WHEN lower(s.value) LIKE '%nccl%' THEN 'n' ELSE 'c' END FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id=k.demangledName
  UNION ALL SELECT deviceId, start, \"end\", 'm' FROM CUPTI_ACTIVITY_KIND_MEMCPY
  UNION ALL SELECT deviceId, start, \"end\", 'm' FROM CUPTI_ACTIVITY_KIND_MEMSET" > "$tmp/rows.csv"
python3 - "$tmp/rows.csv" "$tmp/overlap.json" "$tmp/gaps.json" <<'PY'
import csv, json, sys
rows = {}
for d, s, e, k in csv.reader(open(sys.argv[1])):
    rows.setdefault(int(d), []).append((int(s), int(e), k))
def union(iv):
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out
def length(u): return sum(e - s for s, e in u)
def inter(a, b):
    i = j = 0; out = []
    while i < len(a) and j < len(b):
        s, e = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        if s < e: out.append([s, e])
        if a[i][1] < b[j][1]: i += 1
        else: j += 1
    return out
ov = {d["device"]: d for d in json.load(open(sys.argv[2]))["devices"]}
gp = json.load(open(sys.argv[3]))
gdev = {d["device"]: d for d in gp["devices"]}
for dev, rs in rows.items():
    C = union([(s, e) for s, e, k in rs if k == "c"])
    N = union([(s, e) for s, e, k in rs if k == "n"])
    M = union([(s, e) for s, e, k in rs if k == "m"])
    A = union([(s, e) for s, e, k in rs])
    o = ov[dev]
    assert o["busy_ns"] == length(A), (dev, o["busy_ns"], length(A))
    assert o["compute_ns"] == length(C) and o["nccl_ns"] == length(N) and o["memory_ns"] == length(M)
    assert o["compute_nccl_overlap_ns"] == length(inter(C, N))
    assert o["nccl_exposed_ns"] == length(N) - length(inter(C, N))
    holes = [A[i + 1][0] - A[i][1] for i in range(len(A) - 1)]
    g = gdev[dev]
    assert g["busy_ns"] == length(A) and g["gap_count"] == len(holes) and g["gap_ns"] == sum(holes), (g, len(holes), sum(holes))
    assert g["span_ns"] == A[-1][1] - A[0][0]
    print(f"device {dev}: busy {length(A)} ns, {len(holes)} gaps, nccl exposed {o['nccl_exposed_ns']} ns: ok")
assert len(gp["gaps"]) == sum(d["gap_count"] for d in gp["devices"])
PY

# Every command runs on a Kineto trace and on an 8-rank directory.
for c in info summary tree gaps overlap nccl iters memcpy launch threads diagnose; do
  "$KERNLENS" $c "$data/hta_a100_alexnet_small.json.gz" --format json > "$tmp/k.json" || fail "$c on Kineto"
  python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/k.json" || fail "$c Kineto JSON"
  "$KERNLENS" $c "$data/param_dlrm_v100_8ranks" > /dev/null || fail "$c on 8 ranks"
done
ranks=$("$KERNLENS" info "$data/param_dlrm_v100_8ranks" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['ranks'])")
[[ "$ranks" == 8 ]] || fail "8-rank directory read as $ranks ranks"
"$KERNLENS" iters "$data/kineto_v100_resnet50_2021_callstack.json.gz" | grep -q '^method: ' || fail "iters names its method"

# diff: exit 0 on itself, 3 on a regression, 0 with --no-fail.
"$KERNLENS" diff "$tmp/mfu.sqlite" "$tmp/mfu.sqlite" > /dev/null || fail "diff A A must exit 0"
set +e
"$KERNLENS" diff "$tmp/mfu.sqlite" "$data/nsys/h100_2gpu_1s.sqlite.gz" > /dev/null; rc=$?
set -e
[[ $rc == 3 ]] || fail "diff regression exit $rc (want 3)"
"$KERNLENS" diff "$tmp/mfu.sqlite" "$data/nsys/h100_2gpu_1s.sqlite.gz" --no-fail > /dev/null || fail "--no-fail"
echo "PASS analysis_commands"
