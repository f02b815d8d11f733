#!/usr/bin/env bash
# Interrupting `kernlens profile` (SIGINT as from Ctrl-C, SIGTERM, SIGHUP, and SIGKILL) leaves no
# process of the profiled program behind — also not a grandchild that started its own session or
# double-forked — and no run left `running`: a signal records the run as interrupted at once; after
# SIGKILL the next kernlens run finds the dead owner and closes the run as interrupted.
set -euo pipefail
KL="${KERNLENS:?set KERNLENS to the kernlens binary}"
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "robust_interrupt: $*" >&2; exit 1; }
mkdir -p "$T/ws"
printf 'def f():\n    return 1\n\nf()\n' > "$T/ws/app.py"
alive() { local s; s=$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) || return 1; [[ "$s" != Z ]]; }
ARGS=(profile --rounds 1 --no-baseline --root "$T/ws" --entry "python app.py" --focus app.py::f
      --backend emulate --launch template --timeout 120)
DB="$T/ws/.kernlens/kernlens.db"
n=0
for sig in INT TERM HUP KILL; do
  n=$((n + 1))
  pids="$T/pids.$sig"; : > "$pids"
  # A simple command in the background: $! is kernlens itself.
  PIDS="$pids" "$KL" "${ARGS[@]}" --template "bash $SRC/tests/data/runner/escaping_program.sh # {cmd}" \
    > "$T/out.$sig" 2> "$T/err.$sig" &
  kpid=$!
  for _ in $(seq 300); do [[ $(wc -l < "$pids") -ge 3 ]] && break; sleep 0.05; done
  [[ $(wc -l < "$pids") -ge 3 ]] || { cat "$T/err.$sig"; fail "$sig: the program did not start"; }
  t0=$(date +%s.%N)
  kill -s "$sig" "$kpid"
  set +e; wait "$kpid"; rc=$?; set -e
  gone=0
  for _ in $(seq 150); do
    gone=1; for p in $(cat "$pids"); do alive "$p" && gone=0; done
    [[ $gone == 1 ]] && break; sleep 0.05
  done
  t1=$(date +%s.%N)
  [[ $gone == 1 ]] || fail "$sig: processes of the program survived: $(for p in $(cat "$pids"); do alive "$p" && echo "$p"; done)"
  secs=$(python3 -c "print(round($t1 - $t0, 2))")
  status=$(sqlite3 "$DB" "SELECT status FROM runs ORDER BY id DESC LIMIT 1")
  if [[ $sig == KILL ]]; then
    [[ $rc == 137 ]] || fail "KILL: exit status $rc"
    [[ $status == running ]] || fail "KILL: the run should still read running before the next start, got $status"
    # The next kernlens run closes it (the owner pid is dead).
    PIDS=/dev/null "$KL" "${ARGS[@]}" --template "true # {cmd}" > /dev/null 2>&1 || true
    status=$(sqlite3 "$DB" "SELECT status FROM runs WHERE id = $n")
    [[ $status == interrupted ]] || fail "KILL: the next run did not close the stale run ($status)"
    sqlite3 "$DB" "SELECT error FROM runs WHERE id = $n" | grep -q "ended while the run was running" || fail "KILL: no reason"
    n=$((n + 1))
  else
    [[ $rc -gt 128 ]] || fail "$sig: exit status $rc (want 128 + signal)"
    grep -q "interrupted by SIG$sig" "$T/err.$sig" || { cat "$T/err.$sig"; fail "$sig: no 'interrupted' line"; }
    [[ $status == interrupted ]] || fail "$sig: run status $status"
  fi
  echo "robust_interrupt: SIG$sig: exit $rc, all $(wc -l < "$pids") processes gone ${secs}s after the signal, run $([[ $sig == KILL ]] && echo "closed by the next run" || echo "$status")"
done
[[ $(sqlite3 "$DB" "SELECT count(*) FROM runs WHERE status = 'running'") == 0 ]] || fail "a run is left running"
echo "PASS robust_interrupt"
