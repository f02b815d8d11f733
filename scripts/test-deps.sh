#!/usr/bin/env bash
# Packages only the tests need (real tools the tests drive). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
exec bash scripts/install-deps.sh build format package browser editor probe nsys slurm
