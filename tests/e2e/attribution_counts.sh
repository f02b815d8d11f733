#!/usr/bin/env bash
# Exact counts of `kernlens tree` on a two-process nsys export whose correlation ids repeat
# across the processes (the attribution benchmark's shape, small), checked against SQL on the
# same file: every kernel is counted once (not once per process), the GPU time adds up, and
# every tree node's kernel count equals a containment query over NVTX_EVENTS.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
GEN=$KL_BINARY_DIR/tests/bench/kl_ingest_bench
[[ -x $GEN ]] || { echo "missing $GEN (built with the project)"; exit 1; }
command -v sqlite3 >/dev/null || { echo "needs the sqlite3 CLI"; exit 1; }
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-attr-counts-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
N=4000
"$GEN" generate "$WORK/x.sqlite" "$N" "$KL_SOURCE_DIR/tests/data/fixtures/nsys-schema.sql" >/dev/null
"$KERNLENS" tree "$WORK/x.sqlite" --format json --kernels 0 > "$WORK/tree.json"

# Independent truth, from SQL only. A kernel's launch: the runtime row with its correlation id
# in ITS process (globalPid/globalTid bits 24..47 = PID); its node: the texts of the NVTX
# push/pop ranges around that call on the call's thread, outermost first.
cp "$WORK/x.sqlite" "$WORK/truth.sqlite"
sqlite3 "$WORK/truth.sqlite" > "$WORK/truth.txt" <<'EOF'
CREATE INDEX rt_corr ON CUPTI_ACTIVITY_KIND_RUNTIME(correlationId);
CREATE INDEX nv_tid ON NVTX_EVENTS(globalTid, start);
CREATE TEMP TABLE launch AS
  SELECT k.rowid AS kid, k."end" - k.start AS dur, r.globalTid AS tid, r.start AS cs, r."end" AS ce
  FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r
    ON r.correlationId = k.correlationId AND ((r.globalTid >> 24) & 16777215) = ((k.globalPid >> 24) & 16777215);
SELECT 'kernels', count(*), sum("end" - start) FROM CUPTI_ACTIVITY_KIND_KERNEL;
SELECT 'join_on_id_only', count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k
  JOIN CUPTI_ACTIVITY_KIND_RUNTIME r ON r.correlationId = k.correlationId;
SELECT 'launched', count(*), count(DISTINCT kid) FROM launch;
SELECT 'in', l.kid, l.dur, n.start, n."end", n.text FROM launch l JOIN NVTX_EVENTS n
  ON n.globalTid = l.tid AND n.eventType = 59 AND n.start <= l.cs AND l.ce <= n."end";
EOF

python3 - "$WORK/tree.json" "$WORK/truth.txt" "$N" <<'EOF'
import json, sys
tree = json.load(open(sys.argv[1]))
n = int(sys.argv[3])
truth = {}
stacks = {}  # kernel -> (dur, [(start, -end, text)])
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("|")
    if f[0] == "in":
        e = stacks.setdefault(int(f[1]), [int(f[2]), []])
        e[1].append((int(f[3]), -int(f[4]), f[5]))
    else:
        truth[f[0]] = [int(x) for x in f[1:]]
paths = {}
for dur, st in stacks.values():
    p = " > ".join(t for _, _, t in sorted(st))
    c, ns = paths.get(p, (0, 0))
    paths[p] = (c + 1, ns + dur)
fail = []
def check(what, got, want):
    if got != want:
        fail.append(f"{what}: kernlens {got}, SQL {want}")
nk, sumd = truth["kernels"]
check("kernels in the export", nk, n)
check("join on correlation id alone double-counts", truth["join_on_id_only"][0], 2 * n)
check("kernels launched (each once)", truth["launched"], [n, n])
u = tree["unattributed"]
check("total_ns", tree["total_ns"], sumd)
check("no_launch_call_ops", u["no_launch_call_ops"], n - truth["launched"][1])
roots_ops = sum(r["ops"] for r in tree["roots"])
check("ops in the tree + unattributed", roots_ops + u["no_launch_call_ops"] + u["outside_ranges_ops"], n)
# Exclusive ops per node path = kernels whose innermost stack is exactly that path.
got = {}
def walk(node, prefix):
    p = node["name"] if not prefix else prefix + " > " + node["name"]
    if node["exclusive_ops"]:
        got[p] = (node["exclusive_ops"], node["exclusive_ns"])
    for c in node["children"]:
        walk(c, p)
for r in tree["roots"]:
    walk(r, "")
check("nodes (path -> exclusive ops, ns)", got, paths)
check("ops outside every range", u["outside_ranges_ops"], n - sum(v[0] for v in paths.values()))
if fail:
    print("FAIL\n" + "\n".join(fail[:20]))
    sys.exit(1)
print(f"ok: {n} kernels counted once; {len(paths)} tree paths match SQL")
EOF
