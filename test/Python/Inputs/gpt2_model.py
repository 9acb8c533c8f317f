"""A GPT-2-style model written as an ordinary PyTorch module.

Token and learned position embeddings, pre-LayerNorm blocks of causal
multi-head attention (hand-written: q @ k^T / sqrt(d), causal mask,
F.softmax, @ v) and a GELU (tanh) MLP, all linears with biases, a final
LayerNorm and an LM head tied to the token embedding (tied=False: its own
weight). The blocks are split
into `stages` pipeline stages with piper.annotate("PP").
"""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper


class CausalSelfAttention(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.n_head = n_head
        self.q = nn.Linear(n_embd, n_embd)
        self.k = nn.Linear(n_embd, n_embd)
        self.v = nn.Linear(n_embd, n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.register_buffer(
            "bias", torch.tril(torch.ones(block_size, block_size))
            .view(1, 1, block_size, block_size))

    def forward(self, x):
        B, T, C = x.size()
        hs = C // self.n_head
        q = self.q(x).view(B, T, self.n_head, hs).transpose(1, 2)
        k = self.k(x).view(B, T, self.n_head, hs).transpose(1, 2)
        v = self.v(x).view(B, T, self.n_head, hs).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hs))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = att @ v
        y = y.transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, n_embd):
        super().__init__()
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * n_embd, n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, n_embd, n_head, block_size):
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.attn = CausalSelfAttention(n_embd, n_head, block_size)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.mlp = MLP(n_embd)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        x = x + self.mlp(self.ln_2(x))
        return x


class GPT2(nn.Module):
    def __init__(self, vocab=32, n_embd=16, n_head=2, n_layer=2, block_size=8,
                 stages=1, tied=True):
        super().__init__()
        self.stages = stages
        self.wte = nn.Embedding(vocab, n_embd)
        self.wpe = nn.Embedding(block_size, n_embd)
        self.h = nn.ModuleList(
            [Block(n_embd, n_head, block_size) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(n_embd)
        self.lm_head = nn.Linear(n_embd, vocab, bias=False)
        if tied:
            self.lm_head.weight = self.wte.weight  # tied embedding and head
        gen = torch.Generator().manual_seed(1234)
        with torch.no_grad():
            for name, p in self.named_parameters():
                # GPT-2's init, plus small noise on the norms and biases so
                # that every parameter's gradient matters.
                if name.endswith("weight") and p.dim() == 2:
                    p.copy_(torch.randn(p.shape, generator=gen) * 0.02)
                elif "ln" in name and name.endswith("weight"):
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
                else:
                    p.copy_(0.02 * torch.randn(p.shape, generator=gen))

    def forward(self, idx):
        B, T = idx.size()
        pos = torch.arange(0, T, dtype=torch.long, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        per = len(self.h) // self.stages
        for s in range(self.stages):
            with piper.annotate("PP"):
                for block in self.h[s * per:(s + 1) * per]:
                    x = block(x)
        x = self.ln_f(x)
        return self.lm_head(x)


def lm_loss(logits, targets):
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
