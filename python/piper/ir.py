"""A small builder for Piper model IR and its printer (MLIR text).

Values are SSA values of ranked tensor types; ops are printed in the custom
assembly forms of docs/ModelIR.md. The builder simplifies data movement as
it goes (a reshape of a reshape is one reshape, transposes compose, identity
views vanish), so that the views PyTorch code makes around attention heads
cancel, and dead ops are dropped before printing.
"""

import math

DTYPES = {"float32": "f32", "float64": "f64", "bfloat16": "bf16", "int64": "i64"}


def tensor_type(shape, dtype):
    dims = "".join("%dx" % d for d in shape)
    return "tensor<%s%s>" % (dims, dtype)


def mlir_float(x):
    """An f64 literal that round-trips and that MLIR's lexer accepts."""
    if math.isinf(x):
        return "0x7FF0000000000000" if x > 0 else "0xFFF0000000000000"
    return "%.17e" % x


class Value:
    def __init__(self, shape, dtype, op=None, arg=None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.op = op  # defining Op, or None for a function argument
        self.arg = arg  # the Argument, for function arguments

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    def is_float(self):
        return self.dtype != "i64"


class Op:
    """One operation: `kind` selects its printed form."""

    def __init__(self, name, operands, result_types, kind, attrs=None,
                 scope=None, loc=None, payload=None):
        self.name = name
        self.operands = list(operands)
        self.results = [Value(s, d, op=self) for s, d in result_types]
        self.kind = kind
        self.attrs = attrs or {}
        self.scope = scope
        self.loc = loc
        self.payload = payload


class Argument:
    def __init__(self, name, shape, dtype, param=None):
        self.name = name
        self.value = Value(shape, dtype, arg=self)
        self.param = param  # attribute text of #piper.param, or None


class Builder:
    def __init__(self):
        self.ops = []
        self.args = []
        self.scope = None  # annotate Scope of ops being created
        self.loc = None  # (file, line) of ops being created
        self.transposes = {}

    # -- creation ---------------------------------------------------------
    def argument(self, name, shape, dtype, param=None):
        a = Argument(name, shape, dtype, param)
        self.args.append(a)
        return a.value

    def op(self, name, operands, result_types, kind, attrs=None, payload=None):
        o = Op(name, operands, result_types, kind, attrs, self.scope, self.loc,
               payload)
        self.ops.append(o)
        return o.results[0] if len(o.results) == 1 else o.results

    def same(self, name, x, attrs=None):
        return self.op(name, [x], [(x.shape, x.dtype)], "unary", attrs)

    def binary(self, name, a, b):
        return self.op(name, [a, b], [(a.shape, a.dtype)], "binary")

    def full(self, name, operands, shape, dtype, attrs=None):
        return self.op(name, operands, [(shape, dtype)], "full", attrs)

    def constant(self, values, shape, dtype):
        return self.op("arith.constant", [], [(shape, dtype)], "constant",
                       payload=values)

    def reshape(self, x, shape):
        shape = tuple(int(d) for d in shape)
        if x.shape == shape:
            return x
        if x.op is not None and x.op.name == "piper.reshape":
            return self.reshape(x.op.operands[0], shape)
        return self.op("piper.reshape", [x], [(shape, x.dtype)], "convert")

    def transpose(self, x, perm):
        perm = tuple(int(p) for p in perm)
        if perm == tuple(range(len(perm))):
            return x
        if x.op is not None and x.op.name == "piper.transpose":
            inner = x.op.attrs["permutation"]
            return self.transpose(x.op.operands[0],
                                  tuple(inner[p] for p in perm))
        # One transpose per value, permutation and chunk (a weight read
        # transposed twice in a chunk is transposed once).
        key = (id(x), perm, self.scope.id if self.scope is not None else None)
        if key not in self.transposes:
            shape = tuple(x.shape[p] for p in perm)
            self.transposes[key] = self.op("piper.transpose", [x],
                                           [(shape, x.dtype)], "transpose",
                                           {"permutation": perm})
        return self.transposes[key]

    # -- printing ---------------------------------------------------------
    def live_ops(self, roots):
        live = set()
        work = list(roots)
        while work:
            v = work.pop()
            if v.op is not None and id(v.op) not in live:
                live.add(id(v.op))
                work.extend(v.op.operands)
        return [o for o in self.ops if id(o) in live]


def attr_text(attrs):
    if not attrs:
        return ""
    parts = []
    for k, v in attrs.items():
        if k == "permutation":
            continue
        if isinstance(v, bool):
            parts.append("%s = %s" % (k, "true" if v else "false"))
        elif isinstance(v, int):
            parts.append("%s = %d : i64" % (k, v))
        elif isinstance(v, float):
            parts.append("%s = %s : f64" % (k, mlir_float(v)))
        else:
            parts.append("%s = %s" % (k, v))
    return " {%s}" % ", ".join(parts) if parts else ""


def op_text(o, name_of):
    res = name_of(o.results[0])
    ops = ", ".join(name_of(v) for v in o.operands)
    attrs = attr_text(o.attrs)
    r = o.results[0]
    if o.kind == "unary" or o.kind == "binary":
        text = "%s = %s %s%s : %s" % (res, o.name, ops, attrs, r.type)
    elif o.kind == "full":
        text = "%s = %s %s%s : %s -> %s" % (
            res, o.name, ops, attrs, ", ".join(v.type for v in o.operands),
            r.type)
    elif o.kind == "multi":
        text = "%s = %s %s%s : %s -> %s" % (
            ", ".join(name_of(v) for v in o.results), o.name, ops, attrs,
            ", ".join(v.type for v in o.operands),
            ", ".join(v.type for v in o.results))
    elif o.kind == "convert":
        text = "%s = %s %s%s : %s -> %s" % (res, o.name, ops, attrs,
                                            o.operands[0].type, r.type)
    elif o.kind == "transpose":
        perm = ", ".join(str(p) for p in o.attrs["permutation"])
        text = "%s = %s %s permutation = [%s]%s : %s -> %s" % (
            res, o.name, ops, perm, attrs, o.operands[0].type, r.type)
    elif o.kind == "constant":
        text = "%s = arith.constant dense<%s> : %s" % (
            res, dense_text(o.payload), r.type)
    else:
        raise AssertionError("unknown op kind " + o.kind)
    if o.loc is not None:
        text += ' loc("%s":%d:0)' % (o.loc[0].replace('"', '\\"'), o.loc[1])
    return text


def dense_text(values):
    """Nested list of ints/floats to the text inside dense<...>."""
    if isinstance(values, (list, tuple)):
        return "[" + ", ".join(dense_text(v) for v in values) + "]"
    if isinstance(values, float):
        return mlir_float(values)
    return str(int(values))
