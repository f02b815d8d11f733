# Sourced by the benches that run on the generated multi-million-kernel exports
# (attribution_bench.sh, peers.sh): `bench_args NAME "$@"` sets ROOT, BUILD (argument 1, default
# build/), SIZES (the remaining arguments, default 2M and 5M kernels), KL (the binary) and GEN (the
# export generator, built when missing); NAME prefixes its one-line errors.
bench_args() {
  local name=$1
  shift
  ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  BUILD=${1:-$ROOT/build}
  shift || true
  SIZES=("$@")
  [[ ${#SIZES[@]} -gt 0 ]] || SIZES=(2000000 5000000)
  KL=$BUILD/kernlens
  GEN=$BUILD/tests/bench/kl_ingest_bench
  [[ -x $KL ]] || { echo "$name: build $KL first" >&2; exit 1; }
  [[ -x $GEN ]] || cmake --build "$BUILD" --target kl_ingest_bench >/dev/null
}
