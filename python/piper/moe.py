"""MoE routing in the style piper-gen emits: router, then dispatch, expert
FFNs and combine (docs/YourModel.md, "Mixture of experts").

The router is traced op by op:

    probs = F.softmax(self.router(x), dim=-1)          # x [T, H], no bias
    w, idx = torch.topk(probs, k, dim=-1)
    w = w / w.sum(dim=-1, keepdim=True)                # norm_topk_prob

and becomes one `piper.router {top_k = k}` (weights [T, k], indices
[T, k]). The experts are a module whose class name contains "Experts", with
the rank-3 parameters `w_gate [E, H, F]`, `w_up [E, H, F]` and `w_down
[E, F, H]`, called as `experts(x, w, idx)` and computing, per token, the sum
over its k experts of `w * down(silu(x @ w_gate[e]) * (x @ w_up[e]))`.
Like an RMSNorm module it is a leaf of the trace whose output is checked on
the example against that formula; it becomes `piper.dispatch` (capacity T:
no token is dropped), `piper.expert_ffn` and `piper.combine`, in the chunk
of the `annotate("EP")` block the call sits in.
"""

import torch
import torch.nn.functional as F

EXPERT_WEIGHTS = ("w_gate", "w_up", "w_down")


def is_experts_module(m):
    """A module that calls itself Experts and holds the three stacked
    SwiGLU weights of E experts."""
    if "experts" not in type(m).__name__.lower():
        return False
    params = dict(m.named_parameters(recurse=False))
    return set(params) == set(EXPERT_WEIGHTS) and all(
        p.dim() == 3 for p in params.values())


class TopK:
    """torch.topk(softmax(x @ w), k) of a router, waiting for its values to
    be normalised; `router` is (weights, indices) once they are."""

    def __init__(self, x, w, k):
        self.x, self.w, self.k = x, w, k
        self.router = None


class TopKPart:
    """Item 0 (values) or 1 (indices) of a TopK."""

    def __init__(self, topk, which):
        self.topk, self.which = topk, which


class TopKSum:
    """values.sum(-1, keepdim=True) of a TopK."""

    def __init__(self, topk):
        self.topk = topk


PENDING = (TopK, TopKPart, TopKSum)


def reference(x, weights, indices, w_gate, w_up, w_down):
    """What piper.dispatch/expert_ffn/combine compute when no token is
    dropped, in f64."""
    x, weights = x.double(), weights.double()
    w_gate, w_up, w_down = w_gate.double(), w_up.double(), w_down.double()
    out = torch.zeros_like(x)
    for t in range(x.shape[0]):
        for j in range(indices.shape[1]):
            e = int(indices[t, j])
            h = F.silu(x[t] @ w_gate[e]) * (x[t] @ w_up[e])
            out[t] += weights[t, j] * (h @ w_down[e])
    return out


def topk(low, node, args, kw):
    """torch.topk(probs, k, dim=-1) of router probabilities."""
    k = low.val(args[1] if len(args) > 1 else kw.get("k"))
    dim = low.val(args[2] if len(args) > 2 else kw.get("dim", -1))
    largest = kw.get("largest", True)
    probs = low.tensor(args[0])
    if not isinstance(k, int) or dim not in (-1, len(probs.shape) - 1) or not largest:
        low.unsupported(" (only the k largest over the last dim, as a MoE "
                        "router's top-k)")
    sm = probs.op
    lin = sm.operands[0].op if sm is not None and sm.name == "piper.softmax" else None
    if lin is None or lin.name != "piper.linear" or len(lin.operands) != 2:
        low.fail("torch.topk is supported as a MoE router's top-k: "
                 "topk(softmax(router(x), dim=-1), k) with a bias-free linear "
                 "router")
    x, w = lin.operands
    if len(x.shape) != 2:
        low.fail("the router's tokens must be [T, H] (flatten the batch "
                 "first: x.view(-1, H)), got %s" % x.type)
    if not 1 <= k <= w.shape[1]:
        low.fail("top-k %d of %d experts" % (k, w.shape[1]))
    return TopK(x, w, k)


