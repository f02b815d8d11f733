#!/usr/bin/env bash
# `kernlens nccl` payloads and stragglers on REAL traces against an independent computation
# from the JSON written here: the 8 ranks of a DLRM run (sizes from the nccl:<op> annotation's
# Input Dims around each launch; which rank arrives last at each collective, on the model
# timeline = each rank's own clock + the offset `kernlens info` reports) and a vLLM rank on B200
# (sizes from the NCCL kernel's own args; algorithm/protocol from its name).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data="$KL_SOURCE_DIR/tests/data/real"
dir="$data/param_dlrm_v100_8ranks"
"$KERNLENS" nccl "$dir" --format json --top 0 > "$tmp/n.json"
"$KERNLENS" info "$dir" --format json > "$tmp/info.json"
python3 - "$tmp/n.json" "$tmp/info.json" "$dir" <<'PY'
import decimal, glob, gzip, json, math, os, re, sys
r = json.load(open(sys.argv[1])); info = json.load(open(sys.argv[2]))
offsets = [c["offset_ns"] for c in info["rank_clocks"]]  # per input file, in file (name) order
ns = lambda x: int(round(decimal.Decimal(x) * 1000))
def ctype(name):
    m = re.search(r"nccl(?:DevKernel_|Kernel_|_)?([A-Za-z0-9]+)", name)
    return m.group(1) if m else "Other"
fac = {"AllReduce": lambda n: 2 * (n - 1) / n, "AllToAll": lambda n: (n - 1) / n, "SendRecv": lambda n: 1.0}
rows, arrivals = {}, {}
files = sorted(glob.glob(os.path.join(sys.argv[3], "*.json.gz")))
for fi, f in enumerate(files):
    t = json.load(gzip.open(f), parse_float=decimal.Decimal); ev = t["traceEvents"]; rank = t["distributedInfo"]["rank"]
    launch = {e["args"]["correlation"]: e for e in ev if e.get("ph") == "X" and e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    ann = [e for e in ev if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    for k in sorted((e for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel" and "nccl" in e["name"].lower()), key=lambda e: ns(e["ts"])):
        typ, size = ctype(k["name"]), -1
        L = launch.get(k["args"].get("correlation"))
        if L:
            s0, s1 = ns(L["ts"]), ns(L["ts"]) + ns(L["dur"])
            inner = None
            for a in ann:
                a0 = ns(a["ts"]); a1 = a0 + ns(a["dur"])
                if a["tid"] == L["tid"] and a["pid"] == L["pid"] and a0 <= s0 and s1 <= a1 and (inner is None or a0 > inner[0] or (a0 == inner[0] and a1 <= inner[1])):
                    inner = (a0, a1, a)
            if inner and inner[2]["name"].startswith("nccl:"):
                if "all_to_all" in inner[2]["name"]: typ = "AllToAll"
                dims = inner[2].get("args", {}).get("Input Dims")
                bpe = {"float": 4, "int": 4, "long int": 8, "long": 8, "double": 8, "c10::Half": 2, "c10::BFloat16": 2}
                ty = inner[2]["args"]["Input type"][0]
                if dims and dims[0] and ty in bpe:
                    size = math.prod(dims[0]) * bpe[ty]
        key = (typ, size)
        x = rows.setdefault(key, [0, 0, 0.0])
        x[0] += 1; x[1] += ns(k["dur"]); x[2] += size * fac[typ](8) if size >= 0 else 0
        arrivals.setdefault(typ, {}).setdefault(rank, []).append(ns(k["ts"]) + offsets[fi])
got = {(p["type"], p["bytes"]): p for p in r["payloads"]}
assert set(got) == set(rows), (set(got), set(rows))
for key, (cnt, tot, bus) in rows.items():
    p = got[key]
    assert p["count"] == cnt and p["total_ns"] == tot and p["ranks"] == 8, (key, p)
    if key[1] >= 0:
        assert math.isclose(p["busbw_gb_per_s"], bus / tot, rel_tol=1e-9), (key, p["busbw_gb_per_s"], bus / tot)
        assert math.isclose(p["algbw_gb_per_s"], key[1] * cnt / tot, rel_tol=1e-9)
        assert p["link_peak_gb_per_s"] == 150, p  # V100 SXM2 NVLink2: 300 GB/s total, 150 per direction
# Stragglers: k-th call of a type on every rank = one collective call.
last, waited, calls = {}, {}, 0
for typ, per in arrivals.items():
    for idx in range(max(len(v) for v in per.values())):
        pts = {rk: sorted(v)[idx] for rk, v in per.items() if idx < len(v)}
        if len(pts) < 2: continue
        calls += 1
        mx = max(pts.values()); lr = min(rk for rk, t in pts.items() if t == mx)
        last[lr] = last.get(lr, 0) + 1
        for rk, t in pts.items(): waited[rk] = waited.get(rk, 0) + mx - t
assert r["straggler_calls_count"] == calls, (r["straggler_calls_count"], calls)
for s in r["straggler_ranks"]:
    assert s["last_arrivals"] == last.get(s["rank"], 0), (s, last)
    assert s["waited_ns"] == waited.get(s["rank"], 0), (s, waited)
print(f"DLRM 8 ranks: {len(rows)} payload rows, {calls} collective calls matched; last arrivals per rank {dict(sorted(last.items()))}: ok")
PY
"$KERNLENS" nccl "$data/tracelens_b200_vllm_tp8_rank0.json.gz" --format json > "$tmp/b.json"
python3 - "$tmp/b.json" "$data/tracelens_b200_vllm_tp8_rank0.json.gz" <<'PY'
import decimal, gzip, json, sys
r = json.load(open(sys.argv[1]))
ev = json.load(gzip.open(sys.argv[2]), parse_float=decimal.Decimal)["traceEvents"]
want = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") == "kernel" and "In msg nelems" in e.get("args", {}):
        a = e["args"]
        n = a["Out msg nelems"] if a["Collective name"].startswith("_allgather") or "all_gather" in a["Collective name"] else a["In msg nelems"]
        bpe = {"BFloat16": 2, "Float": 4}[a["dtype"]]
        want[n * bpe] = want.get(n * bpe, 0) + 1
got = {p["bytes"]: p["count"] for p in r["payloads"] if p["size_source"] == "kernel-args"}
assert got == want, (got, want)
ag = [p for p in r["payloads"] if p["type"] == "AllGather"]
assert ag and ag[0]["algorithm"] == "RING" and ag[0]["protocol"] == "LL" and ag[0]["ranks"] == 8, ag
print("vLLM B200: payload sizes from kernel args", want, "AllGather RING/LL: ok")
PY
"$KERNLENS" nccl "$dir" --format csv --table stragglers | head -1 | grep -q '^rank,calls,last_arrivals,waited_ns,caused_ns' || { echo "FAIL: csv"; exit 1; }
"$KERNLENS" nccl "$dir" | grep -q 'Stragglers' || { echo "FAIL: text"; exit 1; }
echo "analyses_nccl: ok"
