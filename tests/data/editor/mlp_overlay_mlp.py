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
        with torch.cuda.nvtx.range("kl:mlp.py:20-20:h = F.relu(self.fc1(x))"):
            h = F.relu(self.fc1(x))
        with torch.cuda.nvtx.range("kl:mlp.py:21-21:h = F.gelu(self.fc2(h))"):
            h = F.gelu(self.fc2(h))
        with torch.cuda.nvtx.range("kl:mlp.py:22-22:return self.head(h)"):
            return self.head(h)


def train_step(model, opt, x, y):
    with torch.cuda.nvtx.range("kl:mlp.py:26-26:opt.zero_grad(set_to_none=True)"):
        opt.zero_grad(set_to_none=True)
    with torch.cuda.nvtx.range("kl:mlp.py:27-27:logits = model(x)"):
        logits = model(x)
    with torch.cuda.nvtx.range("kl:mlp.py:28-28:loss = F.cross_entropy(logits, y)"):
        loss = F.cross_entropy(logits, y)
    with torch.cuda.nvtx.range("kl:mlp.py:29-29:loss.backward()"):
        loss.backward()
    with torch.cuda.nvtx.range("kl:mlp.py:30-30:opt.step()"):
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
    with torch.cuda.nvtx.range("kl:mlp.py:43-43:model = MLP(256, 512, 10).to(device)"):
        model = MLP(256, 512, 10).to(device)
    with torch.cuda.nvtx.range("kl:mlp.py:44-44:opt = torch.optim.SGD(model.parameters(), lr=..."):
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
    with torch.cuda.nvtx.range("kl:mlp.py:45-45:x = torch.randn(args.batch, 256, device=device)"):
        x = torch.randn(args.batch, 256, device=device)
    with torch.cuda.nvtx.range("kl:mlp.py:46-46:y = torch.randint(0, 10, (args.batch,), devic..."):
        y = torch.randint(0, 10, (args.batch,), device=device)
    with torch.cuda.nvtx.range("kl:mlp.py:47-48:for _ in range(args.steps)"):
        for _ in range(args.steps):
            loss = train_step(model, opt, x, y)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
