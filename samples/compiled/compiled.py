"""The MLP of samples/mlp compiled with torch.compile (PyTorch >= 2.0 with a GPU: Inductor + Triton).

Inductor fuses the bias-add + activation of each layer into Triton kernels named like
`triton_poi_fused_addmm_gelu_1`; the GEMMs stay cuBLAS (extern) kernels. kernlens attributes every
one of them to the Python line that calls the compiled code (`logits = cmodel(x)` below), like any
other kernel: the compiled function is one opaque call. With TORCH_COMPILE_DEBUG=1 Inductor writes
its generated code and FX graph dumps; kernlens' provenance parser (core/planner/provenance.h) reads
them to name the ORIGINAL lines of `MLP.forward` each fused kernel came from.

Not runnable under the emulate backend (the emulator runs PyTorch 1.13 on CPU, which has no
torch.compile); this script exits with a clear message there.

Run (GPU machine): python3 compiled.py --steps 3 --device cuda
"""
import argparse
import sys

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


def train_step(cmodel, opt, x, y):
    opt.zero_grad(set_to_none=True)
    logits = cmodel(x)
    loss = F.cross_entropy(logits, y)
    loss.backward()
    opt.step()
    return loss


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    if not hasattr(torch, "compile"):
        sys.exit("compiled.py needs PyTorch >= 2.0 (torch.compile); this is %s" % torch.__version__)
    torch.manual_seed(0)
    device = torch.device(args.device)
    model = MLP(256, 512, 10).to(device)
    cmodel = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(args.batch, 256, device=device)
    y = torch.randint(0, 10, (args.batch,), device=device)
    for _ in range(args.steps):
        loss = train_step(cmodel, opt, x, y)
    print(f"final loss {loss.item():.4f}")


if __name__ == "__main__":
    main()
