#!/usr/bin/env bash
# make demo: the main job on a bundled sample, with the offline default backend.
set -euo pipefail
kl=${1:-build/kernlens}
cd "$(dirname "$0")/.."
"$kl" --version
echo "The profiling loop is not built yet; showing the commands that exist:"
"$kl" --help
