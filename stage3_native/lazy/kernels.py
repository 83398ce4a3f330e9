"""The fused kernels and the patterns they declare (chapter 11, lazy execution and kernel
fusion).

A kind of fused kernel says, in three methods, which recorded nodes it can compute
together; the fusion pass (fusion.py) asks every kind and knows no pattern itself, so a new
fused kernel is a new class in KINDS and nothing else:

    anchor(node)                      the iteration space of a group starting at node, or None
    admits(group, node, view, producer)   may node join the group, reading producer via view?
    enter(group, node)                note what joining changes (a row kernel's row length)
    strides(group, view)              how the group's kernel reads a view from memory: its
                                      strides over the group's shape (None: it cannot)

and two more to run a group: ``build`` turns its nodes into a spec of expressions (expr.py)
for the code generators, ``run`` calls the compiled kernel on device "cpu"'s buffers.

    Loop            element-wise ops over one shape (unary, binary, where, and copies with
                    a dtype conversion), and reductions over trailing dimensions with their
                    element-wise producers and consumers (softmax, LayerNorm): one pass,
                    or one pass per row for row kernels (codegen.py, rows.py)
    MatmulEpilogue  a matmul (TinyBLAS; batched: one product per batch element) and the
                    element-wise ops on its result, applied to each output block while it
                    is in cache (epilogue.py)

Each op becomes the expression the eager kernel computes, dtype conversions included
(cpu/backend.py converts operands to the result dtype first; a comparison reads both in
their own dtype), so a fused kernel gives the eager values.
"""
from stage2_tensor import dtypes
from stage2_tensor.backend import View
from stage2_tensor.python_backend import positions
from stage2_tensor.strides import numel

from . import codegen
from .buffers import allocate_for, on_cpu
from .epilogue import compile_epilogue
from .expr import (
    COMPARISONS,
    REDUCTIONS,
    ElementwiseSpec,
    EpilogueSpec,
    Input,
    Operand,
    Product,
    RowReduce,
    RowSpec,
    RowValue,
    cast,
    op,
)
from .fusion import over, over_rows, reads_elementwise, reads_row_value, row_split
from .rows import compile_rows

FLOATS = ("float32", "float64")
ELEMENTWISE = ("unary", "binary", "where", "contiguous")
# A batched product takes an epilogue only when each of its products has this many
# multiply-adds: it then runs one TinyBLAS call per product from Python, a fixed cost each,
# which a convolution's (64 x 288 x 576 per image) repays and attention's many small ones
# would not.
BATCHED_MIN = 1 << 20
# A product takes an epilogue only when its output (all of it, every batch element) has
# this many bytes. The epilogue saves the element-wise kernel's pass over the output; an
# output that fits in the core's cache makes that pass cheap, cheaper than running the
# element-wise code on each block from TinyBLAS's callback, so a small product runs alone
# and the element-wise ops after it fuse among themselves (benchmarks/RESULTS.md, the plan
# cache section, has the measurement on the char-GPT step's (768, 512) float products).
EPILOGUE_MIN_BYTES = 4 << 20


class NotFusable(Exception):
    """A group that turned out to have no kernel (a layout or dtype no generator takes): its
    nodes run one by one instead."""


def elementwise(node):
    """An element-wise node a fused kernel computes: a float result, or a comparison."""
    if node.op not in ELEMENTWISE:
        return False
    if node.op == "binary" and node.args[0] in COMPARISONS:
        return node.args[1].dtype is node.args[2].dtype
    return node.outputs[0][1].name in FLOATS


def reduction(node):
    """The row length of a float sum, max or min over trailing dimensions (None: not one)."""
    if node.op != "reduce":
        return None
    name, view, dims, dtype = node.args
    n = len(view.shape)
    if (name not in REDUCTIONS or sorted(dims) != list(range(n - len(dims), n)) or not dims
            or view.dtype.name not in FLOATS or dtype.name not in FLOATS):
        return None
    row = numel(view.shape[n - len(dims):])
    return row if row > 1 else None         # a row of one is a copy, and would look per-row


