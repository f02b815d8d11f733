#!/usr/bin/env bash
# One-line errors with the way out: a corrupt kernlens.db blocks profiling with the hint to delete
# it; a 0-byte one is recreated with a warning; a program that deletes the run folder is reported
# as such; old run folders are pruned to --keep-runs.
set -euo pipefail
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "robust_store: $*" >&2; exit 1; }
mkdir -p "$T/ws/.kernlens"
printf 'def f():\n    return 1\n\nf()\n' > "$T/ws/app.py"
profile() {  # profile TEMPLATE [more args]
  local t=$1; shift
  "$KL" profile --rounds 1 --no-baseline --root "$T/ws" --entry "python app.py" --focus app.py::f \
    --backend emulate --launch template --template "$t" --timeout 60 "$@"
}
DB="$T/ws/.kernlens/kernlens.db"

head -c 8192 /dev/urandom > "$DB"
set +e; profile "true # {cmd}" > /dev/null 2> "$T/err"; rc=$?; set -e
[[ $rc == 1 ]] || { cat "$T/err"; fail "corrupt db: exit $rc"; }
[[ $(wc -l < "$T/err") == 1 ]] || { cat "$T/err"; fail "corrupt db: the error is not one line"; }
grep -q "delete .*kernlens.db to start afresh" "$T/err" || { cat "$T/err"; fail "corrupt db: no hint"; }
echo "robust_store: corrupt kernlens.db: $(cat "$T/err")"

: > "$DB"
set +e; profile "true # {cmd}" > /dev/null 2> "$T/err"; set -e
grep -q "was empty (0 bytes" "$T/err" || { cat "$T/err"; fail "0-byte db recreated silently"; }
[[ $(sqlite3 "$DB" "SELECT count(*) FROM runs") == 1 ]] || fail "0-byte db: no run recorded"
echo "robust_store: 0-byte kernlens.db: recreated with a warning"

set +e; profile "rm -rf $T/ws/.kernlens/runs # {cmd}" > /dev/null 2> "$T/err"; rc=$?; set -e
[[ $rc == 1 ]] || fail "deleted runs: exit $rc"
grep -q "was deleted while the program ran" "$T/err" || { cat "$T/err"; fail "deleted run folder reported as: $(cat "$T/err")"; }
grep -q "the program failed" "$T/err" && fail "deleted run folder reported as a program failure"
echo "robust_store: a program deleting .kernlens/runs: reported as such"

mkdir -p "$T/ws/.kernlens/runs"
for i in 1 2 3 4 5; do mkdir -p "$T/ws/.kernlens/runs/old$i"; touch -d "$((6 - i)) hours ago" "$T/ws/.kernlens/runs/old$i"; done
set +e; profile "true # {cmd}" --keep-runs 3 > /dev/null 2>&1; set -e
left=$(ls "$T/ws/.kernlens/runs" | sort | tr '\n' ' ')
[[ $(ls "$T/ws/.kernlens/runs" | wc -l) == 3 ]] || fail "--keep-runs 3 left: $left"
[[ -d "$T/ws/.kernlens/runs/old5" && -d "$T/ws/.kernlens/runs/old4" && ! -d "$T/ws/.kernlens/runs/old1" ]] || fail "pruned the wrong folders: $left"
echo "robust_store: --keep-runs 3: kept $left"
echo "PASS robust_store"
