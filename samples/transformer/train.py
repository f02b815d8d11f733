"""Train tinyformer for a few steps: forward, backward, optimizer step.

Run from this directory: python3 train.py --steps 2 [--device cuda]
"""
import argparse

import torch

from tinyformer import TinyFormer


def train_step(model, opt, idx, targets):
    opt.zero_grad(set_to_none=True)
    _, loss = model(idx, targets)
    loss.backward()
    opt.step()
    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--seq", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device(args.device)
    model = TinyFormer().to(device)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    idx = torch.randint(0, 512, (args.batch, args.seq), device=device)
    targets = torch.roll(idx, -1, dims=1)
    for _ in range(args.steps):
        loss = train_step(model, opt, idx, targets)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
