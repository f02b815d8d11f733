#!/usr/bin/env bash
# Packages only the tests need (real tools the tests drive), and the project venv. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh build format package browser editor nsys slurm
exec bash scripts/venv.sh
