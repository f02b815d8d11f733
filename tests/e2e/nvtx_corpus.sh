#!/usr/bin/env bash
# Correctness of annotate --all-functions / strip on real code: the tricky files of
# tests/data/nvtx (always), then a deterministic subset (every 4th file) of the Python standard
# library shipped with the machine. Checks (a) compiles, (b) AST equal after unwrapping, (c) strip
# exact; see nvtx_corpus_check.py. The whole corpus: tests/bench/nvtx_corpus.sh.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
check="$KL_SOURCE_DIR/tests/e2e/nvtx_corpus_check.py"
command -v python3 >/dev/null || { echo "python3 is required"; exit 1; }

echo "== tests/data/nvtx"
python3 "$check" --kernlens "$KERNLENS" --root "$KL_SOURCE_DIR" --min-annotated 1.0 \
  "$KL_SOURCE_DIR"/tests/data/nvtx/*.py

stdlib=/usr/lib/python3.11
[ -d "$stdlib" ] || stdlib=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["stdlib"])')
echo "== $stdlib (every ${KL_NVTX_CORPUS_SUBSET:-4}th file)"
python3 "$check" --kernlens "$KERNLENS" --root "$stdlib" --subset "${KL_NVTX_CORPUS_SUBSET:-4}" \
  --min-annotated 0.98 "$stdlib"
