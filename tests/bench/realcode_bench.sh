#!/usr/bin/env bash
# The loop on real third-party model code (tests/data/realcode), per codebase and focus: the
# exact-line share of forward GEMM/conv launches and of forward GPU time against the independent
# ground truth (tests/e2e/realcode_truth.py + realcode_compare.py), backward GEMMs on the forward line
# that created them (backward_truth.py + backward_compare.py), rounds, ranges inserted, NVTX
# pushes per launch and the wall-time overhead of the last round against ONE uninstrumented run
# of the same entry in the same loop; with call discovery (the default) and without it
# (--no-discovery: static call resolution only, the loop as it was before discovery).
# Emulate backend, the project venv's PyTorch 2.x on the CPU, 2 steps.
#   tests/bench/realcode_bench.sh [BUILD_DIR]    prints a markdown table (docs/loop.md has a run)
#   REALCODE_ONLY=REGEX selects rows by "codebase entry focus"
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
KERNLENS=$BUILD/kernlens
[ -x "$KERNLENS" ] || { echo "realcode_bench: $KERNLENS not found (make build)" >&2; exit 1; }
# The entries' `python3` is the project venv's (PyTorch 2.x), as for a user whose venv is active.
[ -x "$SRC/.venv/bin/python3" ] || { echo "realcode_bench: no project venv: run scripts/venv.sh" >&2; exit 1; }
export PATH="$SRC/.venv/bin:$PATH"
PY=${KL_PYTHON:-python3}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() {  # codebase entry focus
  local code=$1 entry=$2 focus=$3 ws="$T/$1"
  # REALCODE_ONLY=REGEX: only the rows whose "codebase entry focus" matches
  [[ -z ${REALCODE_ONLY:-} || "$code $entry $focus" =~ $REALCODE_ONLY ]] || return 0
  rm -rf "$ws"; cp -r "$SRC/tests/data/realcode/$code" "$ws"
  (cd "$ws" && $PY "$SRC/tests/e2e/realcode_truth.py" "$ws" "$T/truth.json" "$focus" -- ${entry#python3 } > /dev/null 2>&1)
  (cd "$ws" && $PY "$SRC/tests/e2e/backward_truth.py" "$ws" "$T/bwd_truth.json" -- ${entry#python3 } > /dev/null 2>&1)
  for mode in discovery static; do
    local extra=""; [ $mode = static ] && extra="--no-discovery"
    rm -rf "$ws/.kernlens"
    (cd "$ws" && "$KERNLENS" profile --root "$ws" --entry "$entry" --focus "$focus" --backend emulate --no-store \
       $extra --format json > "$T/kl.json" 2>/dev/null)
    local shares; shares=$($PY "$SRC/tests/e2e/realcode_compare.py" "$T/kl.json" "$T/truth.json" "$ws" || true)
    local gemm time rounds atomic
    gemm=$(sed -n 's/.* gemm=\([0-9.]*\) .*/\1/p' <<<"$shares")
    time=$(sed -n 's/.* time=\([0-9.]*\) .*/\1/p' <<<"$shares")
    rounds=$(sed -n 's/.* rounds=\([0-9]*\) .*/\1/p' <<<"$shares")
    atomic=$(sed -n 's/.* atomic=\(.*\)$/\1/p' <<<"$shares")
    local bwd  # backward GEMMs on their forward line ("n/a": the focus runs no backward)
    bwd=$($PY "$SRC/tests/e2e/backward_compare.py" "$T/kl.json" "$T/bwd_truth.json" | sed 's/bwd_gemm=//')
    rm -rf "$ws/.kernlens"
    (cd "$ws" && "$KERNLENS" profile --root "$ws" --entry "$entry" --focus "$focus" --backend emulate --no-store \
       $extra --format text > "$T/kl.txt" 2>/dev/null)
    local over ranges ppl wall base ratio="n/a"
    over=$(grep '^overhead:' "$T/kl.txt" || true)
    ranges=$(sed -n 's/overhead: \([0-9]*\) ranges.*/\1/p' <<<"$over")
    ppl=$(sed -n 's/.*, \([0-9.]*\) NVTX pushes per launch.*/\1/p' <<<"$over")
    # "wall 3.86 s vs 3.68 s uninstrumented": durations in the formatter's units, read as ms.
    ms() { awk '{v = $1; u = $2; printf "%.0f", v * (u == "s" ? 1000 : u == "ms" ? 1 : u == "µs" ? 0.001 : 0.000001)}'; }
    wall=$(sed -n 's/.*wall \([0-9.]* [µa-z]*\) vs.*/\1/p' <<<"$over" | ms)
    base=$(sed -n 's/.*vs \([0-9.]* [µa-z]*\) uninstrumented.*/\1/p' <<<"$over" | ms)
    [ -n "$wall" ] && [ -n "$base" ] && ratio=$(awk -v a="$wall" -v b="$base" 'BEGIN{printf "%.2f", a/b}')
    local label=$code
    [[ $entry =~ --model\ ([A-Za-z]+) ]] && label="$code (${BASH_REMATCH[1]})"
    echo "| $label | $focus | $mode | $gemm | $bwd | $time | $rounds | $ranges | $ppl | $base | $wall | $ratio | $atomic |"
  done
}
echo "| codebase | focus | calls followed | exact-line GEMM share | bwd GEMMs on their forward line | exact-line fwd GPU time share | rounds | ranges inserted | NVTX pushes/launch | baseline ms | last round ms | wall ratio | atomic lines by reason |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
run nanogpt "python3 train_tiny.py --steps 2" train_tiny.py::train_step
run nanogpt "python3 train_tiny.py --steps 2" model.py::GPT.forward
run word_language_model "python3 train_tiny.py --model LSTM --steps 2" model.py::RNNModel.forward
run word_language_model "python3 train_tiny.py --model LSTM --steps 2" train_tiny.py::train_step
run word_language_model "python3 train_tiny.py --model Transformer --steps 2" model.py::TransformerModel.forward
run word_language_model "python3 train_tiny.py --model Transformer --steps 2" train_tiny.py::train_step
