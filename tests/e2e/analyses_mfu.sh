#!/usr/bin/env bash
# `kernlens mfu` on REAL Kineto traces recorded with record_shapes (BERT on H100, vLLM on B200)
# against an independent computation from the JSON written here: each kernel's launch call ->
# the innermost cpu_op around it on the same thread -> FLOPs from its Input Dims (2MNK GEMMs,
# 2*B*H*L*S*(E+Ev) attention, causal halved) once per op, kernel time of the ops' kernels, and MFU
# against the datasheet dense BF16 peak (H100 SXM 989.5, B200 2250 TFLOP/s).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
data="$KL_SOURCE_DIR/tests/data/real"
for f in tracelens_h100_bert_small_infer:989.5 tracelens_b200_vllm_tp8_rank0:2250; do
  name=${f%%:*}; peak=${f##*:}
  "$KERNLENS" mfu "$data/$name.json.gz" --format json --top 0 > "$tmp/m.json"
  python3 - "$tmp/m.json" "$data/$name.json.gz" "$peak" <<'PY'
import decimal, gzip, json, math, sys
r = json.load(open(sys.argv[1])); peak = float(sys.argv[3]) * 1e12
ev = json.load(gzip.open(sys.argv[2]), parse_float=decimal.Decimal)["traceEvents"]
ns = lambda x: int(round(decimal.Decimal(x) * 1000))
def fl(name, a):
    d, c = a.get("Input Dims", []), a.get("Concrete Inputs", [])
    if name in ("aten::mm", "aten::addmm"):
        A, B = (d[0], d[1]) if name == "aten::mm" else (d[1], d[2])
        return 2 * A[0] * A[1] * B[1]
    if name in ("aten::bmm", "aten::baddbmm"):
        A, B = (d[0], d[1]) if name == "aten::bmm" else (d[1], d[2])
        return 2 * A[0] * A[1] * A[2] * B[2]
    if name == "aten::_flash_attention_forward":   # q [B, L, H, E]
        q, k, v = d[0], d[1], d[2]
        f = 2 * q[0] * q[2] * q[1] * k[1] * (q[3] + v[3])
        return f / 2 if len(c) > 8 and c[8] == "True" else f
    if name == "aten::_scaled_dot_product_flash_attention":  # q [B, H, L, E]
        q, k, v = d[0], d[1], d[2]
        f = 2 * q[0] * q[1] * q[2] * k[2] * (q[3] + v[3])
        return f / 2 if len(c) > 4 and c[4] == "True" else f
    return None
ops = {}
for i, e in enumerate(ev):
    if e.get("ph") == "X" and e.get("cat") == "cpu_op":
        ops.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), i))
launch = {}
for e in ev:
    if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver") and "correlation" in e.get("args", {}):
        launch[e["args"]["correlation"]] = e
inv = {}
for e in ev:
    if e.get("ph") != "X" or e.get("cat") != "kernel": continue
    L = launch.get(e["args"].get("correlation"))
    if not L: continue
    s0, s1 = ns(L["ts"]), ns(L["ts"]) + ns(L["dur"])
    best = None
    for a, b, i in ops.get((L["pid"], L["tid"]), []):
        if a <= s0 and s1 <= b and (best is None or a > best[0] or (a == best[0] and b <= best[1])): best = (a, b, i)
    if not best: continue
    op = ev[best[2]]
    f = fl(op["name"], op["args"]) if "Input Dims" in op["args"] else None
    if f is None: continue
    x = inv.setdefault(best[2], [f, 0, op["name"]])
    x[1] += ns(e["dur"])
flops = sum(x[0] for x in inv.values()); kns = sum(x[1] for x in inv.values())
assert r["source"] == "kineto-shapes", r["source"]
assert math.isclose(r["flops"], flops, rel_tol=1e-12), (r["flops"], flops)
assert r["flop_kernel_ns"] == kns, (r["flop_kernel_ns"], kns)
d = r["devices"][0]
assert d["peak_bf16_flops_per_s"] == peak, d
mfu = flops / peak * 1e9 / kns
assert math.isclose(d["kernel_mfu"], mfu, rel_tol=1e-9), (d["kernel_mfu"], mfu)
assert math.isclose(sum(o["flops"] for o in r["operators"]), flops, rel_tol=1e-12)
assert sum(o["invocations"] for o in r["operators"]) == len(inv)
print(f"{sys.argv[2].split('/')[-1]}: {len(inv)} GEMM/attention ops, {flops:.4g} FLOPs in {kns} ns of kernels, "
      f"{flops / kns / 1e3:.2f} TFLOP/s, kernel MFU {mfu:.2%} of {d['peak_model']}: ok")
PY
done
"$KERNLENS" mfu "$data/tracelens_h100_bert_small_infer.json.gz" | grep -q 'H100 SXM' || { echo "FAIL: mfu text"; exit 1; }
"$KERNLENS" mfu "$data/tracelens_h100_bert_small_infer.json.gz" --format csv | head -1 | grep -q '^group,key,file,line,invocations' \
  || { echo "FAIL: mfu csv"; exit 1; }
# No shapes recorded: says so, FLOPs 0, GEMM kernels listed as uncounted.
gunzip -c "$data/nsys/mfu_2gpu_before.sqlite.gz" > "$tmp/mfu.sqlite"
"$KERNLENS" mfu "$tmp/mfu.sqlite" --format json | python3 -c "
import json, sys
r = json.load(sys.stdin)
assert r['source'] == 'none' and r['flops'] == 0, r['source']
assert any(d['uncounted_gemm_kernels'] > 0 for d in r['devices'])
print('mfu_2gpu_before: no shapes; uncounted GEMM kernels:', sum(d['uncounted_gemm_kernels'] for d in r['devices']))"
echo "analyses_mfu: ok"
