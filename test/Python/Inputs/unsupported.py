"""Modules the importer must reject, each with one located line:

    unsupported.py CASE

prints the TraceError's text (or "traced" if the trace succeeded) and
exits 1 on the error.
"""

import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import moe_model  # noqa: E402


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
    """Rotary tables at positions 0, 2, 4, ...: piper.rope's are
    consecutive (offset .. offset + S - 1)."""
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x, y):
        B, T, C = x.shape
        q = self.fc(x).view(B, T, 2, 4).transpose(1, 2)
        inv = 1.0 / (10000.0 ** (torch.arange(0, 4, 2, dtype=x.dtype) / 4))
        freqs = torch.outer(torch.arange(0, 2 * T, 2, dtype=x.dtype), inv)
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


class UnnormalisedRouter(nn.Module):
    """Top-k routing weights used without renormalising them."""
    def __init__(self):
        super().__init__()
        self.router = nn.Linear(8, 4, bias=False)
        self.experts = moe_model.Experts(4, 8, 8)
        nn.init.normal_(self.experts.w_gate)
        nn.init.normal_(self.experts.w_up)
        nn.init.normal_(self.experts.w_down)

    def forward(self, x, y):
        w, idx = torch.topk(F.softmax(self.router(x), dim=-1), 2, dim=-1)
        return F.cross_entropy(self.experts(x, w, idx), y)


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
        elif case == "topk":
            piper.trace(UnnormalisedRouter(), (x, y))
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
