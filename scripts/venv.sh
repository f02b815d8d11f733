#!/usr/bin/env bash
# The project venv: .venv/ at the repo root, made from the machine's Python 3.11 (Debian's
# /usr/bin/python3, or $KL_BASE_PYTHON), holding the pinned, hash-checked packages of
# requirements/dev.txt (PyTorch 2.x from PyPI and what the tests drive) and requirements/wheel.txt
# (the wheel's build backend and tools: `make wheel`, tests/e2e/install_wheel.sh).
# Idempotent: a second run with the same lock files installs nothing (stamp: .venv/.kernlens-lock).
# usage: scripts/venv.sh            prints nothing when the venv is current
#        scripts/venv.sh bench      the benchmark venv instead: .venv-bench/ from requirements/bench.txt
#                                   (the tools tests/bench/peers_bench.py compares kernlens with;
#                                   made by `make bench` only, never by the tests)
set -euo pipefail
cd "$(dirname "$0")/.."
KIND=${1:-dev}
case $KIND in
  dev) VENV=${KL_VENV:-$PWD/.venv} ;;
  bench) VENV=${KL_BENCH_VENV:-$PWD/.venv-bench} ;;
  *) echo "usage: scripts/venv.sh [dev|bench]" >&2; exit 2 ;;
esac
LOCKS=(requirements/$KIND.txt)
[[ $KIND == dev ]] && LOCKS+=(requirements/wheel.txt)
BASE=${KL_BASE_PYTHON:-/usr/bin/python3}
want=$(cat "${LOCKS[@]}" | sha256sum | cut -d' ' -f1)
if [[ -x $VENV/bin/python && -f $VENV/.kernlens-lock && $(cat "$VENV/.kernlens-lock") == "$want" ]]; then
  exit 0
fi
command -v "$BASE" >/dev/null 2>&1 || { echo "venv: no base interpreter $BASE (Debian python3; set KL_BASE_PYTHON)" >&2; exit 1; }
ver=$("$BASE" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[[ $ver == 3.1[0-9] ]] || { echo "venv: $BASE is Python $ver; the lock file is for 3.11 (set KL_BASE_PYTHON)" >&2; exit 1; }
if [[ ! -x $VENV/bin/python ]]; then
  echo "venv: creating $VENV from $BASE (Python $ver)"
  "$BASE" -m venv "$VENV" 2>/dev/null || {
    bash scripts/install-deps.sh venv
    rm -rf "$VENV"
    "$BASE" -m venv "$VENV"
  }
fi
echo "venv: installing ${LOCKS[*]} into $VENV (pinned, hash-checked; the wheels are large: a few minutes the first time)"
rm -f "$VENV/.kernlens-lock"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes \
  --only-binary=:all: "${LOCKS[@]/#/-r}"
if [[ $KIND == dev ]]; then
  "$VENV/bin/python" -c 'import torch; print("venv: torch", torch.__version__)'
else
  "$VENV/bin/python" -c 'import importlib.metadata as m; print("venv:", ", ".join(p + " " + m.version(p) for p in ("nsys-ai", "HolisticTraceAnalysis", "duckdb")))'
fi
echo "$want" > "$VENV/.kernlens-lock"
