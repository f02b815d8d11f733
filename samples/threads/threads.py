"""Work split across two Python threads: each thread runs the same model on its own inputs.

kernlens attributes every kernel to the thread that launched it (NVTX ranges are per thread), so
the lines of `Encoder.forward` collect the kernels of both threads, and the worker's own lines
(`.sum().item()`) show up once the search widens to the thread target.

Run: python3 threads.py --steps 2 [--device cuda]
"""
import argparse
import threading

import torch
import torch.nn as nn
import torch.nn.functional as F


class Encoder(nn.Module):
    def __init__(self, dim: int = 256):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)

    def forward(self, x):
        h = self.norm(x)
        h = F.gelu(self.up(h))
        return x + self.down(h)


def worker(model, x, steps, results, slot):
    for _ in range(steps):
        y = model(x)
        results[slot] = y.sum().item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = Encoder().to(device)
    inputs = [torch.randn(8, 64, 256, device=device), torch.randn(8, 64, 256, device=device)]
    results = [0.0, 0.0]
    with torch.no_grad():
        threads = [threading.Thread(target=worker, args=(model, inputs[i], args.steps, results, i)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    print("results", [round(r, 3) for r in results])


if __name__ == "__main__":
    main()
