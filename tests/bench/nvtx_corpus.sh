#!/usr/bin/env bash
# Whole-corpus correctness of annotate --all-functions / strip over the Python standard library
# (every .py file), with counts. Usage: tests/bench/nvtx_corpus.sh [path/to/kernlens] [STDLIB_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
kernlens=${1:-$here/build/kernlens}
stdlib=${2:-/usr/lib/python3.11}
[ -d "$stdlib" ] || stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
exec python3 "$here/tests/e2e/nvtx_corpus_check.py" --kernlens "$kernlens" --root "$stdlib" \
  --min-annotated 0.98 --jobs "${JOBS:-2}" "$stdlib"
