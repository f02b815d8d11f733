#!/usr/bin/env bash
# kernlens cute summary/export/map on buffers built from known events (no GPU needed).
set -euo pipefail
K=${KERNLENS:?}; SRC=${KL_SOURCE_DIR:?}
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 - <<'PY'
import struct
ev = [(1_000_000, 500, 0, 0), (1_000_600, 300, 1, 0), (1_001_000, 200, 2, 0), (1_000_100, 700, 0, 1)]
cap = 6
words = [len(ev)] + [x for e in ev for x in e] + [0] * 4 * (cap - len(ev))
open("regions.bin", "wb").write(struct.pack("<%dq" % len(words), *words))
hdr = "{'descr': '<i8', 'fortran_order': False, 'shape': (%d,), }" % len(words)
hdr += " " * ((64 - (10 + len(hdr) + 1) % 64) % 64) + "\n"
open("regions.npy", "wb").write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(hdr)) + hdr.encode() + struct.pack("<%dq" % len(words), *words))
over = [9] + [x for e in ev[:2] for x in e]
open("over.bin", "wb").write(struct.pack("<%dq" % len(over), *over))
open("bad.bin", "wb").write(b"\0" * 20)
PY
"$K" cute summary regions.npy --source "$SRC/samples/cute/tiled_add.py" --format json > s.json
python3 - s.json <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
t = {x["name"]: x for x in s["tags"]}
assert t["TAG_LOAD"]["count"] == 2 and t["TAG_LOAD"]["mean_ns"] == 600 and t["TAG_LOAD"]["min_ns"] == 500, t
assert abs(t["TAG_LOAD"]["share"] - 1200 / 1700) < 1e-12
assert t["TAG_ADD"]["line"] > 0 and s["overflow_events"] == 0 and s["capacity_per_unit"] == 6
PY
"$K" cute summary regions.bin | grep -q "tag_1" || fail "unnamed tags"
"$K" cute summary over.bin | grep -q "overflow: the kernel recorded 7 event" || fail "overflow not reported"
set +e; "$K" cute summary bad.bin 2> err.txt; rc=$?; set -e
[ $rc -eq 1 ] && grep -q "malformed" err.txt || fail "malformed buffer"
"$K" cute export regions.bin --source "$SRC/samples/cute/tiled_add.py" -o trace.json > /dev/null
python3 - trace.json <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
x = [e for e in t["traceEvents"] if e["ph"] == "X"]
assert len(x) == 4 and {e["name"] for e in x} == {"TAG_LOAD", "TAG_ADD", "TAG_STORE"}
assert min(e["ts"] for e in x) == 0 and any(e["dur"] == 0.5 for e in x)
names = {e["args"]["name"] for e in t["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_name"}
assert names == {"tid 0", "tid 1"}, names
PY
"$K" cute map "$SRC/samples/cute/tiled_add.py" | grep -q "TAG_ADD (1) lane0_warp0_stop" || fail "map"
# A kernel in the transformer_nuggets README style (the tag passed bare, by keyword, as a literal,
# Int32-wrapped): the sites `cute map` finds are the profiler calls Python's own ast sees.
cat > readme_style.py <<'PY'
import cutlass
import cutlass.cute as cute
from cutlass import Int32
from transformer_nuggets.cute.profiler import lane0_warp0_start, lane0_warp0_stop, profile_region

TAG_ITERATION = 0
TAG_COMPUTE = 1
STORE = 2
MAX_EVENTS = 64


@cute.kernel
def kernel(output, prof_buf, max_events, tag):
    bidx, _, _ = cute.arch.block_idx()
    with profile_region(prof_buf, max_events, TAG_ITERATION, bidx):
        for i in cutlass.range(4):
            with profile_region(prof_buf, MAX_EVENTS, tag=TAG_COMPUTE, unit_id=bidx, event_idx=Int32(1)):
                output[i] = output[i] + 1
    with profile_region(prof_buf, max_events, STORE, bidx, target_warp=Int32(0)):
        output[0] = 0
    eid = lane0_warp0_start(prof_buf, max_events)
    output[1] = 1
    lane0_warp0_stop(prof_buf, eid, cutlass.Int32(3), bidx, max_events)
    with profile_region(prof_buf, max_events, tag, bidx):  # a runtime tag: no site
        output[2] = 2
PY
"$K" cute map readme_style.py --format json > map.json
python3 - readme_style.py map.json <<'PY'
import ast, json, sys
tree = ast.parse(open(sys.argv[1]).read())
consts = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
          for t in n.targets if isinstance(n.value, ast.Constant)}
want = []
for node in ast.walk(tree):
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in ("profile_region", "lane0_warp0_stop")):
        continue
    tag = node.args[2] if len(node.args) > 2 else next(k.value for k in node.keywords if k.arg == "tag")
    if isinstance(tag, ast.Call):
        tag = tag.args[0]
    if isinstance(tag, ast.Constant):
        want.append((node.func.id, tag.value))
    elif tag.id in consts:
        want.append((node.func.id, consts[tag.id]))
m = json.load(open(sys.argv[2]))
got = [(s["api"], s["tag_id"]) for s in m["sites"]]
assert sorted(got) == sorted(want) and len(want) == 4, (got, want)
assert {c["name"] for c in m["constants"]} == {"TAG_ITERATION", "TAG_COMPUTE", "STORE"}, m["constants"]
assert m["warnings"] == [], m["warnings"]
PY
echo "ncu_cute_regions: ok"
