#!/usr/bin/env bash
# `kernlens streams` on REAL profiles against an independent sweep written here: SQL rows of an
# nsys export (2 GPUs) and the Kineto JSON of an 8-rank DLRM run (3 streams per GPU) and of
# AlexNet (2 streams): time with k streams busy, per-stream busy/alone time, queued pairs and
# their serialised time (B's launch call ended before A ended; A's time with no other stream).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data="$KL_SOURCE_DIR/tests/data/real"
gunzip -c "$data/nsys/mfu_2gpu_before.sqlite.gz" > "$tmp/mfu.sqlite"

cat > "$tmp/check.py" <<'PY'
import bisect, json, sys
def union(iv):
    out = []
    for s, e in sorted(iv):
        if e <= s: continue
        if out and s <= out[-1][1]: out[-1][1] = max(out[-1][1], e)
        else: out.append([s, e])
    return out
def covered(u, s, e):
    i = max(0, bisect.bisect_right([iv[0] for iv in u], s) - 1) if u else 0
    t = 0
    while i < len(u) and u[i][0] < e:
        t += max(0, min(u[i][1], e) - max(u[i][0], s)); i += 1
    return t
def check(ours, ops, label):
    """ops: list of (rank, device, stream, start, end, launch_end or None)."""
    devs = {}
    for o in ops: devs.setdefault((o[0], o[1]), []).append(o)
    got = {(d["rank"], d["device"]): d for d in ours["devices"]}
    assert set(got) == set(devs), (set(got), set(devs))
    total_pairs = 0
    for key, rows in devs.items():
        streams = {}
        for o in rows: streams.setdefault(o[2], []).append(o)
        unions = {s: union([(o[3], o[4]) for o in v]) for s, v in streams.items()}
        pts = sorted({t for u in unions.values() for iv in u for t in iv})
        level, solo = {}, {s: [] for s in unions}
        starts = {s: [iv[0] for iv in u] for s, u in unions.items()}
        def busy_at(s, a):
            i = bisect.bisect_right(starts[s], a) - 1
            return i >= 0 and unions[s][i][1] > a
        for a, b in zip(pts, pts[1:]):
            busy = [s for s in unions if busy_at(s, a)]
            level[len(busy)] = level.get(len(busy), 0) + b - a
            if len(busy) == 1:
                so = solo[busy[0]]
                if so and so[-1][1] == a: so[-1][1] = b
                else: so.append([a, b])
        d = got[key]
        lv = d["level_ns"]
        for k in range(max(len(lv), max(level) + 1)):
            assert (lv[k] if k < len(lv) else 0) == level.get(k, 0), (label, key, k, lv, level)
        assert d["idle_ns"] + d["one_stream_ns"] + d["multi_stream_ns"] == d["active_span_ns"] == pts[-1] - pts[0]
        gs = {s["stream"]: s for s in d["streams"]}
        for s, u in unions.items():
            assert gs[s]["busy_ns"] == sum(b - a for a, b in u), (label, key, s)
            assert gs[s]["solo_ns"] == sum(b - a for a, b in solo[s]), (label, key, s)
        pairs = ser = 0
        for s, v in streams.items():
            v = sorted(v, key=lambda o: (o[3], -o[4]))
            for A, B in zip(v, v[1:]):
                if B[5] is None or B[5] > A[4]: continue
                pairs += 1
                ser += covered(solo[s], A[3], A[4])
        assert d["queued_pairs"] == pairs and d["serialised_ns"] == ser, (label, key, d["queued_pairs"], pairs, d["serialised_ns"], ser)
        total_pairs += pairs
        print(f"{label} rank {key[0]} dev {key[1]}: {len(unions)} streams, levels {dict(sorted(level.items()))}, {pairs} queued pairs, serialised {ser} ns: ok")
PY

# nsys: GPU rows joined to their launch call by correlation id AND process.
"$KERNLENS" streams "$tmp/mfu.sqlite" --format json > "$tmp/s.json"
sqlite3 -csv "$tmp/mfu.sqlite" "
  WITH g AS (SELECT deviceId, streamId, start, \"end\", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_KERNEL
             UNION ALL SELECT deviceId, streamId, start, \"end\", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMCPY
             UNION ALL SELECT deviceId, streamId, start, \"end\", correlationId, globalPid FROM CUPTI_ACTIVITY_KIND_MEMSET)
  SELECT g.deviceId, g.streamId, g.start, g.\"end\",
         (SELECT r.\"end\" FROM CUPTI_ACTIVITY_KIND_RUNTIME r WHERE r.correlationId = g.correlationId
            AND (r.globalTid & ~16777215) = g.globalPid) FROM g" > "$tmp/rows.csv"
python3 - "$tmp/s.json" "$tmp/rows.csv" "$tmp/check.py" <<'PY'
import csv, json, sys
exec(open(sys.argv[3]).read())
ops = [(0, int(d), int(s), int(a), int(b), int(l) if l else None) for d, s, a, b, l in csv.reader(open(sys.argv[2]))]
check(json.load(open(sys.argv[1])), ops, "nsys mfu_2gpu_before")
PY

# Kineto: one file, and the 8 ranks of one run (rank = distributedInfo.rank).
for input in "$data/hta_a100_alexnet_small.json.gz" "$data/param_dlrm_v100_8ranks"; do
  "$KERNLENS" streams "$input" --format json > "$tmp/s.json"
  python3 - "$tmp/s.json" "$input" "$tmp/check.py" <<'PY'
import decimal, glob, gzip, json, os, sys
exec(open(sys.argv[3]).read())
files = sorted(glob.glob(os.path.join(sys.argv[2], "*.json.gz"))) if os.path.isdir(sys.argv[2]) else [sys.argv[2]]
ns = lambda x: int(round(decimal.Decimal(x) * 1000))
ops = []
for i, f in enumerate(files):
    t = json.load(gzip.open(f), parse_float=decimal.Decimal)
    rank = t.get("distributedInfo", {}).get("rank", i) if len(files) > 1 else 0
    ev = t["traceEvents"]
    launch_end = {}
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
            launch_end[e["args"]["correlation"]] = ns(e["ts"]) + ns(e["dur"])
    for e in ev:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            a = e["args"]; s = ns(e["ts"])
            ops.append((rank, a["device"], a["stream"], s, s + ns(e["dur"]), launch_end.get(a.get("correlation"))))
check(json.load(open(sys.argv[1])), ops, os.path.basename(sys.argv[2]))
PY
done
"$KERNLENS" streams "$data/param_dlrm_v100_8ranks" --format csv | head -1 | grep -q '^rank,device,streams,active_span_ns,idle_ns' \
  || { echo "FAIL: streams CSV header"; exit 1; }
"$KERNLENS" streams "$data/hta_a100_alexnet_small.json.gz" | grep -q 'Per stream' || { echo "FAIL: streams text"; exit 1; }
echo "analyses_streams: ok"
