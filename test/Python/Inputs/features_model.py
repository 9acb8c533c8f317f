"""A small module with the other spellings of the LLM features: exact GELU
(nn.GELU() and F.gelu with the default approximate='none'), multi-query
attention (one key/value head, repeat_interleave), rotary embeddings
applied to [B, S, H, D] heads (tables broadcast as cos[None, :, None, :])
with theta = 1e6, and q/k RMSNorms applied after the heads are transposed
to [B, H, S, D].
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat((-x[..., half:], x[..., :half]), dim=-1) * sin


class Features(nn.Module):
    def __init__(self, dim=16, heads=4, vocab=24, theta=1e6):
        super().__init__()
        self.heads, self.hd, self.theta = heads, dim // heads, theta
        self.embed = nn.Embedding(vocab, dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, self.hd, bias=False)
        self.wv = nn.Linear(dim, self.hd, bias=False)
        self.q_norm = RMSNorm(self.hd)
        self.k_norm = RMSNorm(self.hd)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.up = nn.Linear(dim, 2 * dim)
        self.act = nn.GELU()
        self.down = nn.Linear(2 * dim, dim)
        self.head = nn.Linear(dim, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        B, T, C = x.shape
        hd = self.hd
        inv = 1.0 / (self.theta ** (torch.arange(0, hd, 2, dtype=x.dtype) / hd))
        freqs = torch.outer(torch.arange(T, dtype=x.dtype), inv)
        emb = torch.cat((freqs, freqs), dim=-1)
        cos, sin = emb.cos()[None, :, None, :], emb.sin()[None, :, None, :]
        q = rotate(self.wq(x).view(B, T, self.heads, hd), cos, sin)
        k = rotate(self.wk(x).view(B, T, 1, hd), cos, sin)
        v = self.wv(x).view(B, T, 1, hd)
        q = self.q_norm(q.transpose(1, 2))
        k = self.k_norm(k.transpose(1, 2)).repeat_interleave(self.heads, dim=1)
        v = v.transpose(1, 2).repeat_interleave(self.heads, dim=1)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
        mask = torch.triu(torch.ones(T, T, dtype=torch.bool), diagonal=1)
        att = F.softmax(att.masked_fill(mask, float("-inf")), dim=-1)
        x = x + self.wo((att @ v).transpose(1, 2).reshape(B, T, C))
        x = x + self.down(F.gelu(self.act(self.up(x))))
        return self.head(x)


def loss(logits, targets):
    B, T, V = logits.shape
    return F.cross_entropy(logits.reshape(B * T, V), targets.reshape(B * T))
