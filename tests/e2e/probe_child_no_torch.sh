#!/usr/bin/env bash
# Under the emulate probe, a child Python process that never imports torch (multiprocessing's
# resource tracker, a `python -c` helper) does not load torch because of the probe and writes no
# export; a child that imports torch writes one.
set -euo pipefail
: "${KL_BINARY_DIR:?}" "${KL_PYTHON:?}"
PROBE=$KL_BINARY_DIR/share/kernlens/probe
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
cat > "$T/main.py" <<'PY'
import subprocess, sys
import torch
plain = subprocess.run([sys.executable, "-c", "import sys; print('torch' in sys.modules)"],
                       capture_output=True, text=True, check=True).stdout.strip()
with_torch = subprocess.run([sys.executable, "-c", "import torch; print(torch.ones(2).sum().item())"],
                            capture_output=True, text=True, check=True).stdout.strip()
print("child-without-torch imported torch:", plain)
print("child-with-torch:", with_torch)
PY
out=$(cd "$T" && env -u PYTHONPATH PYTHONPATH="$PROBE" "$KL_PYTHON" -m kernlens_probe --backend emulate \
  --out "$T/out.sqlite" --status "$T/status.json" -- python main.py)
echo "$out"
grep -qx "child-without-torch imported torch: False" <<<"$out" || { echo "FAIL: the probe imported torch in a child that does not"; exit 1; }
grep -qx "child-with-torch: 2.0" <<<"$out" || { echo "FAIL: the torch child did not run"; exit 1; }
n=$(find "$T" -name 'out.pid*.sqlite' | wc -l)
[[ $n -eq 1 ]] || { echo "FAIL: $n child exports, want 1 (the child that imported torch)"; ls "$T"; exit 1; }
echo "ok: only the child that imports torch loads it and writes an export"
