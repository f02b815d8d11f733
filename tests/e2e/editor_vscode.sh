#!/bin/bash
# ctest-labels: editor
# Real VS Code: code-server (from the npm registry) on 127.0.0.1 with the packaged kernlens .vsix
# (bundled client + embedded server, as `make vsix` builds it), driven by headless Debian Chromium
# through playwright-core. The extension starts its bundled `kernlens lsp` (no serverPath set),
# loads the emulated MLP profile (KERNLENS_LOAD_PROFILE), and the page must show the oracle's hints on exactly its lines, hovers listing each line's kernels, the function lenses,
# and, after two lines are typed at the top, the same hints two lines lower.
# Then a profiling run of samples/transformer (emulate backend): the ▶ Profile lens clicked, the
# first hints after round 1 (time from the click recorded), the cancellable progress, the call
# line's inclusive time, "kernlens: Show run", and the hover on the hottest line (>= 5 kernel
# rows, no horizontal clipping); checked by check_run_report.py.
# Then `pip install kernlens`: a .vsix WITHOUT a bundled server, no kernlens.serverPath, and a fresh
# venv holding the wheel (`make wheel`'s script) selected as the workspace's Python interpreter
# (python.defaultInterpreterPath): the extension must start that venv's kernlens (seen in /proc:
# the language server process runs the binary inside the venv's site-packages) and the page must
# show the oracle's hints again.
# ctest-resource-lock: wheel-build
# Artifacts: $KL_BINARY_DIR/editor-e2e/vscode/{01-hints,02-hover,03-after-edit,run-*}.png,
# report.json, run-report.json, server logs. Tools are cached in $KL_EDITOR_TOOLS (default ~/.cache/kernlens/editor-tools).
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
rm -rf "$W"; mkdir -p "$W/ws" "$W/ud/User" "$W/extensions"
cp "$S/tests/data/editor/ws/mlp.py" "$W/ws/"
/usr/bin/python3 "$S/tests/e2e/editor/expected_hints.py" "$S/tests/data/editor/mlp_emulated.sqlite" "$W/ws" > "$W/oracle.json"

# Package the extension as `make vsix` does: esbuild bundle + this build's server embedded
# (bin/kernlens, share/kernlens/probe); the script fails on any vsce warning.
bash "$S/scripts/package-vsix.sh" "$KL_BINARY_DIR" "$W/kernlens.vsix"
# No kernlens.serverPath below: the extension must start its bundled server. A `kernlens` on PATH
# that records its use proves the fallback was not taken.
mkdir -p "$W/fakebin"
printf '#!/bin/sh\ntouch "%s/used-kernlens-from-PATH"\nexit 1\n' "$W" > "$W/fakebin/kernlens"
chmod +x "$W/fakebin/kernlens"
export PATH="$W/fakebin:$PATH"

export XDG_CONFIG_HOME=$W/ud/xdg-config XDG_DATA_HOME=$W/ud/xdg-data
"$CS" --user-data-dir "$W/ud" --extensions-dir "$W/extensions" --install-extension "$W/kernlens.vsix" >"$W/install.log" 2>&1 ||
  { cat "$W/install.log"; exit 1; }
