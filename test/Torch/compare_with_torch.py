#!/usr/bin/python3
"""Cross-checks step 1 of Piper's reference interpreter against PyTorch.

Reads the JSON that `piper-interp --dump=FILE` writes (initial parameters,
the data of step 1, Piper's loss and gradients), rebuilds the model that
`piper-gen --model=mlp|gpt|moe` generates in torch float64 from the
architecture documented in docs/ModelGenerator.md and the op semantics of
docs/ModelIR.md, differentiates it with torch.autograd and compares the loss
and every gradient entry with Piper's:

    /usr/bin/python3 compare_with_torch.py step1.json --model=gpt

Nothing here uses Piper's code or kernels: the model is written with torch
ops (matmul, F.embedding, F.softmax, F.silu, F.relu, F.cross_entropy), so an
error in a Piper kernel, its VJP or the autodiff shows up as a mismatch.

Conventions of the generated models that this file relies on:
  - linear weights are stored input-major, [in, out]: y = x @ w (+ b);
  - RMSNorm: x / sqrt(mean(x^2) + 1e-6) * w (the op's default epsilon);
  - attention is causal multi-head self-attention without biases (with
    --kv-heads, k and v have fewer heads, each read by a group of query
    heads; with --qk-norm each head of q and k is RMS-normalised by
    attn.q_norm/k_norm.weight; with --rope-theta q and k are rotated the
    rotate_half way at positions 0..S-1); head h owns the contiguous channels [h*Dh, (h+1)*Dh) of q, k
    and v, scores are scaled by 1/sqrt(Dh); residuals around attention and
    FFN; final RMSNorm, then the (untied) LM head;
  - dense FFN: (silu(m @ w_gate) * (m @ w_up)) @ w_down;
  - MoE FFN: router probabilities softmax(m @ router.weight) over all E
    experts, the top-k per token (ties: lower index first), their
    probabilities renormalised to sum to 1 (Qwen3 norm_topk_prob); each chosen
    expert e applies the dense FFN with w_gate[e], w_up[e], w_down[e] to the
    token, and the outputs are summed with those weights. This per-token sum
    equals Piper's dispatch/expert_ffn/combine only when no token is dropped,
    i.e. capacity C = T (capacity factor 0, as in the tiny configs);
  - loss: mean cross-entropy over the rows (tokens, or MLP samples).

Exit status: 0 and `OK` when everything agrees, 1 and `MISMATCH` otherwise.
"""

import argparse
import json
import math
import sys

import torch
import torch.nn.functional as F

# Tolerances. Piper and torch both compute in f64 but sum in different
# orders (and torch's softmax, log-sum-exp and matmul use their own
# algorithms), so they agree to a few ulps per operation, not bitwise. Over
# seeds 0..24 of the tiny configs the loss agreed to <= 2.6e-16 relative
# (mostly exactly) and the gradients to <= 4.9e-13 in the measure below; the
# limits leave a margin of about 200x, while a wrong formula (RMSNorm
# epsilon 1e-7 or 1e-5, one head for two, top-1 for top-2) shows up at 0.5
# or more, and even q scaled by 1 + 1e-7 at 3.7e-7.
LOSS_RTOL = 1e-13
GRAD_RTOL = 1e-10
# Gradient entries are compared by |a - b| / max(|a|, |b|, GRAD_FLOOR * s),
# s = the largest magnitude in that gradient tensor: relative error for the
# entries that matter, absolute error (in units of s) for those below a
# thousandth of s. Rounding leaves every entry with an absolute error of
# order 1e-16 * s (observed: <= 1.5e-15 * s), so an entry that is tiny by
# cancellation, or zero in exact arithmetic, can have a large *relative*
# error without anything being wrong (with a floor of 1e-6 * s instead, the
# same seeds gave up to 1.6e-10). Exact zeros on both sides (unused
# embedding rows, dead ReLUs) compare as equal.
GRAD_FLOOR = 1e-3
RMSNORM_EPS = 1e-6

