#!/bin/bash
# Real VS Code: code-server (from the npm registry) on 127.0.0.1 with the packaged kernlens .vsix,
# driven by headless Debian Chromium through playwright-core. The extension starts the real
# `kernlens lsp`, loads the emulated MLP profile (KERNLENS_LOAD_PROFILE), and the page must show
# the oracle's hints on exactly its lines, hovers listing each line's kernels, the function lenses,
# and, after two lines are typed at the top, the same hints two lines lower.
# Artifacts: $KL_BINARY_DIR/editor-e2e/vscode/{01-hints,02-hover,03-after-edit}.png, report.json,
# server logs. Tools are cached in $KL_EDITOR_TOOLS (default ~/.cache/kernlens/editor-tools).
# env: KERNLENS, KL_SOURCE_DIR, KL_BINARY_DIR (ctest sets them).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}" "${KL_BINARY_DIR:?}"
S=$KL_SOURCE_DIR
"$S/scripts/install-deps.sh" build editor
TOOLS=${KL_EDITOR_TOOLS:-$HOME/.cache/kernlens/editor-tools}
case "$(node --version 2>/dev/null | sed -E 's/^v([0-9]+).*/\1/')" in
  18) CSV=${CODE_SERVER_VERSION:-4.89.1} ;;   # Debian 12's nodejs 18
  *) CSV=${CODE_SERVER_VERSION:-4.100.3} ;;   # Node 20
esac
CODE_SERVER_VERSION=$CSV bash "$S/tests/e2e/editor/install-code-server.sh" "$TOOLS"
CS=$TOOLS/code-server-$CSV/bin/code-server
PW=$TOOLS/playwright-core-1.65.1
[[ -f $PW/node_modules/playwright-core/package.json ]] ||
  npm install --prefix "$PW" --no-audit --no-fund playwright-core@1.65.1 >/dev/null

W=$KL_BINARY_DIR/editor-e2e/vscode
rm -rf "$W"; mkdir -p "$W/ws" "$W/ud/User" "$W/extensions" "$W/ext-src"
cp "$S/tests/data/editor/ws/mlp.py" "$W/ws/"
/usr/bin/python3 "$S/tests/e2e/editor/expected_hints.py" "$S/tests/data/editor/mlp_emulated.sqlite" "$W/ws" > "$W/oracle.json"

# Package the extension from a copy of its sources (npm ci from the committed lockfile).
tar -C "$S/vscode-extension" --exclude=node_modules --exclude=out --exclude='*.vsix' -cf - . | tar -C "$W/ext-src" -xf -
(cd "$W/ext-src" && npm ci --no-audit --no-fund >/dev/null 2>&1 && npx vsce package --allow-missing-repository -o "$W/kernlens.vsix" >"$W/vsce.log" 2>&1) ||
  { echo "packaging the extension failed:"; tail -20 "$W/vsce.log"; exit 1; }

export XDG_CONFIG_HOME=$W/ud/xdg-config XDG_DATA_HOME=$W/ud/xdg-data
"$CS" --user-data-dir "$W/ud" --extensions-dir "$W/extensions" --install-extension "$W/kernlens.vsix" >"$W/install.log" 2>&1 ||
  { cat "$W/install.log"; exit 1; }
cat > "$W/ud/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none", "security.workspace.trust.enabled": false,
  "editor.inlayHints.enabled": "on", "editor.codeLens": true, "telemetry.telemetryLevel": "off",
  "update.mode": "none", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "workbench.tips.enabled": false, "chat.disableAIFeatures": true, "editor.minimap.enabled": false,
  "kernlens.serverPath": "$KERNLENS", "kernlens.lenses.profileUnprofiled": true
}
JSON
PORT=${KL_CODE_SERVER_PORT:-$((20000 + RANDOM % 20000))}
# setsid without job control does not fork: $! is the process-group id (kill the whole group).
KERNLENS_LOAD_PROFILE=$S/tests/data/editor/mlp_emulated.sqlite \
  setsid "$CS" --auth none --bind-addr 127.0.0.1:$PORT --disable-telemetry --disable-update-check \
  --disable-workspace-trust --user-data-dir "$W/ud" --extensions-dir "$W/extensions" "$W/ws" >"$W/code-server.log" 2>&1 &
PGID=$!
trap 'kill -- -$PGID 2>/dev/null; sleep 1; kill -9 -- -$PGID 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
NODE_PATH=$PW/node_modules timeout 300 node "$S/tests/e2e/editor/vscode_e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$W/ws" "$W" mlp.py || { echo "browser run failed"; tail -30 "$W/code-server.log"; exit 1; }
/usr/bin/python3 "$S/tests/e2e/editor/check_report.py" "$W/oracle.json" "$W/report.json" --shift 2
echo "screenshots: $W/01-hints.png $W/02-hover.png $W/03-after-edit.png"
