"""A Llama-style model written as an ordinary PyTorch module.

RMSNorm written as a module (recognised by its name and checked against
x / sqrt(mean(x^2) + eps) * weight), causal multi-head attention without
biases whose mask is a boolean triu (masked_fill(mask, -inf), the other
common spelling), a SwiGLU MLP (down(silu(gate(x)) * up(x))), residuals,
a final RMSNorm and an untied LM head. Blocks are split into `stages`
pipeline stages with piper.annotate("PP").

Not yet here (issue 16): rotary position embeddings, grouped-query
attention and q/k norms, which need new piper ops.
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self, dim, n_heads):
        super().__init__()
        self.n_heads = n_heads
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.n_heads
        q = self.wq(x).view(B, T, self.n_heads, hd).permute(0, 2, 1, 3)
        k = self.wk(x).view(B, T, self.n_heads, hd).permute(0, 2, 1, 3)
        v = self.wv(x).view(B, T, self.n_heads, hd).permute(0, 2, 1, 3)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.wo(out.permute(0, 2, 1, 3).reshape(B, T, C))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads, hidden):
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, n_heads)
        self.ffn_norm = RMSNorm(dim)
        self.ffn = FeedForward(dim, hidden)

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.ffn(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=32, dim=16, n_heads=2, n_layers=2, hidden=32,
                 stages=1):
        super().__init__()
        self.stages = stages
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            [Block(dim, n_heads, hidden) for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        gen = torch.Generator().manual_seed(4321)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() == 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.05)
                else:
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))

    def forward(self, tokens):
        h = self.embed(tokens)
        per = len(self.layers) // self.stages
        for s in range(self.stages):
            with piper.annotate("PP"):
                for layer in self.layers[s * per:(s + 1) * per]:
                    h = layer(h)
        return self.output(self.norm(h))


def lm_loss(logits, targets):
    B, T, V = logits.shape
    return F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
