"""MLP forward + backward + SGD step (probe tests). Run: python train.py [--steps N] [--crash]"""
import sys

import torch
import torch.nn.functional as F

from mlpmod.model import TwoLayer


def main():
    steps = int(sys.argv[sys.argv.index("--steps") + 1]) if "--steps" in sys.argv else 2
    torch.manual_seed(0)
    model = TwoLayer(64, 256, 16).to("cpu")
    opt = torch.optim.SGD(model.parameters(), lr=0.1, foreach=True)
    x = torch.randn(32, 64, device="cpu", requires_grad=True)
    y = torch.randint(0, 16, (32,), device="cpu")
    for _ in range(steps):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
    if "--crash" in sys.argv:
        raise ValueError("boom after training")
    print("final loss %.4f" % loss.item())


if __name__ == "__main__":
    main()
