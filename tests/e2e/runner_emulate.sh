#!/usr/bin/env bash
# `kernlens profile --rounds 1 --backend emulate` on samples/mlp/mlp.py::train_step (round 0): the lines get
# plausible kernels (forward and backward GEMMs on `logits = model(x)`, none on `loss.backward()`,
# the SGD update on `opt.step()`), everything is labelled EMULATED, and the run is in the store.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
PY=${KL_PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || { echo "runner_emulate: $PY has no torch (scripts/install-deps.sh probe)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
cp "$T/ws/mlp.py" "$T/orig.py"

# One instrumented round of the loop (no discovery run: round 0 is the body and its statements).
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 2" --focus "$T/ws/mlp.py::train_step" \
  --backend emulate --format json > "$T/out.json" 2> "$T/err.txt" || { cat "$T/err.txt"; echo "runner_emulate: profile failed" >&2; exit 1; }
cmp -s "$T/ws/mlp.py" "$T/orig.py" || { echo "runner_emulate: the user's file was modified" >&2; exit 1; }
DB="$T/ws/.kernlens/kernlens.db"
# Every range of the round as the store holds it (with the ranges that launched nothing).
sqlite3 -json "$DB" "SELECT disk_first AS first_line, disk_last AS last_line, function, function_body, invocations,
  launches, excl_launches FROM ranges WHERE path = 'mlp.py' AND round_id = (SELECT max(id) FROM rounds)" > "$T/ranges.json"
sqlite3 -json "$DB" "SELECT r.status, r.backend, d.total_ops, d.mapped_ops FROM runs r JOIN rounds d ON d.run_id = r.id" > "$T/run.json"

"$PY" - "$T/out.json" "$T/ranges.json" "$T/run.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); ranges = json.load(open(sys.argv[2])); run = json.load(open(sys.argv[3]))
def fail(m): print("runner_emulate:", m, file=sys.stderr); sys.exit(1)
if not r["emulated"]: fail("result not labelled emulated")
if len(r["round_log"]) != 1 or r["rounds"] != 1: fail("one instrumented round expected: %r" % r["round_log"])
rl = r["round_log"][0]
if "emulated" not in rl["profiler_version"] or "(emulated)" not in rl["gpu"]: fail("version/gpu not labelled: %r %r" % (rl["profiler_version"], rl["gpu"]))
spans = {(s["first_line"], s["last_line"]): s for s in ranges}
body = [s for s in ranges if s["function_body"]]
if len(body) != 1 or body[0]["function"] != "train_step" or body[0]["invocations"] != 2: fail("body range: %r" % body)
for n in range(26, 32):
    s = spans.get((n, n))
    if not s or s["function"] != "train_step" or s["invocations"] != 2: fail("line %d: %r" % (n, s))
if body[0]["launches"] != sum(spans[(n, n)]["launches"] for n in range(26, 32)): fail("body != sum of its statements")
lines = {(l["line"], l["end_line"]): l for l in r["lines"] if l["file"] == "mlp.py"}
def line(n):
    if (n, n) not in lines: fail("no line %d: %s" % (n, sorted(lines)))
    return lines[(n, n)]
for l in r["lines"]:
    if l["function"] != "train_step" or l["invocations"] != 2: fail("line %r" % l)
names = lambda n: [k["name"] for k in line(n)["kernels"]]
fwd = [k for k in line(27)["kernels"] if "gemm" in k["name"] and not k["backward"]]
if sum(k["launches"] for k in fwd) != 6: fail("expected 3 forward GEMMs x 2 steps on line 27: %r" % names(27))
# The backward GEMMs (launched from the emulated autograd thread) belong to the forward line.
bwd = [k for k in line(27)["kernels"] if "gemm" in k["name"] and k["backward"]]
if sum(k["launches"] for k in bwd) < 10: fail("expected >= 5 backward GEMMs x 2 steps on line 27: %r" % names(27))
for l in r["lines"]:
    if l["backward_gpu_ns"] != sum(k["gpu_ns"] for k in l["kernels"] if k["backward"]): fail("backward_gpu_ns of %d" % l["line"])
if any("gemm" in k for k in names(29)): fail("GEMMs left on loss.backward(): %r" % names(29))
if not any("nll_loss" in k for k in names(28)): fail("no loss kernel on line 28: %r" % names(28))
if line(30)["launches"] == 0: fail("no optimizer kernels on line 30")
if (31, 31) in lines or spans[(31, 31)]["launches"] != 0: fail("`return loss` launched kernels")
mapped = sum(l["launches"] for l in r["lines"])
if mapped != sum(s["excl_launches"] for s in ranges): fail("lines and stored ranges disagree")
if mapped + sum(u["launches"] for u in r["unmapped"]) != rl["launches"]: fail("op accounting")
if len(run) != 1 or run[0]["status"] != "ok" or run[0]["backend"] != "emulate": fail("run: %r" % run)
if run[0]["total_ops"] != rl["launches"] or run[0]["mapped_ops"] != mapped: fail("stored totals: %r" % run)
print("runner_emulate: json ok (%d ops, %d mapped)" % (rl["launches"], mapped))
PY

# Text output: labelled, annotated source; and the store holds the run.
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 1" --focus mlp.py::train_step --backend emulate > "$T/out.txt" 2> "$T/err.txt" \
  || { cat "$T/err.txt"; exit 1; }
head -1 "$T/out.txt" | grep -q 'EMULATED' || { cat "$T/out.txt"; echo "runner_emulate: text output not labelled EMULATED" >&2; exit 1; }
grep -q 'logits = model(x) .*# .*gemm' "$T/out.txt" || { cat "$T/out.txt"; echo "runner_emulate: no annotated source" >&2; exit 1; }
[[ "$(sqlite3 "$DB" "SELECT count(*), sum(emulated), min(status) FROM runs")" == "2|2|ok" ]] || { sqlite3 "$DB" "SELECT * FROM runs"; echo "runner_emulate: store rows" >&2; exit 1; }
[[ "$(sqlite3 "$DB" "SELECT count(DISTINCT blob_id) FROM run_files")" == "1" ]] || { echo "runner_emulate: snapshot not deduplicated" >&2; exit 1; }
[[ "$(cat "$T/ws/.kernlens/.gitignore")" == "*" ]] || { echo "runner_emulate: .kernlens/.gitignore" >&2; exit 1; }

# Bad usage and bad input: exit codes 2 and 1 with one line.
set +e
"$KL" profile --rounds 1 --entry "python mlp.py" --root "$T/ws" > /dev/null 2>&1; [[ $? -eq 2 ]] || { echo "runner_emulate: missing --focus must exit 2" >&2; exit 1; }
"$KL" profile --rounds 1 --root "$T/ws" --entry "python mlp.py" --focus mlp.py::nope --backend emulate > /dev/null 2> "$T/e"; rc=$?
set -e
[[ $rc -eq 1 ]] && grep -q "no function 'nope'" "$T/e" || { cat "$T/e"; echo "runner_emulate: unknown function must exit 1 with a reason" >&2; exit 1; }
echo "runner_emulate: ok"
