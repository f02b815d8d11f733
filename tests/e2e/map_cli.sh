#!/usr/bin/env bash
# kernlens map: an existing (emulated) profile with kl: ranges mapped onto the workspace's lines,
# checked against the export itself with sqlite3 (every GPU op is on a line or counted unmapped).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
D="$KL_SOURCE_DIR/tests/data/editor"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$KERNLENS" map "$D/mlp_emulated.sqlite" --root "$D/ws" > "$T/out.txt" || fail "map (text) failed"
grep -q "EMULATED" "$T/out.txt" || fail "no EMULATED label"
grep -q "^  20 |         h = F.relu(self.fc1(x))" "$T/out.txt" || fail "line 20 missing: $(head -5 "$T/out.txt")"
"$KERNLENS" map "$D/mlp_emulated.sqlite" --root "$D/ws" --format json > "$T/out.json" || fail "map (json) failed"
ops=$(sqlite3 "$D/mlp_emulated.sqlite" "SELECT (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL) + (SELECT count(*) FROM CUPTI_ACTIVITY_KIND_MEMCPY)")
python3 - "$T/out.json" "$ops" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
ops = int(sys.argv[2])
assert j["emulated"] is True and j["source"] == "kl-ranges", j
mapped = sum(l["launches"] for l in j["lines"])
assert mapped + j["unmapped"]["ops"] == ops, (mapped, j["unmapped"], ops)
assert all(l["file"] == "mlp.py" for l in j["lines"]), j["lines"]
lines = {l["line"] for l in j["lines"]}
assert {20, 21, 22, 29, 30} <= lines, sorted(lines)
for l in j["lines"]:
    assert sum(k["launches"] for k in l["kernels"]) == l["launches"], l
print(f"map: {mapped} of {ops} GPU ops on {len(lines)} lines")
PY
if "$KERNLENS" map /nonexistent.sqlite --root "$D/ws" 2> "$T/err"; then fail "missing file must fail"; fi
[ "$(wc -l < "$T/err")" = 1 ] || fail "error must be one line: $(cat "$T/err")"
# A real PyTorch trace (H100, BERT inference): no kl: ranges, so the python_function stacks map
# GPU ops onto a workspace file matched by path suffix. Checked against a plain scan of the trace.
mkdir -p "$T/ws/transformers/models/bert"
python3 -c "print('\n'.join('x%d = %d' % (i, i) for i in range(2000)))" > "$T/ws/transformers/models/bert/modeling_bert.py"
trace="$KL_SOURCE_DIR/tests/data/real/tracelens_h100_bert_small_infer.json.gz"
"$KERNLENS" map "$trace" --root "$T/ws" --format json > "$T/bert.json" || fail "map on the Kineto trace failed"
python3 - "$T/bert.json" "$trace" <<'PY'
import gzip, json, re, sys
j = json.load(open(sys.argv[1]))
ev = json.load(gzip.open(sys.argv[2]))["traceEvents"]
gpu = sum(1 for e in ev if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"))
frames = {int(m.group(1)) for e in ev if e.get("cat") == "python_function"
          for m in [re.search(r"modeling_bert\.py\((\d+)\)", e.get("name", ""))] if m}
assert j["source"] == "python-stacks" and j["emulated"] is False, j["source"]
mapped = sum(l["launches"] for l in j["lines"])
assert mapped + j["unmapped"]["ops"] == gpu, (mapped, j["unmapped"], gpu)
assert mapped > 0
for l in j["lines"]:
    assert l["file"] == "transformers/models/bert/modeling_bert.py", l["file"]
    assert l["line"] in frames, (l["line"], sorted(frames)[:10])
print(f"map (Kineto stacks): {mapped} of {gpu} GPU ops on {len(j['lines'])} modeling_bert.py lines")
PY
echo "PASS map_cli"
