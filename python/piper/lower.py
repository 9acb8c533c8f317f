"""Lowers a captured fx graph to Piper model IR (ir.Builder).

Every node is one of:
  - a Python constant: any node whose recorded value is not a tensor (sizes,
    shapes, dtypes, devices), or a tensor that depends on no input and no
    parameter (causal masks, position ids);
  - an ir.Value: a tensor computed from the data or the parameters;
  - a pending attention piece (_Scaled, _Masked, _Probs): scores, masked
    scores and probabilities of hand-written causal attention, which only
    `probs @ v` turns into one piper.attention.
Anything else fails with TraceError naming the op, the module and the line.
"""

import math
import operator

import torch
import torch.nn as nn
import torch.nn.functional as F

from . import ir
from . import moe
from . import rotary
from .capture import is_rmsnorm_module


class TraceError(Exception):
    """An op the importer cannot express; str() is one located line."""


class _Scaled:
    def __init__(self, scores, scale):
        self.scores, self.scale = scores, scale


class _Masked:
    def __init__(self, scaled, mask):
        self.scaled, self.mask = scaled, mask


class _Probs:
    def __init__(self, masked):
        self.masked = masked


class _Slice:
    """x[..., start:stop] of the last dim, maybe negated: the halves of
    rotate_half and the rotary and pass-through parts of partial rotary."""
    def __init__(self, x, start, stop, neg=False):
        self.x, self.start, self.stop, self.neg = x, start, stop, neg


class _Rotated:
    """rotate_half of x's first `rot` channels: cat(-x[..., rot/2:rot],
    x[..., :rot/2]) (rot = D: Llama's rotate_half(x))."""
    def __init__(self, x, rot):
        self.x, self.rot = x, rot


class _RotSin:
    """rotate_half(x[..., :rot]) * sin, waiting for `x[..., :rot] * cos +`."""
    def __init__(self, x, sin, rot):
        self.x, self.sin, self.rot = x, sin, rot


class _SliceCos:
    """x[..., :rot] * cos of partial rotary."""
    def __init__(self, x, cos, rot):
        self.x, self.cos, self.rot = x, cos, rot


class _PartialRope:
    """x[..., :rot] * cos + rotate_half(x[..., :rot]) * sin, waiting for
    cat((it, x[..., rot:]), dim=-1)."""
    def __init__(self, x, cos, sin, rot):
        self.x, self.cos, self.sin, self.rot = x, cos, sin, rot


class _Fused:
    """A linear whose output is only split along its last dim (a fused
    q/k/v or gate/up projection), by name of its weight and bias."""
    def __init__(self, x, weight, bias):
        self.x, self.weight, self.bias = x, weight, bias


class _Pieces:
    """split/chunk of a _Fused: the [start, stop) output features of each
    piece."""
    def __init__(self, fused, bounds):
        self.fused, self.bounds = fused, bounds


class _Expanded:
    """A key/value tensor unsqueezed at `dim` and expanded `n` times there:
    repeat_kv before its reshape."""
    def __init__(self, x, dim, n):
        self.x, self.dim, self.n = x, dim, n


class _Repeated:
    """Key/value heads [B, Hkv, S, D] repeated `n` times each (dim 1), as
    repeat_interleave(n, dim=1) or expand + reshape give them."""
    def __init__(self, x, n):
        self.x, self.n = x, n


_ROTARY = (_Slice, _Rotated, _RotSin, _SliceCos, _PartialRope)
_PENDING = (_Scaled, _Masked, _Probs, _Slice, _Rotated, _RotSin, _SliceCos,
            _PartialRope, _Fused, _Pieces, _Expanded,
            _Repeated) + moe.PENDING


def op_name(node):
    t = node.target
    if node.op == "call_method":
        return "Tensor." + t
    if node.op == "call_module":
        return type(node.graph.owning_module.get_submodule(t)).__name__
    if node.op == "call_function":
        name = getattr(t, "__name__", str(t))
        for prefix, ns in (("torch.nn.functional.", F), ("torch.", torch),
                           ("operator.", operator)):
            if getattr(ns, name, None) is t:
                return prefix + name
        return "%s.%s" % (getattr(t, "__module__", "?"), name)
    return "%s %s" % (node.op, t)


def _fn(*fs):
    return set(fs)


ADD = _fn(operator.add, operator.iadd, torch.add)
SUB = _fn(operator.sub, operator.isub, torch.sub)
MUL = _fn(operator.mul, operator.imul, torch.mul)
DIV = _fn(operator.truediv, operator.itruediv, torch.div)
MATMUL = _fn(operator.matmul, torch.matmul, torch.bmm)
SOFTMAX = _fn(F.softmax, torch.softmax)
RELU = _fn(F.relu, torch.relu)
SILU = _fn(F.silu)
SIGMOID = _fn(torch.sigmoid)
TANH = _fn(torch.tanh)
GELU = _fn(F.gelu)
RESHAPE = _fn(torch.reshape, torch.flatten)
TRANSPOSE = _fn(torch.transpose, torch.permute)
METHOD_ALIASES = {"neg": {torch.neg}, "add": ADD, "sub": SUB, "mul": MUL, "div": DIV,
                  "matmul": MATMUL, "softmax": SOFTMAX, "relu": RELU,
                  "sigmoid": SIGMOID, "tanh": TANH}


