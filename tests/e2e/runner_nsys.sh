#!/usr/bin/env bash
# ctest-resource-lock: nsys
# `kernlens profile --backend nsys` with the REAL Nsight Systems installed here (Debian 2022.4 on
# a GPU-less machine): the kl: ranges of round 0 must be in the export and in the result, on the
# program's main thread; no kernels can be captured, and the result says so honestly.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
PY=${KL_PYTHON:-python3}
command -v nsys >/dev/null || [[ -x /usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys ]] \
  || { echo "runner_nsys: nsys not installed (scripts/install-deps.sh nsys)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 2" --focus mlp.py::train_step --backend nsys \
  --timeout 240 --format json > "$T/out.json" 2> "$T/err.txt" || { cat "$T/err.txt"; echo "runner_nsys: profile failed" >&2; exit 1; }
sqlite3 -json "$T/ws/.kernlens/kernlens.db" "SELECT name, disk_first AS first_line, disk_last AS last_line, invocations
  FROM ranges WHERE path = 'mlp.py'" > "$T/ranges.json"
"$PY" - "$T/out.json" "$T/ranges.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); spans = json.load(open(sys.argv[2]))
def fail(m): print("runner_nsys:", m, file=sys.stderr); sys.exit(1)
if r["emulated"]: fail("nsys result labelled emulated")
rl = r["round_log"][0]
if not rl["profiler_version"].startswith("nsys 2"): fail("profiler version %r" % rl["profiler_version"])
lines = sorted((s["first_line"], s["last_line"]) for s in spans)
want = [(26, 31)] + [(n, n) for n in range(26, 32)]
if lines != sorted(want): fail("spans %r, want %r" % (lines, want))
for s in spans:
    if s["invocations"] != 2: fail("%s ran %d times, want 2" % (s["name"], s["invocations"]))
if rl["pushes"] != 14: fail("kl: range invocations %d, want 14" % rl["pushes"])
if rl["launches"] != 0: fail("a GPU-less machine captured %d GPU ops?" % rl["launches"])
if not any("no GPU kernels were captured" in n for n in r["notes"]): fail("no honest note: %r" % r["notes"])
print("runner_nsys: ok, profiler %s, %d kl: range invocations" % (rl["profiler_version"], rl["pushes"]))
PY
# The export itself: exactly these kl: ranges, push/pop on one thread of one process.
DB=$(ls "$T"/ws/.kernlens/runs/*/round0/out/round0.sqlite)
got=$(sqlite3 "$DB" "SELECT text, count(*) FROM NVTX_EVENTS WHERE text LIKE 'kl:%' GROUP BY 1 ORDER BY 1")
n=$(printf '%s\n' "$got" | grep -c '|2$')
[[ $n -eq 7 ]] || { echo "$got"; echo "runner_nsys: expected 7 kl: ranges x2 in the export" >&2; exit 1; }
sqlite3 "$DB" "SELECT count(DISTINCT globalTid), min(eventType), max(eventType) FROM NVTX_EVENTS WHERE text LIKE 'kl:%'" | grep -qx '1|59|59' \
  || { echo "runner_nsys: kl: ranges not push/pop on one thread" >&2; exit 1; }
ls "$T"/ws/.kernlens/runs/*/round0/out/round0.nsys-rep >/dev/null
echo "runner_nsys: ok"
