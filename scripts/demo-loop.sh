#!/usr/bin/env bash
# Demo of the convergence loop: `kernlens profile` on the transformer sample with the EMULATED
# backend (no GPU needed), printing train_step's source annotated with GPU time and kernels per line,
# then every line the loop descended to (model, block, attention, MLP, norm).
#   scripts/demo-loop.sh [path/to/kernlens]     (default: build/kernlens; `make demo` calls this)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KERNLENS=${1:-${KERNLENS:-$ROOT/build/kernlens}}
[ -x "$KERNLENS" ] || { echo "demo-loop: $KERNLENS not found (make build first)" >&2; exit 1; }
KERNLENS=$(cd "$(dirname "$KERNLENS")" && pwd)/$(basename "$KERNLENS")  # we cd into a copy below
# The entry's `python3` is the project venv's (PyTorch 2.x from PyPI, made by scripts/venv.sh),
# as for a user whose venv is active.
[ -x "$ROOT/.venv/bin/python3" ] || { echo "demo-loop: no project venv: run scripts/venv.sh (make deps)" >&2; exit 1; }
export PATH="$ROOT/.venv/bin:$PATH"
WS=$(mktemp -d)
trap 'rm -rf "$WS"' EXIT
cp -r "$ROOT/samples/transformer/." "$WS/"
echo "== kernlens profile on samples/transformer (EMULATED backend: kernels and times are modelled on CPU PyTorch)"
echo "   \$ kernlens profile --entry \"python3 train.py --steps 2\" --focus train.py::train_step --backend emulate --rounds 8"
cd "$WS"
"$KERNLENS" profile --root "$WS" --entry "python3 train.py --steps 2" --focus train.py::train_step \
  --backend emulate --rounds 8 --format text
