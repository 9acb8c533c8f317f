"""A Qwen3-MoE-style model written as an ordinary PyTorch module.

Each block is pre-norm grouped-query attention (llama_model's) and a
mixture-of-experts FFN routed the way piper-gen's MoE block is: a
bias-free linear router over the flattened tokens, softmax over the
experts, the top-k per token, their probabilities renormalised to sum to 1
(Qwen3-MoE's norm_topk_prob), and the experts' SwiGLU FFNs weighted by
them. The experts are one module holding the stacked weights `w_gate`,
`w_up` [E, H, F] and `w_down` [E, F, H], computed the usual eager way: for
each expert, the tokens routed to it (torch.where), their FFN, and an
index_add of the weighted outputs. The expert call sits in a
`piper.annotate("EP")` block, as piper-gen's expert chunk; blocks are split
into `stages` pipeline stages with piper.annotate("PP").
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

import piper
from llama_model import Attention, RMSNorm


class Experts(nn.Module):
    def __init__(self, n_experts, dim, hidden):
        super().__init__()
        self.w_gate = nn.Parameter(torch.empty(n_experts, dim, hidden))
        self.w_up = nn.Parameter(torch.empty(n_experts, dim, hidden))
        self.w_down = nn.Parameter(torch.empty(n_experts, hidden, dim))

    def forward(self, x, weights, indices):
        out = torch.zeros_like(x)
        for e in range(self.w_gate.shape[0]):
            tok, slot = torch.where(indices == e)
            if tok.numel() == 0:
                continue
            xe = x[tok]
            h = F.silu(xe @ self.w_gate[e]) * (xe @ self.w_up[e])
            out = out.index_add(0, tok, weights[tok, slot, None] * (h @ self.w_down[e]))
        return out


class MoE(nn.Module):
    def __init__(self, dim, n_experts, top_k, hidden):
        super().__init__()
        self.top_k = top_k
        self.router = nn.Linear(dim, n_experts, bias=False)
        self.experts = Experts(n_experts, dim, hidden)

    def forward(self, x):
        B, T, H = x.shape
        tokens = x.reshape(B * T, H)
        probs = F.softmax(self.router(tokens), dim=-1)
        weights, indices = torch.topk(probs, self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        with piper.annotate("EP"):
            y = self.experts(tokens, weights, indices)
        return y.view(B, T, H)


class Block(nn.Module):
    def __init__(self, dim, n_heads, n_kv_heads, n_experts, top_k, hidden):
        super().__init__()
        self.attn_norm = RMSNorm(dim)
        self.attn = Attention(dim, n_heads, n_kv_heads, 10000.0, False)
        self.mlp_norm = RMSNorm(dim)
        self.mlp = MoE(dim, n_experts, top_k, hidden)

    def forward(self, x):
        h = x + self.attn(self.attn_norm(x))
        return h + self.mlp(self.mlp_norm(h))


class MoEModel(nn.Module):
    def __init__(self, vocab=32, dim=16, n_heads=2, n_kv_heads=2, n_layers=2,
                 n_experts=4, top_k=2, hidden=16, stages=1):
        super().__init__()
        self.stages = stages
        self.embed = nn.Embedding(vocab, dim)
        self.layers = nn.ModuleList(
            [Block(dim, n_heads, n_kv_heads, n_experts, top_k, hidden)
             for _ in range(n_layers)])
        self.norm = RMSNorm(dim)
        self.output = nn.Linear(dim, vocab, bias=False)
        gen = torch.Generator().manual_seed(2468)
        with torch.no_grad():
            for name, p in self.named_parameters():
                if p.dim() == 1:
                    p.copy_(1 + 0.1 * torch.randn(p.shape, generator=gen))
                else:
                    std = 0.5 if name.endswith("router.weight") else 0.1
                    p.copy_(torch.randn(p.shape, generator=gen) * std)

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
