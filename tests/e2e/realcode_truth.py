#!/usr/bin/env python3
"""Independent ground truth for the loop on real code (no kernlens code is imported or used).

Runs SCRIPT with CPU PyTorch under a TorchDispatchMode and records, for every ATen op that does
work (views and allocations excluded), the innermost WORKSPACE source line on the Python stack
when it ran, whether the focus function was on the stack, and whether it ran inside a backward
call (Tensor.backward / torch.autograd.backward: on CPU, autograd runs on the calling thread).
GEMM-family ops (mm, addmm, bmm, baddbmm, convolution) are counted separately. Tensor.to(device)
calls count as one op each (a host->device copy in a GPU program; a no-op on CPU).

usage: realcode_truth.py WORKSPACE OUT.json FOCUS_FILE::QUALNAME -- SCRIPT [ARGS...]
OUT: {"lines": {"FILE:LINE": {"ops": n, "gemm": n, "bwd_ops": n, "bwd_gemm": n, "out_ops": n}}}
  ops/gemm: forward ops under the focus; bwd_*: inside backward under the focus; out_ops: outside
  the focus.
"""
import collections
import json
import os
import runpy
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ws = os.path.realpath(sys.argv[1])
outp = sys.argv[2]
focus_file, focus_qual = sys.argv[3].split("::", 1)
focus_file = os.path.realpath(os.path.join(ws, focus_file))
argv = sys.argv[sys.argv.index("--") + 1:]
ME = os.path.realpath(__file__)
GEMM = {"mm", "addmm", "bmm", "baddbmm", "convolution", "_convolution"}
NO_WORK = {"empty", "empty_strided", "empty_like", "lift_fresh", "detach", "alias", "resize_",
           "set_", "_reshape_alias", "as_strided", "_unsafe_view", "view", "expand", "squeeze",
           "unsqueeze", "t", "transpose", "permute", "select", "slice", "split", "chunk",
           "unbind", "narrow", "view_as_real", "view_as_complex", "unfold", "diagonal"}
stats = collections.defaultdict(collections.Counter)
in_backward = [0]
real_cache = {}


def real(fn):
    r = real_cache.get(fn)
    if r is None:
        r = os.path.realpath(fn) if not fn.startswith("<") else ""
        real_cache[fn] = r
    return r


def is_view(func):
    try:
        for r in func._schema.returns:
            if r.alias_info is not None and not r.alias_info.is_write:
                return True
    except AttributeError:
        pass
    return False


def where_from(depth):
    f = sys._getframe(depth)
    line = None
    in_focus = False
    while f is not None:
        fn = real(f.f_code.co_filename)
        if fn and fn.startswith(ws + os.sep) and fn != ME:
            if line is None:
                line = "%s:%d" % (os.path.relpath(fn, ws), f.f_lineno)
            if fn == focus_file and getattr(f.f_code, "co_qualname", f.f_code.co_name) == focus_qual:
                in_focus = True
                break
        f = f.f_back
    return line, in_focus


def record(name):
    line, in_focus = where_from(3)
    if line is None:
        return
    s = stats[line]
    if not in_focus:
        s["out_ops"] += 1
    elif in_backward[0]:
        s["bwd_ops"] += 1
        s["bwd_gemm"] += name in GEMM
    else:
        s["ops"] += 1
        s["gemm"] += name in GEMM


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name in NO_WORK or is_view(func):
            return out
        record(name)
        return out


def backward_flag(orig):
    def wrapped(*a, **k):
        in_backward[0] += 1
        try:
            return orig(*a, **k)
        finally:
            in_backward[0] -= 1
    return wrapped


def transfer(orig):
    # A host->device copy in a GPU program (on CPU it is a no-op the dispatcher never sees).
    def wrapped(self, *a, **k):
        if k.get("device") is not None or any(isinstance(x, (str, torch.device)) for x in a):
            record("to")
        return orig(self, *a, **k)
    return wrapped


torch.Tensor.to = transfer(torch.Tensor.to)
torch.Tensor.backward = backward_flag(torch.Tensor.backward)
torch.autograd.backward = backward_flag(torch.autograd.backward)
os.chdir(ws)
sys.argv = argv
sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
# PyTorch 2.x on the CPU runs nn.LSTM/GRU as one oneDNN op per layer (mkldnn_rnn_layer); a GPU
# launches per-step GEMMs and cell kernels (cuDNN). With oneDNN off the CPU takes ATen's native
# path, one op per step like 1.13 did, so the truth counts the work each line really issues.
with torch.backends.mkldnn.flags(enabled=False), Mode():
    runpy.run_path(argv[0], run_name="__main__")
json.dump({"lines": {k: dict(v) for k, v in sorted(stats.items())}}, open(outp, "w"), indent=1)
