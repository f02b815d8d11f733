#!/usr/bin/env bash
# Packages the VS Code extension as one .vsix: the client bundled by esbuild (out/extension.js) and,
# unless --no-server, this build's server embedded in the layout the binary expects of an install:
#   extension/bin/kernlens (stripped)  +  extension/share/kernlens/probe/
# so the extension starts it without kernlens.serverPath (the binary finds its probe at
# <exe dir>/../share/kernlens/probe). With the server the package is platform-specific (linux-x64).
# Fails when vsce prints a warning.
# usage: scripts/package-vsix.sh BUILD_DIR OUT.vsix [--no-server]
set -euo pipefail
[[ $# -ge 2 ]] || { echo "usage: scripts/package-vsix.sh BUILD_DIR OUT.vsix [--no-server]" >&2; exit 2; }
S=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(realpath "$1")
OUT=$(realpath -m "$2")
SERVER=1
[[ "${3:-}" == --no-server ]] && SERVER=0
if [[ $SERVER == 1 ]]; then
  [[ -x "$BUILD/kernlens" && -d "$BUILD/share/kernlens/probe/kernlens_probe" ]] ||
    { echo "package-vsix: no built server in $BUILD (run make build first)" >&2; exit 1; }
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/extension
mkdir -p "$stage"
tar -C "$S/vscode-extension" --exclude=node_modules --exclude=out --exclude=bin --exclude=share \
    --exclude='*.vsix' -cf - . | tar -C "$stage" -xf -
nm=$(bash "$S/scripts/extension-node-modules.sh")
ln -s "$nm" "$stage/node_modules"

target=()
if [[ $SERVER == 1 ]]; then
  mkdir -p "$stage/bin" "$stage/share/kernlens"
  install -m 0755 "$BUILD/kernlens" "$stage/bin/kernlens"
  strip --strip-unneeded "$stage/bin/kernlens"
  cp -r "$BUILD/share/kernlens/probe" "$stage/share/kernlens/probe"
  find "$stage/share" -name __pycache__ -prune -exec rm -rf {} +
  target=(--target linux-x64)
fi

mkdir -p "$(dirname "$OUT")"
(cd "$stage" && npx vsce package --no-dependencies "${target[@]}" -o "$OUT") >"$work/vsce.log" 2>&1 ||
  { echo "package-vsix: vsce failed:" >&2; tail -30 "$work/vsce.log" >&2; exit 1; }
# vsce's own warnings are "WARNING" lines (npm's "npm warn" about the local npmrc are not vsce's).
if grep -q 'WARNING' "$work/vsce.log"; then
  echo "package-vsix: vsce printed warnings:" >&2; grep -A2 'WARNING' "$work/vsce.log" >&2; exit 1
fi
cp "$work/vsce.log" "${OUT%.vsix}.vsce.log"
echo "package-vsix: $OUT ($(du -h "$OUT" | cut -f1))"
