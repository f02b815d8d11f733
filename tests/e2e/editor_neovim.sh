#!/bin/bash
# Headless Neovim (Debian's 0.7.2) attached to the real `kernlens lsp` on the emulated MLP profile:
# loadProfile, inlay hints (raw requests: 0.7 has no hint UI), hovers through vim.lsp.buf.hover(),
# code lenses through vim.lsp.codelens, then two lines inserted at the top: hints and lenses must
# move with their code. Expected values come from an independent SQL + ast oracle.
# env: KERNLENS, KL_SOURCE_DIR, KL_BINARY_DIR (ctest sets them).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
"$KL_SOURCE_DIR/scripts/install-deps.sh" editor
D=$KL_SOURCE_DIR/tests/data/editor
W=$KL_BINARY_DIR/editor-e2e/neovim
rm -rf "$W"; mkdir -p "$W/ws"
cp "$D/ws/mlp.py" "$W/ws/"
/usr/bin/python3 "$KL_SOURCE_DIR/tests/e2e/editor/expected_hints.py" "$D/mlp_emulated.sqlite" "$W/ws" > "$W/oracle.json"
HOVER=$(/usr/bin/python3 -c 'import json,sys; print(",".join(str(l["line"]) for l in json.load(open(sys.argv[1]))["lines"]))' "$W/oracle.json")
cd "$W/ws"
KERNLENS=$KERNLENS PROFILE=$D/mlp_emulated.sqlite OUT=$W/report.json HOVER_LINES=$HOVER \
  timeout 120 nvim --headless --clean -c "luafile $KL_SOURCE_DIR/tests/e2e/editor/nvim_check.lua" "$W/ws/mlp.py" \
  > "$W/nvim.log" 2>&1 || { echo "nvim failed (exit $?):"; cat "$W/nvim.log"; cat "$W/report.json" 2>/dev/null; exit 1; }
/usr/bin/python3 "$KL_SOURCE_DIR/tests/e2e/editor/check_report.py" "$W/oracle.json" "$W/report.json" --shift 2
