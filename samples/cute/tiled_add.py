"""A CUTE DSL kernel timed from the inside (intra-kernel regions).

Each block loads a tile of `a` and `b`, adds them and stores the result. Lane 0 of warp 0
records three regions per block with the transformer_nuggets-style profiler
(`profile_region` / `lane0_warp0_start` / `lane0_warp0_stop`) into an int64 event buffer laid
out as [count, then per event: start_ns, dur_ns, tag_id, tid].

Run on a GPU (needs nvidia-cutlass-dsl and transformer_nuggets):
    python samples/cute/tiled_add.py --out regions.npy
then, anywhere:
    kernlens cute summary regions.npy --source samples/cute/tiled_add.py
    kernlens cute export regions.npy --source samples/cute/tiled_add.py -o trace.json
"""

import argparse

import cutlass
import cutlass.cute as cute
import numpy as np
import torch
from cutlass import Int32
from cutlass.cute.runtime import from_dlpack
from transformer_nuggets.cute.profiler.ops import (
    lane0_warp0_start,
    lane0_warp0_stop,
    profile_region,
)

# Region tags: the id each region writes into the buffer (kernlens maps them back here).
TAG_LOAD = 0
TAG_ADD = 1
TAG_STORE = 2

THREADS = 128
TILE = 4096  # elements per block


@cute.kernel
def tiled_add_kernel(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, prof_buf: cute.Tensor, max_events: Int32):
    tidx, _, _ = cute.arch.thread_idx()
    bidx, _, _ = cute.arch.block_idx()
    base = bidx * TILE

    with profile_region(prof_buf, max_events, Int32(TAG_LOAD), bidx):
        ra = cute.make_fragment(TILE // THREADS, a.element_type)
        rb = cute.make_fragment(TILE // THREADS, b.element_type)
        for i in cutlass.range_constexpr(TILE // THREADS):
            ra[i] = a[base + i * THREADS + tidx]
            rb[i] = b[base + i * THREADS + tidx]

    eid = lane0_warp0_start(prof_buf, max_events)
    for i in cutlass.range_constexpr(TILE // THREADS):
        ra[i] = ra[i] + rb[i]
    lane0_warp0_stop(prof_buf, eid, Int32(TAG_ADD), bidx, max_events)

    with profile_region(prof_buf, max_events, Int32(TAG_STORE), bidx):
        for i in cutlass.range_constexpr(TILE // THREADS):
            c[base + i * THREADS + tidx] = ra[i]


@cute.jit
def tiled_add(a: cute.Tensor, b: cute.Tensor, c: cute.Tensor, prof_buf: cute.Tensor, max_events: Int32):
    blocks = cute.size(a) // TILE
    tiled_add_kernel(a, b, c, prof_buf, max_events).launch(grid=(blocks, 1, 1), block=(THREADS, 1, 1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=1 << 20)
    p.add_argument("--out", default="regions.npy")
    args = p.parse_args()
    a = torch.randn(args.n, device="cuda")
    b = torch.randn(args.n, device="cuda")
    c = torch.empty_like(a)
    max_events = 3 * (args.n // TILE)  # one event per region per block
    prof = torch.zeros(1 + 4 * max_events, dtype=torch.int64, device="cuda")
    conv = lambda t: from_dlpack(t, assumed_align=16)
    tiled_add(conv(a), conv(b), conv(c), conv(prof), Int32(max_events))
    torch.cuda.synchronize()
    assert torch.allclose(c, a + b)
    np.save(args.out, prof.cpu().numpy())
    print(f"wrote {args.out}: {int(prof[0])} events (capacity {max_events})")


if __name__ == "__main__":
    main()
