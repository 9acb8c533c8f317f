"""A small module that exercises the importer's remaining mappings: ReLU,
sigmoid and tanh (functions and modules), subtraction, scaling by numbers
and negation, a weight used through `.T` in a matmul and through F.linear
(both reading the same parameter), F.layer_norm, a softmax that is not
attention, unsqueeze/flatten/permute, and a label tensor reshaped on input.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Misc(nn.Module):
    def __init__(self, d=8, classes=6):
        super().__init__()
        self.inp = nn.Linear(d, d)
        self.shared = nn.Parameter(torch.randn(d, d) * 0.3)
        self.ln_w = nn.Parameter(1 + 0.1 * torch.randn(d))
        self.ln_b = nn.Parameter(0.1 * torch.randn(d))
        self.act = nn.Sigmoid()
        self.head = nn.Linear(d, classes, bias=False)

    def forward(self, x):
        B, T, D = x.shape
        h = F.relu(self.inp(x))
        a = h @ self.shared.T                 # the weight transposed
        b = F.linear(h, self.shared)          # ... and as stored
        h = torch.tanh(a) - 0.5 * self.act(b)
        h = -h + 1.0
        h = F.layer_norm(h, (D,), self.ln_w, self.ln_b, 1e-5)
        p = F.softmax(h, dim=-1)              # not attention: piper.softmax
        h = h * p
        h = h.unsqueeze(1).permute(0, 2, 1, 3).flatten(0, 2)
        return self.head(h)


def loss(logits, labels):
    return F.cross_entropy(logits, labels.reshape(-1))
