#!/usr/bin/env bash
# The project venv: .venv/ at the repo root, made from the machine's Python 3.11 (Debian's
# /usr/bin/python3, or $KL_BASE_PYTHON), holding the pinned, hash-checked packages of
# requirements/dev.txt (PyTorch 2.x from PyPI and what the tests drive).
# Idempotent: a second run with the same lock file installs nothing (stamp: .venv/.kernlens-lock).
# usage: scripts/venv.sh            prints nothing when the venv is current
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${KL_VENV:-$PWD/.venv}
LOCKS=(requirements/dev.txt requirements/wheel.txt)
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
echo "venv: installing ${LOCKS[*]} into $VENV (pinned, hash-checked; PyTorch's wheels are large: a few minutes the first time)"
rm -f "$VENV/.kernlens-lock"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input --require-hashes \
  --only-binary=:all: "${LOCKS[@]/#/-r}"
"$VENV/bin/python" -c 'import torch; print("venv: torch", torch.__version__)'
echo "$want" > "$VENV/.kernlens-lock"
