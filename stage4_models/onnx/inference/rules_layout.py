"""Shape rules of the operators that rearrange, join, multiply and reduce (chapter 13,
"13_inference_compiler": symbolic shapes): Reshape, Flatten, Transpose, Squeeze, Unsqueeze,
Concat (the proof a skip connection needs), Split, Gather, Tile, Expand, Gemm, MatMul,
the reductions, and the operators whose output has their input's shape. Where the input
is a shape vector its value is rearranged too (numpy on an object array).
"""
import numpy as np

from ..symbolic import as_expr, ceildiv
from . import rule
from .values import (CannotInfer, Sym, broadcast, const_ints, dmin, expr_equal, ints, product, shape)

SAME_SHAPE = ("Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Neg", "Abs", "Reciprocal", "Floor", "Ceil",
              "Erf", "Softplus", "Softsign", "Sin", "Cos", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "Clip",
              "Softmax", "LogSoftmax", "LRN", "BatchNormalization", "InstanceNormalization", "Identity",
              "Dropout", "Not")


@rule(*SAME_SHAPE)
def same_shape(inf, node, ins):
    """The output has the input's shape (Dropout's mask too); Identity keeps its value,
    Floor and Ceil keep integral ones."""
    x = ins[0]
    keep = node.op_type in ("Identity", "Dropout", "Floor", "Ceil") and x.value is not None and \
        all(not isinstance(v, float) or v.is_integer() for v in x.value.reshape(-1))
    out = Sym(x.shape, x.dtype, x.value if keep else None)
    return [out, Sym(x.shape, "bool")] if node.op_type == "Dropout" else [out]


def _axis(node, key, default, rank):
    a = node.attr(key, default)
    if not isinstance(a, int) or not -max(rank, 1) <= a < max(rank, 1):
        raise CannotInfer(f"{key} {a!r} is out of range")
    return a % rank if rank else 0


@rule("Reshape")
def reshape(inf, node, ins):
    """0 copies the input's dim (unless allowzero), -1 is what is left: the product of the
    input's dims divided by the others' (canonical, (N*C*H*W) // (N*C) == H*W)."""
    x = shape(ins[0])
    if node.opset < 5:
        dims = [as_expr(d) for d in node.attr("shape", [])]
    else:
        dims = ints(ins[1], "the target shape")
    allowzero = node.attr("allowzero", 0)
    out = [x[i] if d == 0 and not allowzero and i < len(x) else d for i, d in enumerate(dims)]
    holes = [i for i, d in enumerate(out) if d == -1]
    if len(holes) > 1:
        raise CannotInfer("more than one -1")
    if holes:
        known = product(d for i, d in enumerate(out) if i != holes[0])
        out[holes[0]] = product(x) // known
    value = ins[0].value
    return [Sym(out, ins[0].dtype, value.reshape(-1) if value is not None else None)]


@rule("Flatten")
def flatten(inf, node, ins):
    x = shape(ins[0])
    a = node.attr("axis", 1)
    if not isinstance(a, int) or not -len(x) <= a <= len(x):
        raise CannotInfer("axis out of range")
    a %= len(x) + 1
    return [Sym((product(x[:a]), product(x[a:])), ins[0].dtype)]


@rule("Transpose")
def transpose(inf, node, ins):
    x = shape(ins[0])
    perm = node.attr("perm", list(range(len(x)))[::-1])
    if sorted(perm) != list(range(len(x))):
        raise CannotInfer("perm is not a permutation")
    value = ins[0].value
    return [Sym([x[p] for p in perm], ins[0].dtype, value.transpose(perm) if value is not None else None)]


def _axes(node, ins, since):
    if node.opset < since:
        return node.attr("axes")
    return const_ints(ins[1], "axes") if len(ins) > 1 and ins[1] is not None else None


@rule("Squeeze")
def squeeze(inf, node, ins):
    x = shape(ins[0])
    axes = _axes(node, ins, 13)
    if axes is None:
        if not all(d.is_constant() for d in x):
            raise CannotInfer("which symbolic dims are 1 is known only at run time")
        axes = [i for i, d in enumerate(x) if d == 1]
    axes = {a % len(x) for a in axes}
    out = [d for i, d in enumerate(x) if i not in axes]
    value = ins[0].value
    return [Sym(out, ins[0].dtype, value.reshape(-1) if value is not None else None)]


@rule("Unsqueeze")
def unsqueeze(inf, node, ins):
    x = list(shape(ins[0]))
    axes = _axes(node, ins, 13)
    if axes is None:
        raise CannotInfer("axes are required")
    n = len(x) + len(axes)
    for a in sorted(a % n for a in axes):
        x.insert(a, as_expr(1))
    value = ins[0].value
    return [Sym(x, ins[0].dtype, value.reshape(-1) if value is not None else None)]


