#!/usr/bin/env bash
# ctest-labels: slow
# `kernlens profile --launch slurm` against a REAL Slurm (Debian slurm-wlm) brought up as a
# single-node cluster on localhost by this test and torn down at the end. Two ranks via srun
# (one emulated export per rank, SLURM_PROCID), ingested as one run; then the same via
# `sbatch --wait`. If the cluster cannot come up, this test FAILS with the reason (no skip).
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
HERE="$SRC/tests/e2e/slurm"
fail() { echo "slurm_profile: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || fail "needs root to run slurmctld/slurmd/munged (the reference recipe runs them as root)"
for b in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/sbin/munged srun sbatch sinfo; do
  command -v "$b" >/dev/null || fail "$b missing: scripts/install-deps.sh slurm"
done
export S=$(mktemp -d /tmp/kl-slurm.XXXXXX) SLURM_CONF
SLURM_CONF=$S/slurm.conf
T=$(mktemp -d)
cleanup() { bash "$HERE/down.sh" >/dev/null 2>&1 || true; rm -rf "$T" "$S"; }
trap cleanup EXIT
if ! bash "$HERE/up.sh" > "$S/up.log" 2>&1; then
  cat "$S/up.log" >&2; fail "the Slurm cluster did not come up (see above)"
fi
srun -N1 -n1 true || fail "srun does not work on the fresh cluster"

mkdir -p "$T/ws" && cp "$SRC/samples/mlp/mlp.py" "$T/ws/"
check() {  # $1 = json, $2 = ranks, $3 = steps
  local launch
  launch=$(sqlite3 "$T/ws/.kernlens/kernlens.db" "SELECT launch FROM runs ORDER BY id DESC LIMIT 1")
  [[ "$launch" == slurm:* ]] || fail "launch $launch"
  /usr/bin/python3 - "$1" "$2" "$3" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); ranks = int(sys.argv[2]); steps = int(sys.argv[3])
def fail(m): print("slurm_profile:", m, file=sys.stderr); sys.exit(1)
rl = r["round_log"][0]
if len(rl["profiles"]) != ranks: fail("%d profiles, want one per rank: %r" % (len(rl["profiles"]), rl["profiles"]))
for k in range(ranks):
    if not any(p.endswith("profile.rank%d.sqlite" % k) for p in rl["profiles"]): fail("no output of rank %d" % k)
lines = {(l["line"], l["end_line"]): l for l in r["lines"]}
s27 = lines.get((27, 27))
if not s27 or s27["invocations"] != ranks * steps: fail("line 27 invocations %r, want %d" % (s27 and s27["invocations"], ranks * steps))
# Forward GEMMs (3 Linear layers per step and rank); the backward GEMMs they cause are entries
# marked backward on the same line.
gemms = sum(k["launches"] for k in s27["kernels"] if "gemm" in k["name"] and not k["backward"])
if gemms != 3 * ranks * steps: fail("line 27 forward GEMMs %d, want %d" % (gemms, 3 * ranks * steps))
bwd = sum(k["launches"] for k in s27["kernels"] if "gemm" in k["name"] and k["backward"])
if bwd == 0: fail("line 27 has no backward GEMMs (the autograd link put none on the forward line)")
print("slurm_profile: %d ranks ingested as one run, %d ops" % (ranks, rl["launches"]))
PY
}
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 1" --focus mlp.py::train_step --backend emulate \
  --launch slurm --ntasks 2 --timeout 240 --format json > "$T/srun.json" 2> "$T/err" || { cat "$T/err"; fail "srun profile failed"; }
check "$T/srun.json" 2 1
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps 1" --focus mlp.py::train_step --backend emulate \
  --launch slurm --slurm-mode sbatch --ntasks 1 --timeout 240 --format json > "$T/sbatch.json" 2> "$T/err" || { cat "$T/err"; fail "sbatch profile failed"; }
check "$T/sbatch.json" 1 1
# A failing job: its exit code and output come back through sbatch --wait.
set +e
"$KL" profile --rounds 1 --no-discovery --no-baseline --root "$T/ws" --entry "python mlp.py --steps x" --focus mlp.py::train_step --backend emulate \
  --launch slurm --slurm-mode sbatch --timeout 240 > /dev/null 2> "$T/err"; rc=$?
set -e
[[ $rc -eq 1 ]] && grep -q 'the program failed' "$T/err" && grep -q "invalid int value" "$T/err" \
  || { cat "$T/err"; fail "a failing sbatch job was not reported with its output"; }
[[ "$(sqlite3 "$T/ws/.kernlens/kernlens.db" "SELECT group_concat(status) FROM (SELECT status FROM runs ORDER BY id)")" == "ok,ok,failed" ]] \
  || fail "store statuses: $(sqlite3 "$T/ws/.kernlens/kernlens.db" "SELECT id, status, launch FROM runs")"
echo "slurm_profile: ok"
