#!/usr/bin/env bash
# Every C++ source of kernlens is in the style of .clang-format (docs/ARCHITECTURE.md "Style": run
# `scripts/format.sh` before committing). Fails naming the files that are not, with the first diff.
# usage: tests/format_test.sh REPO_ROOT
set -uo pipefail
root=${1:?usage: format_test.sh REPO_ROOT}
cd "$root" || exit 1
fmt=$(command -v clang-format || command -v clang-format-14) || {
  echo "format_test: clang-format is not installed (scripts/install-deps.sh format)"; exit 1; }
mapfile -t files < <(bash scripts/format.sh --list)
[[ ${#files[@]} -gt 100 ]] || { echo "format_test: found only ${#files[@]} C++ files under $root"; exit 1; }
bad=()
for f in "${files[@]}"; do
  if ! "$fmt" --dry-run -Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if [[ ${#bad[@]} -gt 0 ]]; then
  echo "format_test: ${#bad[@]} of ${#files[@]} files differ from .clang-format (fix: scripts/format.sh):"
  printf '  %s\n' "${bad[@]}"
  "$fmt" "${bad[0]}" | diff -u "${bad[0]}" - | head -20
  exit 1
fi
echo "format_test: ${#files[@]} files in .clang-format style"
