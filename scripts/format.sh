#!/usr/bin/env bash
# Formats kernlens's C++ sources in place with .clang-format; `--list` only prints them.
# The set: every .h/.cpp under core/ lsp/ cli/ tests/ (build trees and fetched sources excluded).
set -euo pipefail
cd "$(dirname "$0")/.."
list() {
  find core lsp cli tests \( -name build -o -name node_modules -o -name '.tmp' \) -prune -o \
    -type f \( -name '*.h' -o -name '*.cpp' \) -print | LC_ALL=C sort
}
if [[ ${1:-} == --list ]]; then list; exit 0; fi
fmt=$(command -v clang-format || command -v clang-format-14) || {
  echo "format.sh: clang-format is not installed (scripts/install-deps.sh format)" >&2; exit 1; }
list | xargs -r "$fmt" -i
