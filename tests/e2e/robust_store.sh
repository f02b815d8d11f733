#!/usr/bin/env bash
# One-line errors with the way out: a corrupt kernlens.db blocks profiling with the hint to delete
# it; a 0-byte one is recreated with a warning; a program that deletes the run folder is reported
# as such; old run folders are pruned to --keep-runs. The kernel catalogue in the same file: not a
# database, a table damaged after opening, locked by another process — one line naming the file,
# with the way out. A profile export damaged inside: one line.
set -euo pipefail
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
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
one_line() {  # one_line WHAT PATTERN: the last command's stderr ($T/err) is one line matching PATTERN
  [[ $rc == 1 ]] || { cat "$T/err"; fail "$1: exit $rc"; }
  [[ $(wc -l < "$T/err") == 1 ]] || { cat "$T/err"; fail "$1: the error is not one line"; }
  grep -q -- "$2" "$T/err" || { cat "$T/err"; fail "$1: expected /$2/"; }
  echo "robust_store: $1: $(cat "$T/err")"
}
cd "$T/ws"
head -c 8192 /dev/urandom > "$DB"
set +e; "$KL" kernels > /dev/null 2> "$T/err"; rc=$?; set -e
one_line "catalogue in a corrupt kernlens.db" "kernlens.db: .*delete .*kernlens.db to start afresh (the run folders in .*runs are kept)"

rm -f "$DB" "$DB"-*
"$KL" ncu import "$SRC/tests/data/ncu/synthetic/summary_per_kernel.csv" > /dev/null
/usr/bin/python3 - "$DB" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1]); c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
size = c.execute("PRAGMA page_size").fetchone()[0]
root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'ncu_kernels'").fetchone()[0]
c.close()
b = bytearray(open(sys.argv[1], "rb").read()); b[(root - 1) * size] = 0x42  # not a b-tree page type
open(sys.argv[1], "wb").write(b)
PY
set +e; "$KL" kernels > /dev/null 2> "$T/err"; rc=$?; set -e
one_line "catalogue table damaged after opening" "kernlens.db: database disk image is malformed; delete .*kernlens.db to start afresh"

rm -f "$DB" "$DB"-*
"$KL" ncu import "$SRC/tests/data/ncu/synthetic/summary_per_kernel.csv" > /dev/null
/usr/bin/python3 -c "
import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None); c.execute('BEGIN EXCLUSIVE')
print('locked', flush=True); time.sleep(9)" "$DB" > "$T/locked" &
locker=$!
until grep -q locked "$T/locked" 2>/dev/null; do sleep 0.05; done
set +e; "$KL" kernels > /dev/null 2> "$T/err"; rc=$?; set -e
kill $locker 2>/dev/null || true; wait $locker 2>/dev/null || true
one_line "catalogue locked by another process" "kernlens.db: database is locked (another kernlens or sqlite3 holds it"
cd "$T"

/usr/bin/python3 - "$SRC/tests/fuzz/corpus/fuzz_nsys_reader/mock_reduced.sqlite" "$T/damaged.sqlite" <<'PY'
import sqlite3, sys
src = open(sys.argv[1], "rb").read()
c = sqlite3.connect("file:%s?immutable=1" % sys.argv[1], uri=True)
size = c.execute("PRAGMA page_size").fetchone()[0]
root = c.execute("SELECT rootpage FROM sqlite_master WHERE name = 'CUPTI_ACTIVITY_KIND_KERNEL'").fetchone()[0]
b = bytearray(src); b[(root - 1) * size] = 0x42
open(sys.argv[2], "wb").write(b)
PY
for cmd in summary info tree; do
  set +e; "$KL" $cmd "$T/damaged.sqlite" > /dev/null 2> "$T/err"; rc=$?; set -e
  one_line "$cmd on an export with a damaged table" "damaged.sqlite: .*malformed"
done
echo "PASS robust_store"
