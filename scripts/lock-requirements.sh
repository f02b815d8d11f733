#!/usr/bin/env bash
# Re-pins requirements/NAME.txt from requirements/NAME.in (exact versions and every file's sha256),
# for CPython 3.11 on manylinux x86_64, for every NAME given (default: dev wheel bench). Run after
# editing a .in file; commit both files.
#   dev    the project venv .venv/ (scripts/venv.sh)
#   wheel  the wheel's build tools, installed into .venv/ beside dev (scripts/venv.sh), so resolved
#          under dev.txt's pins (-c): a package in both has one version
#   bench  the benchmark venv .venv-bench/ (scripts/venv.sh bench; `make bench` only)
# Uses uv (from PyPI) in a throw-away venv; installs nothing into the project venv.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
/usr/bin/python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet --disable-pip-version-check uv==0.13.9
names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=(dev wheel bench)
for name in "${names[@]}"; do
  [[ -f requirements/$name.in ]] || { echo "lock-requirements: no requirements/$name.in" >&2; exit 1; }
  constraints=()
  [[ $name == wheel ]] && constraints=(-c requirements/dev.txt)
  "$tools/venv/bin/uv" pip compile -q "requirements/$name.in" --generate-hashes --python-version 3.11 \
    --python-platform x86_64-manylinux_2_28 --no-header "${constraints[@]}" -o "requirements/$name.txt"
done
