#!/usr/bin/env bash
# ctest-labels: lsp
# End-to-end: the real `kernlens lsp` binary over stdio pipes, driven by a Python LSP client
# (tests/e2e/lsp_client.py): initialize → initialized → shutdown → exit with exit code 0,
# malformed framing that the server survives, exit codes without shutdown and at end of input.
set -euo pipefail
: "${KERNLENS:?path to the kernlens binary}"
: "${KL_SOURCE_DIR:?repository root}"
command -v python3 >/dev/null || { echo "lsp_stdio: python3 is required" >&2; exit 1; }
exec python3 "$KL_SOURCE_DIR/tests/e2e/lsp_client.py" "$KERNLENS"
