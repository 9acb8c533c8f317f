"""Rotary tables: recognising PyTorch's cos/sin tables as piper.rope's.

A model computes its tables as HF does: inv_freq = 1 / theta^(2c / R) for
the R rotated channels of a head (R = head_dim, or rotary_ndims under
partial rotary), freqs = outer(position_ids, inv_freq), emb = cat(freqs,
freqs), cos = emb.cos(), sin = emb.sin(), with position ids offset ..
offset + S - 1. `fit` recovers theta and the offset from two angles of the
tables; the importer then checks every entry against `tables`.
"""

import math

import torch


def _angle(cos, sin, seq_dim, s, c):
    idx = [0] * 4
    idx[seq_dim] = s
    idx[3] = c
    return math.atan2(float(sin[tuple(idx)]), float(cos[tuple(idx)]))


def fit(cos, sin, seq_dim, S, R):
    """(theta, offset) of tables laid out with positions on `seq_dim` and
    the R rotated channels last."""
    theta = 10000.0
    slow = R // 2 - 1  # the slowest pair: the smallest angle per position
    if R >= 4 and S >= 2:
        step = (_angle(cos, sin, seq_dim, 1, slow) -
                _angle(cos, sin, seq_dim, 0, slow)) % (2 * math.pi)
        if 0 < step < 1:
            theta = math.exp(-math.log(step) * R / (2.0 * slow))
            if abs(theta - round(theta)) < 1e-6 * theta:
                theta = float(round(theta))
    a0 = _angle(cos, sin, seq_dim, 0, slow) % (2 * math.pi)
    if R >= 4:
        inv = theta ** (-2.0 * slow / R)
        return theta, int(round(a0 / inv))
    # One pair (inv = 1): the offset p is an integer with p = a0 mod 2 pi.
    k = torch.arange(0, 100000, dtype=torch.float64)
    p = a0 + 2 * math.pi * k
    best = int(torch.argmin((p - p.round()).abs()))
    return theta, int(round(float(p[best])))


def tables(theta, offset, S, R, seq_dim, shape):
    """PyTorch's rotary tables in f64 at positions offset .. offset + S - 1,
    laid out with positions on `seq_dim` and channels last, expanded to
    `shape`."""
    inv = 1.0 / (theta ** (torch.arange(0, R, 2, dtype=torch.float64) / R))
    positions = torch.arange(offset, offset + S, dtype=torch.float64)
    freqs = torch.outer(positions, inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    view = [1, 1, 1, R]
    view[seq_dim] = S
    return (emb.cos().reshape(view).expand(shape),
            emb.sin().reshape(view).expand(shape))
