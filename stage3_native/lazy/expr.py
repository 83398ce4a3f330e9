"""The records a fused kernel is made of (chapter 11, lazy execution and kernel fusion).

A fused kernel computes an expression per element: a small DAG whose leaves are the
kernel's input operands (``Input``) and constants (``Const``) and whose inner nodes are the
eager backend's ops (``Op``), named as declared in stage2_tensor/ops.py (primitives and fused
kernels), plus ``where`` and ``cast``. Every node carries its dtype: the dtype the eager
kernel would store that intermediate as, which is what the generated C rounds it to.

The records are frozen dataclasses of tuples, strings and numbers: printable, comparable
and hashable, so the graph compiler can treat ops as plain data, and two equal nodes in a
DAG are one local in the generated C (common subexpressions come for free).

    x, w, b = Input(0, "float32"), Input(1, "float32"), Input(2, "float32")
    y = op("gelu_tanh", op("add", op("mul", x, w), b))
    spec = ElementwiseSpec(shape=(4, 8), operands=(Operand("float32", (8, 1)),
                           Operand("float32", (0, 1)), Operand("float32", (0, 0))), outputs=(y,))
"""
from dataclasses import dataclass

from stage2_tensor import ops

UNARY_OPS = ops.names("unary", fused=True)
BINARY_OPS = ops.names("binary", "comparison", fused=True)

DTYPES = ("bool", "int32", "int64", "float32", "float64")
COMPARISONS = ops.names("comparison")
REDUCTIONS = ("sum", "max", "min")          # the ones a fused kernel computes (no arg ones)


@dataclass(frozen=True)
class Input:
    """Operand ``index`` of the kernel, read as ``dtype``."""
    index: int
    dtype: str


@dataclass(frozen=True)
class Const:
    """A number, of ``dtype`` (a float32 constant is rounded to float32, as a tensor of it
    would be)."""
    value: int | float
    dtype: str


@dataclass(frozen=True)
class Op:
    """``op`` applied to ``args``, its result rounded to ``dtype``."""
    op: str
    args: tuple["Node", ...]
    dtype: str


@dataclass(frozen=True)
class RowValue:
    """In a row kernel (rows.py): the current row's result of the kernel's reduction
    ``index``, as ``dtype`` (what the eager reduce stores, read back broadcast over the row)."""
    index: int
    dtype: str


@dataclass(frozen=True)
class Product:
    """In a matmul epilogue (epilogue.py): the product's element at this position, as
    ``dtype`` (what the matmul stores, bias included)."""
    dtype: str


Node = Input | Const | Op | RowValue | Product


def op(name, *args):
    """An Op with the dtype the eager backend gives it: bool for comparisons, the branches'
    dtype for where, the operands' otherwise (which must agree: the eager backend converts
    operands first, and a fused graph says so with an explicit ``cast``)."""
    if name in UNARY_OPS:
        (x,) = args
        return Op(name, args, x.dtype)
    if name in BINARY_OPS:
        a, b = args
        if a.dtype != b.dtype:
            raise TypeError(f"{name}: operands of dtypes {a.dtype} and {b.dtype}; cast one first")
        return Op(name, args, "bool" if name in COMPARISONS else a.dtype)
    if name == "where":
        cond, a, b = args
        if cond.dtype != "bool" or a.dtype != b.dtype:
            raise TypeError(f"where: expected a bool condition and branches of one dtype, got "
                            f"{cond.dtype}, {a.dtype}, {b.dtype}")
        return Op(name, args, a.dtype)
    raise ValueError(f"unknown op {name!r}")


def cast(x, dtype):
    """x converted to dtype, as the eager copy kernel converts (csrc/copy.c)."""
    if dtype not in DTYPES:
        raise ValueError(f"cast: unknown dtype {dtype!r}")
    return Op("cast", (x,), dtype)


@dataclass(frozen=True)
class Operand:
    """How one input is laid out over the result shape: its dtype, its strides in elements
    (0 where it is broadcast) and the offset of its first element. The offset is passed at
    run time and is no part of the generated source (another slice of the same layout
    reuses the kernel); the strides are baked into the source."""
    dtype: str
    strides: tuple[int, ...]
    offset: int = 0


@dataclass(frozen=True)
class ElementwiseSpec:
    """One pass over ``shape`` in row-major order; each node of ``outputs`` is stored into
    its own contiguous output."""
    shape: tuple[int, ...]
    operands: tuple[Operand, ...]
    outputs: tuple[Node, ...]


@dataclass(frozen=True)
class EpilogueSpec:
    """An element-wise epilogue of a matmul (epilogue.py): the product is (m, n) of
    ``dtype``; each operand's strides are over (m, n) (a bias row: (0, 1)); each node of
    ``outputs``, an expression of ``Product(dtype)``, ``Input``s and ``Const``s, is stored
    into its own contiguous (m, n) output, which may be the product's own buffer."""
    m: int
    n: int
    dtype: str
    operands: tuple[Operand, ...]
    outputs: tuple[Node, ...]


@dataclass(frozen=True)
class ReduceSpec:
    """``expr`` evaluated over ``shape``, then reduced by ``op`` (sum, max, min) over the
    trailing ``dims`` dimensions: one result per position of the leading ones, of
    ``out_dtype`` (None: expr's dtype)."""
    shape: tuple[int, ...]
    operands: tuple[Operand, ...]
    expr: Node
    op: str
    dims: int = 1
    out_dtype: str = None


@dataclass(frozen=True)
class RowReduce:
    """A per-row value: ``op`` (sum, max, min) over the row of ``expr``, stored as ``dtype``
    (what the eager reduce stores)."""
    expr: Node
    op: str
    dtype: str


@dataclass(frozen=True)
class RowSpec:
    """shape = kept dims + reduced (trailing ``dims``) dims. Operands' strides are over the
    whole shape (0 where broadcast: a per-row operand has 0 in the reduced dims).
    ``reductions`` run in order, each may read RowValue(j) of earlier ones (j < its own
    index); ``outputs`` are element-wise expressions over the whole shape that may read any
    RowValue, each written to its own contiguous buffer of numel(shape); then each
    reduction listed in ``stored`` is also written to a contiguous buffer of one value per
    row (numel of the kept dims). outputs may be empty (only stored reductions)."""
    shape: tuple[int, ...]
    operands: tuple[Operand, ...]
    reductions: tuple[RowReduce, ...]
    outputs: tuple[Node, ...]
    dims: int = 1
    stored: tuple[int, ...] = ()

    @property
    def n_outputs(self):
        """The kernel's output buffers: one per output, then one per stored reduction."""
        return len(self.outputs) + len(self.stored)
