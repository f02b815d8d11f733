#!/usr/bin/env bash
# Prints the path of a node_modules installed (`npm ci`) from a committed lockfile, cached per
# lockfile hash under ${KL_NPM_CACHE:-~/.cache/kernlens/vsix-node_modules}: npm ci is the slow part
# of packaging and testing the extension. The package is vscode-extension/ unless a directory
# holding package.json + package-lock.json is given (tests/e2e/mcp_ts, the MCP TypeScript client).
# Progress and errors go to stderr.
set -euo pipefail
S=$(cd "$(dirname "$0")/.." && pwd)
E=${1:-$S/vscode-extension}
command -v npm >/dev/null || { echo "extension-node-modules: npm is missing (scripts/install-deps.sh build)" >&2; exit 1; }
cache=${KL_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/kernlens/vsix-node_modules}/$(sha256sum "$E/package-lock.json" | cut -c1-16)
if [[ ! -f $cache/.complete ]]; then
  rm -rf "$cache"; mkdir -p "$cache"
  cp "$E/package.json" "$E/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund) >"$cache/npm.log" 2>&1 ||
    { echo "extension-node-modules: npm ci failed:" >&2; tail -20 "$cache/npm.log" >&2; exit 1; }
  touch "$cache/.complete"
fi
echo "$cache/node_modules"
