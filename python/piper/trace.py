"""piper.trace: an nn.Module, example inputs and a loss to a Piper step function."""

import fnmatch
import inspect
import os
import subprocess

import torch
import torch.nn as nn

from . import ir
from .capture import capture
from .lower import Lowering, TraceError
from .printer import print_module
from . import data as _data


class Placement:
    """A parameter placement: `dims[d]` lists the mesh axes dim d is split
    over (in the IR's layout: linear weights are [in, out]); the parameter is
    replicated over `replicated`; `zero` is the ZeRO stage."""

    def __init__(self, dims=None, replicated=("dp",), zero=0):
        self.dims = dims
        self.replicated = tuple(replicated)
        self.zero = zero

    def text(self, rank, mesh):
        dims = list(self.dims) if self.dims is not None else [()] * rank
        if len(dims) != rank:
            raise TraceError("placement lists %d dims for a rank-%d parameter"
                             % (len(dims), rank))
        repl = [a for a in self.replicated if a in mesh]
        out = "#piper.placement<@mesh, [%s], replicated = {%s}" % (
            ", ".join("{%s}" % ", ".join(d) for d in dims), ", ".join(repl))
        if self.zero:
            out += ", zero = %d" % self.zero
        return out + ">"


class ParamInfo:
    def __init__(self, name, tensor, transposed, ir_shape, arg_index,
                 piece=None):
        self.name = name  # canonical state_dict name (or a piece's name)
        self.tensor = tensor  # the module's Parameter (or a piece's slice)
        # (state_dict name, start, stop, Parameter) of a fused projection's
        # piece: rows [start, stop) of that Parameter.
        self.piece = piece
        self.transposed = transposed  # stored in the IR as its transpose
        self.ir_shape = ir_shape  # its shape in the IR
        self.arg_index = arg_index

    def ir_values(self):
        t = self.tensor.detach()
        return (t.t() if self.transposed else t).reshape(self.ir_shape)

    def from_ir(self, t):
        """A tensor in the IR's layout back in the module's."""
        t = t.reshape(self.ir_shape)
        return (t.t() if self.transposed else t).reshape(self.tensor.shape)


class DataInfo:
    def __init__(self, name, arg_index, shape, dtype, bound, torch_shape):
        self.name = name
        self.arg_index = arg_index
        self.shape = shape  # in the IR
        self.dtype = dtype
        self.bound = bound  # ids in [0, bound) (integer data)
        self.torch_shape = torch_shape  # as the module takes it


class TracedModel:
    """The result of piper.trace: `mlir` is the module text."""

    def __init__(self, mlir, params, data):
        self.mlir = mlir
        self.params = params
        self.data = data

    def write(self, path):
        with open(path, "w") as f:
            f.write(self.mlir)

    def write_params(self, path):
        """Initial values for piper-run/piper-interp --params-in."""
        _data.write_params(path, [(p.name, p.ir_values()) for p in self.params])

    def read_params(self, path):
        """--params-out of a run, as {state_dict name: tensor in torch layout}."""
        values = _data.read_params(path)
        out = {}
        for p in self.params:
            t = p.from_ir(torch.tensor(values[p.name], dtype=torch.float64))
            if p.piece is None:
                out[p.name] = t
                continue
            full, start, stop, param = p.piece
            if full not in out:
                out[full] = param.detach().double().clone()
            out[full][start:stop] = t
        return out

    def synthetic_inputs(self, seed, step, batch_factor=1):
        """The data piper-run feeds at `step` (1-based) when the global batch
        is `batch_factor` times the traced one (replicas x microbatches), in
        the shapes the module's forward takes."""
        out = []
        for d in self.data:
            shape = list(d.shape)
            shape[0] *= batch_factor
            tshape = list(d.torch_shape)
            tshape[0] *= batch_factor
            if d.dtype == "i64":
                t = _data.synthetic_index(seed, d.arg_index, step, shape, d.bound)
            else:
                t = _data.synthetic_float(seed, d.arg_index, step, shape)
            out.append(t.reshape(tshape))
        return out

    def verify(self, piper_opt="piper-opt"):
        """Parses and verifies the module with piper-opt; raises on failure."""
        r = subprocess.run([piper_opt, "-"], input=self.mlir, text=True,
                           capture_output=True)
        if r.returncode != 0:
            raise TraceError("piper-opt rejected the traced module:\n" + r.stderr)
        return r.stdout


def _wrap(module, loss, n_inputs, n_loss):
    """A module whose forward is loss(module(*inputs), *loss_inputs), with
    argument names taken from the module's forward."""
    names = list(inspect.signature(module.forward).parameters)[:n_inputs]
    names += ["target%d" % i if n_loss > 1 else "target" for i in range(n_loss)]
    inner = ", ".join(names[:n_inputs])
    rest = ", ".join(names[n_inputs:])
    src = "def forward(self, %s):\n    return self.loss_fn(self.model(%s), %s)\n" % (
        ", ".join(names), inner, rest)
    scope = {}
    exec(src, scope)

    class WithLoss(nn.Module):
        forward = scope["forward"]

    w = WithLoss()
    w.model = module
    w.loss_fn = loss
    return w


