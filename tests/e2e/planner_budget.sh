#!/usr/bin/env bash
# Overhead budget end to end: a statement in a hot Python loop (200 executions, 4 kernel launches)
# is refused by the per-range NVTX budget (50 pushes per launch > 4) and the refusal is reported; the
# loop still converges. The line inside it that launches (run 4 times, placed ahead by call
# discovery) keeps its range: its launches stay on it.
source "$(dirname "$0")/planner_run.inc"
mkdir -p "$T/hot"
cat > "$T/hot/hot.py" <<'PY'
import torch


def step(x):
    acc = 0
    for i in range(200):
        acc += i
        if i % 50 == 0:
            x = x * 2
    return x.sum() + acc


def main():
    x = torch.randn(16, device="cpu")
    print(float(step(x)))


main()
PY
FORMAT=text planner_run "$T/hot" "$T/out.txt" "python3 hot.py" --focus hot.py::step --no-baseline
cat "$T/out.txt"
grep -q "^refused: hot.py:8-9.*over the NVTX budget: 200 pushes for 4 launches" "$T/out.txt" || { echo "FAIL: no budget refusal"; exit 1; }
grep -q "kernlens profile: converged after" "$T/out.txt" || { echo "FAIL: not converged"; exit 1; }
grep -E "^   9 \|.*4 launches · 4 invocations.*MulFunctor" "$T/out.txt" >/dev/null || { echo "FAIL: line 9 should hold the 4 multiplications"; exit 1; }
grep -E "^   6 \|.*ATOMIC" "$T/out.txt" >/dev/null && { echo "FAIL: the for line launches nothing of its own"; exit 1; }
echo "ok: budget refusal reported"
