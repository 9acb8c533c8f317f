"""Piper's annotation API: `with piper.annotate("PP"):` tags what is traced inside.

Outside a trace `annotate` does nothing, so an annotated module trains in
plain PyTorch unchanged. While `piper.trace` runs the module's forward, each
`with annotate(tag)` block opens a chunk: every op traced inside carries the
tag, with the value `value` or, by default, the next index of that tag in
trace order (the first `annotate("PP")` block is PP = 0, the next PP = 1, and
so on, as Piper numbers them). Blocks nest: an `annotate("EP")` inside a
`PP = 1` block gives its ops both tags.
"""

import contextlib
import re

_TAG_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")


class _TraceState:
    """Tags of the blocks open at this point of a trace (outermost first)."""

    def __init__(self):
        self.open = []  # list of Scope
        self.counters = {}
        self.next_id = 0

    def enter(self, tag, value):
        if value is None:
            value = self.counters.get(tag, 0)
        self.counters[tag] = max(self.counters.get(tag, 0), value + 1)
        parent = self.open[-1] if self.open else None
        scope = Scope(self.next_id, tag, value, parent)
        self.next_id += 1
        self.open.append(scope)
        return scope

    def exit(self):
        self.open.pop()

    def current(self):
        return self.open[-1] if self.open else None


class Scope:
    """One `with annotate(tag)` block met during a trace."""

    def __init__(self, ident, tag, value, parent):
        self.id = ident
        self.tag = tag
        self.value = value
        self.parent = parent

    def path(self):
        """The scopes from the outermost to this one."""
        out = []
        s = self
        while s is not None:
            out.append(s)
            s = s.parent
        return list(reversed(out))


_state = None  # the trace in progress, if any


@contextlib.contextmanager
def tracing():
    """Makes `annotate` record scopes while a trace runs."""
    global _state
    saved = _state
    _state = _TraceState()
    try:
        yield _state
    finally:
        _state = saved


def current_scope():
    return _state.current() if _state is not None else None


@contextlib.contextmanager
def annotate(tag, value=None):
    """Tags the ops traced inside the block with `tag` (e.g. "PP", "EP").

    `value` fixes the tag's value; by default it is the number of `tag`
    blocks opened before this one in the trace.
    """
    if not isinstance(tag, str) or not _TAG_NAME.match(tag) or tag in ("PASS", "MB"):
        raise ValueError(
            "piper.annotate: tag %r must be an upper-case identifier such as "
            "PP or EP (PASS and MB are reserved)" % (tag,))
    if value is not None and (not isinstance(value, int) or value < 0):
        raise ValueError("piper.annotate: value of %s must be a non-negative "
                         "integer, got %r" % (tag, value))
    if _state is None:
        yield
        return
    for open_scope in _state.open:
        if open_scope.tag == tag:
            raise ValueError(
                "piper.annotate: %s is already set by an enclosing block" % tag)
    _state.enter(tag, value)
    try:
        yield
    finally:
        _state.exit()
