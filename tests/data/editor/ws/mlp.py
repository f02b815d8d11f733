"""A small MLP trained for a few steps: the simplest program to map kernels to lines.

Run: python3 mlp.py --steps 3 [--device cuda]
"""
import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLP(nn.Module):
    def __init__(self, d_in: int, d_hidden: int, d_out: int):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_hidden)
        self.head = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        h = F.relu(self.fc1(x))
        h = F.gelu(self.fc2(h))
        return self.head(h)


def train_step(model, opt, x, y):
    opt.zero_grad(set_to_none=True)
    logits = model(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    torch.manual_seed(0)
    device = torch.device(args.device)
    model = MLP(256, 512, 10).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(args.batch, 256, device=device)
    y = torch.randint(0, 10, (args.batch,), device=device)
    for _ in range(args.steps):
        loss = train_step(model, opt, x, y)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
