"""A Llama/Qwen3-style model written as an ordinary PyTorch module.

RMSNorm written as a module (recognised by its name and checked against
x / sqrt(mean(x^2) + eps) * weight); grouped-query causal attention without
biases (4 query heads, 2 key/value heads) with Qwen3's per-head q/k RMSNorm
and rotary position embeddings written the usual rotate_half way (tables
computed from theta and position ids 0..S-1 in the model's dtype); the
key/value heads repeated by `expand` + `reshape` (HF's repeat_kv) in even
layers and by `repeat_interleave` in odd ones; the mask a boolean triu
(masked_fill(mask, -inf)); a SwiGLU MLP (down(silu(gate(x)) * up(x))),
residuals, a final RMSNorm and an LM head tied to the token embedding
(`tied=False` gives it its own weight). Blocks are split into `stages`
pipeline stages with piper.annotate("PP").
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


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rotary_tables(T, head_dim, theta, dtype):
    """cos, sin [T, head_dim] at position ids 0..T-1 (HF's rotary layout)."""
    inv_freq = 1.0 / (theta ** (torch.arange(0, head_dim, 2, dtype=dtype) / head_dim))
    positions = torch.arange(T, dtype=dtype)
    freqs = torch.outer(positions, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos(), emb.sin()


class Attention(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, theta, interleave):
        super().__init__()
        self.n_heads, self.n_kv_heads = n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.theta, self.interleave = theta, interleave
        kv = n_kv_heads * self.head_dim
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, kv, bias=False)
        self.wv = nn.Linear(dim, kv, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.q_norm = RMSNorm(self.head_dim)
        self.k_norm = RMSNorm(self.head_dim)

    def repeat_kv(self, x):
        n = self.n_heads // self.n_kv_heads
        if self.interleave:
            return x.repeat_interleave(n, dim=1)
        B, H, T, D = x.shape
        return x[:, :, None, :, :].expand(B, H, n, T, D).reshape(B, H * n, T, D)

    def forward(self, x):
        B, T, C = x.shape
        hd = self.head_dim
        q = self.q_norm(self.wq(x).view(B, T, self.n_heads, hd)).transpose(1, 2)
        k = self.k_norm(self.wk(x).view(B, T, self.n_kv_heads, hd)).transpose(1, 2)
        v = self.wv(x).view(B, T, self.n_kv_heads, hd).transpose(1, 2)
        cos, sin = rotary_tables(T, hd, self.theta, x.dtype)
        cos, sin = cos[None, None], sin[None, None]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat_kv(k), self.repeat_kv(v)
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(hd)
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        scores = scores.masked_fill(mask, float("-inf"))
        out = torch.matmul(F.softmax(scores, dim=-1), v)
        return self.wo(out.transpose(1, 2).reshape(B, T, C))


class FeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden, bias=False)
        self.up = nn.Linear(dim, hidden, bias=False)
        self.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class Block(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, hidden, theta, interleave):
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, n_heads, n_kv_heads, theta, interleave)
        self.ffn_norm = RMSNorm(dim)
        self.ffn = FeedForward(dim, hidden)

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.ffn(self.ffn_norm(h))


class Llama(nn.Module):
    def __init__(self, vocab=32, dim=16, n_heads=4, n_kv_heads=2, n_layers=2,
                 hidden=32, theta=10000.0, stages=1, tied=True):
        super().__init__()
        self.stages = stages
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            [Block(dim, n_heads, n_kv_heads, hidden, theta, i % 2 == 1)
             for i in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        if tied:
            self.output.weight = self.embed.weight
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
