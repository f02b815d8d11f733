#!/usr/bin/env bash
# Builds every tests/fuzz/fuzz_*.cpp with clang + libFuzzer + ASan/UBSan (build dir: build-fuzz,
# or $FUZZ_BUILD) and runs each for FUZZ_SECONDS seconds (default 300), seeded from
# tests/fuzz/corpus/<target>/ when that exists, with tests/fuzz/<target>.dict when it exists.
# Exit status: 0 when no target crashed; 1 otherwise, with the crashing inputs kept under
# <build>/fuzz-work/<target>/crashes/ (copy them to tests/fuzz/regressions/<target>/ once fixed).
# Optional: FUZZ_TARGETS="fuzz_lsp ..." to run a subset; FUZZ_JOBS for the build.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${FUZZ_BUILD:-$root/build-fuzz}
seconds=${FUZZ_SECONDS:-300}
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"

command -v clang++ >/dev/null || { echo "fuzz: clang++ not found (make fuzz installs it)" >&2; exit 1; }
if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build" -G Ninja -DKL_FUZZ=ON \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" >/dev/null
fi

if [ -n "${FUZZ_TARGETS:-}" ]; then
  read -r -a targets <<<"$FUZZ_TARGETS"
else
  targets=()
  for f in "$root"/tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$f" .cpp)"); done
fi
cmake --build "$build" --target "${targets[@]}" -j "${FUZZ_JOBS:-$(nproc)}"

status=0
for t in "${targets[@]}"; do
  work="$build/fuzz-work/$t"
  mkdir -p "$work/corpus" "$work/crashes"
  args=(-max_total_time="$seconds" -timeout=20 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$work/crashes/")
  [ -f "$root/tests/fuzz/$t.dict" ] && args+=(-dict="$root/tests/fuzz/$t.dict")
  dirs=("$work/corpus")  # new inputs go to the first directory; seeds are only read
  [ -d "$root/tests/fuzz/corpus/$t" ] && dirs+=("$root/tests/fuzz/corpus/$t")
  echo "fuzz: $t for ${seconds}s"
  if "$build/fuzz/$t" "${args[@]}" "${dirs[@]}" >"$work/log.txt" 2>&1; then
    echo "fuzz: $t ok: $(grep -E 'stat::number_of_executed_units' "$work/log.txt" | awk '{print $2}') runs, no crash"
  else
    status=1
    echo "fuzz: $t FAILED; crashing inputs in $work/crashes/:"
    ls -l "$work/crashes" || true
    grep -E 'ERROR|SUMMARY|runtime error' "$work/log.txt" | head -20 || true
  fi
done
exit $status
