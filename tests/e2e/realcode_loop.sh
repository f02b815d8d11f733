#!/usr/bin/env bash
# ctest-labels: realcode slow
# The loop on real third-party model code (tests/data/realcode: nanoGPT, pytorch/examples
# word_language_model), emulate backend, focus on the train step or the model's forward, checked
# against an INDEPENDENT ground truth (realcode_truth.py: a TorchDispatchMode recording the
# innermost workspace line of every ATen op; no kernlens code): >= 95 % of the forward GEMM
# launches and of the forward GPU time on the exact line that issued them, in at most
# call depth + 1 rounds, every atomic line with a reason.
source "$(dirname "$0")/planner_run.inc"
R="$KL_SOURCE_DIR/tests/data/realcode"
check() {  # CODEBASE ENTRY FOCUS MAX_ROUNDS
  local code=$1 entry=$2 focus=$3 rounds=$4 ws="$T/ws-$1"
  planner_run "$R/$code" "$T/kl.json" "$entry" --focus "$focus" --no-baseline
  # planner_run copied the code to $ws; the truth runs on the same copy.
  (cd "$ws" && $PY "$KL_SOURCE_DIR/tests/e2e/realcode_truth.py" "$ws" "$T/truth.json" "$focus" -- ${entry#python3 } > /dev/null)
  $PY "$KL_SOURCE_DIR/tests/e2e/realcode_compare.py" "$T/kl.json" "$T/truth.json" "$ws" --label "$code $focus" \
      --min-gemm 0.95 --min-time 0.95 --max-rounds "$rounds"
}
# Call depth from the focus to the deepest launching line: train_step -> GPT.forward ->
# Block.forward -> CausalSelfAttention.forward / MLP.forward = 3; RNNModel.forward = 0 (the LSTM
# is torch's); TransformerModel.forward -> PositionalEncoding.forward = 1.
check nanogpt "python3 train_tiny.py --steps 1" train_tiny.py::train_step 4
check word_language_model "python3 train_tiny.py --model LSTM --steps 1" model.py::RNNModel.forward 1
check word_language_model "python3 train_tiny.py --model Transformer --steps 1" model.py::TransformerModel.forward 2
