"""The plan cache (chapter 11, lazy execution and kernel fusion): a read whose pending graph
has the structure of one planned before reuses that plan and its compiled kernels.

A training step records the same graph every step: the same ops on the same shapes, only
the buffers differ. Planning it (plan.py's four passes, then building each fused group's
expressions) is Python work proportional to the graph, paid on every read. So each read
first computes the graph's structural key in one pass over the nodes it needs:

- each node's op and arguments, in the order ``needed`` lists them: plain values (a
  reduction's dims, eps, a dtype) as they are, typed (1 and 1.0 and True differ, a float
  by its exact bits), but for the few that are data (``DATA``: dropout's seed); a View as its shape, strides, offset and dtype, and the buffer it
  reads: a pending node of the graph by its position, which output of it; a realized
  buffer (an input) by the order it first appears in, so two reads of one input are told
  from reads of two inputs (a fused kernel loads them as one operand or two);
- which nodes were asked for (the read's roots), which are read by pending nodes outside
  this read (their values must be stored), and which are held by something else, a
  tensor (dce.py's rule: a reference count above what the pending nodes' Views explain);
- the settings planning reads: the fusion size threshold, device "cpu"'s matmul variant,
  the epilogue's thresholds (batched, and the output's bytes) and the largest group.

Scalars never reach the generated code as constants: stage2 passes a Python number to a
kernel as a one-element buffer (a ``full`` node, realized from the start), so a scalar's
value is an input's data, not structure, and ``x * 2`` and ``x * 3`` share a plan.

The plan is kept as a Program of positions, holding no node and no buffer: the
arguments canonicalization rewrote (node, argument), then the steps: a node to run
eagerly, or a fused group (its compiled kernel, its members, the ones it stores, and for
each of its operands the node and argument its View is read from). A hit rewrites the same
arguments, binds each step to the new graph's nodes and buffers, and runs it; nothing else
of the passes runs. What a key cannot see never makes a plan wrong, only slower: the
passes leave a node they do not run pending, so a value a stale plan failed to store is
computed again when read.

Not cached (planned as before, every time): a graph with an argument of a type the key
does not know, an unhashable one, a pending reader outside the read that reads a copy
canonicalization would bypass, a node a failed kernel took out of PENDING.

``PLANS`` is a least-recently-used dict of at most ``CACHE["size"]`` programs;
``TRACEGRAD_PLAN_CACHE=0`` (or ``CACHE["enabled"] = False``) turns it off. ``stats``
counts hits, misses and uncacheable reads, for tests and the chapter.
"""
import os
import sys
from collections import Counter, OrderedDict

from stage2_tensor.backend import View
from stage2_tensor.dtypes import DType

from . import fusion, kernels
from .canonicalize import is_copy, merge
from .graph import FAILED, PENDING, LazyBuffer
from .plan import plan
from .settings import FUSION
from .steps import finish, run, run_group

CACHE = {"enabled": os.environ.get("TRACEGRAD_PLAN_CACHE", "1") != "0", "size": 256}
PLANS = OrderedDict()
stats = Counter()           # "hit", "miss", "uncacheable"


class Uncacheable(Exception):
    """A graph the key cannot describe: it is planned every time."""


def clear():
    """Forget every plan (and the counts)."""
    PLANS.clear()
    stats.clear()


# ---- the key -----------------------------------------------------------------------------
_PLAIN = (int, str, bool, type(None))
# Plain arguments that are data, not structure: no pass reads them, the node's kernel runs
# with its own. Dropout draws a new seed each call: in the key, no plan would ever be reused.
DATA = {"dropout": {1}}


class Hashed:
    """A key tuple with its hash computed once: the dict's lookup and the LRU's move each
    hash it, and a tuple of a few hundred tuples does not keep its hash."""
    __slots__ = ("hash", "parts")

    def __init__(self, parts):
        self.parts, self.hash = parts, hash(parts)

    def __hash__(self):
        return self.hash

    def __eq__(self, other):
        return self.hash == other.hash and self.parts == other.parts