@rule("Concat")
def concat(inf, node, ins):
    """The axis extents add up; every other dim must be proven equal across the inputs for
    every input size, or the model is refused (``values.expr_equal``)."""
    shapes = [shape(s) for s in ins]
    first = shapes[0]
    ax = _axis(node, "axis", 1 if node.opset < 4 else None, len(first))
    out = list(first)
    for s in shapes[1:]:
        if len(s) != len(first):
            raise CannotInfer("the inputs' ranks differ")
        for i, (a, b) in enumerate(zip(out, s)):
            if i != ax:
                out[i] = expr_equal(inf, a, b, f"{node.describe()}, dim {i}")
        out[ax] = out[ax] + s[ax]
    values = [s.value for s in ins]
    value = np.concatenate(values, axis=ax) if all(v is not None for v in values) else None
    return [Sym(out, ins[0].dtype, value)]


@rule("Split")
def split(inf, node, ins):
    x = shape(ins[0])
    ax = _axis(node, "axis", 0, len(x))
    n = len(node.outputs)
    if node.opset < 13:
        sizes = node.attr("split")
        sizes = None if sizes is None else [as_expr(s) for s in sizes]
    else:
        sizes = ints(ins[1], "split") if len(ins) > 1 and ins[1] is not None else None
    if sizes is None:
        part = ceildiv(x[ax], n)
        sizes = [dmin(part, x[ax] - i * part) for i in range(n)]
    outs = []
    for s in sizes:
        out = list(x)
        out[ax] = s
        outs.append(Sym(out, ins[0].dtype))
    return outs


@rule("Gather")
def gather(inf, node, ins):
    data, idx = shape(ins[0]), shape(ins[1])
    ax = _axis(node, "axis", 0, len(data))
    out = data[:ax] + idx + data[ax + 1:]
    value = None
    indices = None if ins[1].value is None else [as_expr(i) for i in ins[1].value.reshape(-1)]
    if ins[0].value is not None and indices is not None and all(i.is_constant() for i in indices):
        size = int(data[ax])
        picks = [i.const + size if i.const < 0 else i.const for i in indices]
        if all(0 <= i < size for i in picks):           # (else the operator refuses them at run time)
            value = np.take(ins[0].value, np.array(picks, dtype=np.int64).reshape(ins[1].value.shape), axis=ax)
    return [Sym(out, ins[0].dtype, value)]


@rule("Tile")
def tile(inf, node, ins):
    x = shape(ins[0])
    reps = ints(ins[1], "repeats")
    return [Sym([d * r for d, r in zip(x, reps)], ins[0].dtype)]


@rule("Expand")
def expand(inf, node, ins):
    x = shape(ins[0])
    target = tuple(ints(ins[1], "the shape"))
    return [Sym(broadcast(inf, [x, target], node.describe()), ins[0].dtype)]


@rule("Gemm")
def gemm(inf, node, ins):
    a, b = shape(ins[0]), shape(ins[1])
    if len(a) != 2 or len(b) != 2:
        raise CannotInfer("A and B must be matrices")
    m = a[1] if node.attr("transA", 0) else a[0]
    n = b[0] if node.attr("transB", 0) else b[1]
    return [Sym((m, n), ins[0].dtype)]


@rule("MatMul")
def matmul(inf, node, ins):
    """numpy's matmul: 1-d operands promoted then dropped, batch dims broadcast."""
    a, b = list(shape(ins[0])), list(shape(ins[1]))
    if not a or not b:
        raise CannotInfer("scalar operands")
    batch = broadcast(inf, [tuple(a[:-2]), tuple(b[:-2])], node.describe())
    out = list(batch)
    if len(a) > 1:
        out.append(a[-2])
    if len(b) > 1:
        out.append(b[-1])
    return [Sym(out, ins[0].dtype)]


@rule("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin")
def reduce(inf, node, ins):
    x = shape(ins[0])
    if node.opset < {"ReduceSum": 13}.get(node.op_type, 18):
        axes = node.attr("axes")
    else:
        axes = const_ints(ins[1], "axes") if len(ins) > 1 and ins[1] is not None else None
        if not axes and node.attr("noop_with_empty_axes", 0):
            return [Sym(x, ins[0].dtype)]
    axes = set(range(len(x))) if not axes else {a % len(x) for a in axes}
    keep = bool(node.attr("keepdims", 1))
    out = [1 if i in axes else d for i, d in enumerate(x) if keep or i not in axes]
    return [Sym(out, ins[0].dtype)]

