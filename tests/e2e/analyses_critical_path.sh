#!/usr/bin/env bash
# `kernlens critical-path` on a REAL Kineto trace (ResNet-50 training, 6 ProfilerStep ranges, V100)
# against an independent computation from the JSON written here: per step, the ops whose launch
# call starts in the step; GPU busy (union), holes where the next op was launched only after the
# GPU went idle (GPU waited for the CPU), other holes, CPU lead/tail, and the launch/GPU verdict.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
f="$KL_SOURCE_DIR/tests/data/real/kineto_v100_resnet50_2021_callstack.json.gz"
"$KERNLENS" critical-path "$f" --format json > "$tmp/cp.json"
python3 - "$tmp/cp.json" "$f" <<'PY'
import decimal, gzip, json, sys
r = json.load(open(sys.argv[1]))
ev = json.load(gzip.open(sys.argv[2]), parse_float=decimal.Decimal)["traceEvents"]
ns = lambda x: int(round(decimal.Decimal(x) * 1000))
steps = sorted((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e["name"]) for e in ev
               if e.get("ph") == "X" and e.get("name", "").startswith("ProfilerStep#"))
launch = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "Runtime" and "correlation" in e.get("args", {}):
        launch[e["args"]["correlation"]] = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
ops = []
for e in ev:
    if e.get("ph") == "X" and e.get("cat") in ("Kernel", "Memcpy", "Memset"):
        s = ns(e["ts"])
        ops.append((s, s + ns(e["dur"]), launch.get(e["args"].get("correlation"))))
assert r["method"] == "nvtx" and len(r["iterations"]) == len(steps) == 6, (r["method"], len(r["iterations"]))
got = {i["label"]: i for i in r["iterations"]}
launch_bound = 0
for s0, s1, name in steps:
    mine = sorted((o for o in ops if o[2] and s0 <= o[2][0] < s1), key=lambda o: (o[0], -o[1]))
    u = []
    for a, b, _ in mine:
        if u and a <= u[-1][1]: u[-1][1] = max(u[-1][1], b)
        else: u.append([a, b])
    busy = sum(b - a for a, b in u)
    wait = other = 0
    for (a0, g0), (g1, b1) in zip(u, u[1:]):
        nxt = [o for o in mine if o[0] == g1]
        if all(o[2][1] > g0 for o in nxt): wait += g1 - g0
        else: other += g1 - g0
    lead, tail = max(0, u[0][0] - s0), max(0, s1 - u[-1][1])
    g = got[name]
    want = dict(ops=len(mine), gpu_busy_ns=busy, gpu_wait_cpu_ns=wait, other_idle_ns=other, cpu_lead_ns=lead,
                cpu_tail_ns=tail, wall_ns=max(s1, u[-1][1]) - min(s0, u[0][0]),
                bound="launch" if lead + wait + tail > busy else "gpu")
    for k, v in want.items():
        assert g[k] == v, (name, k, g[k], v)
    assert g["wall_ns"] == lead + busy + wait + other + tail
    launch_bound += want["bound"] == "launch"
    print(f"{name}: {len(mine)} ops, busy {busy}, GPU waited for CPU {wait}, other idle {other}, lead {lead}, tail {tail}: {want['bound']}-bound, ok")
assert r["launch_bound_iterations"] == launch_bound
assert r["gpu_wait_cpu_ns"] == sum(i["gpu_wait_cpu_ns"] for i in r["iterations"])
PY
"$KERNLENS" critical-path "$f" --format csv | head -1 | grep -q '^iteration,rank,ops,wall_ns,gpu_busy_ns' || { echo "FAIL: csv"; exit 1; }
"$KERNLENS" critical-path "$f" | grep -q 'Launch-bound:' || { echo "FAIL: text"; exit 1; }
# The kernel-sequence method on an nsys export: pieces still add up to the wall time.
gunzip -c "$KL_SOURCE_DIR/tests/data/real/nsys/h100_2gpu_1s.sqlite.gz" > "$tmp/h.sqlite"
"$KERNLENS" critical-path "$tmp/h.sqlite" --format json | python3 -c "
import json, sys
r = json.load(sys.stdin)
for i in r['iterations']:
    assert i['wall_ns'] == i['cpu_lead_ns'] + i['gpu_busy_ns'] + i['gpu_wait_cpu_ns'] + i['other_idle_ns'] + i['cpu_tail_ns'], i
print('h100_2gpu_1s:', r['method'], len(r['iterations']), 'iterations, pieces add up')"
echo "analyses_critical_path: ok"
