import torch.nn as nn
import torch.nn.functional as F

from .block import Block
from .norm import RMSNorm


class TinyFormer(nn.Module):
    def __init__(self, vocab: int = 512, dim: int = 128, n_heads: int = 4, n_layers: int = 2,
                 max_len: int = 64):
        super().__init__()
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList([Block(dim, n_heads, 4 * dim) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, idx, targets=None):
        b, t = idx.shape
        x = self.tok(idx) + self.pos.weight[:t]
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        if targets is None:
            return logits, None
        loss = F.cross_entropy(logits.view(b * t, -1), targets.view(b * t))
        return logits, loss
