"""Prints a traced step function as a module: chunks become piper.annotate.

Each op belongs to the innermost `annotate` block open when it was traced.
An op traced outside every block joins a neighbouring top-level chunk: the
one before it in trace order, or the first chunk if none comes before (so an
embedding before the first `annotate("PP")` belongs to stage 0 and a loss
after the last to the last stage). A trace without any block is one chunk
`{PP = 0}`; so is one without a `PP` block, its other blocks nested in
that chunk. Values flow out of a chunk only through its `piper.yield`.
"""

import re

from . import annotation as ann
from .ir import op_text, tensor_type


def _sanitize(name):
    return re.sub(r"[^A-Za-z0-9$._-]", "_", name)


def _assign_paths(ops):
    """Chunk path (outermost scope first) of every op."""
    paths = [o.scope.path() if o.scope is not None else None for o in ops]
    if all(p is None for p in paths):
        top = ann.Scope(-1, "PP", 0, None)
        return [[top] for _ in ops]
    if all(p is None or p[0].tag != "PP" for p in paths):
        # Blocks but no pipeline stage (MoE's EP blocks in a serial model):
        # everything is stage 0 and the blocks nest in it, as piper-gen
        # writes them.
        top = ann.Scope(-1, "PP", 0, None)
        return [[top] + (p or []) for p in paths]
    first = next(p for p in paths if p is not None)
    out, prev = [], None
    for p in paths:
        if p is None:
            p = [prev[0]] if prev is not None else [first[0]]
        else:
            prev = p
        out.append(p)
    return out


class _Node:
    def __init__(self, scope):
        self.scope = scope
        self.items = []  # ops and child _Nodes in order
        self.escapes = []  # values defined inside and used outside


def print_module(builder, loss, mesh=None, func_name="step"):
    ops = builder.live_ops([loss])
    paths = _assign_paths(ops)
    path_of = {id(o): p for o, p in zip(ops, paths)}

    # The chunk tree.
    root = _Node(None)
    nodes = {}
    for o, p in zip(ops, paths):
        parent = root
        for s in p:
            if s.id not in nodes:
                nodes[s.id] = _Node(s)
                parent.items.append(nodes[s.id])
            parent = nodes[s.id]
        parent.items.append(o)

    # Values that leave a chunk, in definition order.
    def escape(v, user_path):
        if v.op is None:
            return
        inner = path_of[id(v.op)]
        user_ids = {s.id for s in user_path}
        for s in inner:
            if s.id not in user_ids and v not in nodes[s.id].escapes:
                nodes[s.id].escapes.append(v)

    for o in ops:
        for v in o.operands:
            escape(v, path_of[id(o)])
    escape(loss, [])
    order = {id(r): i for i, o in enumerate(ops) for r in o.results}
    for n in nodes.values():
        n.escapes.sort(key=lambda v: order[id(v)])

    names = {}
    counter = [0]

    def fresh():
        counter[0] += 1
        return "%" + str(counter[0] - 1)

    args = []
    used = set()
    for a in builder.args:
        base = _sanitize(a.name)
        name = base
        k = 1
        while name in used:
            name = "%s_%d" % (base, k)
            k += 1
        used.add(name)
        names[id(a.value)] = "%" + name
        attr = " {piper.param = %s}" % a.param if a.param else ""
        args.append("%%%s: %s%s" % (name, a.value.type, attr))

    lines = []

    def emit(node, env, indent):
        for item in node.items:
            if isinstance(item, _Node):
                emit_chunk(item, env, indent)
                continue
            for r in item.results:
                env[id(r)] = fresh()
            lines.append(indent + op_text(item, lambda v: env[id(v)]))

    def emit_chunk(node, env, indent):
        inner = dict(env)
        res = fresh()
        types = [v.type for v in node.escapes]
        head_len = len(lines)
        lines.append(None)
        emit(node, inner, indent + "  ")
        lines.append(indent + "  piper.yield %s : %s" % (
            ", ".join(inner[id(v)] for v in node.escapes), ", ".join(types)))
        lines.append(indent + "}")
        if len(types) == 1:
            lines[head_len] = "%s%s = piper.annotate {%s = %d} -> %s {" % (
                indent, res, node.scope.tag, node.scope.value, types[0])
            env[id(node.escapes[0])] = res
        else:
            lines[head_len] = "%s%s:%d = piper.annotate {%s = %d} -> (%s) {" % (
                indent, res, len(types), node.scope.tag, node.scope.value,
                ", ".join(types))
            for i, v in enumerate(node.escapes):
                env[id(v)] = "%s#%d" % (res, i)

    env = dict(names)
    emit(root, env, "    ")
    out = ["module {"]
    if mesh:
        out.append("  piper.mesh @mesh axes = [%s]" % ", ".join(
            "%s = %d" % (k, v) for k, v in mesh.items()))
    out.append("  func.func @%s(%s) -> %s {" % (
        func_name, ", ".join(args), loss.type))
    out.extend(lines)
    out.append("    return %s : %s" % (env[id(loss)], loss.type))
    out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


__all__ = ["print_module", "tensor_type"]
