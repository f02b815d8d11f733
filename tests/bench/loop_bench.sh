#!/usr/bin/env bash
# Convergence-loop benchmark: for each sample and both strategies (edits, lines), rounds to
# converge, ranges inserted, NVTX pushes per launch and the wall-time overhead against ONE
# uninstrumented run of the same entry measured in the same loop (ratio = instrumented / baseline).
# Emulate backend (CPU PyTorch); times include Python start-up and torch import, so small programs
# show ratios near 1 and noise of several percent on a loaded machine.
#   tests/bench/loop_bench.sh [BUILD_DIR]    prints a markdown table (docs/loop.md has a run of it)
set -euo pipefail
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$SRC/build}
KERNLENS=$BUILD/kernlens
[ -x "$KERNLENS" ] || { echo "loop_bench: $KERNLENS not found (make build)" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
run() {  # sample entry focus strategy
  local ws="$T/$1-$4"
  rm -rf "$ws"; cp -r "$SRC/samples/$1" "$ws"
  (cd "$ws" && "$KERNLENS" profile --root "$ws" --entry "$2" --focus "$3" --strategy "$4" \
     --backend emulate --no-store --format text > "$ws.txt" 2>/dev/null)
  local head over rounds conv ranges ppl wall base
  head=$(head -1 "$ws.txt"); over=$(grep '^overhead:' "$ws.txt" || true)
  rounds=$(sed -n 's/.* after \([0-9]*\) round.*/\1/p' <<<"$head")
  conv=$(grep -q 'NOT converged' <<<"$head" && echo no || echo yes)
  ranges=$(sed -n 's/overhead: \([0-9]*\) ranges.*/\1/p' <<<"$over")
  ppl=$(sed -n 's/.*, \([0-9.]*\) NVTX pushes per launch.*/\1/p' <<<"$over")
  wall=$(sed -n 's/.*wall \([0-9]*\) ms vs.*/\1/p' <<<"$over")
  base=$(sed -n 's/.*vs \([0-9]*\) ms uninstrumented.*/\1/p' <<<"$over")
  local ratio="n/a"
  [ -n "$wall" ] && [ -n "$base" ] && ratio=$(awk -v a="$wall" -v b="$base" 'BEGIN{printf "%.2f", a/b}')
  local lines; lines=$(grep -c '#' "$ws.txt" || true)
  echo "| $1 | $4 | $3 | $conv | $rounds | $ranges | $ppl | $base | $wall | $ratio |"
}
echo "| sample | strategy | focus | converged | rounds | ranges inserted | NVTX pushes/launch | baseline ms | last round ms | wall ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for strat in edits lines; do
  run mlp "python3 mlp.py --steps 2" mlp.py::train_step $strat
  run transformer "python3 train.py --steps 2" train.py::train_step $strat
  run dispatch "python3 dispatch.py --steps 2" dispatch.py::score_all $strat
  run threads "python3 threads.py --steps 2" threads.py::Encoder.forward $strat
done
