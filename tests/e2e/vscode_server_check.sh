#!/usr/bin/env bash
# ctest-labels: editor
# The VS Code extension's start-up check of the server (vscode-extension/src/server_check.ts), run
# with plain node against real binaries: the build's kernlens (same version as the extension: ok),
# a missing path, a non-executable file, a binary that fails to load (the loader's message must be
# shown), and a kernlens of another version (a warning naming both versions). And the search of
# the selected Python interpreter's environment for a pip-installed kernlens (serverInPythonEnv).
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
S=$KL_SOURCE_DIR
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
NM=$(bash "$S/scripts/extension-node-modules.sh")
"$NM/.bin/esbuild" "$S/vscode-extension/src/server_check.ts" --bundle --platform=node --format=cjs \
  --outfile="$T/server_check.js" --log-level=warning
EXT_VERSION=$(node -p "require('$S/vscode-extension/package.json').version")
[[ $("$KERNLENS" --version) == "kernlens $EXT_VERSION" ]] ||
  { echo "FAIL: extension $EXT_VERSION and server '$("$KERNLENS" --version)' versions differ"; exit 1; }
printf '#!/bin/sh\necho "kernlens 9.9.9"\n' > "$T/other"; chmod +x "$T/other"
printf '#!/bin/sh\necho "%s: error while loading shared libraries: libgit2.so.1.5: cannot open shared object file" >&2\nexit 127\n' "$T/noload" > "$T/noload"; chmod +x "$T/noload"
printf 'not a program\n' > "$T/plain"
# Python environments as pip leaves them: a venv whose bin/python links to the base interpreter,
# with and without a kernlens command; one whose kernlens lacks the x bit.
for e in withkl nokl noexec; do mkdir -p "$T/$e/bin"; ln -s /usr/bin/python3 "$T/$e/bin/python"; done
printf '#!/bin/sh\necho "kernlens 0"\n' > "$T/withkl/bin/kernlens"; chmod +x "$T/withkl/bin/kernlens"
printf '#!/bin/sh\n' > "$T/noexec/bin/kernlens"; chmod -x "$T/noexec/bin/kernlens"
mkdir -p "$T/ws/.venv"; ln -s "$T/withkl/bin" "$T/ws/.venv/bin"
cat > "$T/check.test.js" <<JS
const test = require('node:test');
const assert = require('node:assert');
const { checkServer, serverInPythonEnv } = require('$T/server_check.js');
const V = '$EXT_VERSION';
test('the matching server passes', async () => {
  const r = await checkServer('$KERNLENS', 'setting', V);
  assert.deepStrictEqual(r, { version: V });
});
test('a missing binary is an error naming the setting', async () => {
  const r = await checkServer('$T/missing', 'setting', V);
  assert.match(r.error, /could not start \(kernlens\.serverPath = .*missing: not found\)/);
});
test('kernlens missing from PATH', async () => {
  const r = await checkServer('kernlens-not-on-path-$$', 'path', V);
  assert.match(r.error, /on PATH: not found/);
});
test('a file without the x bit', async () => {
  const r = await checkServer('$T/plain', 'bundled', V);
  assert.match(r.error, /the bundled .*plain: not executable/);
});
test('a server whose libraries are missing shows the loader message', async () => {
  const r = await checkServer('$T/noload', 'bundled', V);
  assert.match(r.error, /error while loading shared libraries: libgit2\.so\.1\.5/);
});
test('another version is a warning naming both', async () => {
  const r = await checkServer('$T/other', 'setting', V);
  assert.strictEqual(r.error, undefined);
  assert.strictEqual(r.version, '9.9.9');
  assert.match(r.warning, new RegExp('version 9\\\\.9\\\\.9 but the extension is ' + V.replace(/\./g, '\\\\.')));
});
test('the interpreter\'s environment: bin/kernlens beside bin/python, not beside its symlink target', () => {
  assert.strictEqual(serverInPythonEnv('$T/withkl/bin/python'), '$T/withkl/bin/kernlens');
  assert.strictEqual(serverInPythonEnv('$T/withkl'), '$T/withkl/bin/kernlens');
  assert.strictEqual(serverInPythonEnv('\${workspaceFolder}/.venv/bin/python', '$T/ws'), '$T/ws/.venv/bin/kernlens');
  assert.strictEqual(serverInPythonEnv('.venv/bin/python', '$T/ws'), '$T/ws/.venv/bin/kernlens');
});
test('no kernlens in the environment, a non-executable one, a bare name, nothing selected', () => {
  assert.strictEqual(serverInPythonEnv('$T/nokl/bin/python'), undefined);
  assert.strictEqual(serverInPythonEnv('$T/noexec/bin/python'), undefined);
  assert.strictEqual(serverInPythonEnv('$T/missing/bin/python'), undefined);
  assert.strictEqual(serverInPythonEnv('python3', '$T/ws'), undefined);
  assert.strictEqual(serverInPythonEnv(undefined), undefined);
  assert.strictEqual(serverInPythonEnv(''), undefined);
});
test('a pip-installed server is named as the Python environment\'s', async () => {
  const r = await checkServer('$T/missing/bin/kernlens', 'python', V);
  assert.match(r.error, /the Python environment's .*missing\/bin\/kernlens: not found/);
});
JS
node --test "$T/check.test.js"
