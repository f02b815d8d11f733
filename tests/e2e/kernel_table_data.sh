#!/usr/bin/env bash
# The emulator's kernel names (kernel_table.json) against every real trace under tests/data/real,
# read directly with sqlite3/json (tests/e2e/kernel_table_data.py), and docs/probe.md's generated
# kernel table against the data. Stdlib Python only.
set -euo pipefail
SRC="${KL_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
PY=${KL_PYTHON:-python3}
KL_SOURCE_DIR="$SRC" exec "$PY" "$SRC/tests/e2e/kernel_table_data.py"
