"""multiprocessing spawn children and DataLoader workers (fork and spawn) over workspace code."""
import multiprocessing as mp

import torch

import wslib


def main():
    ctx = mp.get_context("spawn")
    pool = ctx.Pool(2)
    squares = pool.map(wslib.square, [torch.tensor([float(i)]) for i in range(4)])
    pool.close()
    pool.join()
    print("pool", [s.item() for s in squares])
    for context in ("fork", "spawn"):
        loader = torch.utils.data.DataLoader(wslib.Squares(), batch_size=2, num_workers=2,
                                             multiprocessing_context=context)
        print("loader", context, [b.tolist() for b in loader])


if __name__ == "__main__":
    main()
