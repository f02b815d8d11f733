"""nanoGPT training steps with activation checkpointing: every transformer block of the upstream
model runs under torch.utils.checkpoint (its forward ops run again during backward). Tiny config,
random tokens, CPU (kernlens test entry; not from nanoGPT).
usage: python3 train_ckpt.py [--steps N]"""
import argparse

import torch
from torch.utils.checkpoint import checkpoint

from model import GPT, GPTConfig


class Checkpointed(torch.nn.Module):
    """Runs `block` under activation checkpointing (reentrant, PyTorch's default)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return checkpoint(self.block, x)


def train_step(model, optimizer, x, y):
    logits, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    optimizer.step()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2)
    args = p.parse_args()
    torch.manual_seed(0)
    config = GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True)
    model = GPT(config)
    for i, block in enumerate(model.transformer.h):
        model.transformer.h[i] = Checkpointed(block)
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    data = torch.randint(config.vocab_size, (512,))
    for step in range(args.steps):
        ix = torch.randint(len(data) - config.block_size, (4,))
        x = torch.stack([data[i:i + config.block_size] for i in ix])
        y = torch.stack([data[i + 1:i + 1 + config.block_size] for i in ix])
        loss = train_step(model, optimizer, x, y)
        print("step %d loss %.4f" % (step, loss.item()))


if __name__ == "__main__":
    main()
