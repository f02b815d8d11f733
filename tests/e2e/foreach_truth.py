#!/usr/bin/env python3
"""Ground truth for multi-tensor-apply launches, independent of kernlens: runs a script with CPU
PyTorch under a TorchDispatchMode, records every torch._foreach_* op with its tensor lists, and
counts the multi_tensor_apply_kernel launches a CUDA build makes for it per ATen's
MultiTensorApply.cuh (65536-element chunks; a launch when it holds depth_to_max_tensors[depth]
tensors {110, 64, 48, 36, 30} at a tensor's last chunk, or 320 blocks, or after the last chunk;
empty tensors skipped; depth = tensor lists + 1 for out-of-place ops), at the innermost WORKSPACE
line on the Python stack. Ops on 0-dim tensors only (the optimizer's step counters, made by
torch.tensor: CPU-side in a GPU program) launch nothing and are left out.

usage: foreach_truth.py WORKSPACE OUT.json -- script.py [args...]
OUT: {"file:line": launches}
"""
import collections
import json
import os
import runpy
import sys

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ws = os.path.realpath(sys.argv[1])
out_path = sys.argv[2]
argv = sys.argv[sys.argv.index("--") + 1:]
ME = os.path.realpath(__file__)
MAX_TENSORS = [110, 64, 48, 36, 30]
counts = collections.Counter()


def launches(numels, depth):
    n, tensors, blocks = 0, 0, 0
    sizes = [x for x in numels if x]
    for i, x in enumerate(sizes):
        tensors += 1
        chunks = (x + 65535) // 65536
        for c in range(chunks):
            blocks += 1
            if (tensors == MAX_TENSORS[depth - 1] and c == chunks - 1) or blocks == 320 \
                    or (i == len(sizes) - 1 and c == chunks - 1):
                n += 1
                blocks = 0
                tensors = 0 if c == chunks - 1 else 1
    return n


def line():
    f = sys._getframe(2)
    while f is not None:
        fn = os.path.realpath(f.f_code.co_filename)
        if fn.startswith(ws + os.sep) and fn != ME:
            return "%s:%d" % (os.path.relpath(fn, ws), f.f_lineno)
        f = f.f_back
    return None


class Mode(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if name.startswith("_foreach_"):
            lists = [a for a in args if isinstance(a, (list, tuple)) and a and isinstance(a[0], torch.Tensor)]
            if lists and not all(t.dim() == 0 for t in lists[0]):
                where = line()
                if where:
                    depth = min(5, len(lists) + (0 if name.endswith("_") else 1))
                    counts[where] += launches([t.numel() for t in lists[0]], depth)
        return out


sys.argv = argv
sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
os.chdir(ws)
with Mode():
    runpy.run_path(argv[0], run_name="__main__")
json.dump(counts, open(out_path, "w"), indent=1, sort_keys=True)
