#!/usr/bin/env bash
# Architecture invariant: core/ knows nothing of the LSP, JSON or asio (docs/ARCHITECTURE.md).
set -u
root=${1:?source dir}
bad=$(grep -rnE '#\s*include\s*[<"](lsp/|nlohmann/|asio)' "$root/core" --include='*.h' --include='*.cpp' || true)
if [ -n "$bad" ]; then
  echo "core/ must not include lsp/, nlohmann/json or asio:"
  echo "$bad"
  exit 1
fi
echo "layering: core/ is free of lsp/, nlohmann and asio includes"
