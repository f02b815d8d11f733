#!/usr/bin/env bash
# torch backend end to end: the probe wraps a two-thread instrumented sample in torch.profiler and
# the Kineto JSON must carry exactly the kl: ranges as user_annotation events, per thread.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PROBE="${KL_BINARY_DIR:+$KL_BINARY_DIR/share/kernlens/probe}"
[[ -n "$PROBE" && -d "$PROBE/kernlens_probe" ]] || PROBE="$SRC/core/runner/probe"
PY=${KL_PYTHON:-python3}
"$PY" -c "import torch" 2>/dev/null || { echo "probe_torch: $PY has no torch (scripts/venv.sh makes .venv)" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cp -r "$SRC/tests/data/probe/threads_ws" "$T/ws"
mkdir -p "$T/ov/files" && cp "$SRC/tests/data/probe/threads_overlay/threads_sample.py" "$T/ov/files/"
printf '{"version":1,"workspace":"%s","files":{"threads_sample.py":"files/threads_sample.py"}}\n' "$T/ws" > "$T/ov/overlay.json"
(cd "$T/ws" && PYTHONPATH="$PROBE" timeout 300 "$PY" -m kernlens_probe --backend torch --overlay "$T/ov" \
   --out "$T/trace.json" -- python threads_sample.py) > "$T/log" 2>&1 || { cat "$T/log"; echo "probe_torch: probe failed" >&2; exit 1; }
"$PY" - "$T/trace.json" <<'PYEOF'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
ann = [e for e in doc["traceEvents"] if e.get("cat") == "user_annotation" and e["name"].startswith("kl:")]
got = collections.Counter((e["name"], e["tid"]) for e in ann)
names = collections.Counter(e["name"] for e in ann)
want = {"kl:threads_sample.py:10-10": 3, "kl:threads_sample.py:19-19": 2}
assert names == want, names
tids = {n: {t for (m, t) in got if m == n} for n in want}
assert all(len(v) == 1 for v in tids.values()) and tids["kl:threads_sample.py:10-10"] != tids["kl:threads_sample.py:19-19"], tids
print("probe_torch: ok", dict(names), "source:", doc.get("kernlens", {}).get("source", "kineto"))
PYEOF