class Loop:
    name = "loop"

    def anchor(self, node):
        if elementwise(node):
            return node.outputs[0][0]
        if reduction(node):
            return tuple(node.args[1].shape)
        return None

    def admits(self, group, node, view, producer):
        per_row = producer.op == "reduce" or id(producer) in group.per_row
        if per_row and elementwise(node):
            if numel(node.outputs[0][0]) == numel(group.shape):
                return reads_row_value(view, group)     # the row's value along the row
            return reads_elementwise(view, producer)    # an op on row values: row-level too
        if not reads_elementwise(view, producer):
            return False
        if elementwise(node):
            return True
        row = reduction(node)
        return bool(row) and group.row in (None, row) and row_split(group.shape, row) is not None

    def enter(self, group, node):
        """A reduction sets the row; an element-wise node with one value per row (mean =
        sum / n, rstd = 1 / sqrt(var + eps)) is a row-level member, computed from the row's
        values."""
        if node.op == "reduce":
            group.row = reduction(node)
        elif group.row and numel(node.outputs[0][0]) != numel(group.shape):
            group.per_row.add(id(node))

    def strides(self, group, view):
        if numel(view.shape) == numel(group.shape):
            return over(view, group.shape)
        if group.row and numel(view.shape) * group.row == numel(group.shape):
            return over_rows(view, group.shape, group.row)
        return None

    def build(self, group, stored):
        """(spec, operand views, output nodes): reductions first (in order), then the
        element-wise outputs (row kernels) or just the outputs (element-wise kernels)."""
        b = Builder(group, self.strides)
        reductions = [n for n in group.nodes if n.op == "reduce"]
        outputs = [n for n in group.nodes if n.op != "reduce" and id(n) not in group.per_row and id(n) in stored]
        exprs = tuple(b.expr(n) for n in outputs)        # before b.operands(): they add them
        if not reductions:
            return ElementwiseSpec(group.shape, b.operands(), exprs), b.views, outputs
        reduced = [RowReduce(b.load(n.args[1]), n.args[0], n.args[3].name) for n in reductions]
        keep = [i for i, n in enumerate(reductions) if id(n) in stored]
        # A stored row-level value is written as one more "reduction": the max over the row
        # of a value that is the same all along it (exactly that value; one more pass).
        row_level = [n for n in group.nodes if id(n) in group.per_row and id(n) in stored]
        for n in row_level:
            keep.append(len(reduced))
            reduced.append(RowReduce(b.expr(n), "max", n.outputs[0][1].name))
        spec = RowSpec(group.shape, b.operands(), tuple(reduced), exprs,
                       row_split(group.shape, group.row), tuple(keep))
        return spec, b.views, outputs + [reductions[i] for i in keep[:len(keep) - len(row_level)]] + row_level

    def compile(self, spec):
        if isinstance(spec, ElementwiseSpec):
            return codegen.compile_elementwise(spec)
        return compile_rows(spec)

    def run(self, kernel, group, out_nodes, ins, cpu):
        outs = [allocate_for(n) for n in out_nodes]
        kernel.run(outs, ins)
        return list(zip(out_nodes, outs))