def getitem(low, t, index):
    if index not in (0, 1):
        low.unsupported(" (a top-k result has items 0 and 1)")
    return TopKPart(t, index)


def topk_sum(low, node, part):
    """values.sum(dim=-1, keepdim=True)."""
    args, kw = node.args, node.kwargs
    dim = low.val(args[1] if len(args) > 1 else kw.get("dim"))
    keep = low.val(args[2] if len(args) > 2 else kw.get("keepdim", False))
    if part.which != 0 or dim not in (-1, 1) or not keep:
        low.unsupported(" (of top-k routing values only their sum over the "
                        "last dim with keepdim=True, to normalise them)")
    return TopKSum(part.topk)


def normalise(low, num, den):
    """values / values.sum(-1, keepdim=True): the router."""
    t = num.topk
    if num.which != 0 or den.topk is not t:
        low.fail("the top-k routing values must be divided by their own sum")
    if t.router is None:
        T, k = t.x.shape[0], t.k
        t.router = low.b.op("piper.router", [t.x, t.w],
                            [((T, k), t.x.dtype), ((T, k), "i64")], "multi",
                            {"top_k": k})
    return t.router[0]


def routing(low, weights, indices):
    """The router results an experts call reads."""
    w, idx = low.val(weights), low.val(indices)
    if isinstance(w, TopKPart) and w.which == 0:
        low.fail("piper.router normalises the top-k probabilities to sum to "
                 "1 (norm_topk_prob): pass w / w.sum(dim=-1, keepdim=True)")
    if not isinstance(idx, TopKPart) or idx.which != 1 or idx.topk.router is None \
            or w is not idx.topk.router[0]:
        low.fail("the experts must read the normalised top-k weights and the "
                 "top-k indices of one router")
    return idx.topk.router


def experts(low, node, m):
    """experts(x, weights, indices) as dispatch, expert_ffn and combine."""
    if len(node.args) != 3 or node.kwargs:
        low.fail("an Experts module is called as experts(x, weights, indices)")
    x = low.tensor(node.args[0])
    weights, indices = routing(low, node.args[1], node.args[2])
    T, H = x.shape if len(x.shape) == 2 else (None, None)
    E = m.w_gate.shape[0]
    shapes_ok = (T is not None and tuple(m.w_gate.shape[:2]) == (E, H)
                 and m.w_up.shape == m.w_gate.shape
                 and tuple(m.w_down.shape) == (E, m.w_gate.shape[2], H)
                 and weights.shape[0] == T)
    if not shapes_ok or indices.op.operands[1].shape[1] != E:
        low.fail("experts %s read tokens %s routed over %d experts; need "
                 "w_gate, w_up [E, H, F], w_down [E, F, H]" % (
                     type(m).__name__, x.type, indices.op.operands[1].shape[1]))
    vals = low.values
    cx, cw, ci = (vals[a] for a in node.args)
    want = reference(cx, cw, ci, m.w_gate.detach(), m.w_up.detach(),
                     m.w_down.detach())
    if not torch.allclose(vals[node].double(), want, rtol=1e-5, atol=1e-6):
        low.fail("module %s is named like MoE experts but does not compute "
                 "sum_j w[t, j] * down(silu(x[t] @ w_gate[e]) * (x[t] @ "
                 "w_up[e])) over the chosen experts e = idx[t, j]"
                 % type(m).__name__)
    params = [low.param(getattr(m, n)) for n in EXPERT_WEIGHTS]
    for n in EXPERT_WEIGHTS:
        low.expert_params.add(low.param_names[id(getattr(m, n))])
    buf = low.b.full("piper.dispatch", [x, indices], (E, T, H), x.dtype,
                     {"capacity": T})
    y = low.b.full("piper.expert_ffn", [buf] + params, (E, T, H), x.dtype)
    return low.b.full("piper.combine", [y, weights, indices], (T, H), x.dtype)
