#!/usr/bin/env bash
# ctest-labels: lsp
# Why a line is ATOMIC, from the loop to the editor: `kernlens profile` (emulate backend, call
# discovery) on a model whose MLP is a lambda (as in minGPT/nanoGPT variants) stores the loop's
# verdicts with the round; `kernlens lsp` on the same workspace then shows them in the hover.
# Expected from the code itself: the line calling the lambda is atomic as "unfollowed" and names the
# lambda; the F.cross_entropy line is atomic as library code (log_softmax + nll_loss, torch's own);
# the call line `out = block(x)` is followed (not atomic).
source "$(dirname "$0")/planner_run.inc"
WS="$T/ws"
mkdir -p "$WS"
cat > "$WS/model.py" <<'EOF'
import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.c_proj = nn.Linear(4 * d, d)
        m = self
        self.mlpf = lambda x: m.c_proj(F.gelu(m.c_fc(x)))

    def forward(self, x):
        return x + self.mlpf(x)  # MARK lambda call


def train_step(block, x, y):
    out = block(x)  # MARK call
    loss = F.cross_entropy(out, y)  # MARK library
    return loss


if __name__ == "__main__":
    torch.manual_seed(0)
    block = Block(16).to("cpu")
    x, y = torch.randn(8, 16).to("cpu"), torch.randint(16, (8,)).to("cpu")
    with torch.no_grad():
        for _ in range(2):
            train_step(block, x, y)
EOF
(cd "$WS" && "$KERNLENS" profile --root "$WS" --entry "python3 model.py" --backend emulate --format json \
    --focus model.py::train_step --no-baseline > "$T/kl.json")
$PY - "$KERNLENS" "$WS" "$T/kl.json" "$KL_SOURCE_DIR/tests/e2e" <<'PY'
import json, sys
sys.path.insert(0, sys.argv[4])
from lsp_client import Client, Failure, check, hover_text, open_in_workspace, shutdown_and_exit
kl, ws, out = sys.argv[1], sys.argv[2], json.load(open(sys.argv[3]))
src = open(ws + "/model.py").read().splitlines()
line = {m: next(i + 1 for i, l in enumerate(src) if "# MARK " + m in l) for m in ("lambda call", "call", "library")}

def result(n):
    got = [l for l in out["lines"] if l["file"] == "model.py" and l["line"] == n]
    check(len(got) == 1, "kernlens profile: no single result for model.py:%d (%s)" % (n, got))
    return got[0]

check(out["converged"], "the loop did not converge: %s" % out.get("why"))
lam, lib = result(line["lambda call"]), result(line["library"])
check(lam["atomic"] and lam["atomic_reason"] == "unfollowed" and "<lambda>" in lam["note"],
      "the lambda call line: %s" % lam)
check(lib["atomic"] and lib["atomic_reason"] == "library", "the F.cross_entropy line: %s" % lib)

c = Client(kl)
try:
    uri = open_in_workspace(c, ws, "model.py", "\n".join(src) + "\n")

    def hover(n):
        h = hover_text(c, uri, n)
        check(h is not None, "no hover on model.py:%d" % n)
        return h

    h = hover(line["lambda call"])
    check("**ATOMIC** — a workspace function beneath it was not followed:" in h and "lambda" in h,
          "hover of the lambda call line: %r" % h)
    check("emulated" in h, "the hover does not say the data is emulated: %r" % h)
    h = hover(line["library"])
    check("**ATOMIC** — library code: a final answer" in h, "hover of the F.cross_entropy line: %r" % h)
    h = hover(line["call"])
    check("ATOMIC" not in h, "the followed call line is shown ATOMIC: %r" % h)
    shutdown_and_exit(c)
except Failure as e:
    c.kill()
    print("FAIL: %s" % e)
    sys.exit(1)
print("ok: the loop's atomic reasons reach the editor hover (unfollowed lambda, library)")
PY
