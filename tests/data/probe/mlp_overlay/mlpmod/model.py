import torch
import torch.nn as nn


class TwoLayer(nn.Module):
    def __init__(self, d_in, d_hidden, d_out):
        super().__init__()
        self.fc1 = nn.Linear(d_in, d_hidden)
        self.fc2 = nn.Linear(d_hidden, d_out)

    def forward(self, x):
        with torch.cuda.nvtx.range("kl:mlpmod/model.py:12-12"):
            h = self.fc1(x)
        with torch.cuda.nvtx.range("kl:mlpmod/model.py:13-13"):
            h = torch.relu(h)
        with torch.cuda.nvtx.range("kl:mlpmod/model.py:14-14"):
            return self.fc2(h)
