#!/usr/bin/env bash
# kernlens export --format perfetto on REAL data: valid Chrome-trace JSON, X and M events, µs
# rebased to the first event with exact ns (3 decimals), slices strictly nested on every track,
# and one kernel slice per kernel row of the source file (counted with sqlite3).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for f in nsys/mfu_2gpu_before.sqlite.gz nsys/h100_2gpu_1s.sqlite.gz hta_a100_alexnet_small.json.gz; do
  src="$KL_SOURCE_DIR/tests/data/real/$f"
  "$KERNLENS" export "$src" --format perfetto -o "$tmp/trace.json" 2>/dev/null
  expect=""
  if [[ $f == *.sqlite.gz ]]; then
    gunzip -c "$src" > "$tmp/p.sqlite"
    expect=$(sqlite3 "$tmp/p.sqlite" "SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")
  fi
  python3 - "$tmp/trace.json" "$expect" "$f" <<'PY'
import json, sys
from decimal import Decimal
path, expect, name = sys.argv[1], sys.argv[2], sys.argv[3]
with open(path) as fh:
    doc = json.load(fh, parse_float=Decimal)   # exact decimals: no float rounding in the check
ev = doc["traceEvents"]
assert "displayTimeUnit" not in doc
phases = {e["ph"] for e in ev}
assert "X" in phases and "M" in phases, phases
named = {(e["pid"], e.get("tid")) for e in ev if e["ph"] == "M" and e["name"] in ("thread_name", "process_name")}
tracks = {}
kernels = 0
for e in ev:
    if e["ph"] != "X":
        continue
    ts, dur = Decimal(e["ts"]), Decimal(e["dur"])
    assert ts == ts.quantize(Decimal("0.001")) and dur >= 0, e      # whole ns
    assert ts >= 0, e                                                # rebased to the first event
    assert (e["pid"], e["tid"]) in named and (e["pid"], None) in named, e
    tracks.setdefault((e["pid"], e["tid"]), []).append((ts, ts + dur, e["name"]))
    kernels += e.get("cat") == "kernel"
for key, sl in tracks.items():
    sl.sort(key=lambda s: (s[0], -s[1]))
    stack = []
    for s, t, n in sl:
        while stack and stack[-1] <= s:
            stack.pop()
        assert not stack or t <= stack[-1], ("slices overlap on track", key, n, s, t, stack[-1])
        stack.append(t)
if expect:
    assert kernels == int(expect), (kernels, expect)
print(f"{name}: {len(ev)} events, {len(tracks)} tracks, {kernels} kernel slices, nesting ok")
PY
done
echo "PASS analysis_perfetto"
