"""A small transformer block, written to exercise the parser.

It is never run; it only has to look like real PyTorch code.
"""
from __future__ import annotations

import math
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.cuda import nvtx
import torch.cuda.nvtx as tnv


def _init(m):
    if isinstance(m, nn.Linear): nn.init.xavier_uniform_(m.weight); m.bias.data.zero_()
    elif isinstance(m, nn.LayerNorm):
        m.weight.data.fill_(1.0)
    else:
        pass


class Attention(nn.Module):
    """Multi-head attention."""

    def __init__(self, dim: int, heads: int = 8, *, dropout=0.0):
        super().__init__()
        self.heads = heads
        self.scale = 1 / math.sqrt(dim // heads)
        self.qkv = nn.Linear(dim, dim * 3,
                             bias=False)
        self.out = nn.Linear(dim, dim)

    @torch.no_grad()
    def reset(self):
        for p in self.parameters(): p.zero_()

    def forward(self, x, mask=None):
        b, n, _ = x.shape
        with nvtx.range("kl:transformer.py:38-48"):
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            q = q.view(b, n, self.heads, -1).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) * \
            self.scale
        if (m := mask) is not None:
            scores = scores.masked_fill(m == 0, float("-inf"))
        attn = F.softmax(scores, dim=-1)
        return self.out(torch.matmul(attn, v).reshape(b, n, -1))


class Block(nn.Module):
    class Config:
        dim = 64; heads = 4

    def __init__(self, cfg=Config()):
        super().__init__()
        self.attn = Attention(cfg.dim, cfg.heads)
        self.mlp = nn.Sequential(nn.Linear(cfg.dim, 4 * cfg.dim), nn.GELU(), nn.Linear(4 * cfg.dim, cfg.dim))
        self.norm1, self.norm2 = nn.LayerNorm(cfg.dim), nn.LayerNorm(cfg.dim)

    @tnv.range("kl:transformer.py:63-70")
    def forward(self, x):
        tnv.range_push("attn")
        x = x + self.attn(self.norm1(x))
        tnv.range_pop()
        x = x + self.mlp(self.norm2(x))
        return x

    def describe(self, kind):
        match kind:
            case "short":
                return f"Block({self.attn.heads})"
            case {"verbose": True, **rest}:
                return f"""Block(
    heads={self.attn.heads!r},
    extra={rest}
)"""
            case [first, *_] if first:
                return str(first)
            case _:
                return repr(self)


async def serve(model, queue):
    async with queue as q:
        async for item in q:
            yield await model(item)


def make(n: int = 2) -> nn.Module:
    blocks = [Block() for _ in range(n)]
    return nn.Sequential(*blocks).apply(_init)
