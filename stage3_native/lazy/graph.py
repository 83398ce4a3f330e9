"""The recorded graph of device "cpu:lazy" (chapter 11, lazy execution and kernel fusion).

A Node is one backend call that has not run yet: the method's name (``op``), the arguments
it was called with, and what it will return. Its inputs are the LazyBuffers inside its
View arguments, so the graph is simply the nodes reachable through them. A LazyBuffer is
what a tensor's Storage holds on this device: output ``index`` of a node (most methods
have one output; cross_entropy, mse_loss, layer_norm and its backward have several).

Once a node has run (steps.py), ``result`` holds device "cpu"'s buffers and ``args`` is
dropped, so a finished node keeps no input alive. ``views`` holds the Views of LazyBuffers
among the arguments, found once when the node is made (``rewrite`` finds them again when a
pass changes the arguments): every read walks them (``needed``, the plan cache's key).
Buffers made from data (from_flat, full, from_bytes, from_numpy) are nodes that are
finished from the start.

``needed`` walks the graph with an explicit stack, not recursion: a training loop's graph
can be thousands of nodes deep.
"""
import collections
import itertools
import weakref

from stage2_tensor.backend import View

_numbers = itertools.count(1)


class Pending:
    """A set of nodes held weakly, as weakref.WeakSet, but through each node's own weak
    reference (``Node.ref``, which RECENT holds too): one reference made per node, where a
    WeakSet would make its own; recording a node is the hot path of this device."""
    __slots__ = ("refs",)

    def __init__(self):
        self.refs = set()               # weak references; a dead one removes itself (Node)

    def add(self, node):
        self.refs.add(node.ref)

    def discard(self, node):
        self.refs.discard(node.ref)

    def __contains__(self, node):
        return node.ref in self.refs

    def __len__(self):
        return len(self.refs)

    def __iter__(self):
        return iter([n for n in (r() for r in list(self.refs)) if n is not None])


# Every node not run yet, weakly: a node no tensor can reach any more vanishes from here
# (dead code, never run), and an in-place write runs all the others first (backend.py).
PENDING = Pending()
# Nodes a kernel error took out of PENDING without a result (steps.py): few, usually none.
FAILED = weakref.WeakSet()
# The last nodes made, (number, weak reference) in order: a write asks them whether any
# pending node reads the buffer it writes (backend.py), without walking all of PENDING.
RECENT = collections.deque(maxlen=64)
_discard, _pending_add = PENDING.refs.discard, PENDING.refs.add


class Node:
    __slots__ = ("__weakref__", "args", "number", "op", "outputs", "ref", "result", "shared", "views")

    def __init__(self, op, args, outputs, result=None):
        self.op = op                    # the backend method: "binary", "matmul", ...
        self.args = args                # its arguments: Views (of LazyBuffers) and plain values
        self.views = views_in(args) if args else ()     # the Views of LazyBuffers among them
        self.outputs = outputs          # [(shape, dtype) or None] per returned buffer (its declaration)
        self.result = result            # device "cpu"'s buffers once run, a tuple or one buffer
        self.number = next(_numbers)    # a name for printing and debugging, in recorded order
        self.shared = False             # its memory handed to numpy: written at once (backend.py)
        # its weak reference, in RECENT and PENDING; a pending node that dies leaves PENDING
        # (only a reference hashed while its node lived can be found in a set afterwards)
        if result is None:
            self.ref = ref = weakref.ref(self, _discard)
            _pending_add(ref)
        else:
            self.ref = ref = weakref.ref(self)
        RECENT.append((self.number, ref))

    @property
    def realized(self):
        return self.result is not None

    def inputs(self):
        """The nodes this one reads: those of the LazyBuffers in its View arguments (optimizer
        kernels take lists of Views)."""
        return [v.buffer.node for v in self.views]

    def rewrite(self, args):
        """New arguments (canonicalization's bypassed copies), their Views found again."""
        self.args = args
        self.views = views_in(args)

    def finished(self, result):
        """The node has run: keep its result, let go of its inputs."""
        self.result = result
        self.args = None
        self.views = ()

    def __repr__(self):
        return f"<Node %{self.number} {self.op}{' (realized)' if self.realized else ''}>"


class LazyBuffer:
    """Output ``index`` of ``node``: a buffer whose contents may not exist yet."""
    __slots__ = ("__weakref__", "index", "node")

    def __init__(self, node, index=None):
        self.node, self.index = node, index      # index None: the node's only output

    @property
    def realized(self):
        return self.node.result is not None

    def cpu_buffer(self):
        """Device "cpu"'s buffer holding the values (the node must have run)."""
        result = self.node.result
        return result if self.index is None else result[self.index]

    def __repr__(self):
        which = "" if self.index is None else f".{self.index}"
        return f"<LazyBuffer %{self.node.number}{which}>"


def views_in(args):
    """The Views of LazyBuffers in a call's arguments: Views, lists of Views (optimizer
    kernels), None and plain values (a list, not a generator; run once per node made)."""
    out = []
    for a in args:
        t = type(a)
        if t is View or isinstance(a, View):
            if type(a.buffer) is LazyBuffer:
                out.append(a)
        elif isinstance(a, list):
            out.extend(views_in(a))
    return out


def recent_readers(buffer):
    """The nodes not run yet that read ``buffer`` (the same output of the same node), in
    recorded order, found in RECENT (pending ones, and any a failed kernel left unrun); None
    when RECENT does not reach back to the buffer's node. Only nodes made after the
    buffer's can read it, so the walk back stops there."""
    since, found = buffer.node.number, []
    for number, ref in reversed(RECENT):
        if number <= since:
            return found[::-1]
        node = ref()
        if node is not None and node.args is not None and _reads(node, buffer):
            found.append(node)
    return None


def unread(buffer):
    """Whether no pending node reads ``buffer``, known from RECENT alone (False: some node
    reads it, or RECENT cannot tell)."""
    return recent_readers(buffer) == []


def _reads(node, buffer):
    target, index = buffer.node, buffer.index
    return any(v.buffer.node is target and v.buffer.index == index for v in node.views)


def readers(buffer):
    """The pending nodes that read ``buffer``, in recorded order (the plan cache's key
    follows it): from RECENT when it reaches back that far, else from all of PENDING."""
    found = recent_readers(buffer)
    if found is not None:
        return [n for n in found if n in PENDING]
    return sorted((n for n in list(PENDING) if _reads(n, buffer)), key=lambda n: n.number)


def needed(nodes):
    """The not-yet-run nodes that ``nodes`` need, each after all of its inputs (a depth-first
    post-order, with a stack instead of recursion)."""
    order, seen = [], set()
    stack = [(n, False) for n in reversed(nodes) if n.result is None]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for v in reversed(node.views):
            i = v.buffer.node
            if i.result is None and id(i) not in seen:
                stack.append((i, False))
    return order
