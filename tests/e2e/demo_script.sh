#!/usr/bin/env bash
# `make demo`'s script (scripts/demo.sh), with the binary given relative to the repo as the
# Makefile does: the loop converges on samples/transformer, the output says EMULATED, and the
# model's lines carry forward + backward time.
set -euo pipefail
: "${KERNLENS:?}" "${KL_SOURCE_DIR:?}"
cd "$KL_SOURCE_DIR"
rel=$(realpath --relative-to=. "$KERNLENS")
out=$(bash scripts/demo.sh "$rel" 2>&1) || { echo "$out" | tail -20; echo "FAIL: demo script failed"; exit 1; }
grep -q "kernlens profile: converged after" <<<"$out" || { echo "$out" | tail -20; echo "FAIL: the demo loop did not converge"; exit 1; }
grep -q "EMULATED" <<<"$out" || { echo "FAIL: emulated results not labelled"; exit 1; }
grep -q "== tinyformer/attention.py" <<<"$out" || { echo "FAIL: the loop did not reach the attention module"; exit 1; }
# Training: the model's lines show forward and backward time; loss.backward() only the engine's own work.
grep -Eq "self.proj\(y\) .*# [0-9.]+ (ns|µs|ms|s) \+ bwd [0-9.]+ (ns|µs|ms|s)" <<<"$out" || { echo "$out" | grep -n "proj"; echo "FAIL: no forward + backward time on the model's lines"; exit 1; }
grep -q "loss.backward() .*backward work of no forward line" <<<"$out" || { echo "FAIL: loss.backward() not labelled"; exit 1; }
echo "PASS demo_script"