class Key:
    """One pass over ``order`` (the pending nodes a read needs, inputs first): ``key``, the
    structure, and per pending buffer the View records that read it (for ``held``)."""

    def __init__(self, order, roots, cpu):
        # One loop, the common arguments inline (a View, a plain value): it runs for every
        # node of every read. The parts are flat: a View adds three (its buffer's position,
        # which output, its layout: an int first), a plain value two (its type first), any
        # other argument one tuple, a node's end None; so no two graphs give the same parts.
        self.index = index = {}
        self.leaves = leaves = {}
        self.buffers, self.views = buffers, views = {}, {}
        parts = [FUSION["min_elements"], cpu.matmul_variant, kernels.BATCHED_MIN, kernels.EPILOGUE_MIN_BYTES,
                 fusion.MAX_NODES]
        append, encode = parts.append, self.encode
        for position, n in enumerate(order):
            index[id(n)] = position        # order lists inputs first: known before any reader
            append(n.op)
            data = DATA.get(n.op)
            for j, a in enumerate(n.args):
                t = type(a)
                if t is View:
                    b = a.buffer
                    if type(b) is not LazyBuffer:
                        raise Uncacheable(f"a View of a {type(b).__name__}")
                    node = b.node
                    if node.result is None:
                        append(index[id(node)])
                        buffers[id(node)] = b
                        seen = views.get(id(b))
                        if seen is None:
                            views[id(b)] = {id(a)}
                        else:
                            seen.add(id(a))
                    else:
                        leaf = (id(node), b.index)
                        ref = leaves.get(leaf)
                        if ref is None:
                            ref = leaves[leaf] = len(leaves)
                        append(-1 - ref)
                    append(b.index)
                    append(a[1:])           # shape, strides, offset, dtype
                elif data is not None and j in data:
                    append("data")
                elif t is int or t is str or t is bool or t is DType or a is None:
                    append(t)
                    append(a)
                else:
                    append(encode(a))
            append(None)                    # the end of a node's arguments
        b = node = a = seen = None          # no reference of this frame's left for held() to count
        outside = self.outside(order)
        parts.append(tuple(sorted(index[id(n)] for n in roots if id(n) in index)))
        parts.append(outside)
        parts.append(self.held())
        self.key = Hashed(tuple(parts))

    def view(self, a):
        """A View: its layout, and the buffer it reads (see the module's docstring)."""
        b = a.buffer
        if type(b) is not LazyBuffer:
            raise Uncacheable(f"a View of a {type(b).__name__}")
        node = b.node
        if node.result is None:
            ref = self.index[id(node)]
            self.buffers[id(node)] = b
            seen = self.views.get(id(b))
            if seen is None:
                self.views[id(b)] = {id(a)}
            else:
                seen.add(id(a))
        else:
            ref = -1 - self.leaves.setdefault((id(node), b.index), len(self.leaves))
        return (ref, b.index, a.shape, a.strides, a.offset, a.dtype)

    def encode(self, a):
        """Any other argument: a plain value, typed, or a list or tuple of arguments."""
        t = type(a)
        if t is View:
            return self.view(a)
        if t is tuple or t is list:
            return (t is list,) + tuple(self.encode(x) for x in a)
        if t is float:
            return ("f", a.hex())
        if t in _PLAIN or t is DType:
            return (t, a)
        raise Uncacheable(f"an argument of type {t.__name__}")

    def outside(self, order):
        """The positions of the nodes pending readers outside ``order`` read (they must be
        stored), after checking every node of order is pending (one a failed kernel took
        out of PENDING is read by nobody, for dce.py: not cached)."""
        if len(PENDING) == len(order) and not FAILED:
            return ()               # order is all of PENDING: no reader outside it
        read, inside = set(), 0
        for n in list(PENDING):
            if id(n) in self.index:
                inside += 1
                continue
            for v in n.views:
                b = v.buffer
                i = self.index.get(id(b.node))
                if i is None or b.realized:
                    continue
                if is_copy(b.node):
                    raise Uncacheable("a copy read outside the read: canonicalization rewrites the reader")
                read.add(i)
                self.buffers[id(b.node)] = b
                self.views.setdefault(id(b), set()).add(id(v))
        if inside != len(order):
            raise Uncacheable("a node of the read is not pending")
        return tuple(sorted(read))

    def held(self):
        """The positions of nodes something besides pending Views holds (dce.Uses.held's
        rule: the reference count beyond getrefcount's argument, the loop's name and
        self.buffers' entry, against the distinct Views)."""
        out = []
        for node_id in self.buffers:        # not .items(): its reused tuple holds a reference
            b = self.buffers[node_id]
            if sys.getrefcount(b) - 3 > len(self.views.get(id(b), ())):
                out.append(self.index[node_id])
        return tuple(sorted(out))


# ---- the programs --------------------------------------------------------------------------
class Replay:
    """The attributes of a fusion.Group that its kind's ``run`` reads, over new nodes."""
    __slots__ = ("batch_strides", "kind", "nodes", "per_row", "row", "shape", "stored")


