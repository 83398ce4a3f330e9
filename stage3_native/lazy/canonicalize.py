"""Canonicalization (chapter 11, lazy execution and kernel fusion): the first pass, before
fusion, rewriting the graph into fewer, plainer nodes that compute the same values.

Views cost nothing here already: a reshape, transpose, expand or slice records no node,
only a View (buffer, shape, strides, offset) in the arguments of the node that reads it, and
a view of a view is one View. What remains are copies: ``contiguous`` nodes, which stage2
records where a view cannot be re-strided (``reshape`` of a transposed tensor, ``clone``).

A copy read back in its plain layout is the view it copied. So every reader of a copy
(a ``contiguous`` node that keeps the dtype) is rewritten to read the copied view itself,
re-strided to the reader's shape when ``view_strides`` can say it (two consecutive views
merged into one), and the copy is left without readers. Unless something else holds it
(a tensor the program keeps, a value asked for), the copy is then dead, and the next pass
(dce.py) drops it: no node, no kernel, no memory.

Pending nodes are rewritten in place (their ``args``), all of them, not only those this
realization runs: every reader then agrees on what it reads. That is safe because a
pending node reads values as they are now: an in-place write runs every pending node
before it changes anything (backend.py).
"""
from stage2_tensor.backend import View
from stage2_tensor.strides import is_contiguous, numel, view_strides

from .graph import LazyBuffer


def merge(outer, inner):
    """The single view equal to reading ``outer`` (a view of a copy of ``inner``), or None.
    outer must read the copy in its plain layout (offset 0, contiguous, every element)."""
    if outer.offset or not is_contiguous(outer.shape, outer.strides) or numel(outer.shape) != numel(inner.shape):
        return None
    if tuple(outer.shape) == tuple(inner.shape):
        return View(inner.buffer, inner.shape, inner.strides, inner.offset, inner.dtype)
    strides = view_strides(tuple(inner.shape), tuple(inner.strides), tuple(outer.shape))
    if strides is None:
        return None
    return View(inner.buffer, tuple(outer.shape), strides, inner.offset, inner.dtype)


def is_copy(node):
    """A pending copy that keeps the dtype: contiguous(view, dtype) with the view's dtype."""
    return node.op == "contiguous" and not node.realized and node.args[0].dtype is node.args[1]


def canonicalize(nodes, rewritten=None):
    """Rewrite every argument of ``nodes`` (the pending ones) that reads a copy to read the
    copied view instead, where one view can say it. Returns {id(copy): its LazyBuffer} for
    the copies that lost readers, for dce.py to ask whether anything else holds them.
    ``rewritten``, a list, gets (reader, argument position) per rewrite (the plan cache
    replays them: cache.py)."""
    bypassed = {}
    for reader in nodes:
        args, changed = list(reader.args), False
        for i, a in enumerate(args):
            if not (isinstance(a, View) and isinstance(a.buffer, LazyBuffer)):
                continue
            source = a.buffer.node
            if a.buffer.index is not None or not is_copy(source):
                continue
            merged = merge(a, source.args[0])
            if merged is not None:
                bypassed[id(source)] = a.buffer
                args[i], changed = merged, True
                if rewritten is not None:
                    rewritten.append((reader, i))
        if changed:
            reader.rewrite(tuple(args))
    return bypassed
