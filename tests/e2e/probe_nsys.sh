#!/usr/bin/env bash
# ctest-resource-lock: nsys
# Real Nsight Systems 2022.4 (Debian non-free, GPU-less machine) + the probe: a two-thread sample,
# instrumented through the overlay, run under `nsys profile`; the SQLite export must contain
# EXACTLY the expected kl: push/pop ranges, each on the expected thread of the python process.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PROBE="${KL_BINARY_DIR:+$KL_BINARY_DIR/share/kernlens/probe}"
[[ -n "$PROBE" && -d "$PROBE/kernlens_probe" ]] || PROBE="$SRC/core/runner/probe"
PY=${KL_PYTHON:-python3}
NSYS=$(command -v nsys || true)
[[ -n "$NSYS" ]] || NSYS=/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/nsys
[[ -x "$NSYS" ]] || { echo "probe_nsys: nsys not found (scripts/install-deps.sh nsys)" >&2; exit 1; }
command -v sqlite3 >/dev/null || { echo "probe_nsys: sqlite3 CLI missing" >&2; exit 1; }
"$PY" -c "import torch" 2>/dev/null || { echo "probe_nsys: $PY has no torch (scripts/venv.sh makes .venv)" >&2; exit 1; }

T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cp -r "$SRC/tests/data/probe/threads_ws" "$T/ws"
mkdir -p "$T/ov/files" && cp "$SRC/tests/data/probe/threads_overlay/threads_sample.py" "$T/ov/files/"
printf '{"version":1,"workspace":"%s","files":{"threads_sample.py":"files/threads_sample.py"}}\n' "$T/ws" > "$T/ov/overlay.json"

# Options that avoid the 2022.4 hang (reference/nsys-on-cpu.md §7); a 180 s guard anyway.
cd "$T/ws"
PYTHONPATH="$PROBE" "$NSYS" profile --trace=nvtx,osrt --sample=none --cpuctxsw=none \
  --force-overwrite=true --export=sqlite -o "$T/rep" \
  "$PY" -m kernlens_probe --backend nsys --overlay "$T/ov" --status "$T/status.json" \
  -- python threads_sample.py > "$T/log" 2>&1 &
CLI=$!
for _ in $(seq 180); do kill -0 "$CLI" 2>/dev/null || break; sleep 1; done
if kill -0 "$CLI" 2>/dev/null; then
  # Hung: SIGINT the CLI, then SIGTERM the agent it started (session "profile-*-<cli pid>",
  # reparented to init, does not exit with the CLI); drop the leftover .qdstrm.
  kill -INT "$CLI" 2>/dev/null || true; sleep 5; kill -KILL "$CLI" 2>/dev/null || true
  for p in $(pgrep -f -- "--session-name=profile-[^ ]*-$CLI( |$)" || true); do kill -TERM "$p" 2>/dev/null || true; done
  cat "$T/log"; echo "probe_nsys: nsys profile hung (killed after 180 s)" >&2; exit 1
fi
set +e; wait "$CLI"; rc=$?; set -e
cd "$SRC"
if [[ $rc -ne 0 ]]; then cat "$T/log"; echo "probe_nsys: nsys profile failed (rc=$rc)" >&2; exit 1; fi
DB="$T/rep.sqlite"
[[ -s "$DB" ]] || { cat "$T/log"; echo "probe_nsys: no export written" >&2; exit 1; }
# PyPI's PyTorch 2.x has its own NVTX (nvtx3, injected by nsys); a CPU-only build falls back to the
# ctypes library. Never the no-op: the exact ranges below prove nsys recorded them either way.
grep -Eq '"nvtx_provider": "(torch|ctypes:libnvToolsExt.so.1)"' "$T/status.json" || { cat "$T/status.json"; echo "probe_nsys: NVTX provider is neither torch's nor the ctypes library" >&2; exit 1; }

product=$(sqlite3 "$DB" "SELECT value FROM EXPORT_META_DATA WHERE name='EXPORT_PRODUCT_VERSION'")
[[ "$product" == 2022.4* ]] || { echo "probe_nsys: unexpected nsys version '$product'" >&2; exit 1; }

# Exactly these kl: ranges: name | thread role | count. The main thread is the process's tid == pid.
got=$(sqlite3 "$DB" "SELECT text, CASE WHEN (globalTid & 16777215) = ((globalTid >> 24) & 16777215) THEN 'main' ELSE 'worker' END, count(*)
                    FROM NVTX_EVENTS WHERE text LIKE 'kl:%' GROUP BY 1, 2 ORDER BY 1, 2")
want=$'kl:threads_sample.py:10-10|worker|3\nkl:threads_sample.py:19-19|main|2'
if [[ "$got" != "$want" ]]; then
  echo "probe_nsys: kl: ranges differ"; echo "--- got"; echo "$got"; echo "--- want"; echo "$want"; exit 1
fi
# All kl: ranges are push/pop (59), default domain, closed, in one process; the worker ranges on one thread.
sqlite3 "$DB" "SELECT count(*) FROM NVTX_EVENTS WHERE text LIKE 'kl:%' AND (eventType != 59 OR domainId != 0 OR \"end\" IS NULL OR \"end\" < start)" | grep -qx 0 \
  || { echo "probe_nsys: malformed kl: rows" >&2; exit 1; }
sqlite3 "$DB" "SELECT count(DISTINCT globalTid & -16777216), count(DISTINCT globalTid) FROM NVTX_EVENTS WHERE text LIKE 'kl:%'" | grep -qx '1|2' \
  || { echo "probe_nsys: expected 1 process and 2 threads" >&2; exit 1; }
pid=$(sqlite3 "$DB" "SELECT DISTINCT (globalTid >> 24) & 16777215 FROM NVTX_EVENTS WHERE text LIKE 'kl:%'")
grep -q "\"pid\": $pid" "$T/status.json" || { echo "probe_nsys: ranges not from the probe's process" >&2; exit 1; }
echo "probe_nsys: ok ($product)"; echo "$got"