def trace(module, inputs, loss=None, loss_inputs=(), mesh=None,
          placements=None, split_bias=False, func_name="step"):
    """Imports `module` as a Piper step function.

    inputs:      example inputs of module.forward (tensors; their shapes are
                 the per-replica, per-microbatch batch of the IR).
    loss:        None if forward returns the loss, else a callable
                 loss(output, *loss_inputs) such as F.cross_entropy.
    mesh:        {"dp": 2, "tp": 1, ...} for piper.mesh @mesh, or None.
    placements:  {name pattern: Placement}, matched with fnmatch against the
                 state_dict names in order; the first match wins. Without a
                 match a parameter is replicated over dp (as piper-gen does).
    split_bias:  emit each linear's bias as its own product, ones[..., 1] @
                 bias[1, Out], added to the bias-free linear. piper.linear
                 with a bias does not split over tensor parallelism; split,
                 a column-parallel bias is listed with its weight (its
                 [1, Out] product splits by column too) and a row-parallel
                 bias is added after the all-reduce. The bias is then a
                 [1, Out] parameter in the IR (write_params handles it).
    Raises TraceError with one located line for anything unsupported.
    """
    inputs = tuple(inputs)
    loss_inputs = tuple(loss_inputs)
    root, prefix = module, ""
    if loss is not None:
        root, prefix = _wrap(module, loss, len(inputs), len(loss_inputs)), "model."
    gm, values = capture(root, inputs + loss_inputs, prefix)

    params, param_names = {}, {}
    for name, p in root.named_parameters():
        name = name[len(prefix):] if name.startswith(prefix) else name
        params[name] = p
        param_names[id(p)] = name
    dtypes = {p.dtype for p in params.values()}
    if len(dtypes) != 1:
        raise TraceError("error: parameters must share one float dtype, got %s"
                         % sorted(str(d) for d in dtypes))
    dtype = ir.DTYPES[str(dtypes.pop())[6:]]

    low = Lowering(gm, values, params, param_names, dtype, split_bias)
    loss_value = low.run()

    # The signature: used parameters in state_dict order, then the data.
    b = low.b
    live = b.live_ops([loss_value])
    used = {id(v) for o in live for v in o.operands}
    data_args = [a for a in b.args if id(a.value) in used]
    b.args = []
    infos = []
    ordered = []
    for name, p in params.items():
        ordered.append((name, p))
        ordered += [(n, low.params[n]) for n, (full, _, _) in low.pieces.items()
                    if full == name]
    for name, p in ordered:
        v = low.param_values.get(name)
        if v is None or id(v) not in used:
            continue
        arg = ir.Argument(name, v.shape, v.dtype, param=None)
        arg.value = v
        v.arg = arg
        arg.param = _param_attr(name, p, len(v.shape), mesh, placements,
                                name in low.expert_params)
        b.args.append(arg)
        piece = None
        if name in low.pieces:
            full, start, stop = low.pieces[name]
            piece = (full, start, stop, params[full])
        infos.append(ParamInfo(name, p, low.transposed[name], v.shape,
                               len(b.args) - 1, piece))
    data = []
    torch_shapes = {n.name: tuple(values[n].shape) for n in gm.graph.nodes
                    if n.op == "placeholder" and isinstance(values[n], torch.Tensor)}
    for a in data_args:
        b.args.append(a)
        bound = _bound(live, a.value)
        data.append(DataInfo(a.name, len(b.args) - 1, a.value.shape,
                             a.value.dtype, bound, torch_shapes[a.name]))
    text = print_module(b, loss_value, mesh, func_name)
    return TracedModel(text, infos, data)


def _param_attr(name, p, rank, mesh, placements, expert=False):
    t = p.detach()
    if bool((t == 0).all()):
        init = "zeros"
    elif bool((t == 1).all()):
        init = "ones"
    else:
        init = "normal(%s)" % ir.mlir_float(max(float(t.double().std()), 1e-12)
                                            if t.numel() > 1 else 1.0)
    attr = '#piper.param<"%s", %s' % (name, init)
    placement = None
    for pattern, pl in (placements or {}).items():
        if fnmatch.fnmatchcase(name, pattern):
            placement = pl
            break
    if placement is None and expert and mesh and "ep" in mesh:
        # As piper-gen places experts: E / ep of them per rank.
        placement = Placement([("ep",)] + [()] * (rank - 1))
    if placement is None and mesh and "dp" in mesh:
        placement = Placement()
    if placement is not None and mesh:
        attr += ", placement = " + placement.text(rank, mesh)
    return attr + ">"


def _bound(ops, value):
    """The id range of integer data, from how the IR uses it."""
    if value.dtype != "i64":
        return None
    bounds = []
    for o in ops:
        if o.name == "piper.embedding" and o.operands[1] is value:
            bounds.append(o.operands[0].shape[0])
        if o.name == "piper.cross_entropy" and o.operands[1] is value:
            bounds.append(o.operands[0].shape[1])
    return min(bounds) if bounds else None