class Lowering:
    def __init__(self, gm, values, params, param_names, dtype, split_bias=False):
        self.gm = gm
        self.values = values  # node -> concrete value
        # canonical name -> torch Parameter, and the pieces of fused
        # projections' weights (slices of their Parameter, see _Fused).
        self.params = dict(params)
        self.pieces = {}  # piece name -> (full name, start, stop)
        self.param_names = param_names  # id(Parameter) -> canonical name
        self.dtype = dtype
        self.b = ir.Builder()
        self.env = {}
        self.param_values = {}  # canonical name -> ir.Value (stored layout)
        self.transposed = {}  # canonical name -> stored as its transpose
        # A linear's bias as its own product ones[..., 1] @ bias[1, Out]
        # (see trace's split_bias); names of biases stored as [1, Out].
        self.split_bias = split_bias
        self.as_row = set()
        self.node = None
        self.attention_heads = []
        self.expert_params = set()  # names of MoE expert weights

    # -- diagnostics ------------------------------------------------------
    def fail(self, message, node=None):
        node = node or self.node
        loc = node.meta.get("piper_loc") if node is not None else None
        module = node.meta.get("piper_module", "") if node is not None else ""
        where = "%s:%d: " % (loc[0], loc[1]) if loc else ""
        text = "%serror: %s (in module '%s'%s)" % (
            where, message, module or "<root>",
            ", code: %s" % loc[2] if loc and loc[2] else "")
        raise TraceError(text)

    def unsupported(self, extra=""):
        self.fail("unsupported op %s%s" % (op_name(self.node), extra))

    # -- values -----------------------------------------------------------
    def val(self, a):
        """The IR value, constant or pending piece an fx argument stands for."""
        if isinstance(a, torch.fx.Node):
            return self.env[a]
        if isinstance(a, (list, tuple)):
            return type(a)(self.val(x) for x in a)
        return a

    def tensor(self, a, what="operand"):
        v = self.val(a)
        if isinstance(v, _ROTARY):
            self.fail("%s uses a slice or rotation of a tensor outside the "
                      "rotary pattern x * cos + cat(-x2, x1) * sin (partial: "
                      "cat((x[..., :R] * cos + rotate_half(x[..., :R]) * "
                      "sin, x[..., R:]), dim=-1)); slices of computed tensors "
                      "are only understood there and as fused projections' "
                      "split/chunk" % op_name(self.node))
        if isinstance(v, (_Expanded, _Repeated)):
            self.fail("%s uses repeated key/value heads outside attention"
                      % op_name(self.node))
        if isinstance(v, moe.PENDING):
            self.fail("%s uses a top-k routing result outside the MoE pattern "
                      "w / w.sum(-1, keepdim=True), experts(x, w, idx)"
                      % op_name(self.node))
        if isinstance(v, _PENDING):
            self.fail("%s uses attention scores outside the pattern "
                      "softmax(masked_fill(q @ k^T * scale, causal mask, -inf))"
                      " @ v" % op_name(self.node))
        if not isinstance(v, ir.Value):
            self.fail("%s needs a tensor computed from the inputs as its %s, "
                      "got a constant" % (op_name(self.node), what))
        if v.op is not None and getattr(v.op, "kv_repeat", None):
            self.fail("%s uses scores of repeated key/value heads outside the "
                      "attention pattern" % op_name(self.node))
        return v

    def _name(self, p):
        return p if isinstance(p, str) else self.param_names[id(p)]

    def param(self, p):
        """The IR value of parameter `p` (or a piece's name) in the module's
        own layout."""
        name = self._name(p)
        v = self.param_value(name)
        if self.transposed[name]:
            v = self.b.transpose(v, (1, 0))
        return v

    def param_value(self, name):
        if name not in self.param_values:
            p = self.params[name]
            shape = tuple(p.shape)
            if self.transposed[name]:
                shape = shape[::-1]
            if name in self.as_row:
                shape = (1,) + shape
            self.param_values[name] = ir.Value(shape, self.dtype)
            self.param_values[name].param_name = name
        return self.param_values[name]

    def linear_weight(self, p):
        """`p` as piper.linear's input-major [In, Out] weight."""
        name = self._name(p)
        if self.transposed[name]:
            return self.param_value(name)
        return self.b.transpose(self.param_value(name), (1, 0))

    # -- the walk ---------------------------------------------------------
    def run(self):
        self.decide_layouts()
        for node in self.gm.graph.nodes:
            self.node = node
            self.b.scope = node.meta.get("piper_scope")
            loc = node.meta.get("piper_loc")
            self.b.loc = (loc[0], loc[1]) if loc else None
            if node.op == "output":
                return self.finish(node)
            self.env[node] = self.lower(node)
        self.fail("the graph has no output")

    def finish(self, node):
        loss = self.val(node.args[0])
        if not isinstance(loss, ir.Value) or loss.shape != () or not loss.is_float():
            self.fail("the traced function must return the loss, a scalar "
                      "float tensor")
        return loss

    def depends(self, node):
        """Whether `node` is computed from data or parameters."""
        found = [False]

        def visit(a):
            if isinstance(a, torch.fx.Node) and not _is_constant(self.env.get(a)):
                found[0] = True
            return a
        torch.fx.node.map_arg((node.args, node.kwargs), visit)
        return found[0]

    def lower(self, node):
        concrete = self.values.get(node)
        if node.op == "placeholder":
            return self.placeholder(node, concrete)
        if node.op == "get_attr":
            obj = concrete
            if isinstance(obj, nn.Parameter) and id(obj) in self.param_names:
                return self.param(obj)
            return _Const(obj)
        if _shape_like(concrete):
            return concrete  # sizes, shapes, dtypes: plain Python values
        if node.op == "call_module":
            m = self.gm.get_submodule(node.target)
            has_params = any(True for _ in m.parameters())
            if not has_params and not self.depends(node):
                return _Const(concrete)
            return self.call_module(node, m)
        if not self.depends(node):
            return _Const(concrete)
        if node.op == "call_method":
            return self.call_method(node)
        return self.call_function(node, node.target, node.args, node.kwargs)

    def placeholder(self, node, concrete):
        if not isinstance(concrete, torch.Tensor):
            return concrete
        if concrete.dtype == torch.int64:
            shape = self.integer_data_shape(node, tuple(concrete.shape))
            return self.b.argument(node.name, shape, "i64")
        if concrete.is_floating_point():
            return self.b.argument(node.name, tuple(concrete.shape),
                                   ir.DTYPES[str(concrete.dtype)[6:]])
        self.fail("input '%s' has dtype %s; data are int64 ids/labels or "
                  "float tensors" % (node.name, concrete.dtype), node)

    def integer_data_shape(self, node, shape):
        """Integer data only reshaped (labels.view(-1)) take that shape."""
        users = list(node.users)
        shapes = set()
        for u in users:
            if not _is_view(u):
                return shape
            shapes.add(tuple(self.values[u].shape))
        if len(shapes) == 1:
            for u in users:
                u.meta["piper_int_view"] = True
            return shapes.pop()
        return shape

    # -- layouts ----------------------------------------------------------
    def decide_layouts(self):
        """Stores a weight as [In, Out] when every use is a linear's weight."""
        uses = {name: set() for name in self.params}
        for node in self.gm.graph.nodes:
            if node.op == "call_module":
                m = self.gm.get_submodule(node.target)
                for pname, p in m.named_parameters(recurse=False):
                    use = "linear" if isinstance(m, nn.Linear) and pname == "weight" else "other"
                    uses[self.param_names[id(p)]].add(use)
            elif node.op == "get_attr":
                obj = self.values.get(node)
                if isinstance(obj, nn.Parameter) and id(obj) in self.param_names:
                    name = self.param_names[id(obj)]
                    linear_use = all(
                        u.op == "call_function" and u.target is F.linear
                        and u.args[1] is node and node not in u.args[:1] + u.args[2:]
                        for u in node.users)
                    uses[name].add("linear" if linear_use and node.users else "other")
        for name, u in uses.items():
            self.transposed[name] = u == {"linear"} and self.params[name].dim() == 2
        self.uses = uses

    # -- modules ----------------------------------------------------------
    def call_module(self, node, m):
        args = node.args
        if isinstance(m, nn.Linear):
            if self.only_split(node):
                return _Fused(self.tensor(args[0]), m.weight, m.bias)
            return self.linear(args[0], m.weight, m.bias)
        if isinstance(m, nn.Embedding):
            return self.embedding(args[0], m.weight, m)
        if isinstance(m, nn.LayerNorm):
            if len(m.normalized_shape) != 1 or not m.elementwise_affine:
                self.unsupported(": only LayerNorm over the last dim with "
                                 "weight and bias")
            x = self.tensor(args[0])
            return self.b.full("piper.layernorm",
                               [x, self.param(m.weight), self.param(m.bias)],
                               x.shape, x.dtype, {"epsilon": float(m.eps)})
        if is_rmsnorm_module(m):
            return self.rmsnorm(node, m)
        if moe.is_experts_module(m):
            return moe.experts(self, node, m)
        if isinstance(m, nn.GELU):
            return self.gelu(args[0], m.approximate)
        if isinstance(m, (nn.ReLU, nn.SiLU, nn.Sigmoid, nn.Tanh)):
            name = {nn.ReLU: "relu", nn.SiLU: "silu", nn.Sigmoid: "sigmoid",
                    nn.Tanh: "tanh"}[type(m)]
            return self.b.same("piper." + name, self.tensor(args[0]))
        if isinstance(m, (nn.Dropout, nn.Identity)):
            if isinstance(m, nn.Dropout) and m.p != 0 and m.training:
                self.unsupported(" with p > 0 in training mode (Piper has no "
                                 "dropout; use p = 0 or eval())")
            return self.val(args[0])
        if isinstance(m, nn.Softmax):
            return self.softmax(args[0], m.dim)
        if isinstance(m, nn.CrossEntropyLoss):
            return self.cross_entropy(args[0], args[1], m.reduction,
                                      m.ignore_index, m.label_smoothing)
        self.unsupported()

    def rmsnorm(self, node, m):
        x = self.tensor(node.args[0])
        eps = None
        for attr in ("eps", "variance_epsilon", "epsilon"):
            if isinstance(getattr(m, attr, None), float):
                eps = getattr(m, attr)
        if eps is None:
            self.fail("RMSNorm module %s has no float eps attribute (eps, "
                      "variance_epsilon or epsilon)" % type(m).__name__)
        xin = self.values[node.args[0]].double()
        want = xin * torch.rsqrt(xin.pow(2).mean(-1, keepdim=True) + eps) * m.weight.detach().double()
        got = self.values[node].double()
        if not torch.allclose(got, want, rtol=1e-5, atol=1e-6):
            self.fail("module %s is named like an RMSNorm but does not compute "
                      "x / sqrt(mean(x^2) + eps) * weight" % type(m).__name__)
        w = self.param(m.weight)
        if len(x.shape) == 4 and w.shape == (x.shape[-1],):
            # A norm over each head ([B, S, H, D] or [B, H, S, D]): the
            # grouped piper.rmsnorm on the packed [B, S, H * D] heads, so
            # tensor parallelism may split the heads.
            src, rebuild = self.packed_heads(x)
            out = self.b.full("piper.rmsnorm", [src, w], src.shape, x.dtype,
                              {"epsilon": float(eps)})
            return rebuild(out)
        return self.b.full("piper.rmsnorm", [x, w], x.shape,
                           x.dtype, {"epsilon": float(eps)})

    # -- functions --------------------------------------------------------
    def call_method(self, node):
        name = node.target
        if name in METHOD_ALIASES:
            f = next(iter(METHOD_ALIASES[name]))
            return self.call_function(node, f, node.args, node.kwargs)
        args, kw = node.args, node.kwargs
        if name in ("view", "reshape", "flatten", "unsqueeze", "squeeze",
                    "contiguous", "view_as", "reshape_as"):
            return self.view(node, args[0])
        if name == "transpose":
            return self.transpose_dims(args[0], args[1], args[2])
        if name == "permute":
            dims = args[1:] if not isinstance(args[1], (list, tuple)) else args[1]
            return self.permute(args[0], self.val(list(dims)))
        if name == "t":
            return self.transpose_dims(args[0], 0, 1)
        if name == "masked_fill":
            return self.masked_fill(args[0], args[1], args[2])
        if name == "expand":
            sizes = args[1:] if not isinstance(args[1], (list, tuple)) else args[1]
            return self.expand(args[0], self.val(list(sizes)))
        if name == "repeat_interleave":
            return self.repeat_interleave(node, args, kw)
        if name == "topk":
            return moe.topk(self, node, args, kw)
        if name in ("split", "chunk"):
            return self.split(node, args[0])
        if name == "sum" and isinstance(self.val(args[0]), moe.TopKPart):
            return moe.topk_sum(self, node, self.val(args[0]))
        if name == "float" or name == "type_as" or name == "to":
            x = self.tensor(args[0])
            if ir.DTYPES.get(str(self.values[node].dtype)[6:]) == x.dtype:
                return x
        self.unsupported()

    def call_function(self, node, f, args, kw):
        if f in ADD or f in SUB:
            return self.elementwise(f in ADD and "piper.add" or "piper.sub",
                                    args[0], args[1], kw)
        if f in MUL:
            return self.multiply(args[0], args[1])
        if f in DIV:
            d = self.val(args[1])
            if isinstance(d, moe.TopKSum):
                return moe.normalise(self, self.val(args[0]), d)
            if isinstance(d, (int, float)) or (
                    isinstance(d, _Const) and torch.as_tensor(d.value).numel() == 1):
                return self.scale(args[0], 1.0 / _scalar(d))
            self.unsupported(": only division by a constant number")
        if f in MATMUL:
            return self.matmul(args[0], args[1])
        if f in SOFTMAX:
            dim = args[1] if len(args) > 1 else kw.get("dim")
            return self.softmax(args[0], dim)
        if f in RELU or f in SILU or f in SIGMOID or f in TANH:
            name = ("relu" if f in RELU else "silu" if f in SILU else
                    "sigmoid" if f in SIGMOID else "tanh")
            return self.b.same("piper." + name, self.tensor(args[0]))
        if f in GELU:
            return self.gelu(args[0], kw.get("approximate", "none"))
        if f is F.linear:
            w = self.values[args[1]]
            b = self.values[args[2]] if len(args) > 2 and args[2] is not None else kw.get("bias")
            if not isinstance(w, nn.Parameter) or (b is not None and not isinstance(b, nn.Parameter)):
                self.unsupported(": the weight and bias must be parameters")
            if self.only_split(node):
                return _Fused(self.tensor(args[0]), w, b)
            return self.linear(args[0], w, b)
        if f is F.embedding:
            return self.embedding(args[0], self.values[args[1]], None)
        if f is F.layer_norm:
            x = self.tensor(args[0])
            w = args[2] if len(args) > 2 else kw.get("weight")
            bias = args[3] if len(args) > 3 else kw.get("bias")
            eps = args[4] if len(args) > 4 else kw.get("eps", 1e-5)
            if w is None or bias is None:
                self.unsupported(": layer_norm needs weight and bias")
            return self.b.full("piper.layernorm",
                               [x, self.tensor(w), self.tensor(bias)],
                               x.shape, x.dtype, {"epsilon": float(eps)})
        if f is F.cross_entropy:
            return self.cross_entropy(
                args[0], args[1] if len(args) > 1 else kw["target"],
                kw.get("reduction", "mean"), kw.get("ignore_index", -100),
                kw.get("label_smoothing", 0.0))
        if f is torch.topk:
            return moe.topk(self, node, args, kw)
        if f is torch.split or f is torch.chunk:
            return self.split(node, args[0])
        if f is getattr and isinstance(self.val(args[0]), moe.TopK) and \
                args[1] in ("values", "indices"):
            return moe.getitem(self, self.val(args[0]), 0 if args[1] == "values" else 1)
        if f is getattr and args[1] in ("T", "mT"):
            xv = self.tensor(args[0])
            if args[1] == "T":
                return self.b.transpose(xv, tuple(range(len(xv.shape)))[::-1])
            return self.transpose_dims(args[0], -2, -1)
        if f is torch.t:
            return self.transpose_dims(args[0], 0, 1)
        if f is torch.neg or f is operator.neg:
            return self.scale(args[0], -1.0)
        if f in RESHAPE:
            return self.view(node, args[0])
        if f is torch.transpose:
            return self.transpose_dims(args[0], args[1], args[2])
        if f is torch.permute:
            return self.permute(args[0], self.val(list(args[1])))
        if f is torch.masked_fill:
            return self.masked_fill(args[0], args[1], args[2])
        if f is operator.getitem:
            return self.getitem(args[0], args[1])
        if f is torch.cat:
            return self.cat(args[0], args[1] if len(args) > 1 else kw.get("dim", 0))
        if f is torch.repeat_interleave:
            return self.repeat_interleave(node, args, kw)
        if f is F.dropout:
            p = args[1] if len(args) > 1 else kw.get("p", 0.5)
            training = args[2] if len(args) > 2 else kw.get("training", True)
            if p != 0 and training:
                self.unsupported(" with p > 0 in training mode (Piper has no "
                                 "dropout)")
            return self.val(args[0])
        self.unsupported()

    # -- op builders ------------------------------------------------------
    def linear(self, x, w, bias):
        x = self.tensor(x)
        wv = self.linear_weight(w)
        shape = x.shape[:-1] + (wv.shape[1],)
        if bias is not None and self.split_bias:
            y = self.b.full("piper.linear", [x, wv], shape, x.dtype)
            name = self._name(bias)
            self.as_row.add(name)
            ones = self.b.constant(1.0, x.shape[:-1] + (1,), x.dtype)
            term = self.b.full("piper.linear", [ones, self.param_value(name)],
                               shape, x.dtype)
            return self.b.binary("piper.add", y, term)
        operands = [x, wv]
        if bias is not None:
            operands.append(self.param(bias))
        return self.b.full("piper.linear", operands, shape, x.dtype)

    # -- fused projections -------------------------------------------------
    def only_split(self, node):
        """Whether every use of `node` splits it along its last dim."""
        rank = len(self.values[node].shape)
        for u in node.users:
            split = (u.op == "call_method" and u.target in ("split", "chunk")) or (
                u.op == "call_function" and u.target in (torch.split, torch.chunk))
            if not split or u.args[0] is not node:
                return False
            dim = u.args[2] if len(u.args) > 2 else u.kwargs.get("dim", 0)
            if not isinstance(dim, int) or dim % rank != rank - 1:
                return False
        return bool(node.users)

    def split(self, node, x):
        """split/chunk of a fused projection: its pieces."""
        f = self.val(x)
        if not isinstance(f, _Fused):
            self.unsupported(" (split/chunk: only of a linear's output along "
                             "its last dim, a fused projection)")
        bounds, at = [], 0
        for t in self.values[node]:
            bounds.append((at, at + t.shape[-1]))
            at += t.shape[-1]
        return _Pieces(f, bounds)

    def fused_piece(self, pieces, index):
        """Piece `index` of a fused projection: a linear of the weight's
        (and bias's) output features [start, stop), each its own parameter
        `<name>.<index>` in the IR."""
        f = pieces.fused
        if not isinstance(index, int) or not -len(pieces.bounds) <= index < len(pieces.bounds):
            self.unsupported(" (a piece of a fused projection by its index)")
        index %= len(pieces.bounds)
        start, stop = pieces.bounds[index]
        w = self.piece_param(f.weight, index, start, stop)
        b = self.piece_param(f.bias, index, start, stop) if f.bias is not None else None
        return self.linear(f.x, w, b)

    def piece_param(self, p, index, start, stop):
        full = self._name(p)
        if self.params[full].dim() == 2 and self.uses.get(full) != {"linear"}:
            self.fail("the fused projection weight '%s' is also used outside "
                      "its split linear" % full)
        name = "%s.%d" % (full, index)
        if name not in self.params:
            self.params[name] = self.params[full][start:stop]
            self.transposed[name] = self.transposed[full]
            self.pieces[name] = (full, start, stop)
        return name

    def embedding(self, ids, table, m):
        if m is not None and (m.padding_idx is not None or m.max_norm is not None):
            self.unsupported(": padding_idx and max_norm are not supported")
        idv = self.val(ids)
        if isinstance(idv, _Const):
            idv = self.int_constant(idv.value)
        elif not isinstance(idv, ir.Value) or idv.dtype != "i64":
            self.fail("embedding ids must be int64 data or constants")
        t = self.param(table)
        out = self.b.full("piper.embedding", [t, idv], idv.shape + t.shape[1:],
                          t.dtype)
        return out

    def int_constant(self, tensor):
        if not isinstance(tensor, torch.Tensor) or tensor.dtype != torch.int64:
            self.fail("expected an int64 tensor constant")
        return self.b.constant(tensor.tolist(), tuple(tensor.shape), "i64")

    def gelu(self, x, approximate):
        if approximate == "none":
            return self.b.same("piper.gelu_erf", self.tensor(x))
        if approximate != "tanh":
            self.unsupported(" with approximate='%s'" % approximate)
        return self.b.same("piper.gelu", self.tensor(x))

    def softmax(self, x, dim):
        v = self.val(x)
        if isinstance(v, _Masked):
            if dim not in (-1, len(v.scaled.scores.shape) - 1):
                self.fail("attention softmax must be over the last dim")
            return _Probs(v)
        x = self.tensor(x)
        if dim not in (-1, len(x.shape) - 1):
            self.unsupported(" over dim %s (piper.softmax is over the last dim)" % dim)
        return self.b.same("piper.softmax", x)

    def cross_entropy(self, logits, labels, reduction, ignore_index, smoothing):
        lg = self.tensor(logits)
        lb = self.tensor(labels, "labels")
        if reduction != "mean" or smoothing != 0.0:
            self.unsupported(" with reduction='%s', label_smoothing=%s "
                             "(piper.cross_entropy is the mean, no smoothing)"
                             % (reduction, smoothing))
        if len(lg.shape) != 2 or lb.shape != lg.shape[:1] or lb.dtype != "i64":
            self.fail("cross_entropy needs logits [N, V] and int64 labels [N], "
                      "got %s and %s" % (lg.type, lb.type))
        return self.b.full("piper.cross_entropy", [lg, lb], (), lg.dtype)

    def elementwise(self, name, a, b, kw):
        if kw.get("alpha", 1) != 1:
            self.unsupported(" with alpha")
        av, bv = self.val(a), self.val(b)
        if name == "piper.add":
            for x, y in ((av, bv), (bv, av)):
                if isinstance(y, _RotSin) and isinstance(x, ir.Value):
                    return self.rope(x, y)
                if isinstance(y, _RotSin) and isinstance(x, _SliceCos) and \
                        x.x is y.x and x.rot == y.rot:
                    return _PartialRope(x.x, x.cos, y.sin, x.rot)
        if isinstance(av, ir.Value) and isinstance(bv, ir.Value):
            if av.shape != bv.shape:
                av, bv = self.broadcast_embedding(av, bv)
            return self.b.binary(name, av, bv)
        if isinstance(av, ir.Value) and _is_constant(bv):
            return self.b.binary(name, av, self.const_like(bv, av))
        if isinstance(bv, ir.Value) and _is_constant(av):
            return self.b.binary(name, self.const_like(av, bv), bv)
        self.tensor(a)
        self.tensor(b)

    def const_like(self, c, like):
        """Constant `c` (a number or a tensor that broadcasts to `like`) as
        an arith.constant of `like`'s type: constants broadcast for free."""
        t = torch.as_tensor(c.value if isinstance(c, _Const) else c,
                            dtype=torch.float64)
        try:
            t = t.expand(like.shape)
        except RuntimeError:
            self.fail("%s broadcasts a constant of shape %s to %s" % (
                op_name(self.node), tuple(t.shape), like.type))
        flat = t.reshape(-1)
        if flat.numel() and bool((flat == flat[0]).all()):
            return self.b.constant(float(flat[0]), like.shape, like.dtype)
        return self.b.constant(t.tolist(), like.shape, like.dtype)

    def broadcast_embedding(self, a, b):
        """tok_emb + pos_emb: re-gathers constant-id embeddings at full shape."""
        big, small = (a, b) if len(a.shape) >= len(b.shape) else (b, a)
        op = small.op
        if (op is not None and op.name == "piper.embedding"
                and op.operands[1].op is not None
                and op.operands[1].op.name == "arith.constant"):
            ids = torch.tensor(op.operands[1].op.payload)
            lead = big.shape[:-1]
            try:
                ids = ids.expand(lead).contiguous()
            except RuntimeError:
                ids = None
            if ids is not None and big.shape[-1] == small.shape[-1]:
                idv = self.b.constant(ids.tolist(), lead, "i64")
                table = op.operands[0]
                full = self.b.full("piper.embedding", [table, idv], big.shape,
                                   small.dtype)
                return (big, full) if big is a else (full, big)
        self.fail("%s broadcasts %s and %s; Piper's elementwise ops take equal "
                  "shapes (only an embedding of constant positions may be "
                  "broadcast)" % (op_name(self.node), a.type, b.type))

    def multiply(self, a, b):
        av, bv = self.val(a), self.val(b)
        for x, y in ((av, bv), (bv, av)):
            if isinstance(x, _Rotated) and isinstance(y, _Const):
                return _RotSin(x.x, y.value, x.rot)
            if isinstance(x, _Slice) and not x.neg and x.start == 0 and \
                    isinstance(y, _Const):
                return _SliceCos(x.x, y.value, x.stop)
        for x, y in ((av, bv), (bv, av)):
            if isinstance(y, (int, float)) or (
                    isinstance(y, _Const) and torch.as_tensor(y.value).numel() == 1):
                if not _is_constant(x):
                    return self.scale(a if x is av else b, _scalar(y))
            if isinstance(y, _Const) and isinstance(x, ir.Value):
                return self.b.binary("piper.mul", x, self.const_like(y, x))
        av, bv = self.tensor(a), self.tensor(b)
        if av.shape != bv.shape:
            self.fail("%s broadcasts %s and %s; Piper's elementwise ops take "
                      "equal shapes" % (op_name(self.node), av.type, bv.type))
        for g, u in ((av, bv), (bv, av)):
            if g.op is not None and g.op.name == "piper.silu":
                return self.b.binary("piper.swiglu", g.op.operands[0], u)
        return self.b.binary("piper.mul", av, bv)

    def scale(self, x, s):
        v = self.val(x)
        if isinstance(v, _Slice) and s == -1.0:
            return _Slice(v.x, v.start, v.stop, not v.neg)
        if isinstance(v, ir.Value) and v.op is not None and v.op.name == "piper.matmul" and len(v.shape) == 4:
            return _Scaled(v, s)
        if isinstance(v, _Scaled):
            return _Scaled(v.scores, v.scale * s)
        xv = self.tensor(x)
        return self.b.binary("piper.mul", xv, self.const_like(s, xv))

    def matmul(self, a, b):
        av = self.val(a)
        if isinstance(av, _Probs):
            v = self.val(b)
            return self.attention(av, v if isinstance(v, _Repeated) else self.tensor(b))
        rep = self.val(b)
        if isinstance(rep, _Repeated) and isinstance(av, ir.Value):
            # q @ k^T with k's heads repeated: scores only the attention
            # pattern may read (tensor() refuses them elsewhere).
            kt = rep.x
            if len(av.shape) != 4 or len(kt.shape) != 4:
                self.unsupported(": repeated key/value heads need 4-d q and k")
            out = self.b.full("piper.matmul", [av, kt],
                              av.shape[:-1] + (kt.shape[-1],), av.dtype)
            out.op.kv_repeat = rep.n
            return out
        av, bv = self.tensor(a), self.tensor(b)
        if len(av.shape) < 2 or len(bv.shape) < 2:
            self.unsupported(": both operands need rank >= 2")
        if len(bv.shape) != 2 and bv.shape[:-2] != av.shape[:-2]:
            self.unsupported(": batch dims must match")
        return self.b.full("piper.matmul", [av, bv],
                           av.shape[:-1] + (bv.shape[-1],), av.dtype)

    def masked_fill(self, x, mask, value):
        v = self.val(x)
        m = self.val(mask)
        fill = _scalar(self.val(value))
        if isinstance(v, ir.Value) and v.op is not None and v.op.name == "piper.matmul" and len(v.shape) == 4:
            v = _Scaled(v, 1.0)
        if not isinstance(v, _Scaled) or not isinstance(m, _Const):
            self.unsupported(" (only the causal mask of attention scores)")
        if not fill <= -1e30:
            self.fail("attention masks must fill with -inf, got %r" % fill)
        return _Masked(v, m.value)

    def attention(self, probs, v4):
        """softmax(mask(q @ k^T * scale)) @ v as one piper.attention."""
        scaled = probs.masked.scaled
        scores = scaled.scores
        q4, kt = scores.op.operands
        B, H, S, D = q4.shape
        k_rep = getattr(scores.op, "kv_repeat", None) or 1
        v_rep = 1
        if isinstance(v4, _Repeated):
            v4, v_rep = v4.x, v4.n
        KV = kt.shape[1]
        if KV * k_rep != H or v4.shape[1] != KV or v_rep != k_rep:
            self.fail("attention with %d query heads reads %d key heads "
                      "repeated %d times and %d value heads repeated %d times"
                      % (H, KV, k_rep, v4.shape[1], v_rep))
        q = self.heads_source(q4, (0, 2, 1, 3), (B, S, H, D))
        k = self.heads_source(kt, (0, 2, 3, 1), (B, S, KV, D))
        v = self.heads_source(v4, (0, 2, 1, 3), (B, S, KV, D))
        if q is None or k is None or v is None:
            self.fail("attention operands must be [B, S, H*D] tensors viewed "
                      "as [B, S, H, D] and transposed to heads [B, H, S, D] "
                      "(k: and then transposed to [B, H, D, S])")
        if abs(scaled.scale * math.sqrt(D) - 1.0) > 1e-12:
            self.fail("attention scores are scaled by %r; piper.attention "
                      "scales by 1/sqrt(head dim) = %r" % (scaled.scale, 1 / math.sqrt(D)))
        mask = torch.as_tensor(probs.masked.mask)
        try:
            mask = mask.expand(B, H, S, S)
        except RuntimeError:
            self.fail("the attention mask of shape %s does not broadcast to "
                      "[%d, %d, %d, %d]" % (tuple(mask.shape), B, H, S, S))
        causal = torch.ones(S, S, dtype=torch.bool).triu(1)
        if mask.dtype != torch.bool or not bool((mask == causal).all()):
            self.fail("the attention mask is not causal (masked exactly where "
                      "key position > query position)")
        attrs = {"num_heads": H}
        if KV != H:
            attrs["num_kv_heads"] = KV
        out = self.b.full("piper.attention", [q, k, v], (B, S, H * D), q.dtype,
                          attrs)
        return self.b.transpose(self.b.reshape(out, (B, S, H, D)), (0, 2, 1, 3))

    def heads_source(self, x, perm, split_shape):
        """The [B, S, H*D] tensor that `x` views as heads by `perm`."""
        if x.op is None or x.op.name != "piper.transpose":
            return None
        if tuple(x.op.attrs["permutation"]) != perm:
            return None
        r = x.op.operands[0]
        if r.shape != split_shape:
            return None
        B, S, H, D = split_shape
        return self.b.reshape(r, (B, S, H * D))

    # -- rotary embeddings and repeated key/value heads -------------------
    def packed_heads(self, x):
        """`x`, heads [B, S, H, D] or [B, H, S, D], as the packed [B, S, H D]
        tensor it views, and how to view a result of that shape as `x` is."""
        seq_major = True
        y = x
        if x.op is not None and x.op.name == "piper.transpose" and \
                tuple(x.op.attrs["permutation"]) == (0, 2, 1, 3):
            y, seq_major = x.op.operands[0], False
        B, S, H, D = y.shape
        src = self.b.reshape(y, (B, S, H * D))

        def rebuild(r):
            r4 = self.b.reshape(r, (B, S, H, D))
            return r4 if seq_major else self.b.transpose(r4, (0, 2, 1, 3))
        return src, rebuild

    def getitem(self, x, index):
        v = self.val(x)
        if isinstance(v, moe.TopK):
            return moe.getitem(self, v, index)
        if isinstance(v, _Pieces):
            return self.fused_piece(v, index)
        out = self.values[self.node]
        items = index if isinstance(index, tuple) else (index,)
        full = slice(None, None, None)
        if all(i is None or i is Ellipsis or i == full for i in items):
            return self.b.reshape(self.tensor(x), tuple(out.shape))
        last = items[-1]
        base = v.x if isinstance(v, _Slice) else v
        prefix_ok = all(i is Ellipsis or i == full for i in items[:-1]) and (
            Ellipsis in items[:-1] or isinstance(base, ir.Value) and
            len(items) == len(base.shape))
        if isinstance(base, ir.Value) and isinstance(last, slice) and prefix_ok \
                and last.step in (None, 1) and not getattr(v, "neg", False):
            width = v.stop - v.start if isinstance(v, _Slice) else v.shape[-1]
            a, b, _ = last.indices(width)
            if isinstance(v, ir.Value) and (a, b) == (0, width):
                return v
            if b > a:
                at = v.start if isinstance(v, _Slice) else 0
                return _Slice(base, at + a, at + b)
        self.unsupported(" (indexing: only views and slices of the last dim "
                         "in rotary embeddings, x[..., :D/2], x[..., :R])")

    def cat(self, pieces, dim):
        ps = [self.val(p) for p in pieces]
        if len(ps) == 2:
            a, b = ps
            x = getattr(a, "x", None)
            last = x is not None and dim % len(x.shape) == len(x.shape) - 1
            if (last and isinstance(a, _Slice) and isinstance(b, _Slice)
                    and a.x is b.x and a.neg and not b.neg and b.start == 0
                    and a.start == b.stop and a.stop == 2 * b.stop):
                return _Rotated(a.x, a.stop)
            if (last and isinstance(a, _PartialRope) and isinstance(b, _Slice)
                    and b.x is a.x and not b.neg and b.start == a.rot
                    and b.stop == a.x.shape[-1]):
                return self.emit_rope(a.x, a.cos, a.sin, a.rot)
        self.unsupported(" (only rotate_half's cat((-x[..., R/2:R], "
                         "x[..., :R/2]), dim=-1) and partial rotary's "
                         "cat((rotated, x[..., R:]), dim=-1))")

    def expand(self, x, sizes):
        v = self.tensor(x)
        target = tuple(v.shape[i] if int(s) == -1 else int(s)
                       for i, s in enumerate(sizes))
        if target == v.shape:
            return v
        grown = [d for d in range(len(v.shape)) if v.shape[d] != target[d]]
        if (len(grown) == 1 and v.shape[grown[0]] == 1 and v.op is not None
                and v.op.name == "piper.reshape"):
            d = grown[0]
            src = v.op.operands[0]
            if src.shape == v.shape[:d] + v.shape[d + 1:]:
                return _Expanded(src, d, target[d])
        self.unsupported(" (expand: only an unsqueezed dim, to repeat "
                         "key/value heads)")

    def repeat_interleave(self, node, args, kw):
        x = self.tensor(args[0])
        n = args[1] if len(args) > 1 else kw.get("repeats")
        dim = args[2] if len(args) > 2 else kw.get("dim")
        n, dim = self.val(n), self.val(dim)
        if not isinstance(n, int) or dim is None or len(x.shape) != 4 or dim % 4 != 1:
            self.unsupported(" (only an int count over the heads dim 1 of "
                             "[B, Hkv, S, D] key/value heads)")
        return _Repeated(x, n)

    def rope(self, xcos, rotsin):
        """x * cos + rotate_half(x) * sin as one piper.rope."""
        x = rotsin.x
        mul = xcos.op
        if (mul is None or mul.name != "piper.mul" or x not in mul.operands
                or len(x.shape) != 4 or rotsin.rot != x.shape[-1]):
            self.fail("rotary embedding must be x * cos + rotate_half(x) * sin "
                      "of one 4-d heads tensor x")
        other = mul.operands[1] if mul.operands[0] is x else mul.operands[0]
        if other.op is None or other.op.name != "arith.constant":
            self.fail("rotary embedding: cos must be a constant table")
        return self.emit_rope(x, other.op.payload, rotsin.sin, x.shape[-1])

    def emit_rope(self, x, cos_t, sin_t, rot):
        """piper.rope of heads `x` given its tables (constants that
        broadcast to x's first `rot` channels)."""
        if len(x.shape) != 4:
            self.fail("rotary embedding must rotate one 4-d heads tensor")
        shape = x.shape[:-1] + (rot,)
        sin_t = torch.as_tensor(sin_t)
        try:
            cos = torch.as_tensor(cos_t, dtype=torch.float64).expand(shape)
            sin = sin_t.to(torch.float64).expand(shape)
        except RuntimeError:
            self.fail("the rotary tables do not broadcast to %s" % (shape,))
        src, rebuild = self.packed_heads(x)
        seq_dim = 2 if (x.op is not None and x.op.name == "piper.transpose"
                        and tuple(x.op.attrs["permutation"]) == (0, 2, 1, 3)) else 1
        S, D = src.shape[1], x.shape[-1]
        theta, offset = rotary.fit(cos, sin, seq_dim, S, rot)
        tol = 1e-12 if sin_t.dtype == torch.float64 else 1e-5
        want_cos, want_sin = rotary.tables(theta, offset, S, rot, seq_dim, shape)
        if offset < 0 or not (
                torch.allclose(cos, want_cos, rtol=0, atol=tol)
                and torch.allclose(sin, want_sin, rtol=0, atol=tol)):
            self.fail("the rotary tables are not cos/sin(position * "
                      "theta^(-2c/%d)) at positions p..p+%d for any theta and "
                      "offset p >= 0 (fitted theta %r, p = %d); piper.rope "
                      "needs consecutive position ids and tables computed in "
                      "the model's dtype" % (rot, S - 1, theta, offset))
        attrs = {"head_dim": D, "theta": float(theta)}
        if offset:
            attrs["offset"] = offset
        if rot != D:
            attrs["rotary_dim"] = rot
        return rebuild(self.b.same("piper.rope", src, attrs))

    def view(self, node, x):
        if node.meta.get("piper_int_view"):
            return self.val(x)
        e = self.val(x)
        if isinstance(e, _Expanded):
            shape = tuple(self.values[node].shape)
            src = e.x.shape
            merged = src[:e.dim - 1] + (src[e.dim - 1] * e.n,) + src[e.dim:]
            if e.dim == 2 and len(src) == 4 and shape == merged:
                return _Repeated(e.x, e.n)
            self.fail("an expanded tensor may only be reshaped to repeat "
                      "key/value heads ([B, Hkv, n, S, D] -> [B, Hkv n, S, D])")
        xv = self.tensor(x)
        if not xv.is_float():
            self.fail("integer tensors can only be reshaped directly after "
                      "input (e.g. labels.view(-1))")
        return self.b.reshape(xv, tuple(self.values[node].shape))

    def transpose_dims(self, x, d0, d1):
        rv = self.val(x)
        if isinstance(rv, _Repeated):
            d0, d1 = self.val(d0) % 4, self.val(d1) % 4
            if 1 in (d0, d1) or 0 in (d0, d1):
                self.fail("repeated key/value heads may only be transposed "
                          "in their last two dims")
            return _Repeated(self.b.transpose(rv.x, (0, 1, 3, 2)), rv.n)
        xv = self.tensor(x)
        r = len(xv.shape)
        d0, d1 = self.val(d0) % r, self.val(d1) % r
        perm = list(range(r))
        perm[d0], perm[d1] = perm[d1], perm[d0]
        return self.b.transpose(xv, perm)

    def permute(self, x, dims):
        xv = self.tensor(x)
        r = len(xv.shape)
        return self.b.transpose(xv, [d % r for d in dims])


class _Const:
    def __init__(self, value):
        self.value = value


def _is_constant(v):
    return not isinstance(v, (ir.Value,) + _PENDING)


def _shape_like(x):
    if isinstance(x, (list, tuple)):
        return all(_shape_like(y) for y in x)
    return x is None or isinstance(x, (int, float, bool, str, torch.dtype,
                                       torch.device))


def _scalar(v):
    if isinstance(v, _Const):
        v = v.value
    if isinstance(v, torch.Tensor):
        v = v.item()
    return float(v)


def _is_view(node):
    if node.op == "call_method":
        return node.target in ("view", "reshape", "flatten", "contiguous")
    return node.op == "call_function" and node.target in RESHAPE
