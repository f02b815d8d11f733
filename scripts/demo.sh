#!/usr/bin/env bash
# make demo: the main job on a bundled sample with the offline default backend (emulate):
# the convergence loop on samples/transformer, printing the source annotated per line.
set -euo pipefail
kl=${1:-build/kernlens}
cd "$(dirname "$0")/.."
exec bash scripts/demo-loop.sh "$kl"
