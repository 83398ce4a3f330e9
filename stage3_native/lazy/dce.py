"""Dead-code elimination (chapter 11, lazy execution and kernel fusion): which values a
realization must write to memory, and which it may skip.

Laziness already skips whole nodes: a node that no value read needs is never run (the
argmax that ``x.max(dim)`` records beside the max, a copy canonicalization left without
readers). Fusion adds the finer case: a value computed inside a fused kernel and read only
by other nodes of the same kernel lives in a register and is never stored.

A node's value must be stored when
- it was asked for (a root of the realization), or
- a pending node outside its group reads it (now or later), or
- something else holds its buffer: a tensor the program still has, such as one autograd
  saved for the backward pass.

The last is read from CPython's reference counts: a LazyBuffer is referenced by the Views
of the pending nodes that read it, and by the Storage of each tensor that holds it. One
more reference than the Views account for is a tensor (or a View the program kept).
"""
import sys

from .graph import PENDING


class Uses:
    """Who reads each pending node's outputs: the pending nodes (``readers``, by id of the
    node read), and how many distinct View records (``views``, by id of the LazyBuffer)."""

    def __init__(self, bypassed=None):
        # bypassed: buffers of copies canonicalization took the readers from (moved here,
        # so this object holds the only extra reference to each)
        self.readers, self.views, self._buffers = {}, {}, dict(bypassed or {})
        if bypassed:
            bypassed.clear()
        for node in list(PENDING):
            for a in node.views:
                b = a.buffer
                if b.realized:
                    continue
                self.readers.setdefault(id(b.node), []).append(node)
                self.views.setdefault(id(b), set()).add(id(a))
                self._buffers[id(b.node)] = b

    def held(self, node):
        """Whether something besides pending nodes' Views holds node's (single) buffer."""
        buffer = self._buffers.get(id(node))
        if buffer is None:
            return False        # no reader has a View of it; asked for or dead (caller decides)
        # references: getrefcount's argument, the local name, self._buffers' entry, then
        # one per distinct View record; anything beyond is a holder
        return sys.getrefcount(buffer) - 3 > len(self.views.get(id(buffer), ()))

    def read_outside(self, node, group):
        return any(r not in group for r in self.readers.get(id(node), ()))


def stored(group, roots, uses):
    """The ids of the group's nodes whose values must be written to memory."""
    return {id(n) for n in group.nodes
            if id(n) in roots or uses.read_outside(n, group) or uses.held(n)}


def dead(node, roots, uses):
    """A node nothing needs: not asked for, no pending reader, no holder."""
    return id(node) not in roots and not uses.readers.get(id(node)) and not uses.held(node)
