#!/usr/bin/env bash
# ctest-labels: lsp
# The training-step kinds, from the loop to the editor hover: `kernlens profile` (emulate backend)
# on a tiny training step (two Linear layers, AdamW with its multi-tensor (foreach) implementation,
# zero_grad, clip_grad_norm_, loss.backward()); `kernlens lsp` on the same workspace then shows each
# line's kernels grouped by kind (the emulator runs on the CPU: the script moves its model and
# data to the device as a GPU program does, docs/probe.md §6). Expected from what the code does (as CUDA PyTorch runs it):
#  - opt.step(): AdamW(foreach=True) updates the parameters with _foreach_* ops, i.e. ATen's
#    multi_tensor_apply_kernel: an "optimizer step" group naming it, one row per kernel the JSON
#    lists there (the rows tell the foreach ops apart), and no other group;
#  - opt.zero_grad(set_to_none=True) only drops the .grad references: no kernels on that line;
#  - opt.zero_grad(set_to_none=False) after the step fills the existing gradients with zeros:
#    a "zero_grad" group, and no other group;
#  - clip_grad_norm_: norms and a scale of the gradients: a "gradient clipping" group, no other;
#  - the model's forward line (fc1, relu, fc2): a "forward" group and a separate "backward" group
#    (the gradients of those ops), and no training-step group.
source "$(dirname "$0")/planner_run.inc"
WS="$T/ws"
mkdir -p "$WS"
cat > "$WS/train.py" <<'EOF'
import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 2 * d)
        self.fc2 = nn.Linear(2 * d, d)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))  # MARK forward


def train_step(model, opt, x, y):
    out = model(x)
    loss = F.mse_loss(out, y)
    opt.zero_grad(set_to_none=True)  # MARK zero none
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # MARK clip
    opt.step()  # MARK step
    opt.zero_grad(set_to_none=False)  # MARK zero fill
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = Net(16).to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    x, y = torch.randn(8, 16).to(device), torch.randn(8, 16).to(device)
    for _ in range(2):
        train_step(model, opt, x, y)
EOF
(cd "$WS" && "$KERNLENS" profile --root "$WS" --entry "python3 train.py" --backend emulate --format json \
    --focus train.py::train_step --no-baseline > "$T/kl.json")
$PY - "$KERNLENS" "$WS" "$T/kl.json" "$KL_SOURCE_DIR/tests/e2e" <<'PY'
import json, re, sys
sys.path.insert(0, sys.argv[4])
from lsp_client import Client, Failure, check, hover_text, open_in_workspace, shutdown_and_exit
kl, ws, out = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
src = open(ws + "/train.py").read().splitlines()
marks = ("forward", "zero none", "clip", "step", "zero fill")
line = {m: next(i + 1 for i, l in enumerate(src) if l.endswith("# MARK " + m)) for m in marks}
GROUPS = ("forward", "backward", "recompute (activation checkpointing)",
          "backward, no forward op (gradient accumulation, engine work)",
          "optimizer step", "zero_grad", "gradient clipping", "AMP GradScaler")

def groups(h):
    """The hover's kernel groups: title -> (launches, the text up to the next group)."""
    found = {}
    heads = [(m.start(), m.end(), m.group(1), int(m.group(2)))
             for m in re.finditer(r"\*\*(%s) [^*]*\*\* · (\d+) launch" % "|".join(map(re.escape, GROUPS)), h)]
    for i, (s, e, title, n) in enumerate(heads):
        found[title] = (n, h[e:heads[i + 1][0] if i + 1 < len(heads) else len(h)])
    return found

try:
    check(out["converged"], "the loop did not converge: %s" % out.get("why"))
    mine = {l["line"]: l for l in out["lines"] if l["file"] == "train.py"}
    none = mine.get(line["zero none"])
    check(none is None or not none["kernels"], "zero_grad(set_to_none=True) has kernels: %s" % none)
except Failure as e:
    print("FAIL: %s" % e)
    sys.exit(1)

c = Client(kl)
try:
    uri = open_in_workspace(c, ws, "train.py", "\n".join(src) + "\n")

    def hover(n, wait=20):
        return hover_text(c, uri, n, wait=wait)

    def only(mark, title):
        h = hover(line[mark])
        check(h is not None, "no hover on the %s line" % mark)
        g = groups(h)
        check(set(g) == {title} and g[title][0] > 0,
              "hover of the %s line: want one group %r, got %s: %r" % (mark, title, sorted(g), h))
        check("emulated" in h, "the hover does not say the data is emulated: %r" % h)
        return g[title][1]

    table = only("step", "optimizer step")
    check("multi_tensor_apply_kernel" in table,
          "the optimizer step group of opt.step() does not name multi_tensor_apply_kernel: %r" % table)
    # One foreach kernel name, one functor and op per _foreach_* op: the rows must tell them apart.
    rows = [r.split("`")[1] for r in table.splitlines() if r.startswith("| `")]
    names = {k["name"] for k in mine[line["step"]]["kernels"]}
    check(len(rows) == len(set(rows)) == len(names),
          "opt.step()'s hover rows %r do not tell its %d kernels apart" % (rows, len(names)))
    only("zero fill", "zero_grad")
    only("clip", "gradient clipping")
    h = hover(line["forward"])
    check(h is not None, "no hover on the forward line")
    g = groups(h)
    check(set(g) == {"forward", "backward"} and g["forward"][0] > 0 and g["backward"][0] > 0,
          "hover of the model's forward line: want forward and backward groups, got %s: %r" % (sorted(g), h))
    # Loaded by now (the hovers above answered): a line without kernels has no kernel hover.
    h = hover(line["zero none"], wait=0.5)
    check(h is None or not groups(h), "hover of zero_grad(set_to_none=True) shows kernels: %r" % h)
    shutdown_and_exit(c)
except Failure as e:
    c.kill()
    print("FAIL: %s" % e)
    sys.exit(1)
print("ok: optimizer / zero_grad / grad-clip kernels and forward vs backward reach the hover as separate groups")
PY
