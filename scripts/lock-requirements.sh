#!/usr/bin/env bash
# Re-pins requirements/dev.txt from requirements/dev.in and requirements/wheel.txt from
# requirements/wheel.in (exact versions and every file's sha256), for CPython 3.11 on manylinux
# x86_64. Run after editing a .in file; commit the .in and .txt files. scripts/venv.sh installs
# both lock files together, so wheel.txt is resolved under dev.txt's pins (a package in both has
# one version).
# Uses uv (from PyPI) in a throw-away venv; installs nothing into the project venv.
set -euo pipefail
cd "$(dirname "$0")/.."
tools=$(mktemp -d)
trap 'rm -rf "$tools"' EXIT
/usr/bin/python3 -m venv "$tools/venv"
"$tools/venv/bin/pip" install --quiet --disable-pip-version-check uv==0.13.9
"$tools/venv/bin/uv" pip compile -q requirements/dev.in --generate-hashes --python-version 3.11 \
  --python-platform x86_64-manylinux_2_28 --no-header -o requirements/dev.txt
"$tools/venv/bin/uv" pip compile -q requirements/wheel.in --generate-hashes --python-version 3.11 \
  --python-platform x86_64-manylinux_2_28 --no-header -c requirements/dev.txt -o requirements/wheel.txt