DTYPE = torch.float64


def tensor_of(entry, dtype=DTYPE):
    values = entry["values"]
    shape = entry["shape"]
    t = torch.tensor(values, dtype=dtype)
    return t.reshape(shape)


def rmsnorm(x, w):
    return x * torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + RMSNORM_EPS) * w


def swiglu_ffn(m, w_gate, w_up, w_down):
    return (F.silu(m @ w_gate) * (m @ w_up)) @ w_down


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def rope(x, theta):
    """Rotary embedding of [B, n, S, Dh] heads at positions 0..S-1 (HF)."""
    dh, seq = x.shape[-1], x.shape[-2]
    inv = 1.0 / (theta ** (torch.arange(0, dh, 2, dtype=DTYPE) / dh))
    freqs = torch.outer(torch.arange(seq, dtype=DTYPE), inv)
    emb = torch.cat((freqs, freqs), dim=-1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def causal_attention(q, k, v, batch, seq, heads, q_norm=None, k_norm=None,
                     theta=0.0):
    """q [T, H], k, v [T, kv heads * Dh] rows; returns [T, H]. Optional
    per-head q/k RMSNorm weights and a rotary base (Qwen3), key/value heads
    repeated for grouped-query attention."""
    hidden = q.shape[-1]
    if hidden % heads:
        raise SystemExit("error: hidden size %d is not divisible by --heads=%d"
                         % (hidden, heads))
    dh = hidden // heads
    kv_heads = k.shape[-1] // dh

    def split(t, n):  # [T, n Dh] -> [B, n, S, Dh]
        return t.reshape(batch, seq, n, dh).transpose(1, 2)

    qh, kh, vh = split(q, heads), split(k, kv_heads), split(v, kv_heads)
    if q_norm is not None:
        qh, kh = rmsnorm(qh, q_norm), rmsnorm(kh, k_norm)
    if theta > 0:
        qh, kh = rope(qh, theta), rope(kh, theta)
    kh = kh.repeat_interleave(heads // kv_heads, dim=1)
    vh = vh.repeat_interleave(heads // kv_heads, dim=1)
    scores = qh @ kh.transpose(-1, -2) / math.sqrt(dh)
    future = torch.ones(seq, seq, dtype=torch.bool).triu(diagonal=1)
    scores = scores.masked_fill(future, float("-inf"))
    out = F.softmax(scores, dim=-1) @ vh  # [B, heads, S, Dh]
    return out.transpose(1, 2).reshape(batch * seq, hidden)


class Notes:
    """Warnings to print before the verdict."""

    def __init__(self):
        self.lines = []


def moe_ffn(m, p, prefix, top_k, notes):
    router = p[prefix + "router.weight"]  # [H, E]
    w_gate = p[prefix + "experts.w_gate"]  # [E, H, F]
    w_up = p[prefix + "experts.w_up"]  # [E, H, F]
    w_down = p[prefix + "experts.w_down"]  # [E, F, H]
    probs = F.softmax(m @ router, dim=-1)  # [T, E]
    # Descending with a stable sort: equal probabilities keep index order.
    order = torch.sort(probs.detach(), dim=-1, descending=True, stable=True)
    chosen = order.indices[:, :top_k]  # [T, k]
    if top_k < probs.shape[-1]:
        gap = order.values[:, top_k - 1] - order.values[:, top_k]
        if float(gap.min()) < 1e-12:
            notes.lines.append(
                "note: %srouter has a near tie at the top-%d boundary (gap %.3g); "
                "the two implementations may pick different experts"
                % (prefix, top_k, float(gap.min())))
    picked = probs.gather(1, chosen)
    weights = picked / picked.sum(dim=-1, keepdim=True)  # [T, k]
    rows = []
    for t in range(m.shape[0]):
        row = torch.zeros_like(m[t])
        for j in range(top_k):
            e = int(chosen[t, j])
            row = row + weights[t, j] * swiglu_ffn(m[t], w_gate[e], w_up[e],
                                                   w_down[e])
        rows.append(row)
    return torch.stack(rows)


def layer_count(p):
    layers = set()
    for name in p:
        if name.startswith("layers."):
            layers.add(int(name.split(".")[1]))
    if layers != set(range(len(layers))):
        raise SystemExit("error: layer indices %s are not 0..L-1" % sorted(layers))
    return len(layers)


ACTIVATIONS = {"relu": F.relu, "sigmoid": torch.sigmoid, "tanh": torch.tanh,
               "gelu_erf": F.gelu}


def mlp_loss(p, data, activation="relu"):
    inputs, labels = data
    x = inputs
    act = ACTIVATIONS[activation]
    for l in range(layer_count(p)):
        x = act(x @ p["layers.%d.weight" % l] + p["layers.%d.bias" % l])
    logits = x @ p["head.weight"] + p["head.bias"]
    return F.cross_entropy(logits, labels)


def decoder_loss(p, data, model, heads, top_k, notes, theta=0.0):
    ids, labels = data
    batch, seq = ids.shape
    x = F.embedding(ids, p["embed.weight"]).reshape(batch * seq, -1)
    for l in range(layer_count(p)):
        pre = "layers.%d." % l
        a = rmsnorm(x, p[pre + "attn_norm.weight"])
        q = a @ p[pre + "attn.wq"]
        k = a @ p[pre + "attn.wk"]
        v = a @ p[pre + "attn.wv"]
        o = causal_attention(q, k, v, batch, seq, heads,
                             p.get(pre + "attn.q_norm.weight"),
                             p.get(pre + "attn.k_norm.weight"), theta)
        x = x + o @ p[pre + "attn.wo"]
        m = rmsnorm(x, p[pre + "mlp_norm.weight"])
        if model == "gpt":
            x = x + swiglu_ffn(m, p[pre + "mlp.w_gate"], p[pre + "mlp.w_up"],
                               p[pre + "mlp.w_down"])
        else:
            x = x + moe_ffn(m, p, pre + "mlp.", top_k, notes)
    logits = rmsnorm(x, p["final_norm.weight"]) @ p["lm_head.weight"]
    return F.cross_entropy(logits, labels.reshape(-1))


def expected_names(model, layers, qk_norm=False):
    if model == "mlp":
        names = []
        for l in range(layers):
            names += ["layers.%d.weight" % l, "layers.%d.bias" % l]
        return names + ["head.weight", "head.bias"]
    names = ["embed.weight"]
    for l in range(layers):
        pre = "layers.%d." % l
        names += [pre + "attn_norm.weight"]
        names += [pre + "attn." + w for w in ("wq", "wk", "wv", "wo")]
        if qk_norm:
            names += [pre + "attn.q_norm.weight", pre + "attn.k_norm.weight"]
        names += [pre + "mlp_norm.weight"]
        if model == "gpt":
            names += [pre + "mlp." + w for w in ("w_gate", "w_up", "w_down")]
        else:
            names += [pre + "mlp.router.weight"]
            names += [pre + "mlp.experts." + w for w in ("w_gate", "w_up", "w_down")]
    return names + ["final_norm.weight", "lm_head.weight"]


def relative_error(a, b, floor=1e-12):
    return abs(a - b) / max(abs(a), abs(b), floor)


def compare_gradient(piper, torch_grad):
    """The worst error of one tensor: (error, flat index, piper, torch)."""
    scale = max(float(torch_grad.abs().max()), float(piper.abs().max()))
    floor = max(GRAD_FLOOR * scale, 1e-300)
    diff = (piper - torch_grad).abs()
    denom = torch.maximum(torch.maximum(piper.abs(), torch_grad.abs()),
                          torch.full_like(diff, floor))
    errors = (diff / denom).reshape(-1)
    worst = int(errors.argmax())
    return (float(errors[worst]), worst, float(piper.reshape(-1)[worst]),
            float(torch_grad.reshape(-1)[worst]))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dump", help="JSON written by piper-interp --dump")
    parser.add_argument("--model", required=True, choices=["mlp", "gpt", "moe"],
                        help="the piper-gen model family of the dump")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS),
                        default="relu",
                        help="the MLP's hidden activation (default relu, as "
                             "piper-gen writes it; sigmoid or tanh for a model "
                             "rewritten to piper.sigmoid or piper.tanh)")
    parser.add_argument("--heads", type=int, default=2,
                        help="attention heads (default 2, as tiny-gpt/tiny-moe)")
    parser.add_argument("--rope-theta", type=float, default=0.0,
                        help="rotary embedding base of q and k (0: none, as "
                             "the tiny configs)")
    parser.add_argument("--top-k", type=int, default=2,
                        help="experts per token (default 2, as tiny-moe)")
    args = parser.parse_args()

    with open(args.dump) as f:
        dump = json.load(f)
    if dump.get("precision") != "f64":
        raise SystemExit("error: the dump is of a --precision=%s run; compare "
                         "f64 runs" % dump.get("precision"))

    params = {name: tensor_of(entry).requires_grad_(True)
              for name, entry in dump["params"].items()}
    expected = expected_names(args.model, layer_count(params),
                              "layers.0.attn.q_norm.weight" in params)
    if list(params) != expected:
        raise SystemExit("error: the parameters of the dump are not those of "
                         "--model=%s:\n  dump:     %s\n  expected: %s"
                         % (args.model, list(params), expected))
    if list(dump["grads"]) != expected:
        raise SystemExit("error: the dump's gradients are not one per parameter")

    data_entries = sorted(dump["data"], key=lambda d: d["index"])
    want = ["f64", "i64"] if args.model == "mlp" else ["i64", "i64"]
    if [d["dtype"] for d in data_entries] != want:
        raise SystemExit("error: --model=%s expects data of types %s, the dump "
                         "has %s" % (args.model, want,
                                     [d["dtype"] for d in data_entries]))
    data = [tensor_of(d, DTYPE if d["dtype"] == "f64" else torch.int64)
            for d in data_entries]

    notes = Notes()
    if args.model == "mlp":
        loss = mlp_loss(params, data, args.activation)
    else:
        loss = decoder_loss(params, data, args.model, args.heads, args.top_k,
                            notes, args.rope_theta)
    loss.backward()

    ok = True
    piper_loss = float(dump["loss"])
    torch_loss = float(loss)
    loss_error = relative_error(piper_loss, torch_loss)
    print("loss piper=%.17g torch=%.17g" % (piper_loss, torch_loss))
    print("loss relative error: %.3g" % loss_error)
    if not loss_error <= LOSS_RTOL:
        ok = False
        print("loss differs by %.3g relative (limit %g)" % (loss_error, LOSS_RTOL))

    worst = (-1.0, None)
    entries = 0
    for name in expected:
        piper_grad = tensor_of(dump["grads"][name])
        torch_grad = params[name].grad
        if torch_grad is None:
            torch_grad = torch.zeros_like(params[name])
        if list(piper_grad.shape) != list(torch_grad.shape):
            raise SystemExit("error: gradient of '%s' has shape %s; the "
                             "parameter's is %s" % (name, list(piper_grad.shape),
                                                   list(torch_grad.shape)))
        entries += piper_grad.numel()
        error = compare_gradient(piper_grad, torch_grad)
        if not error[0] <= worst[0]:
            worst = (error[0], name, error)
    error, name, (_, index, a, b) = worst[0], worst[1], worst[2]
    print("max relative error over %d gradient entries: %.3g (%s[%d]: "
          "piper=%.17g torch=%.17g)" % (entries, error, name, index, a, b))
    for line in notes.lines:
        print(line)
    if not error <= GRAD_RTOL:
        ok = False
        print("gradient of '%s' differs by %.3g relative (limit %g)"
              % (name, error, GRAD_RTOL))
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
