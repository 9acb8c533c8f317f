"""Captures a module with torch.fx, recording what the importer needs per node.

Each fx node gets, in `node.meta`:
  - "piper_scope":  the innermost `piper.annotate` block open when it was
                    traced (annotate.Scope or None);
  - "piper_module": the dotted path of the module whose forward traced it
                    ("" for the root);
  - "piper_loc":    (file, line, source text) of the user code that made it,
                    the innermost frame outside torch and this package.
Then the graph is run once on the example inputs to record every node's
concrete value (shapes, sizes, constant masks and position ids).
"""

import os
import traceback

import torch
import torch.fx as fx

from . import annotation as ann
from .moe import is_experts_module

_TORCH_DIR = os.path.dirname(torch.__file__)
_OWN_DIR = os.path.dirname(os.path.abspath(__file__))


def is_rmsnorm_module(m):
    """A module that calls itself an RMSNorm and has one vector weight."""
    if "rmsnorm" not in type(m).__name__.lower():
        return False
    params = dict(m.named_parameters(recurse=False))
    return set(params) == {"weight"} and params["weight"].dim() == 1


def _user_frame():
    for frame in reversed(traceback.extract_stack()):
        f = os.path.abspath(frame.filename)
        if f.startswith(_TORCH_DIR) or f.startswith(_OWN_DIR):
            continue
        if "contextlib" in f or f.startswith("<"):
            continue
        return (frame.filename, frame.lineno, (frame.line or "").strip())
    return None


def _shape_like(x):
    if isinstance(x, (list, tuple)):
        return all(_shape_like(y) for y in x)
    return x is None or isinstance(x, (int, float, bool, str, torch.dtype,
                                       torch.device))


class _Proxy(fx.Proxy):
    """A proxy whose data attributes (shape, dtype, device, ndim) are the
    concrete ones."""

    def __getattr__(self, k):
        value = self.tracer.values.get(self.node)
        if isinstance(value, torch.Tensor) and not k.startswith("__"):
            attr = getattr(value, k, None)
            if not callable(attr) and _shape_like(attr) and attr is not None:
                return attr
        return super().__getattr__(k)

    def __iter__(self):
        # `a, b = op(...)` for ops with several results (torch.sort, ...):
        # as many items as the concrete result has.
        value = self.tracer.values.get(self.node)
        if isinstance(value, (tuple, list)):
            return iter([self[i] for i in range(len(value))])
        return super().__iter__()


class PiperTracer(fx.Tracer):
    """fx tracing with concrete values alongside the proxies.

    Every op is also run on the example inputs. An op whose value is not a
    tensor (a size, a shape, a dtype, a device) returns that value instead of
    a proxy, so `B, T = x.size()` and `torch.arange(T)` trace as the
    constants they are for these shapes (Piper's IR has static shapes).
    """

    def __init__(self, inputs, strip_prefix=""):
        super().__init__()
        self.module_path = [""]
        self.strip_prefix = strip_prefix
        self.inputs = list(inputs)
        self.values = {}
        # True while an op runs on concrete values: fx's patched module
        # attribute access and calls must then act as in plain PyTorch.
        self.computing = False

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        if self.computing:
            return attr_val
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def is_leaf_module(self, m, qualname):
        if is_rmsnorm_module(m) or is_experts_module(m):
            return True
        return super().is_leaf_module(m, qualname)

    def call_module(self, m, forward, args, kwargs):
        if self.computing:
            return forward(*args, **kwargs)
        path = self.path_of_module(m)
        if path.startswith(self.strip_prefix):
            path = path[len(self.strip_prefix):]
        self.module_path.append(path)
        try:
            return super().call_module(m, forward, args, kwargs)
        finally:
            self.module_path.pop()

    def create_node(self, *args, **kwargs):
        node = super().create_node(*args, **kwargs)
        node.meta["piper_scope"] = ann.current_scope()
        node.meta["piper_module"] = self.module_path[-1]
        node.meta["piper_loc"] = _user_frame()
        return node

    def proxy(self, node):
        return _Proxy(node, self)

    def concrete(self, a):
        return fx.node.map_aggregate(
            a, lambda x: self.values[x.node] if isinstance(x, fx.Proxy) else x)

    def create_proxy(self, kind, target, args, kwargs, *rest, **kw):
        cargs, ckwargs = self.concrete(args), self.concrete(kwargs)
        proxy = super().create_proxy(kind, target, args, kwargs, *rest, **kw)
        self.computing = True
        try:
            value = self.run_concrete(kind, target, cargs, ckwargs)
        finally:
            self.computing = False
        self.values[proxy.node] = value
        if kind != "placeholder" and _shape_like(value):
            return value
        return proxy

    def run_concrete(self, kind, target, cargs, ckwargs):
        with torch.no_grad():
            if kind == "placeholder":
                value = self.inputs.pop(0)
            elif kind == "get_attr":
                value = fetch_attr(self.root, target)
            elif kind == "call_function":
                value = target(*cargs, **ckwargs)
            elif kind == "call_method":
                value = getattr(cargs[0], target)(*cargs[1:], **ckwargs)
            elif kind == "call_module":
                m = self.root.get_submodule(target)
                value = type(m).forward(m, *cargs, **ckwargs)
            else:
                value = None
        return value


def fetch_attr(root, target):
    """root.<target>, read from the module dicts (not through __getattr__,
    which fx patches while it traces)."""
    obj = root
    for part in target.split("."):
        if isinstance(obj, torch.nn.Module):
            for d in (obj._parameters, obj._buffers, obj._modules):
                if part in d:
                    obj = d[part]
                    break
            else:
                obj = object.__getattribute__(obj, part)
        else:
            obj = getattr(obj, part)
    return obj


def capture(root, example_inputs, strip_prefix=""):
    """(GraphModule, {node: concrete value}) of `root` on `example_inputs`."""
    tracer = PiperTracer(example_inputs, strip_prefix)
    with ann.tracing():
        graph = tracer.trace(root)
    gm = fx.GraphModule(tracer.root, graph)
    for node in gm.graph.nodes:
        if node.op == "get_attr" and node not in tracer.values:
            tracer.values[node] = fetch_attr(gm, node.target)
    return gm, tracer.values
