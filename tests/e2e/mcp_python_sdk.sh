#!/usr/bin/env bash
# `kernlens mcp` driven by the official MCP Python SDK (pinned in requirements/dev.in): schemas,
# profile on samples/mlp (emulate) against its expected lines, the line tools, the analyses on real
# exports (equal to the CLI's --format json), resources, a cancelled long run (no process left),
# malformed requests. The checks are in tests/e2e/mcp_client.py.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
PY=${KL_PYTHON:-python3}
$PY -c "import mcp, torch" 2>/dev/null || { echo "FAIL: $PY cannot import mcp and torch (scripts/venv.sh)"; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
WS=$T/ws
cp -r "$KL_SOURCE_DIR/samples/mlp" "$WS"
mkdir -p "$WS/profiles" "$WS/bert/transformers/models/bert"
R=$KL_SOURCE_DIR/tests/data/real
for f in hta_a100_alexnet_small.json.gz hta_a100_triton_tiny.json.gz hta_a100_nccl_2ranks_rank0.json.gz \
  tracelens_h100_bert_small_infer.json.gz; do cp "$R/$f" "$WS/profiles/"; done
# The BERT trace's Python stacks name transformers/models/bert/modeling_bert.py: a stand-in file.
$PY -c "print('\n'.join('x%d = %d' % (i, i) for i in range(2000)))" > "$WS/bert/transformers/models/bert/modeling_bert.py"
# A program that runs for minutes: the run the test cancels.
cat > "$WS/slow.py" <<'PY'
import time

import torch


def work():
    x = torch.ones(4)
    for _ in range(3000):
        x = x + 1
        time.sleep(0.1)
    return x


work()
PY
exec $PY "$KL_SOURCE_DIR/tests/e2e/mcp_client.py" "$KERNLENS" "$WS" "$KL_SOURCE_DIR"
