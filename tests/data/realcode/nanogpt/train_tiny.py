"""A few nanoGPT training steps on random tokens, tiny config, CPU (kernlens test entry; not
from nanoGPT). usage: python3 train_tiny.py [--steps N] [--forward-only] [--foreach]
(--foreach: the optimizer's multi-tensor implementation, what CUDA PyTorch 2.x uses by default)"""
import argparse

import torch

from model import GPT, GPTConfig


def get_batch(data, block_size, batch_size):
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i:i + block_size] for i in ix])
    y = torch.stack([data[i + 1:i + 1 + block_size] for i in ix])
    return x, y


def train_step(model, optimizer, x, y):
    logits, loss = model(x, y)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    optimizer.step()
    return loss


@torch.no_grad()
def evaluate(model, x, y):
    model.eval()
    logits, loss = model(x, y)
    model.train()
    return loss


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=2)
    p.add_argument("--forward-only", action="store_true")
    p.add_argument("--foreach", action="store_true")
    args = p.parse_args()
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    config = GPTConfig(block_size=16, vocab_size=64, n_layer=2, n_head=2, n_embd=32, dropout=0.0, bias=True)
    model = GPT(config).to(device)
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    for group in optimizer.param_groups:
        group["foreach"] = args.foreach or None
    data = torch.randint(config.vocab_size, (512,)).to(device)
    for step in range(args.steps):
        x, y = get_batch(data, config.block_size, 4)
        if args.forward_only:
            loss = evaluate(model, x, y)
        else:
            loss = train_step(model, optimizer, x, y)
        print("step %d loss %.4f" % (step, loss.item()))


if __name__ == "__main__":
    main()