class MatmulEpilogue:
    """A matmul and the element-wise ops on its result. A batched matmul (a convolution's:
    one product per image and group) is one group over (*batch, m, n): each product runs
    with the same compiled epilogue, its operands, outputs and product offset to its batch
    element."""
    name = "matmul+epilogue"

    def __init__(self, variant):
        self.variant = variant                  # () -> device "cpu"'s matmul variant now

    def anchor(self, node):
        if node.op != "matmul" or self.variant() != "tinyblas":
            return None
        a, b, dtype, *bias = node.args
        if len(a.shape) < 2 or len(b.shape) != len(a.shape) or dtype.name not in FLOATS:
            return None
        if a.dtype is not dtype or b.dtype is not dtype or (bias and bias[0] is not None and bias[0].dtype is not dtype):
            return None
        if len(a.shape) > 2 and a.shape[-2] * a.shape[-1] * b.shape[-1] < BATCHED_MIN:
            return None
        shape = tuple(a.shape[:-2]) + (a.shape[-2], b.shape[-1])
        if numel(shape) * dtype.itemsize < EPILOGUE_MIN_BYTES:
            return None
        return shape

    def admits(self, group, node, view, producer):
        return elementwise(node) and reads_elementwise(view, producer)

    def enter(self, group, node):
        pass

    def strides(self, group, view):
        return over(view, group.shape)

    def build(self, group, stored):
        b = Builder(group, self.strides)
        product, rest = group.nodes[0], group.nodes[1:]
        outputs = [n for n in rest if id(n) in stored]
        m, n = group.shape[-2:]
        exprs = tuple(b.expr(x) for x in outputs)
        operands = b.operands()
        # over (*batch, m, n): the epilogue reads (m, n); the batch steps become offsets in run
        group.batch_strides = [o.strides[:-2] for o in operands]
        operands = tuple(Operand(o.dtype, o.strides[-2:], o.offset) for o in operands)
        spec = EpilogueSpec(m, n, product.args[2].name, operands, exprs)
        return spec, b.views, outputs

    def compile(self, spec):
        return compile_epilogue(spec)

    def run(self, kernel, group, out_nodes, ins, cpu):
        """The product goes to its own buffer; the first output of its dtype overwrites it
        in place unless the product itself is stored."""
        product_node = group.nodes[0]
        a, b, dtype, *bias = product_node.args
        bias = on_cpu(bias[0]) if bias and bias[0] is not None else None
        product = allocate_for(product_node)
        free = id(product_node) not in group.stored
        outs = []
        for node in out_nodes:
            if free and node.outputs[0][1] is dtype:
                outs.append(product)
                free = False
            else:
                outs.append(allocate_for(node))
        a, b = on_cpu(a), on_cpu(b)
        if len(group.shape) == 2:
            kernel.run(a, b, bias, product, outs, ins)
        else:
            self._run_batched(kernel, group, a, b, bias, product, outs, ins)
        results = list(zip(out_nodes, outs))
        if id(product_node) in group.stored:
            results.append((product_node, product))
        return results

    @staticmethod
    def _run_batched(kernel, group, a, b, bias, product, outs, ins):
        """One product with its epilogue per batch element t (row-major over the batch
        dimensions): a's and b's matrices at their batch positions, the product and outputs
        (contiguous (*batch, m, n)) t * m * n elements on, each operand at its own batch
        position."""
        batch, (m, n) = group.shape[:-2], group.shape[-2:]
        starts = [positions(View(None, batch, v.strides[:-2], v.offset, None)) for v in (a, b)]
        offsets = [positions(View(None, batch, steps, o.offset, None))
                   for o, steps in zip(kernel.spec.operands, group.batch_strides)]
        for t in range(numel(batch)):
            at = [View(v.buffer, v.shape[-2:], v.strides[-2:], start[t], v.dtype) for v, start in zip((a, b), starts)]
            kernel.run(*at, bias, product + t * m * n, [o + t * m * n for o in outs], ins, [o[t] for o in offsets])


class Builder:
    """A group's nodes as expressions: a member's value where another member reads it
    element by element, an Input for everything read from memory (one operand per
    distinct buffer and layout)."""

    def __init__(self, group, strides):
        self.group, self.views, self.exprs, self.strides = group, [], {}, strides
        self._index = {}
        self._reductions = {id(n): i for i, n in enumerate(x for x in group.nodes if x.op == "reduce")}

    def operands(self):
        return tuple(Operand(v.dtype.name, self.strides(self.group, v), v.offset) for v in self.views)

    def load(self, view):
        b = view.buffer
        node = getattr(b, "node", None)
        if node is not None and not b.realized and node in self.group:
            if node.op == "reduce":
                return RowValue(self._reductions[id(node)], node.args[3].name)
            if node.op == "matmul":
                return Product(node.args[2].name)
            return self.expr(node)
        strides = self.strides(self.group, view)
        if strides is None:
            raise NotFusable(f"a view of shape {view.shape} cannot be read over {self.group.shape}")
        key = (id(b), strides, view.offset, view.dtype)
        k = self._index.get(key)
        if k is None:
            k = self._index[key] = len(self.views)
            self.views.append(view)
        return Input(k, view.dtype.name)

    def expr(self, node):
        e = self.exprs.get(id(node))
        if e is None:
            e = self.exprs[id(node)] = self._expr(node)
        return e

    def _expr(self, node):
        dtype = node.outputs[0][1].name
        if node.op == "contiguous":
            return as_dtype(self.load(node.args[0]), dtype)
        if node.op == "unary":
            return op(node.args[0], as_dtype(self.load(node.args[1]), dtype))
        if node.op == "binary":
            name, a, b = node.args[:3]
            if name in COMPARISONS:
                return op(name, self.load(a), self.load(b))
            return op(name, as_dtype(self.load(a), dtype), as_dtype(self.load(b), dtype))
        if node.op == "where":
            cond, a, b = node.args[:3]
            if cond.dtype is not dtypes.bool_:
                raise NotFusable(f"where: a condition of dtype {cond.dtype.name}")
            return op("where", self.load(cond), as_dtype(self.load(a), dtype), as_dtype(self.load(b), dtype))
        raise NotFusable(f"no expression for {node.op}")


def as_dtype(x, dtype):
    return x if x.dtype == dtype else cast(x, dtype)


def kinds(cpu):
    """The kinds of fused kernel, asked in this order."""
    return (MatmulEpilogue(lambda: cpu.matmul_variant), Loop())



