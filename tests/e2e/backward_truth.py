#!/usr/bin/env python3
"""Ground truth for backward attribution, independent of kernlens: which forward line created the
autograd node that ran each backward GEMM.

Runs a script with CPU PyTorch under torch.autograd.set_detect_anomaly(True), which stores in every
autograd node the Python traceback of the forward op that created it. Before each backward() the
graph is walked from its roots and a post-hook is put on every node; CPU autograd runs the nodes one
after another on the calling thread, so the GEMM-family ATen ops (mm, addmm, bmm, baddbmm,
convolution) seen since the previous node finished belong to the node whose post-hook fires. The
node's line is the innermost frame of its traceback inside WORKSPACE.

Activation checkpointing: a forward op re-run during backward (grad mode on inside backward, e.g.
torch.utils.checkpoint's recompute) is a recompute op of the innermost WORKSPACE line on the Python
stack when it ran; the nested backward() the checkpoint runs over the recomputed graph is hooked
the same way (torch.autograd.backward is wrapped too).

usage: backward_truth.py WORKSPACE OUT.json -- script.py [args...]
OUT: {"bwd": {"file:line": gemm ops}, "fwd": {...}, "rec": {...}, "unknown_bwd": n}
"""
import collections
import json
import os
import re
import runpy
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

GEMM = {"mm", "addmm", "bmm", "baddbmm", "convolution"}
ws = os.path.realpath(sys.argv[1])
out_path = sys.argv[2]
argv = sys.argv[sys.argv.index("--") + 1:]
ME = os.path.realpath(__file__)

fwd = collections.Counter()
rec = collections.Counter()
bwd = collections.Counter()
unknown = [0]
pending = [0]
depth = [0]
hooked = set()


def rel(fn):
    fn = os.path.realpath(fn)
    if fn.startswith(ws + os.sep) and fn != ME:
        return os.path.relpath(fn, ws)
    return None


def innermost_line():
    f = sys._getframe(2)
    while f is not None:
        r = rel(f.f_code.co_filename)
        if r:
            return "%s:%d" % (r, f.f_lineno)
        f = f.f_back
    return None


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = str(func.overloadpacket).split(".")[-1].split("::")[-1]
        if name in GEMM:
            if depth[0] > 0 and torch.is_grad_enabled():
                line = innermost_line()
                if line:
                    rec[line] += 1
            elif depth[0] > 0:
                pending[0] += 1
            else:
                line = innermost_line()
                if line:
                    fwd[line] += 1
        return func(*args, **(kwargs or {}))


def node_line(node):
    tb = node.metadata.get("traceback_") if isinstance(node.metadata, dict) else None
    if not tb:
        return None
    text = "".join(tb) if isinstance(tb, list) else str(tb)
    best = None
    for m in re.finditer(r'File "([^"]+)", line (\d+)', text):
        r = rel(m.group(1))
        if r:
            best = "%s:%s" % (r, m.group(2))
    return best


def hook_graph(roots):
    todo = [r for r in roots if r is not None]
    while todo:
        n = todo.pop()
        if n in hooked:
            continue
        hooked.add(n)
        line = node_line(n)

        def post(_gi, _go, line=line):
            if pending[0]:
                if line:
                    bwd[line] += pending[0]
                else:
                    unknown[0] += pending[0]
                pending[0] = 0
        n.register_hook(post)
        todo.extend(x for x, _ in n.next_functions if x is not None)


orig_backward = torch.Tensor.backward


def backward(self, *a, **k):
    hook_graph([self.grad_fn])
    depth[0] += 1
    try:
        return orig_backward(self, *a, **k)
    finally:
        depth[0] -= 1


orig_autograd_backward = torch.autograd.backward


def autograd_backward(tensors, *a, **k):
    ts = [tensors] if isinstance(tensors, torch.Tensor) else list(tensors)
    hook_graph([t.grad_fn for t in ts])
    depth[0] += 1
    try:
        return orig_autograd_backward(tensors, *a, **k)
    finally:
        depth[0] -= 1


torch.Tensor.backward = backward
torch.autograd.backward = autograd_backward
sys.argv = argv
sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
# oneDNN off: PyTorch 2.x's CPU LSTM/GRU would be one mkldnn_rnn_layer(_backward) op per layer;
# ATen's native path issues the per-step GEMMs a GPU launches (as realcode_truth.py does).
with torch.backends.mkldnn.flags(enabled=False), torch.autograd.set_detect_anomaly(True), Mode():
    runpy.run_path(argv[0], run_name="__main__")
json.dump({"bwd": bwd, "fwd": fwd, "rec": rec, "unknown_bwd": unknown[0]}, open(out_path, "w"), indent=1, sort_keys=True)
