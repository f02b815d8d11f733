#!/bin/bash
# Stops the daemons started by up.sh, by their PID files only.
S=${S:?set S to a scratch dir}
stop() { [ -f "$1" ] || return 0; P=$(cat "$1"); kill "$P" 2>/dev/null; for i in $(seq 100); do [ -e /proc/$P ] || break; sleep 0.1; done; kill -9 "$P" 2>/dev/null; return 0; }
for f in $S/slurmd-*.pid; do stop $f; done; stop $S/slurmctld.pid; stop $S/munge/munged.pid
