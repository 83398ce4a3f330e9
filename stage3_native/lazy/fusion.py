"""Fusion: grouping recorded nodes into kernels (chapter 11, lazy execution and kernel fusion).

The pass walks the nodes a value needs in an order they can run in and puts each node into
a Group, the nodes one generated kernel will compute, when a kind of fused kernel admits it
(kernels.py: each kind declares its own pattern: where a group may start, and which nodes
may join one). A node joins the group of one of its producers; among several, the one whose
output it reads is the largest (the most bytes kept out of memory). A node no group admits
starts a group of the first kind that takes it as an anchor, or stays an eager node.

The whole group is one iteration space, its ``shape`` (the anchor's). A node joins only if
it reads its producer element by element, and then its other operands are re-expressed over
that shape: a reshape between two fused ops (Linear's (rows, 4C) product viewed as
(B, T, 4C)) is only a change of strides, which ``view_strides`` works out, so a reshape
never splits a group. Reading a reduction's result broadcast along its row (keepdim) is the
other way in, for row kernels.

One rule keeps the groups runnable: a node may not join a group that one of its other
inputs depends on (the group would have to run both before and after that input). Each
node carries the set of groups upstream of it, as the bits of one integer.

float16 and bfloat16 stay out of groups: the generated C knows float32 and float64 only,
and a half node is only ever a cast or a copy (stage2 computes halves in float32), which
runs eagerly, device "cpu"'s contiguous with its F16C / AVX-512 BF16 conversion.
"""
from stage2_tensor.strides import is_contiguous, make_strides, numel, view_strides


class Group:
    """Nodes computed by one fused kernel of ``kind``, over one iteration space ``shape``,
    in an order they can run in. ``row``: the row length its reductions share (row kernels)."""

    def __init__(self, number, kind, anchor, shape):
        self.number, self.kind, self.nodes, self.shape = number, kind, [anchor], tuple(shape)
        self.row = None
        self.per_row = set()        # ids of row-level members: one value per row (kernels.py)
        self.stored = set()         # ids of members written to memory (dce.py, after fusion)
        self.members = {id(anchor)}

    def add(self, node):
        self.nodes.append(node)
        self.members.add(id(node))

    def __contains__(self, node):
        return id(node) in self.members

    def __repr__(self):
        ops = ", ".join(n.op if n.op not in ("unary", "binary", "reduce") else n.args[0] for n in self.nodes)
        return f"<{self.kind.name} {self.shape}: {ops}>"


def producers(node):
    """(view, producer node) for each View argument holding a pending node's output."""
    return [(v, v.buffer.node) for v in node.views if not v.buffer.realized]


def reads_elementwise(view, producer):
    """Whether ``view`` reads the producer's (single, contiguous) output element i at its
    own position i: the plain layout, or a reshape of it."""
    shape = producer.outputs[0][0]
    return (view.buffer.index is None and view.offset == 0 and numel(view.shape) == numel(shape)
            and is_contiguous(view.shape, view.strides))


def over(view, shape):
    """The view's strides re-expressed over the group's ``shape`` (same number of elements,
    the same element at each flat position), or None when no strides can say it."""
    if tuple(view.shape) == tuple(shape):
        return tuple(view.strides)
    if numel(view.shape) != numel(shape):
        return None
    return view_strides(tuple(view.shape), tuple(view.strides), tuple(shape))


def over_rows(view, shape, row):
    """The strides, over ``shape``, of a view holding one value per row of ``row`` elements
    (a keepdim result's shape): its strides over the kept dimensions, then 0 along the row."""
    k = row_split(shape, row)
    if k is None:
        return None
    kept = tuple(shape[:len(shape) - k])
    if numel(view.shape) != numel(kept):
        return None
    strides = view_strides(tuple(view.shape), tuple(view.strides), kept) if view.shape != kept else tuple(view.strides)
    return None if strides is None else tuple(strides) + (0,) * k


def row_split(shape, row):
    """How many trailing dimensions of ``shape`` make up a row of ``row`` elements (None if
    no run of trailing dimensions does)."""
    size = 1
    for k in range(1, len(shape) + 1):
        size *= shape[-k]
        if size == row:
            return k
        if size > row:
            return None
    return None


def reads_row_value(view, group):
    """Whether ``view`` (a node of the group's shape reading a per-row value: a reduction's
    result, or an op on such results) reads each row's value broadcast along the row:
    keepdim's layout."""
    if group.row is None or view.offset:
        return False
    strides = over(view, group.shape)
    if strides is None:
        return False
    k = row_split(group.shape, group.row)
    kept = group.shape[:len(group.shape) - k]
    return strides[len(kept):] == (0,) * k and _same_strides(kept, strides[:len(kept)])


def _same_strides(shape, strides):
    """Contiguous strides for shape, ignoring dimensions of size 1 (whose stride is moot)."""
    return all(s == c or n == 1 for n, s, c in zip(shape, strides, make_strides(shape)))


MAX_NODES = 64      # a group's expressions are walked recursively (a 10,000-op chain: 157 kernels)


def fuse(order, kinds, min_elements=0):
    """The nodes of ``order`` (pending, inputs first) as a list of steps in the same order:
    a Group, or a node run alone. Groups smaller than ``min_elements`` elements are not
    made (compiling a kernel costs more than tiny tensors save)."""
    group_of, upstream, steps = {}, {}, []
    for node in order:
        ins = producers(node)
        above = 0
        for _, p in ins:
            above |= upstream.get(id(p), 0)
            g = group_of.get(id(p))
            if g is not None:
                above |= 1 << g.number
        group = _join(node, ins, group_of, upstream, kinds)
        if group is None:
            group = _start(node, kinds, len(steps), min_elements)
            steps.append(group if group is not None else node)
        if group is not None:
            group_of[id(node)] = group
            above |= 1 << group.number
        upstream[id(node)] = above
    # a group that gathered nothing is its node alone: the eager kernel, nothing to compile
    return [s.nodes[0] if isinstance(s, Group) and len(s.nodes) == 1 else s for s in steps]


def _half(node):
    """Whether the node reads or makes a half (float16, bfloat16) view: never fused."""
    return (any(v.dtype.is_half for v in node.views)
            or any(o is not None and o[1].is_half for o in node.outputs))


def _join(node, ins, group_of, upstream, kinds):
    """The producer group ``node`` joins (adding it), or None."""
    if _half(node):
        return None
    best, best_size = None, -1
    for view, p in ins:
        group = group_of.get(id(p))
        if group is None or group is best or len(group.nodes) >= MAX_NODES:
            continue
        if not group.kind.admits(group, node, view, p):
            continue
        # no other input may depend on the group: it would run both before and after it
        bit = 1 << group.number
        if any(q not in group and upstream.get(id(q), 0) & bit for _, q in ins):
            continue
        if any(group.kind.strides(group, v) is None for v in node.views if not _inside(v, group)):
            continue
        size = numel(view.shape) * view.dtype.itemsize
        if size > best_size:
            best, best_size = group, size
    if best is not None:
        best.kind.enter(best, node)
        best.add(node)
    return best


def _inside(view, group):
    return not view.buffer.realized and view.buffer.node in group


def _start(node, kinds, number, min_elements):
    if _half(node):
        return None
    for kind in kinds:
        shape = kind.anchor(node)
        if shape is not None and numel(shape) >= max(min_elements, 1):
            group = Group(number, kind, node, shape)
            kind.enter(group, node)
            return group
    return None
