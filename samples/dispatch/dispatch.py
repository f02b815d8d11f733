"""Shape-dependent dispatch: the same source lines launch different kernels for different shapes.

The scorer runs on short and long sequences. PyTorch picks a warp-per-row softmax for rows of at
most 1024 elements and a block-per-row softmax beyond, and cuBLAS picks GEMM tiles by shape, so one
line has several kernel *variants*. kernlens records them per line instead of refining forever.

Run: python3 dispatch.py --steps 2 [--device cuda]
"""
import argparse

import torch
import torch.nn as nn


class Scorer(nn.Module):
    def __init__(self, dim: int = 128):
        super().__init__()
        self.proj = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        h = self.proj(x)
        scores = h @ h.transpose(-2, -1)
        return torch.softmax(scores, dim=-1)


def score_all(model, lengths, batch, device):
    total = torch.zeros((), device=device)
    for n in lengths:
        x = torch.randn(batch, n, 128, device=device)
        total = total + model(x).mean()
    return total


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = Scorer().to(device)
    with torch.no_grad():
        for _ in range(args.steps):
            out = score_all(model, [256, 2048], 2, device)
    print(f"score {out.item():.4f}")


if __name__ == "__main__":
    main()
