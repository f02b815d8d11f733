# -*- coding: utf-8 -*-
import os, sys
import torch
import nvtx as nv
from . import model as mdl


def données(n=100):
    """Génère des données aléatoires — ünïcode in a docstring."""
    xs = [torch.randn(8, 64) for _ in range(n)]
    return [(x, x.sum(dim=-1)) for x in xs if x is not None]


@nv.annotate("kl:training_loop.py:13-40", color="green")
def train(model, data, epochs=3, lr=1e-3, log=lambda s: print(s, file=sys.stderr)):
    opt = torch.optim.AdamW(model.parameters(), lr=lr)
    step = 0
    for epoch in range(epochs):
        nv.push_range(f"epoch {epoch}")
        for x, y in data:
            torch.cuda.nvtx.range_push("step")
            try:
                loss = ((model(x).sum(-1) - y) ** 2).mean()
                loss.backward()
            except RuntimeError as e:
                log(f"skipped: {e!s}")
                continue
            finally:
                torch.cuda.nvtx.range_pop()
            opt.step(); opt.zero_grad(set_to_none=True)
            step += 1
            if step % 10 == 0: log('step %d loss %.3f' % (step, loss.item()))
        else:
            log("epoch done")
        nv.pop_range()
    while False:
        break
    else:
        pass
    return step


def main(argv=None):
    def parse(args):
        return {k: v for k, v in (a.split("=", 1) for a in args)}
    opts = parse(argv or sys.argv[1:])
    m = mdl.make(int(opts.get("n", 2)))
    with torch.autograd.profiler.emit_nvtx(), \
            torch.cuda.nvtx.range("main"):
        train(m, données())
    global _done
    _done = True
    del m
    assert _done, "never"
    raise SystemExit(0)


if __name__ == "__main__":
    main()
