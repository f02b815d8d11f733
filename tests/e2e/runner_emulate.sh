#!/usr/bin/env bash
# `kernlens profile --backend emulate` on samples/mlp/mlp.py::train_step (round 0): the lines get
# plausible kernels (forward and backward GEMMs on `logits = model(x)`, none on `loss.backward()`,
# the SGD update on `opt.step()`), everything is labelled EMULATED, and the run is in the store.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
PY=/usr/bin/python3
"$PY" -c "import torch" 2>/dev/null || { echo "runner_emulate: $PY has no torch (scripts/install-deps.sh probe)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
cp "$T/ws/mlp.py" "$T/orig.py"

"$KL" profile --rounds 1 --root "$T/ws" --entry "python mlp.py --steps 2" --focus "$T/ws/mlp.py::train_step" \
  --backend emulate --format json > "$T/out.json" 2> "$T/err.txt" || { cat "$T/err.txt"; echo "runner_emulate: profile failed" >&2; exit 1; }
cmp -s "$T/ws/mlp.py" "$T/orig.py" || { echo "runner_emulate: the user's file was modified" >&2; exit 1; }

"$PY" - "$T/out.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
def fail(m): print("runner_emulate:", m, file=sys.stderr); sys.exit(1)
if not r["emulated"]: fail("result not labelled emulated")
if "emulated" not in r["profiler_version"] or "(emulated)" not in r["gpu"]: fail("version/gpu not labelled: %r %r" % (r["profiler_version"], r["gpu"]))
spans = {(s["first_line"], s["last_line"]): s for s in r["spans"] if s["path"] == "mlp.py"}
def line(n): 
    if (n, n) not in spans: fail("no span for line %d: %s" % (n, sorted(spans)))
    return spans[(n, n)]
body = [s for s in r["spans"] if s["function_body"]]
if len(body) != 1 or body[0]["function"] != "train_step" or body[0]["invocations"] != 2: fail("body range: %r" % body)
for n in range(26, 32):
    s = line(n)
    if s["function"] != "train_step" or s["invocations"] != 2: fail("line %d: %r" % (n, s))
names = lambda n: [k["short_name"] for k in line(n)["kernels"]]
fwd = [k for k in line(27)["kernels"] if "gemm" in k["short_name"] and not k["backward"]]
if sum(k["launches"] for k in fwd) != 6: fail("expected 3 forward GEMMs x 2 steps on line 27: %r" % names(27))
# The backward GEMMs (launched from the emulated autograd thread) belong to the forward line.
bwd = [k for k in line(27)["kernels"] if "gemm" in k["short_name"] and k["backward"]]
if sum(k["launches"] for k in bwd) < 10: fail("expected >= 5 backward GEMMs x 2 steps on line 27: %r" % names(27))
for n in range(26, 32):
    if line(n)["backward_gpu_ns"] != sum(k["gpu_ns"] for k in line(n)["kernels"] if k["backward"]): fail("backward_gpu_ns of %d" % n)
if any("gemm" in k["short_name"] for k in line(29)["kernels"]): fail("GEMMs left on loss.backward(): %r" % names(29))
if not any("nll_loss" in k for k in names(28)): fail("no loss kernel on line 28: %r" % names(28))
if line(30)["exclusive_launches"] == 0: fail("no optimizer kernels on line 30")
if line(31)["launches"] != 0: fail("`return loss` launched kernels: %r" % names(31))
tot = sum(s["exclusive_launches"] for s in r["spans"])
if tot != r["mapped_ops"] or tot + sum(u["launches"] for u in r["unmapped"]) != r["total_ops"]: fail("op accounting")
if body[0]["launches"] != sum(line(n)["launches"] for n in range(26, 32)): fail("body != sum of its statements")
if r["run"]["status"] != "ok" or r["run"]["backend"] != "emulate": fail("run: %r" % r["run"])
print("runner_emulate: json ok (%d ops, %d mapped)" % (r["total_ops"], r["mapped_ops"]))
PY

# Text output: labelled, annotated source; and the store holds the run.
"$KL" profile --rounds 1 --root "$T/ws" --entry "python mlp.py --steps 1" --focus mlp.py::train_step --backend emulate > "$T/out.txt" 2> "$T/err.txt" \
  || { cat "$T/err.txt"; exit 1; }
head -1 "$T/out.txt" | grep -q '^EMULATED' || { cat "$T/out.txt"; echo "runner_emulate: text output not labelled EMULATED" >&2; exit 1; }
grep -q 'logits = model(x)' "$T/out.txt" && grep -q '↳ .*gemm' "$T/out.txt" || { cat "$T/out.txt"; echo "runner_emulate: no annotated source" >&2; exit 1; }
DB="$T/ws/.kernlens/kernlens.db"
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