class GroupStep:
    """A fused group of a cached plan, by positions in the read's order."""

    def __init__(self, group, kernel, out_nodes, where, index):
        self.kind, self.kernel, self.where = group.kind, kernel, where
        self.nodes = [index[id(n)] for n in group.nodes]
        self.stored = [index[id(n)] for n in group.nodes if id(n) in group.stored]
        self.outs = [index[id(n)] for n in out_nodes]
        self.shape, self.row = group.shape, group.row
        self.per_row = [index[id(n)] for n in group.nodes if id(n) in group.per_row]
        self.batch_strides = getattr(group, "batch_strides", None)

    def run(self, order, cpu):
        g = Replay()
        g.kind, g.shape, g.row, g.batch_strides = self.kind, self.shape, self.row, self.batch_strides
        g.nodes = [order[i] for i in self.nodes]
        g.stored = {id(order[i]) for i in self.stored}
        g.per_row = {id(order[i]) for i in self.per_row} if self.per_row else _EMPTY
        ins = [order[i].args[j].buffer.cpu_buffer() for i, j in self.where]
        finish(self.kind, self.kind.run(self.kernel, g, [order[i] for i in self.outs], ins, cpu))


_EMPTY = frozenset()


class Program:
    """A cached plan: ``rewrites``, the (node, argument) positions canonicalization made
    read a copied view instead of the copy; ``steps``, a position (one node run eagerly)
    or a GroupStep each."""

    def __init__(self, rewrites, steps):
        self.rewrites, self.steps = rewrites, steps

    def run(self, order, cpu):
        for i, j in self.rewrites:
            node = order[i]
            args = list(node.args)
            merged = merge(args[j], args[j].buffer.node.args[0])
            if merged is None:          # the key says it cannot happen: plan from scratch
                raise RuntimeError("plan cache: a rewrite of a cached plan does not apply")
            args[j] = merged
            node.rewrite(tuple(args))
        for step in self.steps:
            if type(step) is int:
                run(order[step], cpu)
            else:
                step.run(order, cpu)


def _where(view, group):
    """(node position in group.nodes' order, argument) of the member argument that is ``view``."""
    for n in group.nodes:
        for j, a in enumerate(n.args):
            if a is view:
                return n, j
    raise Uncacheable("an operand View not among its group's arguments")


def plan_and_run(nodes, order, cpu):
    """The uncached path: plan.py's passes, then each step run (steps.py's run and
    run_group), noted down as a Program in positions of ``order``, which is returned
    (None: some step could not be noted, so the plan is not cached)."""
    index = {id(n): i for i, n in enumerate(order)}
    rewritten = []
    planned = plan(nodes, cpu, count_bytes=False, rewritten=rewritten).steps
    rewrites = [(index[id(n)], j) for n, j in rewritten if id(n) in index]
    del rewritten
    steps, cacheable = [], [True]

    def noted(kernel, views, out_nodes):
        try:
            where = [(index[id(n)], j) for n, j in (_where(v, step) for v in views)]
            steps.append(GroupStep(step, kernel, out_nodes, where, index))
        except Uncacheable:
            cacheable[0] = False

    for step in planned:
        if hasattr(step, "nodes"):
            steps.extend(index[id(n)] for n in run_group(step, cpu, noted))
        else:
            run(step, cpu)
            steps.append(index[id(step)])
    return Program(rewrites, steps) if cacheable[0] else None


def realize_planned(nodes, order, cpu):
    """Run ``order`` (needed(nodes), not empty) by a cached plan, or plan it and cache it."""
    if not CACHE["enabled"]:
        plan_and_run(nodes, order, cpu)
        return
    # The Key object holds the pending buffers (to count their references): it must be gone,
    # and so must a traceback holding its frame, before the passes count references again.
    key = None
    try:
        key = Key(order, nodes, cpu).key
        program = PLANS.get(key)
    except (Uncacheable, KeyError, TypeError):      # TypeError: an unhashable argument
        key = None
    if key is None:
        stats["uncacheable"] += 1
        plan_and_run(nodes, order, cpu)
        return
    if program is not None:
        stats["hit"] += 1
        PLANS.move_to_end(key)
        program.run(order, cpu)
        return
    stats["miss"] += 1
    program = plan_and_run(nodes, order, cpu)
    if program is not None:
        PLANS[key] = program
        while len(PLANS) > CACHE["size"]:
            PLANS.popitem(last=False)
