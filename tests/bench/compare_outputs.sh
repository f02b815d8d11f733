#!/usr/bin/env bash
# Output identity check between two kernlens binaries (not a test: it needs a second binary).
# Runs every profile-analysis command in every output format on every real export in
# tests/data/real with both binaries and compares stdout byte for byte. Used to show that a
# speed or memory change to the reader, model or attribution changes no result.
#
#   tests/bench/compare_outputs.sh OLD_KERNLENS NEW_KERNLENS
#
# Exit 0 when every output is identical; otherwise lists the differing commands (and a diff
# of the first) and exits 1. Error outputs (non-zero exit) are compared too.
set -uo pipefail
OLD=${1:?usage: compare_outputs.sh OLD_KERNLENS NEW_KERNLENS}
NEW=${2:?usage: compare_outputs.sh OLD_KERNLENS NEW_KERNLENS}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kl-compare-XXXXXX")
trap 'rm -rf "$WORK"' EXIT

inputs=()
while IFS= read -r f; do inputs+=("$f"); done < <(find "$ROOT/tests/data/real" -maxdepth 2 -type f \
  \( -name '*.sqlite.gz' -o -name '*.sqlite' -o -name '*.json.gz' -o -name '*.json' \) | sort)
inputs+=("$ROOT/tests/data/real/param_dlrm_v100_8ranks")  # several files = ranks of one run
# Every nsys export once more as a plain file: a .gz is read from memory on one connection, a
# plain file on two (NVTX_EVENTS in a second thread), and both must give the same outputs.
mkdir -p "$WORK/plain"
for f in "${inputs[@]}"; do
  [[ $f == *.sqlite.gz ]] || continue
  p=$WORK/plain/$(basename "$f" .gz)
  [[ -e $p ]] && p=$WORK/plain/$(basename "$(dirname "$f")")-$(basename "$f" .gz)
  gzip -dc "$f" > "$p" && inputs+=("$p")
done

cmds=(
  "tree --format json" "tree --format text" "tree --format csv" "tree --format json --gpu 0"
  "summary --format json" "summary --format text" "summary --format csv" "summary --short --format text"
  "info --format json" "info --format text"
  "search kernel --format json" "search . --regex --format text"
  "gaps --format json" "overlap --format json" "nccl --format json" "iters --format json"
  "memcpy --format json" "launch --format json" "threads --format json" "diagnose --format json"
  "export --format csv" "export --format json"
  "tree --format json --trim 0 50ms"
)
n=0 bad=0 first=""
for f in "${inputs[@]}"; do
  for c in "${cmds[@]}"; do
    read -r -a argv <<< "$c"
    a=$WORK/old.$n b=$WORK/new.$n
    # The file argument goes right after the subcommand (search takes FILE then PATTERN).
    "$OLD" "${argv[0]}" "$f" "${argv[@]:1}" > "$a" 2>&1; echo "rc=$?" >> "$a"
    "$NEW" "${argv[0]}" "$f" "${argv[@]:1}" > "$b" 2>&1; echo "rc=$?" >> "$b"
    if ! cmp -s "$a" "$b"; then
      echo "DIFFERS: kernlens $c on ${f#"$ROOT"/}"
      bad=$((bad + 1))
      [[ -z $first ]] && first="$a $b"
    fi
    n=$((n + 1))
  done
done
echo "compared $n outputs on ${#inputs[@]} inputs: $bad differ"
if [[ -n $first ]]; then
  diff $first | head -40
  exit 1
fi
