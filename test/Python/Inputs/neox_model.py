"""A GPT-NeoX/Phi-style model written as an ordinary PyTorch module.

Fused projections split in the model: one biased Linear makes q, k and v
(`.split(C, dim=-1)` in even layers, `.chunk(3, dim=2)` in odd ones) and
one bias-free Linear makes the SwiGLU gate and up halves (`.chunk(2,
dim=-1)`, as Phi-3). Partial rotary embeddings: only the first
`rotary_dim` channels of each head rotate (GPT-NeoX's rotary_ndims: 4 of 8
in even layers, 6 of 8 in odd ones), with HF's tables at position ids
`offset .. offset + T - 1` (a sequence continued after `offset` tokens);
the rest of each head passes through. LayerNorms, a causal boolean mask, an
untied head.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary_tables(T, rot, theta, offset, dtype):
    inv_freq = 1.0 / (theta ** (torch.arange(0, rot, 2, dtype=dtype) / rot))
    positions = torch.arange(offset, offset + T, dtype=dtype)
    emb = torch.outer(positions, inv_freq)
    emb = torch.cat((emb, emb), dim=-1)
    return emb.cos(), emb.sin()


def apply_partial_rotary(x, cos, sin, rot):
    x_rot, x_pass = x[..., :rot], x[..., rot:]
    x_rot = x_rot * cos + rotate_half(x_rot) * sin
    return torch.cat((x_rot, x_pass), dim=-1)


class Attention(nn.Module):
    def __init__(self, dim, n_heads, rot, offset, theta, chunk):
        super().__init__()
        self.n_heads, self.hd = n_heads, dim // n_heads
        self.rot, self.offset, self.theta, self.chunk = rot, offset, theta, chunk
        self.qkv = nn.Linear(dim, 3 * dim)
        self.dense = nn.Linear(dim, dim)

    def forward(self, x):
        B, T, C = x.shape
        H, hd = self.n_heads, self.hd
        if self.chunk:
            q, k, v = self.qkv(x).chunk(3, dim=2)
        else:
            q, k, v = self.qkv(x).split(C, dim=-1)
        q = q.view(B, T, H, hd).transpose(1, 2)
        k = k.view(B, T, H, hd).transpose(1, 2)
        v = v.view(B, T, H, hd).transpose(1, 2)
        cos, sin = rotary_tables(T, self.rot, self.theta, self.offset, x.dtype)
        q = apply_partial_rotary(q, cos, sin, self.rot)
        k = apply_partial_rotary(k, cos, sin, self.rot)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(hd)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        probs = F.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)
        return self.dense((probs @ v).transpose(1, 2).reshape(B, T, C))


class MLP(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate_up = nn.Linear(dim, 2 * hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        gate, up = self.gate_up(x).chunk(2, dim=-1)
        return self.down(F.silu(gate) * up)


class Block(nn.Module):
    def __init__(self, dim, n_heads, hidden, rot, offset, theta, chunk):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = Attention(dim, n_heads, rot, offset, theta, chunk)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = MLP(dim, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class NeoX(nn.Module):
    def __init__(self, vocab=32, dim=16, n_heads=2, hidden=24, offset=3,
                 theta=10000.0):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList([
            Block(dim, n_heads, hidden, 4 if i % 2 == 0 else 6, offset, theta,
                  i % 2 == 1) for i in range(2)])
        self.ln_f = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab, bias=False)
        gen = torch.Generator().manual_seed(1357)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name.startswith("ln") or ".ln" in name:
                    p.copy_((1.0 if name.endswith("weight") else 0.0)
                            + 0.1 * torch.randn(p.shape, generator=gen))
                else:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.2)

    def forward(self, tokens):
        h = self.embed(tokens)
        for layer in self.layers:
            h = layer(h)
        return self.head(self.ln_f(h))


def lm_loss(logits, targets):
    B, T, V = logits.shape
    return F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
