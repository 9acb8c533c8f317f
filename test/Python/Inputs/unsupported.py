"""Modules the importer must reject, each with one located line:

    unsupported.py CASE

prints the TraceError's text (or "traced" if the trace succeeded) and
exits 1 on the error.
"""

import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper


class Sorts(nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(8, 8)

    def forward(self, x):
        h = self.proj(x)
        h, _ = torch.sort(h, dim=-1)
        return h.sum()


class Outer(nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Sorts()

    def forward(self, x):
        return self.inner(x)


class ShiftedRope(nn.Module):
    """Rotary tables at positions 1..S: piper.rope's are 0..S-1."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, y):
        B, T, C = x.shape
        q = self.fc(x).view(B, T, 2, 4).transpose(1, 2)
        inv = 1.0 / (10000.0 ** (torch.arange(0, 4, 2, dtype=x.dtype) / 4))
        freqs = torch.outer(torch.arange(1, T + 1, dtype=x.dtype), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        rot = torch.cat((-q[..., 2:], q[..., :2]), dim=-1)
        q = q * emb.cos() + rot * emb.sin()
        h = q.transpose(1, 2).reshape(B, T, C)
        return F.cross_entropy(h.view(B * T, C), y.view(-1))


class Broadcast(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)
        self.gain = nn.Parameter(torch.ones(8))

    def forward(self, x, y):
        return F.cross_entropy(self.fc(x) * self.gain, y)


class NotCausal(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(8, 8)
        self.out = nn.Linear(8, 8)

    def forward(self, x, y):
        B, T, C = x.shape
        q = self.q(x).view(B, T, 2, 4).transpose(1, 2)
        att = (q @ q.transpose(-2, -1)) * 0.5
        mask = torch.ones(T, T).tril()  # keeps the diagonal: causal
        mask[0, 1] = 1  # ...but lets token 0 see token 1
        att = att.masked_fill(mask == 0, float("-inf")).softmax(dim=-1)
        h = (att @ q).transpose(1, 2).reshape(B, T, C)
        return F.cross_entropy(self.out(h).view(B * T, C), y.view(-1))


def main(case):
    torch.manual_seed(0)
    x = torch.randn(4, 8)
    y = torch.zeros(4, dtype=torch.long)
    try:
        if case == "sort":
            piper.trace(Outer(), (x,))
        elif case == "rope":
            piper.trace(ShiftedRope(), (torch.randn(2, 4, 8),
                                        torch.zeros(2, 4, dtype=torch.long)))
        elif case == "broadcast":
            piper.trace(Broadcast(), (x, y))
        elif case == "mask":
            piper.trace(NotCausal(), (torch.randn(2, 4, 8),
                                      torch.zeros(2, 4, dtype=torch.long)))
    except piper.TraceError as e:
        print(e)
        return 1
    print("traced")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