cat > "$W/ud/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none", "security.workspace.trust.enabled": false,
  "editor.inlayHints.enabled": "on", "editor.codeLens": true, "telemetry.telemetryLevel": "off",
  "update.mode": "none", "extensions.autoCheckUpdates": false, "extensions.autoUpdate": false,
  "workbench.tips.enabled": false, "chat.disableAIFeatures": true, "editor.minimap.enabled": false,
  "kernlens.lenses.profileUnprofiled": true, "git.openRepositoryInParentFolders": "never"
}
JSON
PGID=
stop_code_server() { [[ -z $PGID ]] || { kill -- -$PGID 2>/dev/null; sleep 1; kill -9 -- -$PGID 2>/dev/null || true; }; PGID=; }
trap stop_code_server EXIT
# start_code_server FOLDER LOG [VAR=VALUE...]: code-server on a free port; sets PORT and PGID.
start_code_server() {
  local folder=$1 logf=$2; shift 2
  PORT=${KL_CODE_SERVER_PORT:-$((20000 + RANDOM % 20000))}
  # setsid without job control does not fork: $! is the process-group id (kill the whole group).
  env "$@" setsid "$CS" --auth none --bind-addr 127.0.0.1:$PORT --disable-telemetry --disable-update-check \
    --disable-workspace-trust --user-data-dir "$W/ud" --extensions-dir "$W/extensions" "$folder" >"$logf" 2>&1 &
  PGID=$!
  for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
}
start_code_server "$W/ws" "$W/code-server.log" KERNLENS_LOAD_PROFILE=$S/tests/data/editor/mlp_emulated.sqlite
NODE_PATH=$PW/node_modules timeout 300 node "$S/tests/e2e/editor/vscode_e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$W/ws" "$W" mlp.py || { echo "browser run failed"; tail -30 "$W/code-server.log"; exit 1; }
/usr/bin/python3 "$S/tests/e2e/editor/check_report.py" "$W/oracle.json" "$W/report.json" --shift 2
[[ ! -e $W/used-kernlens-from-PATH ]] || { echo "FAIL: the extension ran kernlens from PATH, not its bundled server"; exit 1; }
ls "$W"/extensions/*/bin/kernlens >/dev/null || { echo "FAIL: the installed extension has no bin/kernlens"; exit 1; }
stop_code_server

# A profiling run of the transformer sample (emulated GPU), started from the lens.
T=$W/transformer
cp -r "$S/samples/transformer" "$T"; rm -rf "$T/.kernlens"; mkdir -p "$T/.vscode"
# No kernlens.hints.prefix: the default glyph (◷) is what the page looks for. The hovered line is
# near the top of the editor, where a hover above it gets only the room left above the line:
# editor.hover.above = false opens it below, at its full height. kernlens.python names the
# project venv's interpreter, as a user whose PyTorch lives in a venv does (code-server's own
# PATH is the login shell's, where python3 has no torch).
cat > "$T/.vscode/settings.json" <<JSON
{ "kernlens.entry": "python3 train.py --steps 2", "kernlens.backend": "emulate",
  "kernlens.python": "${KL_PYTHON:?}", "editor.hover.above": false }
JSON
start_code_server "$T" "$W/code-server-run.log"
NODE_PATH=$PW/node_modules timeout 420 node "$S/tests/e2e/editor/vscode_run_e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$T" "$W" || { echo "browser run (profiling) failed"; cat "$W/run-report.json" 2>/dev/null | head -c 3000; tail -30 "$W/code-server-run.log"; exit 1; }
/usr/bin/python3 "$S/tests/e2e/editor/check_run_report.py" "$W/run-report.json"
stop_code_server

# A pip-installed server: the wheel in a fresh venv, selected as the Python interpreter.
P=$W/pip
mkdir -p "$P/ws/.vscode" "$P/extensions"
bash "$S/scripts/build-wheel.sh" "$KL_BINARY_DIR" "$P/dist" > "$P/build-wheel.log" 2>&1 ||
  { cat "$P/build-wheel.log"; echo "FAIL: make wheel"; exit 1; }
/usr/bin/python3 -m venv "$P/venv"
"$P/venv/bin/pip" install --quiet --disable-pip-version-check --no-index "$P"/dist/kernlens-*-py3-none-manylinux_*.whl
[[ -x $P/venv/bin/kernlens ]] || { echo "FAIL: the wheel put no kernlens in $P/venv/bin"; exit 1; }
bash "$S/scripts/package-vsix.sh" "$KL_BINARY_DIR" "$P/kernlens-noserver.vsix" --no-server
"$CS" --user-data-dir "$W/ud" --extensions-dir "$P/extensions" --install-extension "$P/kernlens-noserver.vsix" >"$P/install.log" 2>&1 ||
  { cat "$P/install.log"; exit 1; }
! ls "$P"/extensions/*/bin/kernlens >/dev/null 2>&1 || { echo "FAIL: the server-less .vsix has a bin/kernlens"; exit 1; }
cp "$S/tests/data/editor/ws/mlp.py" "$P/ws/"
cat > "$P/ws/.vscode/settings.json" <<JSON
{ "python.defaultInterpreterPath": "$P/venv/bin/python" }
JSON
rm -f "$W/used-kernlens-from-PATH"
PORT=${KL_CODE_SERVER_PORT:-$((20000 + RANDOM % 20000))}
env KERNLENS_LOAD_PROFILE="$S/tests/data/editor/mlp_emulated.sqlite" setsid "$CS" --auth none --bind-addr 127.0.0.1:$PORT \
  --disable-telemetry --disable-update-check --disable-workspace-trust --user-data-dir "$W/ud" \
  --extensions-dir "$P/extensions" "$P/ws" >"$P/code-server.log" 2>&1 &
PGID=$!
for _ in $(seq 1 300); do curl -sf -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done
# While the page runs, record the code-server processes that run the venv's binary (the console
# script execs it): PID and command line, from /proc.
want_exe=$(realpath "$P/venv/lib/python3"*/site-packages/kernlens/bin/kernlens)
watch_servers() {
  while :; do
    for pid in $(pgrep -g "$PGID" 2>/dev/null); do
      [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$want_exe" ]] &&
        echo "$pid $(tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null)" >> "$P/servers-seen.txt"
    done
    sleep 0.5
  done
}
: > "$P/servers-seen.txt"
watch_servers & WATCH=$!
NODE_PATH=$PW/node_modules timeout 300 node "$S/tests/e2e/editor/vscode_e2e.js" \
  "http://127.0.0.1:$PORT/?folder=$P/ws" "$P" mlp.py || { kill "$WATCH"; echo "browser run (pip-installed server) failed"; tail -30 "$P/code-server.log"; exit 1; }
kill "$WATCH"; wait "$WATCH" 2>/dev/null || true
/usr/bin/python3 "$S/tests/e2e/editor/check_report.py" "$W/oracle.json" "$P/report.json" --shift 2
grep -q " $want_exe lsp *$" "$P/servers-seen.txt" ||
  { echo "FAIL: no language server process ran $want_exe lsp; seen:"; sort -u "$P/servers-seen.txt"; exit 1; }
[[ ! -e $W/used-kernlens-from-PATH ]] || { echo "FAIL: the extension ran kernlens from PATH, not the venv's"; exit 1; }
echo "pip-installed server: $(sort -u "$P/servers-seen.txt" | head -1) served the hints"
echo "screenshots: $W/01-hints.png $W/02-hover.png $W/03-after-edit.png $W/run-*.png"
