#!/usr/bin/env bash
# `kernlens mcp` accepted by a second, independent client: the official MCP TypeScript SDK from npm
# (tests/e2e/mcp_ts: lockfile committed, installed with npm ci by scripts/extension-node-modules.sh)
# lists the tools and calls `summary` on a real export (structured output checked against its
# outputSchema by the SDK), and gets a JSON-RPC error naming a bad argument.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
command -v node >/dev/null || { echo "FAIL: node is missing (scripts/install-deps.sh build)"; exit 1; }
NM=$(bash "$KL_SOURCE_DIR/scripts/extension-node-modules.sh" "$KL_SOURCE_DIR/tests/e2e/mcp_ts")
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/ws" "$T/client"
cp "$KL_SOURCE_DIR/tests/data/real/hta_a100_alexnet_small.json.gz" "$T/ws/"
cp "$KL_SOURCE_DIR/tests/e2e/mcp_ts/client.mjs" "$KL_SOURCE_DIR/tests/e2e/mcp_ts/package.json" "$T/client/"
ln -s "$NM" "$T/client/node_modules"
node "$T/client/client.mjs" "$KERNLENS" "$T/ws" hta_a100_alexnet_small.json.gz
